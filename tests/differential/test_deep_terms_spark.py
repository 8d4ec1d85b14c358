"""Deep expressions on Spark (issue 19, items 7 and 9): checked integer arithmetic nested
SPARK_MAX_TERM_DEPTH operations deep plans and evaluates on every Spark path (non-recursive
projections and selections, recursive strata partition-local and in rounds, counting and DRed
updates) with the reference's results, overflows and undefined divisions; one operation deeper
is a LimitError at the expression, before any work starts.

Before the fix, a 30-term sum was never planned: each checked operation copied its operands
into the Column tree four times (4^depth), and Spark's subexpression elimination walks nested
conditional expressions at 2^depth."""

from __future__ import annotations

import pytest

import spark_datalog as sd
from spark_datalog.spark.limits import SPARK_MAX_TERM_DEPTH
from spark_datalog.storage.warehouse import Warehouse
from incremental.test_update import DRED_PATHS, assert_dred_ran, change, dred_path

N = SPARK_MAX_TERM_DEPTH  # operations


def _sum(n: int) -> str:
    """``X + X + ... + X``: n operations, left-nested."""
    return " + ".join(["X"] * (n + 1))


HEADER = ".decl e(x: long)\n.input e\n"
CASES = {
    "assignment": f"p(Y) :- e(X), Y = {_sum(N)}.",
    "head": f"p({_sum(N)}) :- e(X).",
    "comparison": f"p(X) :- e(X), X * 50 < {_sum(N - 1)} + 0.",
    "atom": f"p(X) :- e(X), e(({_sum(N - 2)}) - ({_sum(N - 4)})).",  # e(2X)
    "division by zero inside": f"p(Y) :- e(X), Y = X / (X - 2) + {_sum(N - 3)}.",
    "overflow inside": f"p(Y) :- e(X), Y = X * 4611686018427387904 + {_sum(N - 2)}.",
}
INT_CASE = f"p(Y) :- e(X), Y = X * 1073741824 + {_sum(N - 2)}."  # 2 * 2^30 does not fit int
ROWS = [(0,), (1,), (2,), (3,), (202,)]


def _outcome(run):
    try:
        return "ok", run()
    except sd.DatalogError as error:
        return type(error).__name__, (error.line, error.column), error.message.partition(" (in rule ")[2]


def _on_spark(spark, program, decompose, schema="x long"):
    inputs = {"e": spark.createDataFrame(ROWS, schema)}
    result = program.materialize(spark, inputs=inputs, decompose=decompose)
    return {name: {tuple(r) for r in result[name].collect()} for name in result.relations}


@pytest.mark.parametrize("case", list(CASES))
def test_a_deep_expression_on_spark_equals_the_reference(spark, case):
    program = sd.Program.parse(HEADER + CASES[case])
    expected = _outcome(lambda: sd.reference.evaluate(program, {"e": set(ROWS)}))
    assert _outcome(lambda: _on_spark(spark, program, True)) == expected
    if case == "overflow inside":
        assert expected[0] == "ArithmeticOverflowError"
    else:
        assert expected[0] == "ok" and expected[1]["p"]


def test_a_deep_int_expression_overflows_as_in_the_reference(spark):
    program = sd.Program.parse(".decl e(x: int)\n.input e\n" + INT_CASE)
    expected = _outcome(lambda: sd.reference.evaluate(program, {"e": set(ROWS)}))
    assert expected[0] == "ArithmeticOverflowError"
    assert _outcome(lambda: _on_spark(spark, program, True, "x int")) == expected
    fitting = sd.reference.evaluate(program, {"e": {(0,), (1,)}})
    inputs = {"e": spark.createDataFrame([(0,), (1,)], "x int")}
    result = program.materialize(spark, inputs=inputs)
    assert {tuple(r) for r in result["p"].collect()} == fitting["p"]


RECURSIVE = HEADER + (
    "r(X) :- e(X).\n"
    f"r(Z) :- r(X), Z = X{' + 1 - 1' * (N // 2 - 1)} + 1, Z < 12.\n"  # N - 1 operations: Z = X + 1
)


@pytest.mark.parametrize("decompose", [True, False], ids=["partition-local", "rounds"])
def test_a_deep_expression_in_a_recursive_rule_equals_the_reference(spark, decompose):
    program = sd.Program.parse(RECURSIVE)
    expected = sd.reference.evaluate(program, {"e": set(ROWS)})
    assert expected["r"] == {(x,) for x in range(12)} | {(202,)}
    assert _on_spark(spark, program, decompose) == expected


@pytest.mark.slow
@pytest.mark.parametrize("path", DRED_PATHS)
def test_an_update_through_a_deep_expression_equals_the_reference(spark, tmp_path, datalog_settings, path):
    decompose = dred_path(datalog_settings, path)
    program = sd.Program.parse(RECURSIVE + f"s(Y) :- r(X), Y = {_sum(N)}.\n")
    wh = Warehouse(spark, str(tmp_path / "wh"))
    program.materialize(spark, inputs={"e": spark.createDataFrame(ROWS, "x long")}, warehouse=wh)
    changes = {"e": change(spark, "e", inserts=[(300,)], deletes=[(0,)], schema="x long")}
    report = program.update(spark, wh, changes=changes, decompose=decompose)
    assert_dred_ran(report, path)
    expected = sd.reference.evaluate(program, {"e": (set(ROWS) - {(0,)}) | {(300,)}})
    for name in ("r", "s"):
        assert {tuple(row) for row in wh.read(name).collect()} == expected[name]


def test_one_operation_deeper_is_a_limit_error_at_the_expression(spark, tmp_path):
    text = HEADER + f"p(Y) :- e(X),\n  Y = {_sum(N + 1)}.\n"
    program = sd.Program.parse(text)
    assert sd.reference.evaluate(program, {"e": {(1,)}}) == {"p": {(N + 2,)}}
    with pytest.raises(sd.LimitError) as caught:
        _on_spark(spark, program, True)
    error = caught.value
    assert f"nested {N + 1} operations deep" in error.message and "p(Y) :- e(X)" in error.message
    assert error.line == 4 and "^" in str(error)
    with pytest.raises(sd.LimitError):
        program.update(spark, Warehouse(spark, str(tmp_path / "wh")), changes={})
