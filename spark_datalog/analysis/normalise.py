"""Normalisation of rule bodies: binding equalities become assignments, and every literal is
placed after the literals that bind its variables.

``V = expr`` (or ``expr = V``) becomes ``ast.Assignment(V, expr)`` when ``V`` is not bound by a
positive atom of the body and every variable of ``expr`` is bound — by positive atoms or by other
assignments, found in any order by iterating to a fixpoint (a generator's equality, ``_range =
range(...)``, first: ``X = _range`` with X bound then tests the generated values). An equality
whose two sides are both bound stays a ``Comparison`` (a test).

The body is then reordered: positive atoms keep their relative order, and each comparison,
negation and assignment moves to just after the literal that makes its variables available (never
earlier than where it was written). Evaluators can therefore read a normalised body left to right.
Unsafe literals (reported by :mod:`.safety`) stay at the end.
"""

from __future__ import annotations

from ..functors import GENERATORS
from ..syntax import ast


def atom_bindings(atom: ast.Atom) -> set[str]:
    """Names a positive atom binds: its plain variable arguments. Variables that occur only
    inside an expression argument (``p(X + 1)``) are inputs of the atom, not bound by it."""
    return {a.name for a in atom.args if type(a) is ast.Variable}


def positive_variables(body) -> set[str]:
    """Names of the variables bound by the positive atoms of a body."""
    bound: set[str] = set()
    for lit in body:
        if type(lit) is ast.Atom:
            _bind(bound, lit)
    return bound


def bound_variables(body) -> set[str]:
    """Names bound by positive atoms and by assignments (the body must be normalised)."""
    bound: set[str] = set()
    for lit in body:
        kind = type(lit)
        if kind is ast.Atom:
            _bind(bound, lit)
        elif kind is ast.Assignment:
            bound.add(lit.variable.name)
    return bound


def _bind(bound: set, atom: ast.Atom) -> None:
    """Add the names ``atom`` binds to ``bound``."""
    for arg in atom.args:
        if type(arg) is ast.Variable:
            bound.add(arg.name)


def normalise_rule(rule: ast.Rule) -> ast.Rule:
    """The rule with binding equalities turned into assignments and its body ordered."""
    return normalised(rule)[0]


def normalised(rule: ast.Rule) -> tuple[ast.Rule, set[str]]:
    """``(normalise_rule(rule), bound_variables of its body)``, both from one walk."""
    body, bound = _order(_assignments(rule.body))
    if body is rule.body:
        return rule, bound
    for new, old in zip(body, rule.body, strict=True):
        if new is not old:
            return ast.Rule(rule.head, body, rule.span, rule.text), bound
    return rule, bound  # the same literals, in place


def _has_equality(body: tuple) -> bool:
    for lit in body:  # noqa: SIM110 (a loop: no generator per rule)
        if type(lit) is ast.Comparison and lit.op == "=":
            return True
    return False


def _assignments(body: tuple) -> tuple:
    if not _has_equality(body):
        return body
    bound = positive_variables(body)
    literals = list(body)
    # a generator's equality binds its variable before any other may (``X = _range`` with X
    # bound must stay a test of ``_range = range(...)``'s values, not assign ``_range``)
    order = sorted(range(len(literals)), key=lambda i: not _generates(literals[i]))
    changed = True
    while changed:
        changed = False
        for i in order:
            lit = literals[i]
            if not (isinstance(lit, ast.Comparison) and lit.op == "="):
                continue
            assignment = _as_assignment(lit, bound)
            if assignment is not None:
                literals[i] = assignment
                bound.add(assignment.variable.name)
                changed = True
    return tuple(literals)


def _generates(literal) -> bool:
    """Whether ``literal`` is an equality with a generator (``range``, ...) on one side."""
    if not (isinstance(literal, ast.Comparison) and literal.op == "="):
        return False
    sides = (literal.left, literal.right)
    return any(isinstance(side, ast.Call) and side.name in GENERATORS for side in sides)


def _as_assignment(comparison: ast.Comparison, bound: set[str]):
    """``comparison`` as an assignment of its unbound side, if the other side is all bound."""
    for target, expr in ((comparison.left, comparison.right), (comparison.right, comparison.left)):
        if not isinstance(target, ast.Variable) or target.anonymous or target.name in bound:
            continue
        expr_vars = ast.term_variables(expr)
        if all(not v.anonymous and v.name in bound for v in expr_vars):
            return ast.Assignment(target, expr, comparison.span)
    return None


def _ready(literal, available: set) -> bool:
    """Whether the variables ``literal`` needs before it can be evaluated are all ``available``."""
    kind = type(literal)
    if kind is ast.Comparison:
        return _term_ready(literal.left, available) and _term_ready(literal.right, available)
    if kind is ast.Assignment:
        return _term_ready(literal.expr, available)
    if kind is ast.Negation:
        return all(v.anonymous or v.name in available for v in ast.literal_variables(literal))
    return all(v.name in available for v in ast.literal_variables(literal))


def _term_ready(term, available: set) -> bool:
    kind = type(term)
    if kind is ast.Variable:
        return term.name in available
    if kind is ast.Constant:
        return True
    return all(v.name in available for v in ast.term_variables(term))


def expression_inputs(atom: ast.Atom) -> set[str]:
    """Variables of the atom's expression arguments that the atom does not bind itself."""
    inside = {v.name for a in atom.args if isinstance(a, ast.OPERATIONS) for v in ast.term_variables(a)}
    return inside - atom_bindings(atom)


def _order(body: tuple) -> tuple[tuple, set[str]]:
    """The ordered body, and the names its positive atoms and assignments bind."""
    out: list = []
    available: set[str] = set()
    pending: list = []
    deferred = False
    for literal in body:
        if type(literal) is ast.Atom:  # _emit, inline for the most common literal
            out.append(literal)
            _bind(available, literal)
        elif _ready(literal, available):
            _emit(literal, out, available)
        else:
            pending.append(literal)
            deferred = True
            continue
        if pending:
            _flush(pending, out, available)
    if not deferred:  # every literal in place: the body as it was
        return body, available
    out.extend(pending)
    for literal in pending:  # unsafe assignments still bind their variable
        if type(literal) is ast.Assignment:
            available.add(literal.variable.name)
    return tuple(out), available


def _emit(literal, out: list, available: set) -> None:
    out.append(literal)
    kind = type(literal)
    if kind is ast.Atom:
        _bind(available, literal)
    elif kind is ast.Assignment:
        available.add(literal.variable.name)


def _flush(pending: list, out: list, available: set) -> None:
    """Emit the pending literals that became ready, earliest first, until none is."""
    progress = True
    while progress:
        progress = False
        for i, literal in enumerate(pending):
            if _ready(literal, available):
                _emit(pending.pop(i), out, available)
                progress = True
                break
