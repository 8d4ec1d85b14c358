"""Seed 004's Infer: satisfying substitutions of a rule body, extended literal by literal.

A substitution is a dict from variable name to value. :func:`order_body` fixes the order in
which a rule's literals are processed: a literal is taken as soon as its inputs are bound
(comparisons, negations and assignments first, since they only filter or extend), otherwise the
next positive atom. An atom read before the variables of one of its expression arguments are
bound (a semi-naive delta atom ``r(Y + 1, B)`` taken first) keeps the matched value and checks the
expression once they are (:class:`Deferred`). :func:`substitutions` then extends the empty
substitution over that order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Optional

from .. import functors, generators
from ..syntax import ast
from ..syntax.autoinc import Numbering, is_counter, numbering
from ..record_types import order_key
from .relation import Relation
from .terms import Undefined, compare, evaluate_term, normal, same


class UnsafeRuleError(RuntimeError):
    """A rule reached the interpreter with a literal whose inputs can never be bound
    (analysis should have rejected or normalised it)."""


def _names(term) -> set:
    return {v.name for v in ast.term_variables(term)}


def _ready(literal, bound: set) -> bool:
    if isinstance(literal, ast.Atom):
        # Arithmetic arguments need their variables bound here or by this atom's plain variables.
        own = {a.name for a in literal.args if isinstance(a, ast.Variable)}
        return all(_names(a) <= bound | own for a in literal.args if isinstance(a, ast.OPERATIONS))
    if isinstance(literal, ast.Negation):
        return all(v.name in bound for v in ast.literal_variables(literal) if not v.anonymous)
    if isinstance(literal, ast.Comparison):
        return _names(literal.left) | _names(literal.right) <= bound
    if isinstance(literal, ast.Assignment):
        return _names(literal.expr) <= bound
    raise TypeError(f"not a literal: {literal!r}")


@dataclass(frozen=True)
class Deferred:
    """A step of a body order: check expression argument ``index`` of the atom at body
    ``position``. When that atom is matched before the expression's variables are bound
    (``r(Y + 1, B)`` reading a semi-naive delta before ``a(X, Y)`` binds Y), the matched value is
    kept under a hidden name and compared with the expression once its variables are bound."""

    position: int
    index: int

    @property
    def hidden(self) -> str:
        return f"#{self.position}.{self.index}"


def _own(atom: ast.Atom) -> set:
    """Names the atom binds itself: its plain variable arguments."""
    return {a.name for a in atom.args if isinstance(a, ast.Variable)}


def order_body(body: tuple, first: Optional[int] = None) -> list:
    """Body positions (and :class:`Deferred` checks) in processing order. ``first`` (a positive
    atom's position) is taken first, e.g. the atom that reads a semi-naive delta."""
    remaining = list(range(len(body)))
    order: list = []
    bound: set = set()
    deferred: list = []

    def take(position: int) -> None:
        remaining.remove(position)
        order.append(position)
        literal = body[position]
        if isinstance(literal, ast.Atom):
            own = _own(literal)
            for index, arg in enumerate(literal.args):
                if isinstance(arg, ast.OPERATIONS) and not _names(arg) <= bound | own:
                    deferred.append(Deferred(position, index))
            bound.update(own)
        elif isinstance(literal, ast.Assignment):
            bound.add(literal.variable.name)

    if first is not None:
        take(first)
    while remaining or deferred:
        checks = [d for d in deferred if _names(body[d.position].args[d.index]) <= bound]
        if checks:
            order.extend(checks)
            deferred = [d for d in deferred if d not in checks]
        elif remaining:
            take(_next_literal(body, remaining, bound))
        else:
            stuck = ", ".join(str(body[d.position].args[d.index]) for d in deferred)
            raise UnsafeRuleError(f"cannot bind the inputs of: {stuck}")
    return order


def _next_literal(body: tuple, remaining: list, bound: set) -> int:
    """A ready filter, else a ready atom, else an atom whose expression arguments must wait."""
    filters = [p for p in remaining if not isinstance(body[p], ast.Atom) and _ready(body[p], bound)]
    atoms = [p for p in remaining if isinstance(body[p], ast.Atom)]
    ready = [p for p in atoms if _ready(body[p], bound)]
    for candidates in (filters, ready, atoms):
        if candidates:
            return candidates[0]
    stuck = ", ".join(str(body[p]) for p in remaining)
    raise UnsafeRuleError(f"cannot bind the inputs of: {stuck}")


def _match(atom: ast.Atom, position: int, relation: Relation, subst: dict) -> Iterator[dict]:
    """Extensions of ``subst`` that make ``atom`` (at body ``position``) one of the tuples of
    ``relation``. An expression argument whose variables are still unbound keeps the matched
    value under its :class:`Deferred` name."""
    positions, key, later = [], [], []
    try:
        for i, arg in enumerate(atom.args):
            if _names(arg) - subst.keys() and isinstance(arg, (ast.Variable, *ast.OPERATIONS)):
                later.append(i)
            else:
                positions.append(i)
                key.append(evaluate_term(arg, subst))
    except Undefined:
        return
    for row in relation.lookup(tuple(positions), tuple(key)):
        extended = _bind_variables(atom, later, row, subst)
        if extended is not None and _expressions_hold(atom, position, later, row, extended):
            yield extended


def _bind_variables(atom: ast.Atom, later: list, row: tuple, subst: dict) -> Optional[dict]:
    """``subst`` extended by the atom's unbound plain variables, or None on a repeated-variable
    mismatch."""
    extended = dict(subst)
    for i in later:
        arg = atom.args[i]
        if isinstance(arg, ast.Variable):
            if arg.name in extended and not same(extended[arg.name], row[i]):
                return None
            extended[arg.name] = row[i]
    return extended


def _expressions_hold(atom: ast.Atom, position: int, later: list, row: tuple, extended: dict) -> bool:
    """Checks the expression arguments computable now (plain variables first: they may use
    them); the others are kept under their hidden names in ``extended``."""
    for i in later:
        arg = atom.args[i]
        if not isinstance(arg, ast.OPERATIONS):
            continue
        if not _names(arg) <= extended.keys():
            extended[Deferred(position, i).hidden] = row[i]
            continue
        try:
            if not same(evaluate_term(arg, extended), row[i]):
                return False
        except Undefined:
            return False
    return True


def _negation_holds(atom: ast.Atom, relation: Relation, subst: dict) -> bool:
    """``not atom``: no tuple matches the bound arguments; anonymous variables match anything."""
    positions, key = [], []
    for i, arg in enumerate(atom.args):
        if isinstance(arg, ast.Variable) and arg.anonymous:
            continue
        positions.append(i)
        key.append(evaluate_term(arg, subst))  # may raise Undefined: the literal fails
    return not relation.lookup(tuple(positions), tuple(key))


def _check_deferred(step: Deferred, body: tuple, subst: dict) -> Iterator[dict]:
    """``subst`` without the hidden value, when the expression now evaluates to it."""
    try:
        value = evaluate_term(body[step.position].args[step.index], subst)
    except Undefined:
        return
    if same(value, subst[step.hidden]):
        yield {name: v for name, v in subst.items() if name != step.hidden}


def _binds_nothing(atom: ast.Atom) -> bool:
    """Only ``_`` and constants: the atom tests that a matching tuple exists (once, however many
    match: ten such atoms must not multiply the substitutions)."""
    return all(v.anonymous for arg in atom.args for v in ast.term_variables(arg))


def _extend(literal, position: int, relation: Optional[Relation], subst: dict) -> Iterator[dict]:
    """``subst`` extended by ``literal``; ``relation`` is the one an atom or negated atom reads
    (None for the other literals)."""
    if isinstance(literal, ast.Atom):
        assert relation is not None
        if _binds_nothing(literal):
            if next(_match(literal, position, relation, subst), None) is not None:
                yield subst
            return
        yield from _match(literal, position, relation, subst)
        return
    try:
        if isinstance(literal, ast.Negation):
            assert relation is not None
            if _negation_holds(literal.atom, relation, subst):
                yield subst
        elif isinstance(literal, ast.Comparison):
            left = evaluate_term(literal.left, subst)
            right = evaluate_term(literal.right, subst)
            if compare(literal.op, left, right):
                yield subst
        elif isinstance(literal, ast.Assignment):
            yield from _assign(literal, subst)
        else:
            raise TypeError(f"not a literal: {literal!r}")
    except Undefined:
        return


def is_generator(term) -> bool:
    """Whether ``term`` calls a generator (``range``, ...) at its top."""
    return isinstance(term, ast.Call) and term.name in functors.GENERATORS


def _assign(assignment: ast.Assignment, subst: dict) -> Iterator[dict]:
    """``subst`` extended by the value ``assignment`` assigns, or by each value of a
    generator; where the variable is bound already, ``subst`` once per equal value."""
    name = assignment.variable.name
    for value in _assigned_values(assignment.expr, subst):
        if name not in subst:
            yield {**subst, name: value}
        elif compare("=", subst[name], value):
            yield subst


def _assigned_values(expr, subst: dict) -> list:
    if not is_generator(expr):
        return [evaluate_term(expr, subst)]
    args = [evaluate_term(a, subst) for a in expr.args]
    type_ = expr.type or ("double" if any(isinstance(a, float) for a in args) else "long")
    return [normal(value) for value in generators.values(type_, args)]


def substitutions(body: tuple, order: list, relation_for: Callable[[int], Relation]) -> list:
    """Every substitution satisfying ``body`` (with repetitions; an atom binding no variable
    passes each once), processing literals in ``order`` (from :func:`order_body`).
    ``relation_for(position)`` gives the relation read by the atom or negated atom at that body
    position. A body calling ``autoinc`` is evaluated without the literals using the calls'
    values, its bindings numbered (:func:`numbered`), then those literals."""
    counters = numbering(body)
    if counters is None:
        return _extended([{}], body, order, relation_for)
    first = [step for step in order if _position(step) not in counters.held]
    later = [
        step for step in order if _position(step) in counters.held and not is_counter(body[_position(step)])
    ]
    return _extended(
        numbered(_extended([{}], body, first, relation_for), counters), body, later, relation_for
    )


def _position(step) -> int:
    return step.position if isinstance(step, Deferred) else step


def numbered(substs: list, counters: Numbering) -> list:
    """The distinct bindings of ``counters.key`` in ``substs``, in their order
    (:mod:`spark_datalog.syntax.autoinc`), each with the value of every call.

    >>> n = Numbering(("X",), (("_a", 1, 2),), frozenset())
    >>> numbered([{"X": "b"}, {"X": "a"}, {"X": "b"}], n)
    [{'X': 'a', '_a': 1}, {'X': 'b', '_a': 3}]
    """
    bindings = {tuple(_ordered(s[name]) for name in counters.key): s for s in substs}
    out = []
    for rank, ordered in enumerate(sorted(bindings)):
        subst = bindings[ordered]
        binding = {name: subst[name] for name in counters.key}
        out.append({**binding, **{v: counters.value(rank, site, sites) for v, site, sites in counters.calls}})
    return out


def _ordered(value) -> tuple:
    """``value``'s place in the numbering's order: NaN after every other double."""
    if type(value) is float:
        return (1, 0.0) if value != value else (0, value)
    return (0, order_key(value))


def _extended(current: list, body: tuple, order: list, relation_for) -> list:
    """The substitutions ``current`` extended by the steps of ``order``."""
    for step in order:
        if isinstance(step, Deferred):
            current = [s for subst in current for s in _check_deferred(step, body, subst)]
        else:
            literal = body[step]
            relation = relation_for(step) if isinstance(literal, (ast.Atom, ast.Negation)) else None
            current = [s for subst in current for s in _extend(literal, step, relation, subst)]
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
