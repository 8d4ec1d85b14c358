"""Seed 004's Infer: satisfying substitutions of a rule body, extended literal by literal.

A substitution is a dict from variable name to value. :func:`order_body` fixes the order in
which a rule's literals are processed: a literal is taken as soon as its inputs are bound
(comparisons, negations and assignments first, since they only filter or extend), otherwise the
next positive atom. :func:`substitutions` then extends the empty substitution over that order.
"""

from __future__ import annotations

from typing import Callable, Iterator, Optional

from ..syntax import ast
from .relation import Relation
from .terms import Undefined, compare, evaluate_term, same


class UnsafeRuleError(RuntimeError):
    """A rule reached the interpreter with a literal whose inputs can never be bound
    (analysis should have rejected or normalised it)."""


def _names(term) -> set:
    return {v.name for v in ast.term_variables(term)}


def _ready(literal, bound: set) -> bool:
    if isinstance(literal, ast.Atom):
        # Arithmetic arguments need their variables bound here or by this atom's plain variables.
        own = {a.name for a in literal.args if isinstance(a, ast.Variable)}
        return all(_names(a) <= bound | own for a in literal.args if isinstance(a, ast.BinaryOp))
    if isinstance(literal, ast.Negation):
        return all(v.name in bound for v in ast.literal_variables(literal) if not v.anonymous)
    if isinstance(literal, ast.Comparison):
        return _names(literal.left) | _names(literal.right) <= bound
    if isinstance(literal, ast.Assignment):
        return _names(literal.expr) <= bound
    raise TypeError(f"not a literal: {literal!r}")


def order_body(body: tuple, first: Optional[int] = None) -> list:
    """Body positions in processing order. ``first`` (a positive atom's position) is taken
    first, e.g. the atom that reads a semi-naive delta."""
    remaining = list(range(len(body)))
    order: list = []
    bound: set = set()

    def take(position: int) -> None:
        remaining.remove(position)
        order.append(position)
        literal = body[position]
        if isinstance(literal, ast.Atom):
            bound.update(v.name for v in ast.literal_variables(literal))
        elif isinstance(literal, ast.Assignment):
            bound.add(literal.variable.name)

    if first is not None:
        take(first)
    while remaining:
        filters = [p for p in remaining if not isinstance(body[p], ast.Atom) and _ready(body[p], bound)]
        atoms = [p for p in remaining if isinstance(body[p], ast.Atom) and _ready(body[p], bound)]
        if filters:
            take(filters[0])
        elif atoms:
            take(atoms[0])
        else:
            stuck = ", ".join(str(body[p]) for p in remaining)
            raise UnsafeRuleError(f"cannot bind the inputs of: {stuck}")
    return order


def _match(atom: ast.Atom, relation: Relation, subst: dict) -> Iterator[dict]:
    """Extensions of ``subst`` that make ``atom`` one of the tuples of ``relation``."""
    positions, key, later = [], [], []
    try:
        for i, arg in enumerate(atom.args):
            if isinstance(arg, ast.Variable) and arg.name not in subst:
                later.append(i)
            elif isinstance(arg, ast.BinaryOp) and not _names(arg) <= subst.keys():
                later.append(i)
            else:
                positions.append(i)
                key.append(evaluate_term(arg, subst))
    except Undefined:
        return
    for row in relation.lookup(tuple(positions), tuple(key)):
        extended = dict(subst)
        ok = True
        for i in later:  # plain variables first: an arithmetic argument may use them
            arg = atom.args[i]
            if isinstance(arg, ast.Variable):
                if arg.name in extended and not same(extended[arg.name], row[i]):
                    ok = False
                    break
                extended[arg.name] = row[i]
        if ok:
            for i in later:
                arg = atom.args[i]
                if isinstance(arg, ast.BinaryOp):
                    try:
                        if not same(evaluate_term(arg, extended), row[i]):
                            ok = False
                            break
                    except Undefined:
                        ok = False
                        break
        if ok:
            yield extended


def _negation_holds(atom: ast.Atom, relation: Relation, subst: dict) -> bool:
    """``not atom``: no tuple matches the bound arguments; anonymous variables match anything."""
    positions, key = [], []
    for i, arg in enumerate(atom.args):
        if isinstance(arg, ast.Variable) and arg.anonymous:
            continue
        positions.append(i)
        key.append(evaluate_term(arg, subst))  # may raise Undefined: the literal fails
    return not relation.lookup(tuple(positions), tuple(key))


def _extend(literal, relation: Optional[Relation], subst: dict) -> Iterator[dict]:
    if isinstance(literal, ast.Atom):
        yield from _match(literal, relation, subst)
        return
    try:
        if isinstance(literal, ast.Negation):
            if _negation_holds(literal.atom, relation, subst):
                yield subst
        elif isinstance(literal, ast.Comparison):
            left = evaluate_term(literal.left, subst)
            right = evaluate_term(literal.right, subst)
            if compare(literal.op, left, right):
                yield subst
        elif isinstance(literal, ast.Assignment):
            value = evaluate_term(literal.expr, subst)
            name = literal.variable.name
            if name not in subst:
                extended = dict(subst)
                extended[name] = value
                yield extended
            elif compare("=", subst[name], value):
                yield subst
        else:
            raise TypeError(f"not a literal: {literal!r}")
    except Undefined:
        return


def substitutions(body: tuple, order: list, relation_for: Callable[[int], Relation]) -> list:
    """Every substitution satisfying ``body`` (with repetitions), processing literals in
    ``order``. ``relation_for(position)`` gives the relation read by the atom or negated atom at
    that body position."""
    current = [{}]
    for position in order:
        literal = body[position]
        relation = relation_for(position) if isinstance(literal, (ast.Atom, ast.Negation)) else None
        current = [s for subst in current for s in _extend(literal, relation, subst)]
        if not current:
            break
    return current


def head_tuple(head: ast.Atom, subst: dict) -> tuple:
    """The head's values under ``subst``; an aggregate argument takes its variable's value.
    Raises :class:`Undefined` when a head expression is undefined."""
    values = []
    for arg in head.args:
        if isinstance(arg, ast.Aggregate):
            values.append(subst[arg.variable.name])
        else:
            values.append(evaluate_term(arg, subst))
    return tuple(values)
