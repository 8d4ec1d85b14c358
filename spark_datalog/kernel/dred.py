"""DRed (delete and re-derive) of one recursive stratum on the kernel.

The three phases of ``incremental.dred`` (its docstring has the reasoning), each a run of the
kernel's one semi-naive loop (:func:`~.fixpoint.rounds`) over :class:`~.relation.Relation`\\ s:

1. over-delete: from the seeds (rules with one changed lower literal read as the delta),
   rounds whose other literals read the OLD state (the relations' ``full`` stays the old one);
2. re-derive: the over-deleted facts the stratum's rules (and stated facts) still derive in one
   round from what remains and the new lower relations;
3. insert: from the re-derived facts and the other direction's seeds, rounds over the new
   state, the relations starting from what remains (``known``).

The plans are those of ``local.dred.DredPlans`` (made by ``incremental.dred_local.dred_plans``),
which this module is to replace. Frames in and out are Polars frames with the relations'
column names and types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Optional

import polars as pl

from .compile import compile_node
from .fixpoint import conformed, rounds
from .frames import facts_table, to_frame
from .relation import BestRelation, SetRelation
from .types import polars_type


@dataclass
class KernelDredOutcome:
    """relation -> (inserted facts, deleted facts), and whether a phase hit the round limit."""

    changes: dict
    exceeded: bool = False


def dred(
    plans,
    checked,
    old: Mapping[str, pl.DataFrame],
    lower_old: Mapping[str, pl.DataFrame],
    lower_new: Mapping[str, pl.DataFrame],
    changed: Mapping[tuple, pl.DataFrame],
    max_rounds: Optional[int] = None,
) -> KernelDredOutcome:
    """The stratum's changes. ``plans``: its ``DredPlans``; ``checked``: the program (for the
    relations' columns); ``old``: relation -> its old facts; ``lower_old`` / ``lower_new``:
    lower relation -> its facts before / after; ``changed``: ``("inserted" | "deleted",
    lower relation)`` -> the facts that appeared / disappeared."""
    shapes = {name: checked.relations[name] for name in plans.relations}
    old_full = {(name, "full"): frame for name, frame in {**lower_old, **old}.items()}
    # 1. over-delete against the old state
    over_seeds = _seeded(plans.over_seeds, old_full, changed, shapes)
    over_relations = {name: SetRelation(_dtypes(shapes[name])) for name in plans.relations}
    exceeded = _run(
        over_relations, over_seeds, plans.delta_rules, lambda states: old_full, shapes, max_rounds
    )
    over = {name: relation.facts() for name, relation in over_relations.items()}
    # 2. what remains, and the over-deleted facts it still derives
    remaining = {name: _without(old[name], over[name]) for name in plans.relations}
    new_full = {(name, "full"): frame for name, frame in lower_new.items()}
    remaining_full = {**new_full, **{(name, "full"): frame for name, frame in remaining.items()}}
    rederived = _rederived(plans, remaining_full, over, shapes)
    # 3. insert over the new state, from what remains
    for name, frames in _seeded(plans.insert_seeds, remaining_full, changed, shapes).items():
        rederived.setdefault(name, []).extend(frames)
    inserting = {name: _relation(plans, shapes[name], remaining[name]) for name in plans.relations}

    def current(states: dict) -> dict:
        return {**new_full, **{(name, "full"): state.full() for name, state in states.items()}}

    exceeded |= _run(inserting, rederived, plans.delta_rules, current, shapes, max_rounds)
    changes = {}
    for name, relation in inserting.items():
        final = relation.facts()
        changes[name] = (_without(final, old[name]), _without(old[name], final))
    return KernelDredOutcome(changes, exceeded)


def _run(relations: dict, base: dict, delta_rules, full: Callable, shapes, max_rounds: Optional[int]) -> bool:
    """Run rounds from the ``base`` frames (relation -> lazy frames); each later round's delta
    variants read ``full(states)`` and the recent facts. True when stopped at ``max_rounds``."""

    def candidates(iteration: int, states: dict) -> list:
        if iteration == 0:
            return [(name, frame) for name, frames in base.items() for frame in frames]
        frames = dict(full(states))
        frames.update({(name, "delta"): state.recent for name, state in states.items()})
        return [(name, _output(plan, frames, shapes[name])) for name, plan in delta_rules]

    for count, sizes in enumerate(rounds(relations, candidates, recursive=True), start=1):
        if any(sizes.values()) and max_rounds is not None and count >= max_rounds:
            return True
    return False


def _seeded(seeds, frames: Mapping, changed: Mapping, shapes) -> dict:
    """Relation -> the lazy frames its seeds derive, each reading its changed lower facts as
    the delta."""
    found: dict = {}
    for seed in seeds:
        delta = changed.get((seed.changed, seed.lower))
        if delta is None or not delta.height:
            continue
        seed_frames = {**frames, (seed.lower, "delta"): delta}
        found.setdefault(seed.relation, []).append(_output(seed.plan, seed_frames, shapes[seed.relation]))
    return found


def _rederived(plans, frames: Mapping, over: Mapping, shapes) -> dict:
    """Relation -> lazy frames of its over-deleted facts that the rules or stated facts still
    derive from ``frames`` (what remains and the new lower relations)."""
    found: dict = {name: [] for name in plans.relations}
    for name, plan in plans.rules:
        if over[name].height:
            found[name].append(_within(_output(plan, frames, shapes[name]), over[name]))
    for name, rows in plans.facts.items():
        if name in over and over[name].height and rows:
            schema = shapes[name]
            stated = to_frame(facts_table(schema.column_names, schema.types, rows), schema.types)
            found[name].append(_within(stated.lazy(), over[name]))
    return found


def _output(plan, frames: Mapping, schema) -> pl.LazyFrame:
    return conformed(compile_node(plan, frames).frame, schema.column_names, schema.types)


def _within(frame: pl.LazyFrame, facts: pl.DataFrame) -> pl.LazyFrame:
    return frame.join(facts.lazy(), on=facts.columns, how="semi")


def _without(frame: pl.DataFrame, facts: pl.DataFrame) -> pl.DataFrame:
    return frame.join(facts, on=frame.columns, how="anti")


def _dtypes(schema) -> dict:
    return {c.name: polars_type(c.type) for c in schema.columns}


def _relation(plans, schema, known: pl.DataFrame):
    best = plans.best.get(schema.name)
    if best is None:
        return SetRelation(_dtypes(schema), known)
    func, position = best
    return BestRelation(_dtypes(schema), position, func, known)
