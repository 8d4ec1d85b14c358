"""``.limitsize`` through ``update``: a limited stratum is recomputed and diffed (which facts a
limit keeps depends on all of them), its placement says why, and the result equals evaluating
the changed inputs. The update's recomputation runs in rounds of Spark joins
(``decompose=False``), the materialization in one task: both ways of running the rounds."""

from __future__ import annotations

import spark_datalog as sd
from spark_datalog.placement import LIMITED
from spark_datalog.reference import evaluate as reference
from spark_datalog.storage.warehouse import Warehouse

PROGRAM = """
.decl e(x: number, y: number)
.input e
.decl tc(x: number, y: number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), e(y, z).
.limitsize tc(n=7)
.decl head(x: number, y: number)
head(x, y) :- e(x, y), x < y.
.limitsize head(n=2)
.decl from1(y: number)
from1(y) :- tc(1, y).
.output tc, head, from1
"""


def test_update_of_limited_strata_equals_recomputation(spark, tmp_path):
    program = sd.Program.parse(PROGRAM, dialect="souffle")
    warehouse = Warehouse(spark, str(tmp_path / "wh"))
    edb = {(1, 2), (2, 3), (3, 4), (4, 5), (5, 6)}
    program.materialize(
        spark, inputs={"e": spark.createDataFrame(sorted(edb), "x long, y long")}, warehouse=warehouse
    )
    assert {tuple(r) for r in warehouse.read("tc").collect()} == reference(program, {"e": edb})["tc"]
    inserts, deletes = [(0, 1), (2, 6)], [(3, 4)]
    rows = [r + (1,) for r in inserts] + [r + (-1,) for r in deletes]
    changes = {"e": spark.createDataFrame(rows, "x long, y long, _count long")}
    report = program.update(spark, warehouse, changes=changes, decompose=False)
    expected = reference(program, {"e": (edb | set(inserts)) - set(deletes)})
    assert expected["tc"] == {(0, 1), (1, 2), (2, 3), (2, 6), (4, 5), (5, 6), (0, 2)}
    for name in ("tc", "head", "from1"):
        assert {tuple(r) for r in warehouse.read(name).collect()} == expected[name], name
    placements = {s.relations: s.placement for s in report.strata}
    assert placements[("tc",)].method == "recompute" and LIMITED in placements[("tc",)].reason
    assert placements[("head",)].method == "recompute" and LIMITED in placements[("head",)].reason
