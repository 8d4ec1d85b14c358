"""Type inference of relation columns and type errors."""

from __future__ import annotations

import pytest

from spark_datalog.errors import SchemaError

from .analysis_helpers import check, errors


def types(checked, relation) -> tuple:
    return checked.relations[relation].types


def test_declared_types_and_names_are_kept():
    checked = check(".decl arc(src: int, dst: int)\ntc(X, Y) :- arc(X, Y).\n")
    assert checked.relations["arc"].column_names == ("src", "dst")
    assert types(checked, "arc") == ("int", "int")
    assert checked.relations["arc"].declared and not checked.relations["tc"].declared


def test_types_propagate_through_variables_to_undeclared_relations():
    checked = check(".decl e(a: string, b: double)\np(Y, X) :- e(X, Y).\nq(A) :- p(A, _).\nr(B) :- q(B).\n")
    assert checked.relations["p"].column_names == ("Y", "X")
    assert types(checked, "p") == ("double", "string")
    assert types(checked, "r") == ("double",)


def test_head_of_a_declared_relation_types_undeclared_body_columns():
    checked = check(".decl p(x: string)\np(X) :- q(X).\n.input q\n")
    assert types(checked, "q") == ("string",)


def test_literals_type_columns():
    checked = check('f(1, 2.5, "a", b, true).')
    assert types(checked, "f") == ("long", "double", "string", "string", "bool")


def test_unconstrained_columns_default_to_long():
    assert types(check("p(X) :- e(X, _). .input e"), "e") == ("long", "long")


def test_integer_literal_fits_a_double_column_and_becomes_a_float():
    checked = check(".decl w(x: double)\nw(1).\nw(2.5).\n")
    assert checked.facts["w"] == frozenset({(1.0,), (2.5,)})
    assert all(isinstance(v, float) for (v,) in checked.facts["w"])


def test_integer_and_double_literals_widen_an_undeclared_column():
    checked = check("w(1).\nw(2.5).\n")
    assert types(checked, "w") == ("double",)
    assert checked.facts["w"] == frozenset({(1.0,), (2.5,)})


def test_union_of_long_and_double_rules_is_double():
    checked = check(".decl a(x: long)\n.decl b(x: double)\nu(X) :- a(X).\nu(X) :- b(X).\n")
    assert types(checked, "u") == ("double",)


def test_arithmetic_types():
    checked = check(
        ".decl e(a: long, b: double)\n"
        "p(Y) :- e(X, _), Y = X + 1.\n"
        "q(Y) :- e(X, D), Y = X * D.\n"
        "r(Y) :- e(X, _), Y = X / 2.\n"
        "s(X + 1) :- e(_, X).\n"
    )
    assert [types(checked, n) for n in "pqrs"] == [("long",), ("double",), ("long",), ("double",)]


def test_types_flow_around_recursion():
    checked = check(
        ".decl arc(x: int, y: int, d: double)\n"
        "path(X, Y, min<D>) :- arc(X, Y, D).\n"
        "path(X, Y, min<D>) :- path(X, Z, D1), arc(Z, Y, D2), D = D1 + D2.\n"
    )
    assert types(checked, "path") == ("int", "int", "double")


@pytest.mark.parametrize(
    "func, expected",
    [("count", "long"), ("avg", "double"), ("sum", "double"), ("min", "double"), ("max", "double")],
)
def test_aggregate_types_of_a_double(func, expected):
    checked = check(f".decl e(k: string, v: double)\na(K, {func}<V>) :- e(K, V).\n")
    assert types(checked, "a") == ("string", expected)


@pytest.mark.parametrize(
    "func, expected",
    [("count", "long"), ("avg", "double"), ("sum", "long"), ("min", "string"), ("max", "string")],
)
def test_aggregate_types_of_other_values(func, expected):
    value = "int" if func in ("sum", "avg") else "string"
    checked = check(f".decl e(k: long, v: {value})\na(K, {func}<V>) :- e(K, V).\n")
    assert types(checked, "a") == ("long", expected)


def test_comparison_with_a_string_types_an_undeclared_column():
    assert types(check('p(X) :- e(X), X < "m". .input e'), "e") == ("string",)


def test_input_types_type_undeclared_relations():
    checked = check("p(X, Y) :- e(X, Y). .input e", input_types={"e": ("string", "double")})
    assert types(checked, "e") == ("string", "double")
    assert types(checked, "p") == ("string", "double")


def test_input_types_may_widen_into_the_declaration():
    checked = check(".decl e(a: long)\n.input e\np(X) :- e(X).", input_types={"e": ("int",)})
    assert types(checked, "e") == ("long",)


