"""Soufflé's declared types checked in rules (distinct subtypes are not mixed) and ``as``
casts: what is accepted and lowered to, and the errors (class, line, column, caret)."""

from __future__ import annotations

import pytest
from tests.syntax.test_parse_errors import caret_column

import spark_datalog as sd
from spark_datalog.errors import ParseError, SchemaError
from spark_datalog.syntax import parse

TYPES = """\
.type A <: number
.type B <: number
.type U = A | B
.type Id = A
.type S <: symbol
.decl a(x: A)
.decl b(x: B)
.decl c(x: A)
.decl n(x: number)
.decl u(x: U)
.decl s(x: symbol)
.decl t(x: S)
.decl i(x: Id)
"""
LINE = TYPES.count("\n") + 1  # the line of the rule appended to TYPES


def rule_of(text: str) -> str:
    return str(parse(TYPES + text, dialect="souffle").rules[0])


def schema_error(text: str, column: int, *fragments: str) -> SchemaError:
    with pytest.raises(SchemaError) as info:
        parse(TYPES + text, "prog.dl", dialect="souffle")
    error = info.value
    assert (error.line, error.column) == (LINE, column), str(error)
    message = str(error)
    assert message.startswith(f"prog.dl:{LINE}:{column}: schema error: "), message
    for fragment in fragments:
        assert fragment in message, message
    assert caret_column(error) == column
    return error


@pytest.mark.parametrize(
    "text",
    [
        "n(X) :- a(X).",  # a subtype where its base type is expected
        "c(X) :- n(X), a(X).",  # a number that is also an A is an A
        "u(X) :- a(X).",  # a union holds its members
        "u(X) :- b(X).",
        "c(X) :- u(X), a(X).",  # the values of U that are A
        "i(X) :- a(X).",  # an equivalent type is the same type
        "c(X) :- i(X).",
        "c(1).",  # a number literal goes into any number subtype
        'c(X) :- a(X), X != 3, t("x").',
        "c(Y) :- a(X), Y = X.",  # the type travels through an assignment
        "c(X) :- a(X), !c(X).",
        "n(X + 1) :- a(X).",  # a computed value is of every subtype of its kind
        "s(to_string(X)) :- a(X).",
        "c(X + 1) :- a(X).",
        "c(X + 1) :- b(X).",
        "c(Y) :- b(X), Y = X * 2.",
        't(cat(X, "!")) :- s(X).',
        'c(X) :- a(X), X < strlen("ab").',
    ],
)
def test_types_that_agree_are_accepted(text):
    program = parse(TYPES + text, dialect="souffle")
    assert len(program.rules) + len(program.facts) == 1


@pytest.mark.parametrize(
    "text, column, fragments",
    [
        # a join of an A column with a B column: at the second occurrence
        ("c(X) :- a(X), b(X).", 17, ("type mismatch for variable X: B (column 'x' of relation 'b')", "vs A")),
        ("c(X) :- a(X), b(Y), X = Y.", 21, ("'X = Y' compares X of type A with Y of type B",)),
        ("c(X) :- a(X), b(Y), X < Y.", 21, ("'X < Y' compares",)),
        ("c(X) :- b(X).", 3, ("column 'x' of relation 'c' has type A but is given X of type B",)),
        ("c(X) :- n(X).", 3, ("has type A but is given X of type number",)),
        ("c(X) :- u(X).", 3, ("has type A but is given X of type U",)),
        ("c(X) :- a(X), !b(X).", 18, ("relation 'b' has type B but is given X of type A",)),
        ("t(X) :- s(X).", 3, ("relation 't' has type S but is given X of type symbol",)),
    ],
)
def test_mixing_types_is_a_schema_error(text, column, fragments):
    schema_error(text, column, *fragments)


# ---------------------------------------------------------------------------------------------
# as(expr, Type)


@pytest.mark.parametrize(
    "text, lowered",
    [
        ("c(as(X + 1, A)) :- a(X).", "c((X + 1)) :- a(X)."),
        ("c(as(X, A)) :- b(X).", "c(X) :- b(X)."),
        ("c(Y) :- b(X), Y = as(X, Id).", "c(Y) :- b(X), Y = X."),
        ("t(as(X, S)) :- s(X).", "t(X) :- s(X)."),
        ("c(X) :- a(X), b(Y), X = as(Y, A).", "c(X) :- a(X), b(Y), X = Y."),
        ("c(as(as(X, number), A)) :- b(X).", "c(X) :- b(X)."),
    ],
)
def test_a_cast_changes_the_type_and_is_removed(text, lowered):
    assert rule_of(text) == lowered


@pytest.mark.parametrize(
    "text, column, fragments",
    [
        ("s(as(X, symbol)) :- a(X).", 3, ("as(X, symbol) gives a number value the type symbol", "to_string")),
        ("c(X) :- s(Y), X = as(Y, A).", 19, ("gives a symbol value the type A (number)", "to_number")),
    ],
)
def test_a_cast_between_kinds_is_a_schema_error(text, column, fragments):
    schema_error(text, column, *fragments)


def test_a_cast_to_an_unknown_type_is_an_error_at_the_name():
    schema_error("c(as(X, Q)) :- a(X).", 9, "unknown type 'Q' in as(X, Q)")


def test_as_is_a_name_where_no_parenthesis_follows():
    assert rule_of("s(as) :- s(_).") == "s(as) :- s(_)."


def test_as_takes_an_expression_and_a_type_name():
    with pytest.raises(ParseError) as info:
        parse(TYPES + "c(as(X)) :- a(X).", dialect="souffle")
    assert info.value.line == LINE


def test_casts_run_on_every_engine_as_their_expression():
    """The engines see the expression: the reference computes c(x + 1) for as(x + 1, A)."""
    program = sd.Program.parse(TYPES + "c(as(X + 1, A)) :- a(X).\n.output c", dialect="souffle")
    assert sd.reference.evaluate(program, {"a": {(1,), (5,)}})["c"] == {(2,), (6,)}
