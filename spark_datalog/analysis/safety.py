"""Safety (range restriction) of normalised rules.

Every variable of the head, of a negated atom and of a comparison must be bound by a positive body
atom or by an assignment. An anonymous ``_`` may appear in body atoms (in a negated atom it means
"any value") but not in the head, a comparison or an assignment. A rule without body is a fact and
may not contain variables.
"""

from __future__ import annotations

from typing import Optional

from ..errors import SafetyError
from ..syntax import ast
from .mentions import error_at, rule_text
from .normalise import bound_variables

_UNBOUND = "is not bound by a positive body atom or an assignment"
_EXPRESSION_HINT = (
    " (an atom binds only the variables that are whole arguments of it, not those inside an "
    "expression argument such as 'p(X + 1)')"
)


def check_safety(rules, bound: Optional[list] = None) -> list[SafetyError]:
    """All safety errors of the (normalised) ``rules``: one per unsafe variable per rule, at its
    first unsafe occurrence. ``bound`` holds each rule's ``bound_variables`` when the caller has
    them already."""
    if bound is None:
        bound = [bound_variables(rule.body) for rule in rules]
    errors: list[SafetyError] = []
    for rule, names in zip(rules, bound, strict=True):
        if not (rule.body and _safe(rule, names)):
            errors.extend(_check_rule(rule, names))
    return errors


def _safe(rule: ast.Rule, bound: set) -> bool:
    """Whether ``rule`` (with a body) certainly has no safety error: a quick walk, without
    messages (the full check finds the errors of a rule that fails it)."""
    for arg in rule.head.args:
        if not _bound_term(arg, bound):
            return False
    for literal in rule.body:
        kind = type(literal)
        if kind is ast.Atom:
            for arg in literal.args:  # a loop: no generator per atom
                if type(arg) in ast.OPERATIONS and not _bound_term(arg, bound):
                    return False
        elif kind is ast.Comparison:
            if not (_bound_term(literal.left, bound) and _bound_term(literal.right, bound)):
                return False
        elif kind is ast.Assignment:
            if not _bound_term(literal.expr, bound):
                return False
        elif not all(v.anonymous or v.name in bound for v in ast.literal_variables(literal)):
            return False
    return True


def _bound_term(term, bound: set) -> bool:
    """Whether every variable of a term (or head aggregate) is named and ``bound``."""
    kind = type(term)
    if kind is ast.Variable:
        return not term.anonymous and term.name in bound
    if kind is ast.Constant:
        return True
    return all(not v.anonymous and v.name in bound for v in ast.term_variables(term))


def _check_rule(rule: ast.Rule, bound: set) -> list[SafetyError]:
    hint = {v.name for arg in _expression_arguments(rule) for v in ast.term_variables(arg[1])}
    errors: list[SafetyError] = []
    reported: set[str] = set()
    for variables, (template, *subjects), anonymous_allowed in _places(rule):
        for var in variables:
            if var.anonymous:
                if not anonymous_allowed:
                    message = (
                        f"anonymous variable '_' {template.format(*subjects)} of rule '{rule_text(rule)}' "
                        f"is not allowed (only body atoms may use '_', as a whole argument)"
                    )
                    errors.append(error_at(SafetyError, message, var.span))
            elif var.name not in bound and var.name not in reported:
                reported.add(var.name)
                place = template.format(*subjects)
                errors.append(
                    error_at(SafetyError, _unbound(var, place, rule_text(rule), rule, hint), var.span)
                )
    return errors


def _unbound(var: ast.Variable, place: str, text: str, rule: ast.Rule, hint: set) -> str:
    message = f"variable {var.name} {place} of rule '{text}' {_UNBOUND}"
    if var.name in hint:
        message += _EXPRESSION_HINT
    if not rule.body:
        message += " (a fact cannot contain variables)"
    return message


def _expression_arguments(rule: ast.Rule):
    """(atom, expression) for every expression argument of a positive body atom."""
    for literal in rule.body:
        if isinstance(literal, ast.Atom):
            for arg in literal.args:
                if isinstance(arg, ast.OPERATIONS):
                    yield literal, arg


def _places(rule: ast.Rule):
    """(variables, where they are, whether '_' may be one) of every place that needs bound
    variables, in the order they are reported: expression arguments of atoms first (the atom
    that seems to bind the variable is where to fix it), then the head, then the body. Where they
    are is ``(template, *subjects)``, formatted only for a message."""
    for atom, arg in _expression_arguments(rule):
        yield (
            ast.term_variables(arg),
            ("in expression '{}' (an argument of {})", _bare(arg), atom.predicate),
            False,
        )
    for arg in rule.head.args:
        if isinstance(arg, ast.Aggregate):
            yield [arg.variable], ("of aggregate {} in the head", arg), False
        else:
            yield ast.term_variables(arg), ("in the head",), False
    for literal in rule.body:
        if isinstance(literal, ast.Negation):
            yield ast.literal_variables(literal), ("in negated atom '{}'", literal), True
        elif isinstance(literal, ast.Comparison):
            yield ast.literal_variables(literal), ("in comparison '{}'", literal), False
        elif isinstance(literal, ast.Assignment):
            yield ast.term_variables(literal.expr), ("in assignment '{}'", literal), False


def _bare(term) -> str:
    """An expression as written, without the outer parentheses ``str`` puts around it."""
    text = str(term)
    return text[1:-1] if isinstance(term, ast.BinaryOp) else text
