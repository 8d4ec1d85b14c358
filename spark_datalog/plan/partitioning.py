"""Which columns of a recursive relation every semi-naive round keeps in place.

In ``tc(X, Z) :- tc(X, Y), arc(Y, Z).`` the head's first column is the delta atom's first
column: a round never moves a fact's ``X``. If the relation is stored partitioned on such
columns, the delta keeps that partitioning through the round (joins with broadcast relations and
projections preserve it), so removing duplicates and known facts needs no shuffle at all
(BigDatalog's "decomposable" programs, seed 001). Backends use it as a hint: it never changes
results, only where data moves.
"""

from __future__ import annotations

from typing import Iterable, Optional

from ..syntax import ast


def stable_positions(relation: str, delta_rules: Iterable) -> Optional[tuple]:
    """Head positions of ``relation`` that every delta variant deriving it copies from the same
    position of its delta atom, which must be ``relation`` itself; None when there are none (or
    no such variant, or a variant reads another relation's delta)."""
    positions: Optional[set] = None
    for rule_plan in delta_rules:
        if rule_plan.relation != relation or rule_plan.delta_position is None:
            continue
        rule = rule_plan.rule
        delta = rule.body[rule_plan.delta_position]
        if not isinstance(delta, ast.Atom) or delta.predicate != relation:
            return None
        kept = {i for i, (head, body) in enumerate(zip(rule.head.args, delta.args))
                if _same_variable(head, body)}
        positions = kept if positions is None else positions & kept
    return tuple(sorted(positions)) if positions else None


def _same_variable(head, body) -> bool:
    return (isinstance(head, ast.Variable) and isinstance(body, ast.Variable)
            and not head.anonymous and head.name == body.name)
