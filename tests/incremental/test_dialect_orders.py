"""Subsumption (a general body in recursion included, reading its own relation, negating and
aggregating others) and choice-domain (greedy ones included: in recursion, several keys)
through ``update``: equal to evaluating the changed inputs."""

from __future__ import annotations

import spark_datalog as sd
from spark_datalog.reference import evaluate as reference
from spark_datalog.storage.warehouse import Warehouse

PROGRAM = """
.decl e(x: number, y: number, d: number)
.input e
.decl path(x: number, y: number, d: number)
path(x, y, d) :- e(x, y, d).
path(x, y, d + w) :- path(x, z, d), e(z, y, w).
path(x, y, d1) <= path(x, y, d2) :- d2 <= d1.
.decl first(x: number, y: number, d: number) choice-domain x
first(x, y, d) :- e(x, y, d).
.decl st(x: number, y: number) choice-domain y
st(1, y) :- e(1, y, _).
st(x, y) :- st(_, x), e(x, y, _).
.decl pair(x: number, y: number) choice-domain x, y
pair(x, y) :- e(x, y, _).
.decl pareto(x: number, y: number, l: number, c: number)
pareto(x, y, 1, d) :- e(x, y, d).
pareto(x, y, l + 1, c + d) :- pareto(x, z, l, c), e(z, y, d).
pareto(x, y, l1, c1) <= pareto(x, y, l2, c2) :- l2 <= l1, c2 <= c1.
.decl reach(x: number, y: number)
reach(x, y) :- e(x, y, _).
reach(x, z) :- reach(x, y), e(y, z, _).
reach(x, y) <= reach(x2, y2) :- heavy(x2, x), y = y2.
.decl heavy(a: number, b: number)
heavy(a, b) :- e(a, b, d), d >= 2.
.decl hop(x: number, y: number)
hop(x, y) :- e(x, y, _).
hop(x, z) :- hop(x, y), e(y, z, _).
hop(x, y) <= hop(x, z) :- !e(x, y, _), hop(y, z).
.decl far(x: number, y: number)
far(x, y) :- e(x, y, _).
far(x, z) :- far(x, y), e(y, z, _).
far(x, y) <= far(x, z) :- count : { e(y, _, _) } < count : { e(z, _, _) }.
.decl best(x: number, d: number)
best(x, d) :- e(x, _, d).
best(x, d) <= best(y, c) :- !light(x), best(x, c), c < d, y = x.
.decl light(x: number)
light(x) :- e(x, _, 1).
.output path, first, st, pair, pareto, reach, hop, far, best
"""


def test_update_through_subsumption_and_choices_equals_recomputation(spark, tmp_path):
    program = sd.Program.parse(PROGRAM, dialect="souffle")
    warehouse = Warehouse(spark, str(tmp_path / "wh"))
    edb = {(1, 2, 5), (2, 1, 1), (1, 3, 9), (2, 3, 2), (3, 4, 1)}
    schema = "x long, y long, d long"
    program.materialize(spark, inputs={"e": spark.createDataFrame(sorted(edb), schema)}, warehouse=warehouse)
    inserts, deletes = [(1, 3, 1), (4, 1, 2)], [(2, 1, 1), (3, 4, 1)]
    rows = [r + (1,) for r in inserts] + [r + (-1,) for r in deletes]
    program.update(spark, warehouse, changes={"e": spark.createDataFrame(rows, schema + ", _count long")})
    expected = reference(program.checked, {"e": (edb | set(inserts)) - set(deletes)})
    assert all(expected.values())
    for name in ("path", "first", "st", "pair", "pareto", "reach", "hop", "far", "best"):
        assert {tuple(r) for r in warehouse.read(name).collect()} == expected[name], name
