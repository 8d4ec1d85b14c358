"""``eqrel`` relations over records, ADTs and recursive records through ``update``: their
labels (a ``min`` in the shared value order, ``syntax.eqrel``) are maintained like any ``min``,
equal to evaluating the changed inputs."""

from __future__ import annotations

import pytest

import spark_datalog as sd
from spark_datalog.reference import evaluate as reference
from spark_datalog.storage.warehouse import Warehouse

pytestmark = pytest.mark.spark

PROGRAM = """
.type P = [x: number, y: number]
.type S = A {n: number} | B {n: number, m: number}
.type L = [head: number, tail: L]
.decl e(a: number, b: number)
.input e
.decl same(a: P, b: P) eqrel
same([a, -a], [b, -b]) :- e(a, b).
.decl shapes(a: S, b: S) eqrel
shapes($A(a), $B(b, a)) :- e(a, b).
shapes($B(b, a), $A(b)) :- e(a, b).
.decl lists(a: L, b: L) eqrel
lists([a, nil], [b, [a, nil]]) :- e(a, b).
lists([b, [a, nil]], [b, nil]) :- e(a, b).
.decl points(a: number, b: number)
points(a, b) :- same([a, _], [b, _]).
.decl kinds(a: number, b: number)
kinds(a, b) :- shapes($A(a), $A(b)).
.decl heads(a: number, b: number)
heads(a, b) :- lists([a, nil], [b, nil]).
.output points, kinds, heads
"""


def test_update_of_eqrel_over_records_equals_recomputation(spark, tmp_path):
    program = sd.Program.parse(PROGRAM, dialect="souffle")
    warehouse = Warehouse(spark, str(tmp_path / "wh"))
    edb = {(1, 2), (2, 3), (5, 6), (7, 7)}
    schema = "a long, b long"
    program.materialize(spark, inputs={"e": spark.createDataFrame(sorted(edb), schema)}, warehouse=warehouse)
    inserts, deletes = [(3, 5), (0, 9)], [(1, 2), (7, 7)]
    rows = [r + (1,) for r in inserts] + [r + (-1,) for r in deletes]
    program.update(spark, warehouse, changes={"e": spark.createDataFrame(rows, schema + ", _count long")})
    expected = reference(program.checked, {"e": (edb | set(inserts)) - set(deletes)})
    assert (2, 6) in expected["points"] and (1, 2) not in expected["points"]
    for name in ("points", "kinds", "heads"):
        assert {tuple(r) for r in warehouse.read(name).collect()} == expected[name], name
