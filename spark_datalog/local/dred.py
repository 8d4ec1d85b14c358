"""DRed (delete and re-derive) of one recursive stratum, in memory.

The same three phases as ``incremental.dred`` (read its docstring for the reasoning), over
Python sets with compiled plans instead of Spark rounds:

1. over-delete: from the seeds (rules with one changed lower literal read as the delta: deleted
   facts under positive atoms, appeared facts under negated ones), semi-naive rounds whose
   other literals read the OLD state;
2. re-derive: the over-deleted facts that the stratum's rules (and stated facts) still derive
   in one round from what remains and the new lower relations;
3. insert: from the re-derived facts and the seeds of the other direction, semi-naive rounds
   over the new state, starting from what remains.

The result is each relation's final facts compared with its old ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

from .compile import compile_plan
from .fixpoint import fixpoint


@dataclass(frozen=True)
class Seed:
    """A rule read with one changed lower literal as its delta: ``plan`` derives ``relation``
    and reads ``(lower, "delta")``, the facts of ``lower`` that ``changed`` (``"inserted"`` or
    ``"deleted"``)."""

    relation: str
    plan: object
    lower: str
    changed: str


@dataclass(frozen=True)
class DredPlans:
    """The plans DRed runs for one stratum (pickled into a Spark task)."""

    relations: tuple
    rules: tuple  # (relation, IR plan) of every rule, for re-deriving
    delta_rules: tuple  # (relation, IR plan) of the semi-naive variants
    over_seeds: tuple  # Seed, phase 1
    insert_seeds: tuple  # Seed, phase 3
    facts: dict = field(default_factory=dict)  # relation -> the program's stated facts
    best: dict = field(default_factory=dict)  # min/max relation -> (func, position)


@dataclass
class DredOutcome:
    changes: dict  # relation -> (inserted facts, deleted facts)
    exceeded: bool = False  # a phase hit the round limit


def dred(
    plans: DredPlans,
    old: Mapping[str, list],
    lower_old: Mapping[str, list],
    lower_new: Mapping[str, list],
    changed: Mapping[tuple, list],
    max_rounds: Optional[int] = None,
) -> DredOutcome:
    """The stratum's changes. ``old``: relation -> its old facts; ``lower_old`` /
    ``lower_new``: lower relation -> its facts before / after; ``changed``:
    ``("inserted" | "deleted", lower relation)`` -> the facts that appeared / disappeared."""
    own = frozenset(plans.relations)
    old_sets = {name: set(old.get(name, ())) for name in plans.relations}
    old_frames: dict = {(name, "full"): rows for name, rows in lower_old.items()}
    old_frames.update({(name, "full"): rows for name, rows in old_sets.items()})

    # 1. over-delete against the old state
    seeds: dict = {name: [] for name in plans.relations}
    seeds.update(seed_rows(plans.over_seeds, old_frames, changed, own))
    over_deleting = fixpoint(
        seeds, _compiled(plans.delta_rules, own), old_frames, max_rounds=max_rounds, fixed_full=True
    )
    over = {name: set(facts) for name, facts in over_deleting.facts.items()}

    # 2. what remains, and the over-deleted facts it still derives
    remaining = {name: [f for f in old_sets[name] if f not in over[name]] for name in plans.relations}
    new_frames = {(name, "full"): rows for name, rows in lower_new.items()}
    remaining_frames = dict(new_frames)
    remaining_frames.update({(name, "full"): rows for name, rows in remaining.items()})
    rederived: dict = {name: [] for name in plans.relations}
    for relation, plan in _compiled(plans.rules, own):
        if over[relation]:
            rederived[relation] += [row for row in plan.rows(remaining_frames) if row in over[relation]]
    for name, facts in plans.facts.items():
        if name in over and over[name]:
            rederived[name] += [row for row in facts if row in over[name]]

    # 3. insert semi-naively over the new state, from what remains
    for name, rows in seed_rows(plans.insert_seeds, remaining_frames, changed, own).items():
        rederived[name] += rows
    inserting = fixpoint(
        rederived,
        _compiled(plans.delta_rules, own),
        new_frames,
        plans.best,
        max_rounds=max_rounds,
        known=remaining,
    )
    changes = {}
    for name in plans.relations:
        final = set(inserting.facts[name])
        changes[name] = (list(final - old_sets[name]), list(old_sets[name] - final))
    return DredOutcome(changes, over_deleting.exceeded or inserting.exceeded)


def _compiled(rule_plans, own) -> list:
    return [(relation, compile_plan(plan, own)) for relation, plan in rule_plans]


def seed_rows(seeds, frames: Mapping, changed: Mapping, own) -> dict:
    rows: dict = {}
    for seed in seeds:
        seed_frames = dict(frames)
        seed_frames[(seed.lower, "delta")] = changed.get((seed.changed, seed.lower), ())
        plan = compile_plan(seed.plan, own | {seed.lower})
        rows.setdefault(seed.relation, []).extend(plan.rows(seed_frames))
    return rows
