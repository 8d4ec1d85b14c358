"""Soufflé's operators, functors, constraints and literals: the ASTs they parse to, the '%'
rule (modulo after a term, a comment elsewhere) and their errors (class, line, column)."""

from __future__ import annotations

import re

import pytest

from spark_datalog import functors
from spark_datalog.errors import ParseError, SchemaError
from spark_datalog.syntax import ast, parse
from spark_datalog.syntax.parser import _GRAMMAR_PATH
from tests.syntax.test_fast_parser import check_same
from tests.syntax.test_parse_errors import assert_error

import spark_datalog as sd


def _assigned(text: str) -> ast.Term:
    """The right side of the rule's last comparison ``V = ...``."""
    rule = parse(f"p(V) :- q(X, Y), V = {text}.").rules[0]
    return rule.body[-1].right


def _shape(term) -> object:
    """A term as nested tuples: ("call", name, args...), ("op", op, l, r), a variable's name or
    a constant's value."""
    if isinstance(term, ast.Call):
        return ("call", term.name, *(_shape(a) for a in term.args))
    if isinstance(term, ast.BinaryOp):
        return ("op", term.op, _shape(term.left), _shape(term.right))
    if isinstance(term, ast.Variable):
        return term.name
    return term.value


@pytest.mark.parametrize(
    "text, shape",
    [
        ("X % Y", ("op", "mod", "X", "Y")),
        ("X ^ Y ^ 2", ("call", "pow", "X", ("call", "pow", "Y", 2))),
        ("-X ^ 2", ("call", "pow", ("op", "-", 0, "X"), 2)),
        ("2 * X ^ 2", ("op", "*", 2, ("call", "pow", "X", 2))),
        ("bnot X ^ 2", ("call", "bnot", ("call", "pow", "X", 2))),
        ("bnot X band 3", ("call", "band", ("call", "bnot", "X"), 3)),
        ("X band Y + 1", ("call", "band", "X", ("op", "+", "Y", 1))),
        ("X bshl 1 + 2", ("call", "bshl", "X", ("op", "+", 1, 2))),
        ("X bor Y bxor 1 band 2", ("call", "bor", "X", ("call", "bxor", "Y", ("call", "band", 1, 2)))),
        ("X lor Y lxor 1 land 2", ("call", "lor", "X", ("call", "lxor", "Y", ("call", "land", 1, 2)))),
        ("X lor Y bor 1", ("call", "lor", "X", ("call", "bor", "Y", 1))),
        ("X bshru 2 bshr 1", ("call", "bshr", ("call", "bshru", "X", 2), 1)),
        ("lnot X", ("call", "lnot", "X")),
        ('cat(X, "a", to_string(Y))', ("call", "cat", "X", "a", ("call", "to_string", "Y"))),
        ("substr(X, 0, strlen(X) - 1)", ("call", "substr", "X", 0, ("op", "-", ("call", "strlen", "X"), 1))),
        ("max(X, Y, 3) + min (X, 1)", ("op", "+", ("call", "max", "X", "Y", 3), ("call", "min", "X", 1))),
        ("abs(X) mod ord(Y)", ("op", "mod", ("call", "abs", "X"), ("call", "ord", "Y"))),
        ("0x1F + 0b101 + 12u", ("op", "+", ("op", "+", 31, 5), 12)),
        ("0xffffffffffffffu", 0xFFFFFFFFFFFFFF),
    ],
)
def test_expressions_parse_with_soufflés_precedence(text, shape):
    assert _shape(_assigned(text)) == shape


def test_constraints_are_comparisons_with_true_or_false():
    rule = parse('p(S) :- q(S), match("a.*", S), !contains("b", S), not match(S, "x").').rules[0]
    shapes = [(lit.op, _shape(lit.left), lit.right.value) for lit in rule.body[1:]]
    assert shapes == [
        ("=", ("call", "match", "a.*", "S"), True),
        ("=", ("call", "contains", "b", "S"), False),
        ("=", ("call", "match", "S", "x"), False),
    ]
    assert (rule.body[2].span.line, rule.body[2].span.column) == (1, 32)


