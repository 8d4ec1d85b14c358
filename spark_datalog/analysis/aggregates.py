"""Head aggregates per relation.

A relation's rules agree on one aggregate (function and position), or use none. min/max relations
may also have plain rules and facts (they contribute candidates, seed 002's programs); count, sum
and avg relations may not. A head holds at most one aggregate.
"""

from __future__ import annotations

from ..errors import SchemaError, StratificationError
from ..syntax import ast
from .checked import AggregateSpec
from .mentions import error_at, rule_text, where


def relation_aggregates(rules, facts=()) -> tuple[dict, list]:
    """``({relation: AggregateSpec}, errors)`` for the aggregate relations of ``rules``."""
    errors: list = []
    specs: dict[str, AggregateSpec] = {}
    defining: dict[str, ast.Rule] = {}
    for rule in rules:
        if ast.Aggregate not in map(type, rule.head.args):  # most heads: a check at C speed
            continue
        aggregates = [(i, a) for i, a in enumerate(rule.head.args) if isinstance(a, ast.Aggregate)]
        for _, extra in aggregates[1:]:
            errors.append(
                error_at(
                    SchemaError,
                    f"rule '{rule_text(rule)}' has more than one aggregate in its head",
                    extra.span,
                )
            )
        if not aggregates:
            continue
        position, aggregate = aggregates[0]
        name = rule.head.predicate
        spec = AggregateSpec(position, aggregate.func)
        if name not in specs:
            specs[name], defining[name] = spec, rule
        elif specs[name] != spec:
            first = defining[name]
            assert first.aggregate is not None  # rules are only recorded in defining with one
            errors.append(
                error_at(
                    StratificationError,
                    f"conflicting aggregates for relation '{name}': {aggregate} at position "
                    f"{position} here but {first.aggregate[1]} at position {specs[name].position} "
                    f"in rule '{rule_text(first)}' (at {where(first.span)})",
                    aggregate.span if aggregate.span.line else rule.span,
                )
            )

    errors += _mixed_errors(rules, facts, specs, defining)
    return specs, errors


def _mixed_errors(rules, facts, specs: dict, defining: dict) -> list:
    """Plain rules and facts of count/sum/avg relations (one pass over the rules and one over the
    facts, whatever the number of aggregate relations)."""
    strict = {name for name, spec in specs.items() if spec.func not in ast.PREMAPPABLE_FUNCTIONS}
    if not strict:
        return []
    found: dict[str, list] = {name: [] for name in specs if name in strict}  # in specs' order
    for rule in rules:
        if rule.head.predicate in strict and rule.aggregate is None:
            found[rule.head.predicate].append(("plain rules", rule_text(rule), rule.head.span))
    for fact in facts:
        if fact.atom.predicate in strict:
            found[fact.atom.predicate].append(("facts", str(fact), fact.atom.span))
    errors: list = []
    for name, clauses in found.items():
        origin = f"rule '{rule_text(defining[name])}'"
        for what, text, span in clauses:  # its plain rules, then its facts
            errors.append(
                error_at(
                    StratificationError,
                    f"relation '{name}' aggregates with {specs[name].func} in {origin} and may not "
                    f"also have {what} such as '{text}'",
                    span,
                )
            )
    return errors
