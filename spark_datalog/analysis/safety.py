"""Safety (range restriction) of normalised rules.

Every variable of the head, of a negated atom and of a comparison must be bound by a positive body
atom or by an assignment. An anonymous ``_`` may appear in body atoms (in a negated atom it means
"any value") but not in the head, a comparison or an assignment. A rule without body is a fact and
may not contain variables.
"""

from __future__ import annotations

from ..errors import SafetyError
from ..syntax import ast
from .mentions import error_at, rule_text
from .normalise import bound_variables

_UNBOUND = "is not bound by a positive body atom or an assignment"


def check_safety(rules) -> list[SafetyError]:
    """All safety errors of the (normalised) ``rules``: one per unsafe variable per rule, at its
    first unsafe occurrence."""
    errors: list[SafetyError] = []
    for rule in rules:
        errors.extend(_check_rule(rule))
    return errors


def _check_rule(rule: ast.Rule) -> list[SafetyError]:
    bound = bound_variables(rule.body)
    text = rule_text(rule)
    errors: list[SafetyError] = []
    reported: set[str] = set()

    def check(variables, place: str, anonymous_allowed: bool = False) -> None:
        for var in variables:
            if var.anonymous:
                if not anonymous_allowed:
                    errors.append(
                        error_at(
                            SafetyError,
                            f"anonymous variable '_' {place} of "
                            f"rule '{text}' is not allowed (only "
                            f"body atoms may use '_')",
                            var.span,
                        )
                    )
                continue
            if var.name in bound or var.name in reported:
                continue
            reported.add(var.name)
            message = f"variable {var.name} {place} of rule '{text}' {_UNBOUND}"
            if not rule.body:
                message += " (a fact cannot contain variables)"
            errors.append(error_at(SafetyError, message, var.span))

    for arg in rule.head.args:
        if isinstance(arg, ast.Aggregate):
            check([arg.variable], f"of aggregate {arg} in the head")
        else:
            check(ast.term_variables(arg), "in the head")
    for literal in rule.body:
        if isinstance(literal, ast.Negation):
            check(ast.literal_variables(literal), f"in negated atom '{literal}'", anonymous_allowed=True)
        elif isinstance(literal, ast.Comparison):
            check(ast.literal_variables(literal), f"in comparison '{literal}'")
        elif isinstance(literal, ast.Assignment):
            check(ast.term_variables(literal.expr), f"in assignment '{literal}'")
    return errors
