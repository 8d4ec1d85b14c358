"""Safety (range restriction) and the normalisation of ``V = expr`` into assignments."""

from __future__ import annotations

import pytest

from spark_datalog.errors import SafetyError
from spark_datalog.syntax import ast

from .analysis_helpers import check, errors


def body_kinds(rule) -> list:
    return [type(literal).__name__ for literal in rule.body]


def test_unbound_head_variable_is_reported_at_its_position_with_the_rule():
    [error] = errors("p(X, Y) :- q(X). .input q", SafetyError)
    assert (error.line, error.column) == (1, 6)
    assert error.message == (
        "variable Y in the head of rule 'p(X, Y) :- q(X).' is not bound "
        "by a positive body atom or an assignment"
    )


def test_variable_only_in_a_negated_atom_is_unsafe():
    [error] = errors("p(X) :- q(X), not r(X, Y). .input q, r", SafetyError)
    assert "variable Y in negated atom 'not r(X, Y)'" in error.message
    assert (error.line, error.column) == (1, 24)


def test_anonymous_variable_in_a_negated_atom_means_any_value():
    checked = check("p(X) :- q(X), not r(X, _). .input q, r")
    assert body_kinds(checked.rules[0]) == ["Atom", "Negation"]


def test_variable_only_in_a_comparison_is_unsafe():
    [error] = errors("p(X) :- q(X), X < Y. .input q", SafetyError)
    assert "variable Y in comparison 'X < Y'" in error.message
    assert (error.line, error.column) == (1, 19)


def test_anonymous_variable_in_head_is_unsafe():
    [error] = errors("p(_) :- q(1). .input q", SafetyError)
    assert "anonymous variable '_'" in error.message and "head" in error.message
    assert (error.line, error.column) == (1, 3)


def test_anonymous_variable_in_comparison_is_unsafe():
    [error] = errors("p(X) :- q(X), _ > 1. .input q", SafetyError)
    assert "anonymous variable '_'" in error.message and "comparison" in error.message


def test_aggregate_variable_must_be_bound():
    [error] = errors("p(X, min<D>) :- q(X). .input q", SafetyError)
    assert "variable D of aggregate min<D> in the head" in error.message
    assert (error.line, error.column) == (1, 10)


def test_fact_with_variables_is_unsafe():
    [error] = errors("p(X).", SafetyError)
    assert "variable X" in error.message and "a fact cannot contain variables" in error.message


def test_head_variable_bound_by_an_assignment_is_safe():
    checked = check("p(X, Y) :- q(X), Y = X + 1. .input q")
    [rule] = checked.rules
    assert body_kinds(rule) == ["Atom", "Assignment"]
    assignment = rule.body[1]
    assert assignment.variable.name == "Y"
    assert assignment.expr == ast.BinaryOp("+", ast.Variable("X"), ast.Constant(1, "long"))


def test_assignment_written_the_other_way_round():
    [rule] = check("p(X, Y) :- q(X), X * 2 = Y. .input q").rules
    assert isinstance(rule.body[1], ast.Assignment)
    assert rule.body[1].variable.name == "Y"


def test_assignment_chain_in_any_order_is_resolved_and_ordered():
    [rule] = check("p(X, Z) :- Z = Y + 1, Y = X * 2, q(X). .input q").rules
    assert body_kinds(rule) == ["Atom", "Assignment", "Assignment"]
    # Every literal comes after the literals that bind its variables.
    assert [str(literal) for literal in rule.body] == ["q(X)", "Y = (X * 2)", "Z = (Y + 1)"]


def test_assignment_of_a_constant():
    [rule] = check("p(X, D) :- q(X), D = 1. .input q").rules
    assert rule.body[1] == ast.Assignment(ast.Variable("D"), ast.Constant(1, "long"))


def test_equality_of_two_bound_variables_stays_a_comparison():
    [rule] = check("p(X) :- q(X, Y), X = Y. .input q").rules
    assert body_kinds(rule) == ["Atom", "Comparison"]


def test_variable_bound_by_a_later_atom_is_not_assigned():
    [rule] = check("p(X, Y) :- q(X), Y = X + 1, r(Y). .input q, r").rules
    assert body_kinds(rule) == ["Atom", "Atom", "Comparison"]


