"""The order in which a rule's positive atoms are joined.

There are no cardinalities at planning time, so the order is a greedy heuristic: start with the
delta atom of a semi-naive variant (the delta is small) or else the most filtered atom; then
always take an atom connected to what is already joined (sharing a variable, or tied to one by
an equality ``A = B``), preferring atoms whose arithmetic arguments (``p(X + 1)``) can be
computed, then atoms filtered by constants or repeated variables, then atoms adding fewer new
variables, then source order. An atom that shares nothing with the joined atoms is taken only
when no connected one is left (a genuine cross product), and an atom sharing nothing with any
other comes last. Assignments count as binding their
variable once their inputs are bound.

A variable the delta atom carries unchanged into the head (``X`` in ``tc(X, Z) :- tc(X, Y),
...`` with ``tc`` the delta) connects nothing: it takes the few values the recursion was seeded
with (one per partition in a partition-local fixpoint, the query's constant under magic sets),
so a join on it alone is close to a cross product. ``magic_tc_bb(X, Z)`` after the delta
``tc_bb(X, Y)`` therefore waits until ``arc(Y, Z)`` has bound ``Z``.
"""

from __future__ import annotations

from typing import Optional

from ..syntax import ast


def order_atoms(body: tuple, first: Optional[int] = None, carried: frozenset = frozenset()) -> tuple:
    """Indices (into ``body``) of the positive atoms in join order; ``first`` is put first.
    ``carried`` names variables that connect nothing (see the module docstring)."""
    remaining = [i for i, literal in enumerate(body) if isinstance(literal, ast.Atom)]
    order: list = []
    bound: set = set()
    if first is not None:
        if first not in remaining:
            raise ValueError(f"body literal {first} is not a positive atom")
        remaining.remove(first)
        order.append(first)
        bound = _close(body, binding_variables(body[first]))
    while remaining:
        best = min(remaining, key=lambda i: _rank(body, i, body[i], bound, bool(order), carried))
        remaining.remove(best)
        order.append(best)
        bound = _close(body, bound | binding_variables(body[best]))
    return tuple(order)


def binding_variables(atom: ast.Atom) -> set:
    """Names of the variables an atom binds (named variable arguments)."""
    return {a.name for a in atom.args if isinstance(a, ast.Variable) and not a.anonymous}


def expression_variables(atom: ast.Atom) -> set:
    """Names of the variables inside arithmetic arguments (``p(X + 1)``), which bind nothing."""
    return {v.name for a in atom.args if isinstance(a, ast.OPERATIONS) for v in ast.term_variables(a)}


def is_filtered(atom: ast.Atom) -> bool:
    """True when the atom has a constant or a repeated variable (a selection on its scan)."""
    names = [a.name for a in atom.args if isinstance(a, ast.Variable) and not a.anonymous]
    has_constant = any(isinstance(a, ast.Constant) for a in atom.args)
    return has_constant or len(names) != len(set(names))


def _rank(body, index, atom, bound, started, carried=frozenset()):
    variables, computed = binding_variables(atom), expression_variables(atom)
    # an atom without variables is at most one row: joining it is a filter, not a product
    connected = (
        not started
        or not (variables or computed)
        or bool(variables & (_equated(body, bound) - carried))
        or bool(computed)
        and computed <= bound
    )
    # `p(X + 1)` before X is bound can only be filtered after a later join
    waiting = not computed <= bound | variables
    return (
        not connected,
        _isolated(body, index),
        waiting,
        not is_filtered(atom),
        len(variables - bound),
        index,
    )


def _isolated(body, index) -> bool:
    """True when the atom has variables but none is shared with another atom, assignment or
    equality: its product with the rest is best taken last."""
    mine = {v.name for v in ast.literal_variables(body[index]) if not v.anonymous}
    others = set()
    for i, literal in enumerate(body):
        linking = isinstance(literal, (ast.Atom, ast.Assignment)) or (
            isinstance(literal, ast.Comparison) and literal.op == "="
        )
        if i != index and linking:
            others |= {v.name for v in ast.literal_variables(literal) if not v.anonymous}
    return bool(mine) and not mine & others


def _equated(body, bound: set) -> set:
    """``bound`` plus the variables an equality ``A = B`` ties to a bound one (a join key too)."""
    equated = set(bound)
    for literal in body:
        if isinstance(literal, ast.Comparison) and literal.op == "=":
            names = {v.name for v in (literal.left, literal.right) if isinstance(v, ast.Variable)}
            if len(names) == 2 and names & bound:
                equated |= names
    return equated


def _close(body, bound: set) -> set:
    """``bound`` plus the variables of assignments whose inputs are bound (transitively)."""
    bound = set(bound)
    changed = True
    while changed:
        changed = False
        for literal in body:
            if (
                isinstance(literal, ast.Assignment)
                and literal.variable.name not in bound
                and {v.name for v in ast.term_variables(literal.expr)} <= bound
            ):
                bound.add(literal.variable.name)
                changed = True
    return bound
