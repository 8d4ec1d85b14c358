"""autoinc(): the rules it lifts to, its numbering's description, and Soufflé's errors (in a
fact, in a recursive rule) with their positions."""

from __future__ import annotations

import pytest
from hypothesis import given

import spark_datalog as sd
from dialect_autoinc import assert_expected, assert_unique_numbers, autoinc_cases
from programs import settings
from spark_datalog.errors import SchemaError
from spark_datalog.syntax import parse
from spark_datalog.syntax.autoinc import Numbering, numbering

from syntax.test_parse_errors import assert_error, caret_column

INPUT = ".decl e(x: number, s: symbol)\n.input e\n"


def rules_of(text: str) -> list:
    return [str(rule) for rule in parse(INPUT + text).rules]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("p(X, autoinc()) :- e(X, _).", ["p(X, _autoinc) :- _autoinc = autoinc(0, 1), e(X, _)."]),
        (
            "p(autoinc(), autoinc() + 1) :- e(_, _).",
            ["p(_autoinc, (_autoinc2 + 1)) :- _autoinc = autoinc(0, 2), _autoinc2 = autoinc(1, 2), e(_, _)."],
        ),
        ("p(X) :- e(_, S), X = autoinc().", ["p(X) :- _autoinc = autoinc(0, 1), e(_, S), X = _autoinc."]),
        (
            "p(X) :- e(X, _), !e(autoinc(), _).",
            ["p(X) :- _autoinc = autoinc(0, 1), e(X, _), not e(_autoinc, _)."],
        ),
        # sites count over the program, in order: rules, then head before body
        (
            "p(autoinc()) :- e(_, _).\nq(X) :- e(X, _), X < autoinc().",
            [
                "p(_autoinc) :- _autoinc = autoinc(0, 2), e(_, _).",
                "q(X) :- _autoinc = autoinc(1, 2), e(X, _), X < _autoinc.",
            ],
        ),
        # a variable named _autoinc already: the fresh one is another
        (
            "p(_autoinc, autoinc()) :- e(_autoinc, _).",
            ["p(_autoinc, _autoinc2) :- _autoinc2 = autoinc(0, 1), e(_autoinc, _)."],
        ),
    ],
)
def test_calls_are_lifted_with_their_site(text, expected):
    assert rules_of(text) == expected


def test_the_numbering_of_a_rule():
    program = sd.Program.parse(INPUT + "p(S, Y) :- e(X, S), Z = autoinc(), Y = Z * 2, Y > X, !e(Y, S).")
    body = program.checked.rules[0].body
    counters = numbering(body)
    assert counters is not None
    assert counters.key == ("S", "X")  # by name; Z and Y are computed from the call
    assert counters.calls == (("_autoinc", 0, 1),)
    held = {str(body[i]) for i in counters.held}
    assert held == {"Z = _autoinc", "_autoinc = autoinc(0, 1)", "Y = (Z * 2)", "Y > X", "not e(Y, S)"}
    assert numbering(sd.Program.parse(INPUT + "p(X) :- e(X, _).").checked.rules[0].body) is None


def test_a_value_compared_with_a_variable_an_atom_binds():
    program = sd.Program.parse(INPUT + "q(X, Y) :- e(X, _), Y = autoinc(), e(Y, _).")
    # bindings (X, Y) ranked: (0, 0) 0, (0, 1) 1, (1, 0) 2, (1, 1) 3: Y is the number in the first two
    assert sd.reference.evaluate(program, {"e": {(0, "a"), (1, "b")}})["q"] == {(0, 0), (0, 1)}


def test_values_are_rank_times_sites_plus_site():
    counters = Numbering(("X",), (("_a", 2, 3),), frozenset())
    assert [counters.value(rank, 2, 3) for rank in range(3)] == [2, 5, 8]


@pytest.mark.parametrize(
    "text, line, column, fragment",
    [
        ("p(autoinc()).", 3, 3, "autoinc() in a fact (Soufflé: counter in fact)"),
        ("p(1, autoinc() + 2).", 3, 6, "counter in fact"),
        ("p(X) :- e(autoinc(), X).", 3, 11, "autoinc() in a body atom is not supported"),
        ("p(autoinc(3)) :- e(_, _).", 3, 3, "functor 'autoinc' takes 0 arguments, given 1"),
    ],
)
def test_parse_errors(text, line, column, fragment):
    assert_error(INPUT + text, line, column, fragment)


@pytest.mark.parametrize(
    "text, line, column, fragment",
    [
        (
            "p(X, Y) :- e(X, _), Y = autoinc().\np(X, Y) :- p(Y, X), Z = autoinc(), Z > 0.",
            4,
            25,
            "autoinc() in a recursive rule (Soufflé: auto-increment functor in a recursive rule)",
        ),
        # mutual recursion through q
        ("p(X, autoinc()) :- q(X).\nq(X) :- p(X, _).\nq(X) :- e(X, _).", 3, 6, "in a recursive rule"),
        (
            "p(X) :- e(X, _), Y = autoinc(), e(Y + 1, _).",
            3,
            22,
            "autoinc()'s value in a body atom is not supported",
        ),
    ],
)
def test_schema_errors(text, line, column, fragment):
    with pytest.raises(SchemaError) as info:
        sd.Program.parse(INPUT + text, filename="prog.dl")
    error = info.value
    assert (error.line, error.column) == (line, column), str(error)
    assert str(error).startswith(f"prog.dl:{line}:{column}: schema error: ") and fragment in str(error)
    assert caret_column(error) == column


def test_a_non_recursive_rule_of_a_recursive_stratum_may_call_it():
    text = INPUT + "p(X, autoinc()) :- e(X, _).\np(X, Y) :- p(Y, X).\n"
    program = sd.Program.parse(text)
    result = sd.reference.evaluate(program, {"e": {(5, "a"), (7, "b")}})
    assert result["p"] == {(5, 0), (7, 1), (0, 5), (1, 7)}


@settings(default=60)
@given(case=autoinc_cases())
def test_random_programs_on_the_reference(case):
    text, edb, expected, calls = case
    result = sd.reference.evaluate(sd.Program.parse(text), edb)
    assert_expected(result, expected, text)
    assert_unique_numbers(result, calls)
