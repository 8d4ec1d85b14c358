"""Relations without columns (``m()``): as guards, as recursive heads, negated.

Each program runs on every evaluation path (partition-local, rounds of Spark joins, the
warehouse and its incremental updates by each DRed path) and is compared with the reference
interpreter. Spark's ``toArrow`` returns no rows for a frame without columns, and a pickled
Arrow table without columns loses its row count: a true nullary fact must survive both.
"""

from __future__ import annotations

import pytest

import spark_datalog as sd
from spark_datalog.reference import evaluate as reference
from spark_datalog.storage.warehouse import Warehouse

from .test_update import DRED_PATHS, assert_dred_ran, dred_path

pytestmark = pytest.mark.spark

# issue 19, item 1: the guard's recursive facts were lost on the partition-local path
GUARD = """
e("A","B"). e("B","C"). e("C","D"). e("D","B"). m().
r(X,Y) :- m(), e(X,Y).
r(X,Y) :- m(), e(X,Z), r(Z,Y).
"""

# issue 19, item 3: IndexError in the rounds' anti-join on no columns
RECURSIVE_HEAD = """
.decl e(x: long, y: long)
m().
m() :- m(), e(_,_).
"""

INPUTS = """
.decl e(x: long, y: long)
.decl on()
.decl stop()
go() :- on(), not stop().
go() :- go(), e(_, _).
r(X, Y) :- go(), e(X, Y).
r(X, Z) :- r(X, Y), e(Y, Z), on().
a() :- b(), on().
b() :- a(), e(_, _).
a() :- e(1, _).
idle() :- on(), not go().
lonely(X) :- e(X, _), not go().
"""

EDGES = [(1, 2), (2, 3), (3, 1), (4, 5)]
SCHEMAS = {"e": "x long, y long", "on": "", "stop": ""}


def inputs(spark, edb: dict) -> dict:
    return {name: frame(spark, name, rows) for name, rows in edb.items()}


def frame(spark, name, rows):
    if SCHEMAS[name]:
        return spark.createDataFrame(list(rows), SCHEMAS[name])
    return spark.range(len(rows)).select()


def change(spark, name, inserts=(), deletes=()):
    rows = [tuple(r) + (1,) for r in inserts] + [tuple(r) + (-1,) for r in deletes]
    schema = ", ".join(part for part in (SCHEMAS[name], "_count long") if part)
    return spark.createDataFrame(rows, schema)


def facts(result, name) -> set:
    return {tuple(row) for row in result[name].collect()}


def expected(program, edb) -> dict:
    return reference(program, {name: set(rows) for name, rows in edb.items()})


@pytest.mark.parametrize("decompose", [True, False], ids=["partition-local", "rounds"])
@pytest.mark.parametrize("text", [GUARD, RECURSIVE_HEAD], ids=["guard", "recursive-head"])
def test_nullary_program_matches_reference(spark, text, decompose):
    program = sd.Program.parse(text)
    edb = {"e": EDGES} if ".decl e" in text else {}
    result = program.materialize(spark, inputs=inputs(spark, edb), decompose=decompose)
    want = expected(program, edb)
    assert want and any(want.values())
    for name, rows in want.items():
        assert facts(result, name) == rows, name


@pytest.mark.parametrize("decompose", [True, False], ids=["partition-local", "rounds"])
@pytest.mark.parametrize("on", [[()], []], ids=["on", "off"])
@pytest.mark.parametrize("stop", [[()], []], ids=["stop", "go"])
def test_nullary_inputs_guards_and_negation(spark, decompose, on, stop):
    program = sd.Program.parse(INPUTS)
    edb = {"e": EDGES, "on": on, "stop": stop}
    result = program.materialize(spark, inputs=inputs(spark, edb), decompose=decompose)
    for name, rows in expected(program, edb).items():
        assert facts(result, name) == rows, name


def stored(wh, name) -> set:
    return {tuple(row) for row in wh.read(name).collect()}


@pytest.mark.slow
@pytest.mark.parametrize("path", DRED_PATHS)
def test_nullary_warehouse_and_updates(spark, tmp_path, datalog_settings, path):
    decompose = dred_path(datalog_settings, path)
    program = sd.Program.parse(INPUTS)
    edb = {"e": list(EDGES), "on": [()], "stop": []}
    wh = Warehouse(spark, str(tmp_path / "wh"))
    program.materialize(spark, inputs=inputs(spark, edb), warehouse=wh, decompose=decompose)
    steps = [
        ("stop", [()], []),  # go() loses its only support: its cycle through e does not hold it
        ("e", [], EDGES),
        ("e", [(1, 7)], []),
        ("stop", [], [()]),
        ("on", [], [()]),
        ("on", [()], []),
    ]
    dred = 0
    for name, inserts, deletes in steps:
        report = program.update(
            spark,
            warehouse=wh,
            changes={name: change(spark, name, inserts, deletes)},
            decompose=decompose,
        )
        assert_dred_ran(report, path)
        dred += sum(stratum.method == "dred" for stratum in report.strata)
        rows = set(edb[name]) - set(deletes) | set(inserts)
        edb[name] = sorted(rows)
        for relation, want in expected(program, edb).items():
            assert stored(wh, relation) == want, (name, inserts, deletes, relation)
    assert dred  # some stratum was maintained by DRed, where the path says
