"""Which columns of a recursive relation every semi-naive round keeps in place.

In ``tc(X, Z) :- tc(X, Y), arc(Y, Z).`` the head's first column is the delta atom's first
column: a round never moves a fact's ``X``. If the relation is stored partitioned on such
columns, the delta keeps that partitioning through the round (joins with broadcast relations and
projections preserve it), so removing duplicates and known facts needs no shuffle at all
(BigDatalog's "decomposable" programs, seed 001). Backends use it as a hint: it never changes
results, only where data moves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

from ..syntax import ast
from . import ir


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
        kept = {
            i
            for i, (head, body) in enumerate(zip(rule.head.args, delta.args, strict=True))
            if _same_variable(head, body)
        }
        positions = kept if positions is None else positions & kept
    return tuple(sorted(positions)) if positions else None


def _same_variable(head, body) -> bool:
    return (
        isinstance(head, ast.Variable)
        and isinstance(body, ast.Variable)
        and not head.anonymous
        and head.name == body.name
    )


@dataclass(frozen=True)
class Decomposition:
    """How a recursive stratum splits into fixpoints that each run inside one partition.

    With a ``key`` (positions of the stratum's one relation that every round keeps in place),
    partitioned on the key no fact ever derives a fact of another partition, so each partition
    runs the whole fixpoint by itself (seed 002's decomposable plans with a discriminating set).
    Without one (``()``: several relations, non-linear rules, nothing kept in place), the only
    such split is a single partition. Either way every partition reads the other relations of
    the recursive rules (``static``) in full. ``exit_rules`` are the rules that read no relation
    of the stratum (round 0); ``delta_rules`` the semi-naive variants of the others.
    """

    relations: tuple
    key: tuple
    static: tuple
    exit_rules: tuple
    delta_rules: tuple


def is_linear(plan) -> bool:
    """True when every semi-naive variant of the recursive stratum ``plan`` reads exactly one
    relation of the stratum, its delta (linear recursion: a fact derives from one fact of the
    stratum and facts of lower relations)."""
    own = set(plan.relations)
    for rule_plan in plan.delta_rules:
        mine = [scan for scan in ir.scans(rule_plan.plan) if scan.relation in own]
        if len(mine) != 1 or mine[0].source != "delta":
            return False
    return True


def decomposition(plan) -> Optional[Decomposition]:
    """The decomposition of a recursive ``StratumPlan`` (None for a non-recursive one). It has
    a key when the stratum defines one relation, every recursive rule reads it once (linear
    recursion), some position is stable (:func:`stable_positions`) and it has no limit."""
    if not plan.recursive:
        return None
    own = set(plan.relations)
    static = {
        scan.relation
        for rule_plan in plan.delta_rules
        for scan in ir.scans(rule_plan.plan)
        if scan.relation not in own
    }
    key = ()
    # a limit (``.limitsize``) keeps the least new facts of the stratum's round that reaches
    # it: partitions running their own rounds would keep others
    if is_linear(plan) and len(plan.relations) == 1 and not getattr(plan, "limits", None):
        key = stable_positions(plan.relations[0], plan.delta_rules) or ()
    exit_rules = tuple(
        rule_plan
        for rule_plan in plan.rules
        if all(scan.relation not in own for scan in ir.scans(rule_plan.plan))
    )
    return Decomposition(
        tuple(plan.relations), key, tuple(sorted(static)), exit_rules, tuple(plan.delta_rules)
    )