def test_percent_after_a_term_is_modulo_and_a_comment_elsewhere():
    program = parse(
        "% a comment at the start\n"
        "arc(1, 2).  % a comment after a fact\n"
        "p(X) :- arc(X, _).   % after a rule\n"
        "r(X, Y) :- arc(X, Y) % after an atom: still a comment\n"
        "  .\n"
        "m(Y) :- arc(X, _), Y = X % 2.\n"
        "n(Y) :- arc(X, _), Y = (X + 1)%2.\n"
    )
    assert [str(r) for r in program.rules] == [
        "p(X) :- arc(X, _).",
        "r(X, Y) :- arc(X, Y).",
        "m(Y) :- arc(X, _), Y = (X mod 2).",
        "n(Y) :- arc(X, _), Y = ((X + 1) mod 2).",
    ]


def test_functor_names_stay_names_without_a_parenthesis():
    program = parse("p(max, cat).\nm(X, min<Y>) :- e(X, Y).\nmax(X) :- e(X, _).\n")
    assert program.facts[0].values == ("max", "cat")
    assert program.rules[0].aggregate[1].func == "min"
    assert program.rules[1].head.predicate == "max"


def test_word_operators_are_names_where_a_term_starts():
    assert parse("p(band, bor, land).").facts[0].values == ("band", "bor", "land")
    assert parse("p(bandit, x0x1, catalog).").facts[0].values == ("bandit", "x0x1", "catalog")


@pytest.mark.parametrize(
    "text",
    [
        "p(V) :- q(X), V = X ^ 2 % 3 band 1.",
        'p(V) :- q(X), V = cat("a", to_string(X)) % comment\n.',
        "p(V) :- q(X), V = bnot X.\n% c\nq(1).",
        'p(S) :- q(S), !match("a", S), contains("b", S).',
        "p(V) :- q(X), V = 0x1F + 12u.",
        "p(V) :- q(X), V = min(X, 1).",
        "p(V) :- q(X), V = X%2. % after",
        "p(X) :- cat(X).",
    ],
)
def test_the_fast_parser_falls_back_or_agrees(text):
    check_same(text)


def test_the_grammar_lists_the_functors_of_the_table():
    grammar = _GRAMMAR_PATH.read_text(encoding="utf-8")
    named = re.search(r"FUNCTOR\.2: /\(\?:([a-z_|]+)\)", grammar).group(1).split("|")
    constraints = re.search(r"CONSTRAINT\.2: /\(\?:([a-z_|]+)\)", grammar).group(1).split("|")
    assert tuple(named) == functors.NAMED and tuple(constraints) == functors.CONSTRAINTS
    operators = {*functors.OPERATORS.values(), *functors.PREFIX}
    resolved = {functors.FLOAT_TEXT, functors.PATTERN}  # put in place of others by analysis
    assert set(functors.FUNCTORS) == {*named, *constraints, *operators, *resolved}


# ---------------------------------------------------------------------------------------------
# Errors


def test_wrong_number_of_arguments():
    assert_error("p(V) :- q(X), V = substr(X, 1).", 1, 19, "functor 'substr' takes 3 arguments, given 2")
    assert_error("p(V) :- q(X), V = cat().", 1, 19, "functor 'cat' takes at least 1 argument, given 0")


def test_a_literal_out_of_range():
    assert_error("p(0x10000000000000000).", 1, 3, "integer 0x10000000000000000 does not fit in a 64-bit long")
    assert_error("p(18446744073709551615u).", 1, 3, "does not fit in a 64-bit long")


def test_an_operator_without_its_right_operand():
    assert_error("p(V) :- q(X), V = X band.", 1, 25, "unexpected '.'")
    assert_error("p(V) :- q(X), V = X ^ .", 1, 23, "unexpected '.'")


def test_a_body_atom_named_like_a_functor_is_a_call():
    assert_error("p(X) :- q(X), max(X, 1).", 1, 24, "unexpected '.'")