def test_second_equality_on_an_assigned_variable_is_a_test():
    [rule] = check("p(X, Y) :- q(X), Y = X + 1, Y = 3. .input q").rules
    assert body_kinds(rule) == ["Atom", "Assignment", "Comparison"]


def test_comparison_moves_after_the_assignment_it_needs():
    [rule] = check("p(X, Y) :- q(X), Y > 2, Y = X + 1. .input q").rules
    assert [str(literal) for literal in rule.body] == ["q(X)", "Y = (X + 1)", "Y > 2"]


def test_circular_equalities_do_not_bind():
    found = errors("p(X, Y, Z) :- q(X), Y = Z + 1, Z = Y - 1. .input q", SafetyError)
    assert {e.message.split()[1] for e in found} == {"Y", "Z"}


def test_negation_of_assigned_variable_is_safe():
    [rule] = check("p(X) :- q(X), not r(Y), Y = X + 1. .input q, r").rules
    assert body_kinds(rule) == ["Atom", "Assignment", "Negation"]


def test_each_unsafe_variable_reported_once_per_rule():
    found = errors("p(X, Y, Y) :- q(X), Y > 1. .input q", SafetyError)
    assert len(found) == 1 and (found[0].line, found[0].column) == (1, 6)


def test_all_safety_errors_of_all_rules_are_collected():
    text = "p(X, Y) :- q(X).\nr(A) :- s(A), not t(B).\nu(Z) :- v(Z), W < Z.\n.input q, s, t, v\n"
    found = errors(text, SafetyError)
    assert [(e.line, e.column) for e in found] == [(1, 6), (2, 21), (3, 15)]


@pytest.mark.parametrize(
    "text",
    [
        "p(X) :- q(X). .input q",
        "p(X) :- q(X, _). .input q",
        "p(X) :- q(X), not r(_, X). .input q, r",
        "p(X, count<Y>) :- q(X, Y). .input q",
        "p(X, Y) :- q(X), r(Y), X < Y. .input q, r",
    ],
)
def test_safe_rules_pass(text):
    assert check(text).rules


def test_anonymous_aggregate_variable_is_unsafe():
    [error] = errors("p(X, count<_>) :- q(X, _). .input q", SafetyError)
    assert error.message.startswith("anonymous variable '_' of aggregate count<_> in the head")


# -- expression arguments of atoms bind nothing (issue 19, item 5) -------------------------------


def test_variable_only_inside_an_expression_argument_is_unsafe_at_the_expression():
    [error] = errors("m(X, Y) :- edge(X + 1, Y). .input edge", SafetyError)
    assert (error.line, error.column) == (1, 17)
    assert error.message.startswith("variable X in expression 'X + 1' (an argument of edge)")
    assert "not those inside an expression argument" in error.message
    assert "^" in str(error)


def test_variable_only_inside_an_expression_argument_is_unsafe_without_a_head_use():
    [error] = errors("m(Y) :- edge(2 * X, Y). .input edge", SafetyError)
    assert (error.line, error.column) == (1, 18)


def test_anonymous_variable_in_an_expression_argument_is_unsafe():
    [error] = errors("m(Y) :- edge(_ + 1, Y). .input edge", SafetyError)
    assert error.message.startswith("anonymous variable '_' in expression '_ + 1'")
    assert (error.line, error.column) == (1, 14)


@pytest.mark.parametrize(
    "text",
    [
        "m(X, Y) :- a(X), edge(X + 1, Y). .input a, edge",
        "m(X, Y) :- edge(X + 1, Y), a(X). .input edge, a",
        "m(X) :- edge(X, X + 1). .input edge",
        "m(X) :- edge(X + 1, Y), X = Y - 1. .input edge",
    ],
)
def test_expression_arguments_bound_elsewhere_are_safe_and_plan(text):
    import spark_datalog as sd

    program = sd.Program.parse(text)
    assert program.plans  # the translator places the expression too


def test_equality_on_a_variable_only_in_an_expression_argument_becomes_an_assignment():
    checked = check("m(X) :- edge(X + 1, Y), X = Y - 1. .input edge")
    assert body_kinds(checked.rules[0]) == ["Atom", "Assignment"]
