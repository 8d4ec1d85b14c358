"""Normalisation of rule bodies: binding equalities become assignments, and every literal is
placed after the literals that bind its variables.

``V = expr`` (or ``expr = V``) becomes ``ast.Assignment(V, expr)`` when ``V`` is not bound by a
positive atom of the body and every variable of ``expr`` is bound — by positive atoms or by other
assignments, found in any order by iterating to a fixpoint. An equality whose two sides are both
bound stays a ``Comparison`` (a test).

The body is then reordered: positive atoms keep their relative order, and each comparison,
negation and assignment moves to just after the literal that makes its variables available (never
earlier than where it was written). Evaluators can therefore read a normalised body left to right.
Unsafe literals (reported by :mod:`.safety`) stay at the end.
"""

from __future__ import annotations

from ..syntax import ast


def atom_bindings(atom: ast.Atom) -> set[str]:
    """Names a positive atom binds: its plain variable arguments. Variables that occur only
    inside an expression argument (``p(X + 1)``) are inputs of the atom, not bound by it."""
    return {a.name for a in atom.args if isinstance(a, ast.Variable)}


def positive_variables(body) -> set[str]:
    """Names of the variables bound by the positive atoms of a body."""
    return {name for lit in body if isinstance(lit, ast.Atom) for name in atom_bindings(lit)}


def bound_variables(body) -> set[str]:
    """Names bound by positive atoms and by assignments (the body must be normalised)."""
    bound = positive_variables(body)
    bound |= {lit.variable.name for lit in body if isinstance(lit, ast.Assignment)}
    return bound


def normalise_rule(rule: ast.Rule) -> ast.Rule:
    """The rule with binding equalities turned into assignments and its body ordered."""
    body = _order(_assignments(rule.body))
    if all(new is old for new, old in zip(body, rule.body, strict=True)):  # the same literals, in place
        return rule
    return ast.Rule(rule.head, body, rule.span, rule.text)


def _assignments(body: tuple) -> tuple:
    if not any(isinstance(lit, ast.Comparison) and lit.op == "=" for lit in body):
        return body
    bound = positive_variables(body)
    literals = list(body)
    changed = True
    while changed:
        changed = False
        for i, lit in enumerate(literals):
            if not (isinstance(lit, ast.Comparison) and lit.op == "="):
                continue
            assignment = _as_assignment(lit, bound)
            if assignment is not None:
                literals[i] = assignment
                bound.add(assignment.variable.name)
                changed = True
    return tuple(literals)


def _as_assignment(comparison: ast.Comparison, bound: set[str]):
    """``comparison`` as an assignment of its unbound side, if the other side is all bound."""
    for target, expr in ((comparison.left, comparison.right), (comparison.right, comparison.left)):
        if not isinstance(target, ast.Variable) or target.anonymous or target.name in bound:
            continue
        expr_vars = ast.term_variables(expr)
        if all(not v.anonymous and v.name in bound for v in expr_vars):
            return ast.Assignment(target, expr, comparison.span)
    return None


def _needs(literal) -> set[str]:
    """Variables that must be available before ``literal`` can be evaluated."""
    if isinstance(literal, ast.Assignment):
        return {v.name for v in ast.term_variables(literal.expr)}
    if isinstance(literal, ast.Negation):
        return {v.name for v in ast.literal_variables(literal) if not v.anonymous}
    return {v.name for v in ast.literal_variables(literal)}


def expression_inputs(atom: ast.Atom) -> set[str]:
    """Variables of the atom's expression arguments that the atom does not bind itself."""
    inside = {v.name for a in atom.args if isinstance(a, ast.BinaryOp) for v in ast.term_variables(a)}
    return inside - atom_bindings(atom)


def _order(body: tuple) -> tuple:
    out: list = []
    available: set[str] = set()
    pending: list = []

    def emit(literal) -> None:
        out.append(literal)
        if isinstance(literal, ast.Atom):
            available.update(atom_bindings(literal))
        elif isinstance(literal, ast.Assignment):
            available.add(literal.variable.name)

    def flush() -> None:
        progress = True
        while progress:
            progress = False
            for i, literal in enumerate(pending):
                if _needs(literal) <= available:
                    emit(pending.pop(i))
                    progress = True
                    break

    for literal in body:
        if isinstance(literal, ast.Atom) or _needs(literal) <= available:
            emit(literal)
            if pending:
                flush()
        else:
            pending.append(literal)
    out.extend(pending)
    return tuple(out)