# --- errors ------------------------------------------------------------------------------------


def test_declaration_against_a_string_literal():
    [error] = errors('.decl p(x: long)\np("a").\n', SchemaError)
    assert (error.line, error.column) == (2, 3)
    assert "column 'x' of relation 'p'" in error.message
    assert "long" in error.message and "string" in error.message


def test_declaration_against_a_double_literal():
    [error] = errors(".decl p(x: long)\np(1.5).\n", SchemaError)
    assert error.message == "column 'x' of relation 'p' has type long but is given 1.5 of type double"


def test_conflicting_literals_in_an_undeclared_column():
    [error] = errors('q(1, a).\nq("x", b).\n', SchemaError)
    assert (error.line, error.column) == (2, 3)
    assert "column 'c0' of relation 'q'" in error.message
    assert "long" in error.message and "string" in error.message


def test_arithmetic_on_strings():
    found = errors(".decl q(a: string, b: long)\np(Z) :- q(X, Y), Z = X + Y.\n", SchemaError)
    [error] = found
    assert (error.line, error.column) == (2, 22)
    assert "variable X" in error.message and "string" in error.message
    assert "operand of '+'" in error.message


def test_plus_on_a_string_literal_concatenates():
    # Soufflé's + of two symbols: X is of the other operand's kind
    checked = check('p(Z) :- q(X), Z = X + "a". .input q')
    assert checked.relations["q"].types == ("string",) and checked.relations["p"].types == ("string",)


def test_arithmetic_on_a_string_literal():
    [error] = errors('p(Z) :- q(X), Z = X - "a". .input q', SchemaError)
    assert "string" in error.message and "number" in error.message
    [error] = errors('p(Z) :- q(X, Y), Z = X + Y + "a". .input q\nq(1, "b").', SchemaError)
    assert "string" in error.message and "operand of '+'" in error.message


def test_comparing_a_string_with_a_number():
    [error] = errors(".decl q(a: string)\np(X) :- q(X), X < 3.\n", SchemaError)
    assert "string" in error.message and "compared with 3" in error.message


def test_ordering_bools_is_rejected():
    [error] = errors(".decl q(a: bool, b: bool)\np(X) :- q(X, Y), X < Y.\n", SchemaError)
    assert "only be compared with = and !=" in error.message


def test_bool_equality_is_fine():
    assert check(".decl q(a: bool, b: bool)\np(X) :- q(X, Y), X != Y.\n")


def test_type_conflict_through_a_chain_of_rules():
    found = errors(".decl s(x: string)\np(X) :- s(X).\nq(X) :- p(X), X > 1.\n", SchemaError)
    assert len(found) == 1 and "string" in found[0].message


def test_double_into_declared_long_column_is_rejected():
    [error] = errors(".decl d(x: double)\n.decl l(x: long)\nl(X) :- d(X).\n", SchemaError)
    assert "column 'x' of relation 'l' has type long" in error.message
    assert (error.line, error.column) == (3, 3)


def test_count_into_declared_string_column_is_rejected():
    [error] = errors(".decl c(k: long, n: string)\nc(K, count<V>) :- e(K, V).\n.input e\n", SchemaError)
    assert error.message == "column 'n' of relation 'c' has type string but is given count<V> of type long"


def test_input_types_conflicting_with_the_declaration():
    [error] = errors(
        ".decl e(a: long, b: long)\n.input e\np(X) :- e(X, _).\n",
        SchemaError,
        input_types={"e": ("long", "string")},
    )
    assert error.message == "column 'b' of relation 'e' is declared long but its input has type string"
    assert (error.line, error.column) == (1, 18)


def test_input_types_narrowing_the_declaration_is_rejected():
    found = errors(".decl e(a: int)\np(X) :- e(X).\n", SchemaError, input_types={"e": ("double",)})
    assert "declared int" in found[0].message


def test_input_types_with_the_wrong_arity():
    [error] = errors(".input e\np(X) :- e(X).\n", SchemaError, input_types={"e": ("long", "long")})
    assert "2 column(s)" in error.message and "arity 1" in error.message
    assert error.line == 1


def test_all_type_errors_are_collected():
    text = '.decl p(x: long)\np("a").\nq(1).\nq("b").\n.decl s(x: string)\nr(Z) :- s(X), Z = X * 2.\n'
    found = errors(text, SchemaError)
    assert [e.line for e in found] == [2, 4, 6]


def test_input_types_for_a_derived_relation_are_rejected():
    [error] = errors("p(X) :- e(X).\n.input e\n", SchemaError, input_types={"p": ("long",)})
    assert "defined by rules" in error.message and (error.line, error.column) == (1, 1)
