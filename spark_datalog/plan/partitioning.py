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
        kept = {i for i, (head, body) in enumerate(zip(rule.head.args, delta.args))
                if _same_variable(head, body)}
        positions = kept if positions is None else positions & kept
    return tuple(sorted(positions)) if positions else None


def _same_variable(head, body) -> bool:
    return (isinstance(head, ast.Variable) and isinstance(body, ast.Variable)
            and not head.anonymous and head.name == body.name)


@dataclass(frozen=True)
class Decomposition:
    """How a recursive stratum splits into independent fixpoints, one per partition.

    ``relation`` is the stratum's one relation and ``key`` the positions every round keeps in
    place: partitioned on them, no fact ever derives a fact of another partition, so each
    partition can run the whole fixpoint by itself when it can read every other relation of the
    recursive rules (``static``: relation names) in full. ``exit_rules`` are the rules that do
    not read the relation (round 0); ``delta_rules`` the semi-naive variants of the others.
    """

    relation: str
    key: tuple
    static: tuple
    exit_rules: tuple
    delta_rules: tuple


def decomposition(plan) -> Optional[Decomposition]:
    """The decomposition of a recursive ``StratumPlan`` (seed 002's decomposable plans with a
    discriminating set), or None: the stratum must define one relation, every recursive rule
    must read it once (linear recursion), and some position must be stable
    (:func:`stable_positions`)."""
    if not plan.recursive or len(plan.relations) != 1:
        return None
    relation, = plan.relations
    key = stable_positions(relation, plan.delta_rules)
    if not key:
        return None
    static: set = set()
    for rule_plan in plan.delta_rules:
        reads = ir.scans(rule_plan.plan)
        own = [scan for scan in reads if scan.relation == relation]
        if len(own) != 1 or own[0].source != "delta":
            return None
        static.update(scan.relation for scan in reads if scan.relation != relation)
    exit_rules = tuple(rule_plan for rule_plan in plan.rules
                       if all(scan.relation != relation for scan in ir.scans(rule_plan.plan)))
    return Decomposition(relation, key, tuple(sorted(static)), exit_rules, tuple(plan.delta_rules))
