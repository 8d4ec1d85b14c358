"""User-defined functors on Spark: random functions equal the reference, a failing function is
a FunctorError (not a Py4J traceback), and an incremental update through a functor equals a
full recomputation. (The hand-checked program is ``dialect_programs.USER_FUNCTORS``.)"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings

import spark_datalog as sd
from spark_datalog.storage.warehouse import Warehouse
from user_functor_cases import TEXT, arithmetic, user_functor_cases

from .test_spark_vs_reference import _normal_set as normal_set
from .test_spark_vs_reference import input_frames, reference_result, spark_result, spark_settings

pytestmark = pytest.mark.spark

FAILING = """.functor inv(x: number): number
.decl e(x: number, y: number)
.input e
"""
# inv raises on 0: in a plain rule, and in a recursive one (a partition-local fixpoint: the
# kernel runs inside a Spark task)
RULES = {
    "plain": "q(X, Q) :- e(X, _), Q = @inv(X).",
    "recursive": "r(X, Y) :- e(X, Y).\nr(X, Z) :- r(X, Y), e(Y, Z), @inv(Z) > 0.",
}


@settings(spark_settings, max_examples=2)  # ~13 s each: the kernel test runs 60
@given(case=user_functor_cases())
def test_random_user_functors_on_spark_equal_the_reference(spark, case):
    text, edb, functors = case
    program = sd.Program.parse(text, functors=functors)
    assert spark_result(spark, program, edb) == reference_result(program, edb)


@pytest.mark.parametrize(
    "rules, decompose, vectorized",
    [("plain", True, True), ("recursive", True, False), ("recursive", False, False)],
)
def test_a_raising_function_is_a_functor_error(spark, rules, decompose, vectorized):
    # pandas divides a Series by zero without raising: the vectorized one raises itself
    function = (lambda s: 12 // s if (s != 0).all() else 12 // 0) if vectorized else (lambda x: 12 // x)
    program = sd.Program.parse(FAILING + RULES[rules]).functor("inv", function, vectorized=vectorized)
    with pytest.raises(sd.FunctorError) as info:
        spark_result(spark, program, {"e": {(1, 2), (0, 1), (2, 0)}}, decompose=decompose)
    assert "functor @inv raised ZeroDivisionError" in info.value.message, info.value.message
    assert (info.value.line, info.value.column) == (1, 10) and "Py4J" not in str(info.value)


def test_an_update_through_a_functor_equals_a_recomputation(spark, tmp_path):
    text = TEXT.format(threshold=-1)
    function = arithmetic(1, 2, -3, 2)
    program = sd.Program.parse(text, functors={"f": function})
    edb = {"e": {(0, 1), (1, 2), (2, 3), (3, 1), (4, 4)}}
    wh = Warehouse(spark, str(tmp_path / "wh"))
    program.materialize(spark, inputs=input_frames(spark, program, edb), warehouse=wh)
    inserts, deletes = [(2, 4), (4, 0)], [(1, 2)]
    rows = [r + (1,) for r in inserts] + [r + (-1,) for r in deletes]
    changes = spark.createDataFrame(rows, "x long, y long, _count long")
    report = program.update(spark, wh, changes={"e": changes})
    assert {s.method for s in report.strata} == {"counting", "dred"}, report
    after = {"e": (edb["e"] | set(inserts)) - set(deletes)}
    expected = reference_result(program, after)
    assert any(expected.values())
    for name, facts in expected.items():
        assert {tuple(r) for r in wh.read(name).collect()} == facts, name


# Functors bound to Spark SQL functions (``sd.spark_function``): built-ins and a function
# registered in the session, each with its Python twin for the reference
SQL_TEXT = """.functor up(s: symbol): symbol
.functor near(x: number, y: number): number
.functor root(x: float): float
.functor twice(x: number): number
.decl label(id: number, s: symbol)
.decl e(x: number, y: number)
.input label
.input e
shout(I, T) :- label(I, S), T = @up(S).
reach(X, Y) :- e(X, Y).
reach(X, Z) :- reach(X, Y), e(Y, Z), @near(X, Z) < 4.
roots(X, R) :- e(X, _), R = @root(to_float(X) - 2.0).
doubled(X, D) :- e(X, _), D = @twice(X), !shout(X, _).
"""
SQL_EDB = {"label": {(0, "zero"), (1, "one"), (5, "five")}, "e": {(0, 1), (1, 2), (2, 3), (3, 0), (4, 5)}}
REACH_PLACEMENT = "@near is the Spark SQL function 'greatest', which runs only in Spark plans"


def _sql_program(spark):
    spark.udf.register("twice_sd", lambda x: None if x is None else 2 * x, "bigint")
    functors = {
        "up": sd.spark_function("upper", python=str.upper),
        "near": sd.spark_function("greatest", python=max),
        "root": sd.spark_function("sqrt", python=lambda x: math.sqrt(x) if x >= 0 else None),
        "twice": sd.spark_function("twice_sd", python=lambda x: 2 * x),
    }
    return sd.Program.parse(SQL_TEXT, functors=functors)


def test_spark_sql_functions_run_in_spark_plans_and_equal_their_python_twins(spark):
    program = _sql_program(spark)
    result = program.materialize(spark, inputs=input_frames(spark, program, SQL_EDB))
    actual = {name: normal_set(tuple(r) for r in result[name].collect()) for name in result}
    expected = reference_result(program, SQL_EDB)
    assert actual == expected
    assert expected["shout"] == {(0, "ZERO"), (1, "ONE"), (5, "FIVE")}
    assert (2, 0.0) in expected["roots"] and not any(x < 2 for x, _ in expected["roots"])  # sqrt(-1): none
    (reach,) = [s for s in result.stats if s.relations == ("reach",)]
    assert (reach.placement.where, reach.placement.reason) == ("rounds", REACH_PLACEMENT)


def test_an_update_through_spark_sql_functions_equals_a_recomputation(spark, tmp_path):
    program = _sql_program(spark)
    wh = Warehouse(spark, str(tmp_path / "wh"))
    program.materialize(spark, inputs=input_frames(spark, program, SQL_EDB), warehouse=wh)
    changes = spark.createDataFrame([(2, 4, 1), (4, 0, 1), (1, 2, -1)], "x long, y long, _count long")
    report = program.update(spark, wh, changes={"e": changes})
    (reach,) = [s for s in report.strata if s.relations == ("reach",)]
    assert reach.method == "dred"
    assert (reach.placement.where, reach.placement.reason) == ("rounds", REACH_PLACEMENT)
    after = {**SQL_EDB, "e": (SQL_EDB["e"] | {(2, 4), (4, 0)}) - {(1, 2)}}
    for name, facts in reference_result(program, after).items():
        assert normal_set(tuple(r) for r in wh.read(name).collect()) == facts, name


def test_an_unknown_spark_sql_function_is_a_functor_error_before_any_work(spark, tmp_path):
    program = sd.Program.parse(SQL_TEXT).functor("up", sd.spark_function("no_such_fn"))
    for name in ("near", "root", "twice"):
        program.functor(name, sd.spark_function("abs"))
    wh = Warehouse(spark, str(tmp_path / "wh"))
    with pytest.raises(sd.FunctorError) as info:
        program.materialize(spark, inputs=input_frames(spark, program, SQL_EDB), warehouse=wh)
    assert (info.value.line, info.value.column) == (1, 10)
    assert "bound to the Spark SQL function 'no_such_fn', which this Spark session does not know" in str(
        info.value
    )
    assert not (tmp_path / "wh").exists() or not any((tmp_path / "wh").iterdir())
