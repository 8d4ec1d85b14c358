"""The join-order heuristic (no cardinalities: connectivity, filters, new variables, source)."""

from __future__ import annotations

from spark_datalog.plan.order_atoms import order_atoms
from spark_datalog.syntax import ast

X, Y, Z, P, Q = (ast.Variable(n) for n in "XYZPQ")
ANON = ast.Variable("_#1", anonymous=True)


def atom(name, *args):
    return ast.Atom(name, tuple(a if isinstance(a, ast.Variable) else ast.Constant(a, "long") for a in args))


def test_source_order_when_nothing_distinguishes_atoms():
    assert order_atoms((atom("a", X, Y), atom("b", Y, Z))) == (0, 1)


def test_atoms_with_constants_or_repeated_variables_first():
    assert order_atoms((atom("a", X, Y), atom("b", Y, 3))) == (1, 0)
    assert order_atoms((atom("a", X, Y), atom("b", Y, Y))) == (1, 0)


def test_connected_atoms_before_disconnected_ones():
    body = (atom("a", X, P), atom("c", Z), atom("b", P, Y))
    assert order_atoms(body) == (0, 2, 1)


def test_delta_atom_first_then_connected():
    body = (atom("arc", P, X), atom("sg", P, Q), atom("arc", Q, Y))
    assert order_atoms(body, first=1) == (1, 0, 2)


def test_fewer_new_variables_first():
    body = (atom("a", X), atom("b", X, Y, Z), atom("c", X, Y))
    assert order_atoms(body) == (0, 2, 1)


def test_ground_atom_counts_as_connected_filter():
    body = (atom("a", X, Y), atom("b", Y, Z), atom("flag"))
    assert order_atoms(body) == (2, 0, 1)


def test_assignment_connects_atoms():
    body = (
        atom("a", X),
        atom("c", Z, 5),
        ast.Assignment(Y, ast.BinaryOp("+", X, ast.Constant(1, "long"))),
        atom("b", Y),
    )
    # c shares nothing, so it comes last despite its constant; after a, Y = X + 1 binds Y and
    # b is connected
    assert order_atoms(body) == (0, 3, 1)


def test_isolated_atom_comes_last_even_if_filtered():
    body = (atom("a", X, Y), atom("c", Z, 5), atom("b", Y, Q))
    assert order_atoms(body) == (0, 2, 1)


def test_equality_connects_atoms():
    body = (atom("a", X), atom("c", Z), atom("b", Y), ast.Comparison("=", Y, X))
    assert order_atoms(body) == (0, 2, 1)


def test_anonymous_variables_do_not_connect():
    body = (atom("a", X, ANON), atom("b", ANON, Y), atom("c", X, Y))
    assert order_atoms(body) == (0, 2, 1)


def test_a_carried_variable_connects_nothing():
    # tc_bb(X, Z) :- magic_tc_bb(X, Z), arc(Y, Z), tc_bb(X, Y). with the delta at tc_bb: X is the
    # query's constant in every fact, so joining magic_tc_bb on X alone multiplies the rows
    body = (atom("magic_tc_bb", X, Z), atom("arc", Y, Z), atom("tc_bb", X, Y))
    assert order_atoms(body, first=2) == (2, 0, 1)  # source order: magic joins on X first
    assert order_atoms(body, first=2, carried=frozenset({"X"})) == (2, 1, 0)


def test_carried_variables_of_a_delta_variant():
    from spark_datalog.plan.translate import carried_variables
    from spark_datalog.syntax.parser import parse

    rule = parse("tc(X, Z) :- magic(X, Z), arc(Y, Z), tc(X, Y).").rules[0]
    assert carried_variables(rule, 2) == {"X"}
    assert carried_variables(rule, 1) == frozenset()  # the delta is not the head's relation
    assert carried_variables(rule, None) == frozenset()
