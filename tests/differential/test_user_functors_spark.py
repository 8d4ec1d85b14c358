"""User-defined functors on Spark: random functions equal the reference, a failing function is
a FunctorError (not a Py4J traceback), and an incremental update through a functor equals a
full recomputation. (The hand-checked program is ``dialect_programs.USER_FUNCTORS``.)"""

from __future__ import annotations

import pytest
from hypothesis import given, settings

import spark_datalog as sd
from spark_datalog.storage.warehouse import Warehouse
from user_functor_cases import TEXT, arithmetic, user_functor_cases

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
