"""Generators (range, urange, frange): the rules they lift to, and their
errors (class, line, column)."""

from __future__ import annotations

import pytest
from tests.syntax.test_parse_errors import assert_error

import spark_datalog as sd
from spark_datalog.errors import SafetyError, SchemaError
from spark_datalog.syntax import parse


@pytest.mark.parametrize(
    "text, lifted",
    [
        # binding its variable itself: kept as written (analysis makes it an assignment)
        ("r(X) :- X = range(0, 10).", "r(X) :- X = range(0, 10)."),
        ("r(X, Y) :- p(X, N), Y = range(X, N, 2).", "r(X, Y) :- p(X, N), Y = range(X, N, 2)."),
        # anywhere else, a fresh variable bound by the lifted generator
        ("r(range(1, 4)).", "r(_range) :- _range = range(1, 4)."),
        ("r(X) :- p(X), X = range(0, 3).", "r(X) :- p(X), X = _range, _range = range(0, 3)."),
        ("r(X) :- p(X), X < frange(0, 1).", "r(X) :- p(X), X < _frange, _frange = frange(0, 1)."),
        ("r(X + urange(0, 2)) :- p(X).", "r((X + _urange)) :- p(X), _urange = urange(0, 2)."),
        (
            "r(X) :- X = range(0, range(1, 3)).",
            "r(X) :- X = range(0, _range), _range = range(1, 3).",
        ),
        ("r(X) :- q(X), !p(range(0, 2)).", "r(X) :- q(X), not p(_range), _range = range(0, 2)."),
        # a user's variable named like the fresh one is not reused
        ("r(_range) :- p(_range, range(0, 2)).", "r(_range) :- p(_range, _range2), _range2 = range(0, 2)."),
    ],
)
def test_generators_are_lifted(text, lifted):
    (rule,) = parse(text, dialect="souffle").rules
    assert str(rule) == lifted.replace("!p", "not p")


def test_range_in_a_fact_is_a_rule():
    program = sd.Program.parse(".decl r(x: number)\nr(range(1, 4)).\n.output r", dialect="souffle")
    assert sd.reference.evaluate(program, {})["r"] == {(1,), (2,), (3,)}


def test_types_of_generators():
    text = """
        .decl p(x: number)
        .input p
        a(X) :- p(N), X = range(0, N).
        b(X) :- p(N), X = range(0.5, N).
        c(X) :- p(N), X = frange(0, N).
        d(X) :- p(N), X = urange(0, N).
    """
    relations = sd.Program.parse(text).checked.relations
    assert [relations[n].types for n in "abcd"] == [("long",), ("double",), ("double",), ("long",)]


@pytest.mark.parametrize(
    "text, column, fragment",
    [
        ("r(X) :- X = range(1).", 13, "functor 'range' takes 2 or 3 arguments, given 1"),
        ("r(X) :- X = frange(1, 2, 3, 4).", 13, "functor 'frange' takes 2 or 3 arguments, given 4"),
        ("r(X) :- X = urange().", 13, "functor 'urange' takes 2 or 3 arguments, given 0"),
    ],
)
def test_generator_arity(text, column, fragment):
    assert_error(text, 1, column, fragment)


def _error(text: str):
    with pytest.raises(sd.DatalogError) as info:
        sd.Program.parse(text)
    return info.value


def test_unbound_generator_argument():
    error = _error("r(X) :- X = range(0, N).")
    assert isinstance(error, SafetyError)
    messages = [str(e) for e in error.errors]
    assert any(":1:22: safety error: variable N in comparison 'X = range(0, N)'" in m for m in messages)


@pytest.mark.parametrize(
    "text, column, fragment",
    [
        ('.decl p(x: number)\n.input p\nr(X) :- p(Y), X = range("a", Y).', 25, 'type conflict for value "a"'),
        (".decl p(x: number)\n.input p\nr(X) :- p(Y), X = urange(Y, 1.5).", 29, "argument 1.5 of 'urange'"),
    ],
)
def test_generator_argument_types(text, column, fragment):
    error = _error(text)
    assert isinstance(error, SchemaError)
    assert (error.line, error.column) == (3, column), str(error)
    assert fragment in str(error)