def test_a_constraint_needs_two_arguments():
    with pytest.raises(ParseError) as info:
        parse('p(S) :- q(S), match("a").')
    assert (info.value.line, info.value.column) == (1, 24)


def _schema_error(text: str) -> SchemaError:
    with pytest.raises(SchemaError) as info:
        sd.Program.parse(text)
    return info.value


def test_type_errors_name_the_argument():
    error = _schema_error(".decl q(x: double)\np(V) :- q(X), V = X band 1.")
    assert (error.line, error.column) == (2, 19) and "must be an integer" in error.message
    error = _schema_error('.decl q(x: long)\np(V) :- q(X), V = cat(X, "a").')
    assert error.line == 2 and "type conflict" in error.message
    error = _schema_error(".decl q(x: long, s: symbol)\np(V) :- q(X, S), V = max(X, S).")
    assert (error.line, error.column) == (2, 22) and "all numbers or all strings" in error.message
    error = _schema_error(".decl q(x: double)\np(V) :- q(X), V = to_string(X) + 1.")
    assert (error.line, error.column) == (2, 19) and "operand of '+'" in error.message
    error = _schema_error(".decl q(s: symbol)\np(S) :- q(S), match(1, S).")
    assert error.line == 2 and "type conflict" in error.message


def test_plus_adds_numbers_or_concatenates_symbols():
    error = _schema_error(".decl q(s: symbol)\np(V) :- q(S), V = S + 1.")
    assert (error.line, error.column) == (2, 19) and "operand of '+'" in error.message
    error = _schema_error(".decl q(s: symbol, x: number)\np(V) :- q(S, X), V = S + X.")
    assert (error.line, error.column) == (2, 22) and "operand of '+'" in error.message
    error = _schema_error('.decl q(s: symbol)\n.decl p(x: number)\np(S + "a") :- q(S).')
    assert (error.line, error.column) == (
        3,
        3,
    ) and 'has type long but is given (S + "a") of type string' in error.message
    error = _schema_error(".decl q(b: bool)\np(V) :- q(B), V = B + B.")
    assert (error.line, error.column) == (2, 19) and "two numbers or two symbols" in error.message
    program = sd.Program.parse('.decl q(s: symbol)\np(V, W) :- q(S), V = "<" + S + ">", W = V + V.')
    assert program.relations["p"].types == ("string", "string")
    assert 'cat(cat("<", S), ">")' in str(program.checked.rules[0])


def test_to_string_of_a_double_and_match_patterns_are_resolved_by_type():
    program = sd.Program.parse(
        ".decl q(d: double, p: symbol)\n"
        'p(T, U) :- q(D, P), T = to_string(D), U = to_string(1), match("[[:digit:]]", U), match(P, T).'
    )
    (rule,) = program.checked.rules
    names = [lit.expr.name for lit in rule.body[1:3]] + [lit.left.args[0] for lit in rule.body[3:]]
    assert names[:2] == ["to_string@float", "to_string"]
    assert names[2].value == "[0-9]" and names[3].name == "pattern@classes"
    assert str(rule).count("to_string(D)") == 1 and "match(P, T)" in str(rule)


def test_variables_in_calls_must_be_bound():
    with pytest.raises(sd.SafetyError) as info:
        sd.Program.parse('p(V) :- q(X), V = cat(X, Y).\nq("a").')
    assert (1, 26, "variable Y") in {(e.line, e.column, e.message[:10]) for e in info.value.errors}


def test_call_types():
    program = sd.Program.parse(
        ".decl q(i: int, x: long, d: double, s: symbol)\n"
        "p(A, B, C, D, E, F, G) :- q(I, X, D0, S), A = I band 1, B = I band X, C = strlen(S),\n"
        "  D = max(I, D0), E = to_float(I), F = ftoi(D0), G = I ^ 2.\n"
    )
    assert program.relations["p"].types == ("int", "long", "long", "double", "double", "long", "int")
