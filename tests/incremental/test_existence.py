"""Atoms that bind no variable (``e(_, _)``) are existence tests (issue 19, item 6).

Ten of them in one rule, over relations of 20-50 facts, made a product of about 10^9 rows (more
here: 40^3 * 30^3 * 25^3 ...); as existence tests the rule is as cheap as its one binding atom.
Each path is compared with the reference interpreter: partition-local and rounds of Spark
joins, the kernel, and the warehouse through updates that switch the tests off and on
again (counting of a non-recursive stratum, whose stored derivation counts must equal a fresh
materialization's, and DRed of a recursive one).
"""

from __future__ import annotations

import pytest

import spark_datalog as sd
from spark_datalog.kernel.checks import collect_all
from spark_datalog.kernel.compile import compile_node
from spark_datalog.kernel.frames import facts_table
from spark_datalog.reference import evaluate as reference
from spark_datalog.storage.warehouse import Warehouse

from .test_update import stored

pytestmark = pytest.mark.spark

TEXT = """
.decl a(x: long, y: long)
.decl b(x: long)
.decl c(x: long, y: long, z: long)
r(X, Y) :- a(X, Y), a(_, _), b(_), c(_, _, _), a(_, _), b(_), c(_, _, _), a(_, _), b(_), c(1, _, _), b(_).
tc(X, Y) :- a(X, Y), b(_).
tc(X, Z) :- tc(X, Y), a(Y, Z), c(_, _, _), b(_), a(_, _).
some() :- a(_, _), c(1, _, _).
none(X) :- b(X), not some().
"""

SCHEMAS = {"a": "x long, y long", "b": "x long", "c": "x long, y long, z long"}
EDB = {
    "a": [(i, (i * 7 + 1) % 40) for i in range(40)],
    "b": [(i,) for i in range(30)],
    "c": [(i % 5, i, i + 1) for i in range(25)],
}


def frames(spark, edb):
    return {name: spark.createDataFrame(rows, SCHEMAS[name]) for name, rows in edb.items()}


def expected(program, edb):
    return reference(program, {name: set(rows) for name, rows in edb.items()})


@pytest.mark.parametrize("decompose", [True, False], ids=["partition-local", "rounds"])
def test_ten_existence_tests_match_the_reference(spark, decompose):
    program = sd.Program.parse(TEXT)
    result = program.materialize(spark, inputs=frames(spark, EDB), decompose=decompose)
    want = expected(program, EDB)
    assert len(want["r"]) == 40 and want["tc"] and want["some"] == {()} and not want["none"]
    for name, rows in want.items():
        assert {tuple(row) for row in result[name].collect()} == rows, name


def test_the_kernel_evaluates_the_tests():
    program = sd.Program.parse(TEXT)
    (r_plan,) = [p.plan for s in program.plans for p in s.rules if p.relation == "r"]
    schemas = program.checked.relations
    tables = {n: facts_table(schemas[n].column_names, schemas[n].types, rows) for n, rows in EDB.items()}
    (frame,) = collect_all([compile_node(r_plan, {(n, "full"): t for n, t in tables.items()}).frame])
    assert set(frame.rows()) == expected(program, EDB)["r"]


def change(spark, name, inserts=(), deletes=()):
    rows = [tuple(r) + (1,) for r in inserts] + [tuple(r) + (-1,) for r in deletes]
    return spark.createDataFrame(rows, SCHEMAS[name] + ", _count long")


@pytest.mark.slow
def test_existence_tests_through_updates(spark, tmp_path):
    program = sd.Program.parse(TEXT)
    edb = {name: list(rows) for name, rows in EDB.items()}
    wh = Warehouse(spark, str(tmp_path / "wh"))
    program.materialize(spark, inputs=frames(spark, edb), warehouse=wh)
    ones = [row for row in edb["c"] if row[0] == 1]
    steps = [
        ("c", [], ones),  # c(1, _, _) false: r and some() empty, none() full
        ("b", [(99,)], []),
        ("c", ones[:1], []),  # true again
        ("b", [], edb["b"] + [(99,)]),  # every b(_) false
        ("b", [(5,)], []),
        ("a", [(100, 0)], edb["a"][:10]),
    ]
    for name, inserts, deletes in steps:
        program.update(spark, warehouse=wh, changes={name: change(spark, name, inserts, deletes)})
        edb[name] = sorted(set(edb[name]) - set(deletes) | set(inserts))
        for relation, want in expected(program, edb).items():
            assert stored(wh, relation) == want, (name, relation)
    fresh = Warehouse(spark, str(tmp_path / "fresh"))
    program.materialize(spark, inputs=frames(spark, edb), warehouse=fresh)
    for relation in ("r", "some", "none"):  # derivation counts of the counted strata
        assert stored(wh, relation, counts=True) == stored(fresh, relation, counts=True), relation
