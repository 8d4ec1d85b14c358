"""Deeply nested programs (issue 19, item 9): 500 nested parentheses, a 500-term sum or 500
negations go through parsing, analysis, translation, explain and evaluation without a
RecursionError; beyond MAX_TERM_DEPTH operations an expression is a ParseError at its operator."""

from __future__ import annotations

import pytest

import spark_datalog as sd
from spark_datalog.reference import evaluate
from spark_datalog.syntax.parser import MAX_TERM_DEPTH

N = 500


def _nested_sum(n: int) -> str:
    return "(" * (n - 1) + "X" + "".join(f" + {i})" for i in range(1, n))


# expression text -> its value for X = 2 (computed without the engine)
CASES = {
    "parentheses": ("(" * N + "X" + ")" * N, 2),
    "sum": (" + ".join(["X"] * N), 2 * N),
    "nested_sum": (_nested_sum(N), 2 + sum(range(1, N))),
    "negations": ("-" * N + "X", 2),  # an even number of minus signs
    "right_nested": ("X - (" * (N - 1) + "X" + ")" * (N - 1), 0),  # X - (X - (... - X))
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("place", ["assignment", "head", "atom", "comparison"])
def test_deep_terms_parse_check_plan_explain_and_evaluate(name, place):
    expr, value = CASES[name]
    body = {
        "assignment": f"p(Y) :- e(X), Y = {expr}.",
        "head": f"p({expr}) :- e(X).",
        "atom": f"p(X) :- e(X), v({expr}).",
        "comparison": f"p(X) :- e(X), X < {expr} + 1, X >= {expr} - 1.",
    }[place]
    inputs = ".input e, v" if place == "atom" else ".input e"
    program = sd.Program.parse(f"{inputs}\n{body}\n")
    assert program.plans
    assert "p" in program.explain()
    expected = {"assignment": {(value,)}, "head": {(value,)}, "atom": {(2,)}, "comparison": {(2,)}}[place]
    if place == "comparison" and not value - 1 <= 2 < value + 1:
        expected = set()
    for strategy in ("naive", "seminaive"):
        edb = {"e": {(2,)}, "v": {(value,)}} if place == "atom" else {"e": {(2,)}}
        assert evaluate(program, edb, strategy=strategy) == {"p": expected}


def test_an_expression_deeper_than_the_limit_is_a_parse_error_at_its_operator():
    text = ".input e\np(Y) :- e(X), Y = " + " + ".join(["X"] * (MAX_TERM_DEPTH + 2)) + ".\n"
    with pytest.raises(sd.ParseError) as caught:
        sd.Program.parse(text)
    error = caught.value
    assert "nested deeper than" in error.message
    assert error.line == 2 and text.splitlines()[1][error.column - 1] == "+"
    assert len(error.errors) == 1


def test_the_deepest_accepted_expression_still_works():
    program = sd.Program.parse(
        ".input e\np(Y) :- e(X), Y = " + " + ".join(["X"] * (MAX_TERM_DEPTH + 1)) + ".\n"
    )
    assert evaluate(program, {"e": {(1,)}}) == {"p": {(MAX_TERM_DEPTH + 1,)}}
    assert program.explain()
