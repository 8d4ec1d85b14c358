"""Sideways information passing: the order in which a rule body passes bindings left to right.

Given the variables a rule's head receives bound, :func:`sips_order` orders the body so that
each positive atom is read with as many arguments bound as possible: filters (comparisons,
negations) and assignments come as soon as their variables are bound, then the connected atom
with the most bound arguments (constants included), an input relation's before a derived one's
(it binds more of the derived atom's arguments: ``tc(X, Y), arc(Y, Z)`` with X and Z bound
reads ``arc`` first and then ``tc`` with both arguments bound), source order breaking ties. The magic-set
rewrite (:mod:`.magic`) reads the bindings each atom receives from this order.

Example::

    >>> from spark_datalog.syntax.parser import parse
    >>> rule = parse("tc(X, Z) :- arc(Y, Z), tc(X, Y).").rules[0]
    >>> sips_order(rule.body, {"X"})   # tc(X, Y) first: X is bound
    [1, 0]
"""

from __future__ import annotations

from ..syntax import ast


def sips_order(body: tuple, bound: set, derived: frozenset = frozenset()) -> list:
    """Indices of ``body``'s literals in information-passing order, given the ``bound`` names
    and the ``derived`` relations."""
    bound = set(bound)
    remaining = list(range(len(body)))
    order: list = []
    while remaining:
        ready = [i for i in remaining if _is_ready(body[i], bound)]
        chosen = ready[0] if ready else max(remaining, key=lambda i: _rank(body[i], bound, i, derived))
        remaining.remove(chosen)
        order.append(chosen)
        bound |= binds(body[chosen], bound)
    return order


def is_bound(term, bound: set) -> bool:
    """True when the value of ``term`` is known from ``bound`` names (constants always are)."""
    if isinstance(term, ast.Variable) and term.anonymous:
        return False
    return all(v.name in bound and not v.anonymous for v in ast.term_variables(term))


def binds(literal, bound: set) -> set:
    """Names ``literal`` binds once it has been evaluated after ``bound``."""
    if isinstance(literal, ast.Atom):
        return {a.name for a in literal.args if isinstance(a, ast.Variable) and not a.anonymous}
    if isinstance(literal, ast.Assignment):
        return {literal.variable.name}
    return set()


def _is_ready(literal, bound: set) -> bool:
    """A literal that is not a positive atom and can be evaluated now."""
    if isinstance(literal, ast.Atom):
        return False
    if isinstance(literal, ast.Assignment):
        return is_bound(literal.expr, bound)
    names = {v.name for v in ast.literal_variables(literal) if not v.anonymous}
    return names <= bound


def _rank(literal, bound: set, index: int, derived: frozenset) -> tuple:
    """Larger is better: positive atoms only, connected ones, more bound arguments, inputs."""
    if not isinstance(literal, ast.Atom):
        return (False, False, -1, False, -index)
    bound_args = sum(1 for a in literal.args if is_bound(a, bound))
    names = binds(literal, set())
    connected = not names or bool(names & bound) or bound_args > 0
    return (True, connected, bound_args, literal.predicate not in derived, -index)
