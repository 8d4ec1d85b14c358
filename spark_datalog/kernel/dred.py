"""DRed (delete and re-derive) of one recursive stratum on the kernel, and as one Spark task.

The three phases of ``incremental.dred`` (its docstring has the reasoning), each a run of the
engine's one semi-naive loop (``seminaive.rounds``) over :class:`~spark_datalog.seminaive.Relation`\\ s:

1. remove: the old facts that may no longer hold, by one of three strategies, all from the
   seeds (rules with one changed lower literal read as the delta, over the old state):

   - over-deletion (set relations, :func:`over_deleted`): rounds from the seeds whose other
     literals read the OLD state (the relations' ``full`` stays the old one);
   - group repair (a stratum of min/max relations only, :func:`affected_groups`): the stored
     best rows a derivation through a removed fact may hold, their groups evaluated anew;
   - derivation levels (``incremental.levels.dropped``, given as ``removed``): the facts
     that lose their support;

2. re-derive: the removed facts (of a min/max relation: the best of their groups) the
   stratum's rules (and stated facts) still derive in one round from what remains and the new
   lower relations;
3. insert: from the re-derived facts and the other direction's seeds, rounds over the new
   state, the relations starting from what remains (``known``). The round that first added
   each fact is recorded (``DredOutcome.added``: derivation levels are these rounds).

:func:`dred` takes and returns Polars frames with the relations' columns; :func:`run_dred` is
the ``mapInArrow`` function of ``incremental.dred_local``, which sends every input of the
stratum into one partition. The plans (``plan.maintenance.DredPlans``) are made by
``plan.maintenance.dred_plans``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping, Optional

import polars as pl
import pyarrow as pa

from .compile import compile_node
from ..plan.maintenance import DredPlans
from ..seminaive import rounds
from .checks import collect_all
from .fixpoint import conformed
from .frames import facts_table, to_frame, to_table
from .partition import LocalRelation, PartitionReport, new_relation, split_batches, wide_batches
from .relation import SetRelation

ROUND = "__round"  # the column of ``DredOutcome.added``: the round of phase 3 that added a row


@dataclass
class DredOutcome:
    """relation -> (inserted facts, deleted facts); whether a phase hit the round limit, or
    phase 1 removed more than allowed (``overflow``: no changes then); relation -> the facts
    phase 1 removed (``over``); relation -> the rows phase 3 added with the round that added
    them (column ``ROUND``); relation -> its final facts."""

    changes: dict
    exceeded: bool = False
    overflow: bool = False
    over: dict = field(default_factory=dict)
    added: dict = field(default_factory=dict)
    final: dict = field(default_factory=dict)


def dred(
    plans: DredPlans,
    old: Mapping[str, pl.DataFrame],
    lower_old: Mapping[str, pl.DataFrame],
    lower_new: Mapping[str, pl.DataFrame],
    changed: Mapping[tuple, pl.DataFrame],
    max_rounds: Optional[int] = None,
    max_over: Optional[int] = None,
    removed: Optional[Mapping[str, pl.DataFrame]] = None,
) -> DredOutcome:
    """The stratum's changes. ``old``: relation -> its old facts; ``lower_old`` /
    ``lower_new``: lower relation -> its facts before / after; ``changed``: ``("inserted" |
    "deleted", lower relation)`` -> the facts that appeared / disappeared. Phase 1 over-deletes
    (or, for min/max relations, finds the ``affected_groups``) unless the caller gives the
    facts it ``removed`` (relation -> old facts); it stops as soon as more than ``max_over``
    facts are removed (``overflow``)."""
    shapes = {relation.name: relation for relation in plans.relations}
    exceeded = False
    if removed is None and plans.regroups:
        removed = affected_groups(plans, old, lower_old, lower_new, changed)
    elif removed is None:
        over_or_none, exceeded = over_deleted(plans, old, lower_old, changed, max_rounds, max_over)
        if over_or_none is None:
            return DredOutcome({}, overflow=True)
        removed = over_or_none
    if max_over is not None and sum(frame.height for frame in removed.values()) > max_over:
        return DredOutcome({}, overflow=True)
    over = {name: removed.get(name, _empty(shape)) for name, shape in shapes.items()}
    remaining = {name: _without(old[name], over[name]) if over[name].height else old[name] for name in shapes}
    new_full = {(name, "full"): frame for name, frame in lower_new.items()}
    remaining_full = {**new_full, **{(name, "full"): frame for name, frame in remaining.items()}}
    base = _rederived(plans, remaining_full, over, shapes)
    for name, frames in _seeded(plans.insert_seeds, remaining_full, changed, shapes).items():
        base.setdefault(name, []).extend(frames)
    inserting = {name: new_relation(shape, remaining[name]) for name, shape in shapes.items()}

    def current(states: dict) -> dict:
        return {**new_full, **{(name, "full"): state.full() for name, state in states.items()}}

    added: dict = {name: [] for name in shapes}
    exceeded |= run_rounds(inserting, base, plans.delta_rules, current, shapes, max_rounds, added=added)
    added_frames = {name: _rounds_frame(frames, shapes[name]) for name, frames in added.items()}
    final = {name: relation.facts() for name, relation in inserting.items()}
    changes = {
        name: _changes(shape, old[name], over[name], added_frames[name], final[name])
        for name, shape in shapes.items()
    }
    return DredOutcome(changes, exceeded, over=over, added=added_frames, final=final)


def over_deleted(
    plans: DredPlans, old: Mapping, lower_old: Mapping, changed: Mapping, max_rounds, max_over
) -> tuple:
    """Phase 1 by over-deletion: (relation -> the old facts with a derivation through a
    removed fact, or None beyond ``max_over`` of them; whether the round limit was hit)."""
    shapes = {relation.name: relation for relation in plans.relations}
    old_full = {(name, "full"): frame for name, frame in {**lower_old, **old}.items()}
    seeds = _seeded(plans.over_seeds, old_full, changed, shapes)
    relations = {name: SetRelation(_dtypes(shape)) for name, shape in shapes.items()}
    exceeded = run_rounds(
        relations, seeds, plans.delta_rules, lambda _: old_full, shapes, max_rounds, max_over
    )
    if max_over is not None and sum(r.size() for r in relations.values()) > max_over:
        return None, exceeded
    return {name: relation.facts() for name, relation in relations.items()}, exceeded


def seed_facts(plans: DredPlans, old: Mapping, lower_old: Mapping, changed: Mapping) -> dict:
    """Relation -> the distinct facts the removal seeds derive over the old state (what
    ``incremental.levels.dropped`` starts from)."""
    shapes = {relation.name: relation for relation in plans.relations}
    old_full = {(name, "full"): frame for name, frame in {**lower_old, **old}.items()}
    seeds = _seeded(plans.over_seeds, old_full, changed, shapes)
    names = list(seeds)
    found = pl.collect_all([pl.concat(seeds[name], how="vertical").unique() for name in names])
    return dict(zip(names, found, strict=True))


def affected_groups(
    plans: DredPlans, old: Mapping, lower_old: Mapping, lower_new: Mapping, changed: Mapping
) -> dict:
    """Phase 1 of group repair: relation -> the stored best rows (of ``old``) that a
    derivation through a removed fact may hold. The rows of the removal seeds (over the old
    state) equal to their group's stored row (tight), then, round by round, the tight rows the
    recursive rules derive from the last round's over the new lower relations.

    The other groups keep their value: a group's stored value has a derivation of tight rows
    only, and if none of its tight rows is derived through a removed fact or an affected group,
    that derivation survives, while removals can only make values worse. So only the affected
    groups are evaluated again (over the new state, from the other groups). Every derivation
    through a removed lower fact is a seed, and the others read lower facts that remain, so
    propagating over the new lower relations misses none; a derivation through an appeared fact
    can only mark more groups, which are then evaluated again for nothing. (Ends: each round
    adds groups, of finitely many.)"""
    shapes = {relation.name: relation for relation in plans.relations}
    old_full = {(name, "full"): frame for name, frame in {**lower_old, **old}.items()}
    new_full = {**old_full, **{(name, "full"): frame for name, frame in lower_new.items()}}
    seeds = _seeded(plans.over_seeds, old_full, changed, shapes)
    relations = {name: SetRelation(_dtypes(shape)) for name, shape in shapes.items()}
    tight = {name: old[name] for name in shapes}
    run_rounds(relations, seeds, plans.delta_rules, lambda _: new_full, shapes, None, within=tight)
    return {name: relation.facts() for name, relation in relations.items()}


def _changes(shape: LocalRelation, old, over, added: pl.DataFrame, final: pl.DataFrame) -> tuple:
    """(inserted, deleted) of a relation: a set's final facts are what remained plus what phase
    3 added, its old ones what remained plus ``over``; a min/max group's best may change
    several times, so its final rows are compared with the old ones."""
    if shape.best is None:
        new = added.drop(ROUND)
        return _without(new, over), _without(over, new)
    return _without(final, old), _without(old, final)


def run_rounds(
    relations: dict,
    base: dict,
    delta_rules,
    full: Callable,
    shapes,
    max_rounds: Optional[int],
    max_facts: Optional[int] = None,
    added: Optional[dict] = None,
    within: Optional[dict] = None,
) -> bool:
    """Run rounds from the ``base`` frames (relation -> lazy frames); each later round's delta
    variants read ``full(states)`` and the recent facts. True when stopped at ``max_rounds``;
    stops (False) once the relations hold more than ``max_facts``. Each round's new facts are
    appended to ``added`` (relation -> (round, frame) pairs) when given; with ``within``
    (relation -> frame), only candidates among its rows are kept."""

    def kept(name: str, frame: pl.LazyFrame) -> pl.LazyFrame:
        return frame if within is None else _within(frame, within[name])

    def candidates(iteration: int, states: dict) -> list:
        if iteration == 0:
            return [(name, kept(name, frame)) for name, frames in base.items() for frame in frames]
        frames = dict(full(states))
        frames.update({(name, "delta"): state.recent for name, state in states.items()})
        return [(name, kept(name, rule_output(plan, frames, shapes[name]))) for name, plan in delta_rules]

    for count, sizes in enumerate(rounds(relations, candidates, True, collect_all), start=1):
        for name, size in sizes.items():
            if added is not None and size:
                added[name].append((count - 1, relations[name].recent))
        if max_facts is not None and sum(r.size() for r in relations.values()) > max_facts:
            return False
        if any(sizes.values()) and max_rounds is not None and count >= max_rounds:
            return True
    return False


def _rounds_frame(added: list, shape: LocalRelation) -> pl.DataFrame:
    """The rows of ``added`` ((round, frame) pairs) with their round in column ``ROUND``."""
    frames = [frame.with_columns(pl.lit(round_, pl.Int64).alias(ROUND)) for round_, frame in added]
    if not frames:
        return _empty(shape).with_columns(pl.lit(0, pl.Int64).alias(ROUND))
    return pl.concat(frames, how="vertical")


def _seeded(seeds, frames: Mapping, changed: Mapping, shapes) -> dict:
    """Relation -> the lazy frames its seeds derive, each reading its changed lower facts as
    the delta."""
    found: dict = {}
    for seed in seeds:
        delta = changed.get((seed.changed, seed.lower))
        if delta is None or not delta.height:
            continue
        seed_frames = {**frames, (seed.lower, "delta"): delta}
        found.setdefault(seed.relation, []).append(rule_output(seed.plan, seed_frames, shapes[seed.relation]))
    return found


def _rederived(plans: DredPlans, frames: Mapping, over: Mapping, shapes) -> dict:
    """Relation -> lazy frames of its removed facts that the rules or stated facts still
    derive from ``frames`` (what remains and the new lower relations); of a min/max relation,
    every derivation of a removed row's group."""
    found: dict = {name: [] for name in shapes}
    for name, plan in plans.rules:
        if over[name].height and shapes[name].best is None:
            found[name].append(_within(rule_output(plan, frames, shapes[name]), over[name]))
    for name, plan in plans.group_rules:
        if over[name].height:
            group_frames = {**frames, (name, "delta"): over[name]}
            found[name].append(rule_output(plan, group_frames, shapes[name]))
    for name, rows in plans.facts.items():
        if name in over and over[name].height and rows:
            shape = shapes[name]
            stated = to_frame(facts_table(shape.column_names, shape.column_types, rows), shape.column_types)
            found[name].append(_within(stated.lazy(), over[name], _group(shape)))
    return found


def _group(shape: LocalRelation) -> Optional[list]:
    """The columns of a min/max relation's group (None for a set relation: all of them)."""
    if shape.best is None:
        return None
    return [name for i, name in enumerate(shape.column_names) if i != shape.best[1]]


def rule_output(plan, frames: Mapping, shape: LocalRelation) -> pl.LazyFrame:
    return conformed(compile_node(plan, frames).frame, shape.column_names, shape.column_types)


def _within(frame: pl.LazyFrame, facts: pl.DataFrame, on: Optional[list] = None) -> pl.LazyFrame:
    if on == []:  # a min/max relation of one group: any row of it
        return frame if facts.height else frame.clear()
    return frame.join(facts.lazy(), on=on or facts.columns, how="semi")


def _without(frame: pl.DataFrame, facts: pl.DataFrame) -> pl.DataFrame:
    return frame.join(facts, on=frame.columns, how="anti")


def _empty(shape: LocalRelation) -> pl.DataFrame:
    return pl.DataFrame(schema=_dtypes(shape))


def _dtypes(shape: LocalRelation) -> dict:
    return new_relation(shape).dtypes


@dataclass(frozen=True)
class DredTask:
    """A stratum's DRed in one task: the input blocks (``old:R``, ``new:L``, ``inserted:L``,
    ``deleted:L``) and the output blocks (``inserted:R``, ``deleted:R``) of the wide schema."""

    plans: DredPlans
    inputs: tuple  # LocalRelation
    outputs: tuple  # LocalRelation
    max_rounds: Optional[int]
    max_facts: Optional[int]


def run_dred(batches: Iterator[pa.RecordBatch], task: DredTask, reports) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` function of ``incremental.dred_local``: all of the stratum's inputs
    arrive in this one partition; it yields the changes, or nothing when the inputs are more
    than ``task.max_facts`` rows (reported as an overflow) or a phase hit the round limit."""
    blocks: dict = {"old": {}, "new": {}, "inserted": {}, "deleted": {}}
    for name, frame in split_batches(batches, task.inputs).items():
        kind, relation = name.split(":", 1)
        blocks[kind][relation] = frame
    if (
        task.max_facts is not None
        and sum(f.height for b in blocks.values() for f in b.values()) > task.max_facts
    ):
        reports.add({0: PartitionReport([], [], {}, False, True)})
        return
    own = set(task.plans.names)
    old = {name: frame for name, frame in blocks["old"].items() if name in own}
    lower_old = {name: frame for name, frame in blocks["old"].items() if name not in own}
    changed = {
        (kind, name): frame for kind in ("inserted", "deleted") for name, frame in blocks[kind].items()
    }
    outcome = dred(task.plans, old, lower_old, blocks["new"], changed, task.max_rounds)
    reports.add({0: PartitionReport([], [], {}, outcome.exceeded, False)})
    if outcome.exceeded:
        return
    tags = {relation.name: tag for tag, relation in enumerate(task.outputs)}
    for relation in task.plans.relations:
        for kind, facts in zip(("inserted", "deleted"), outcome.changes[relation.name], strict=True):
            table = to_table(facts, relation.column_names, relation.column_types)
            yield from wide_batches(table, tags[f"{kind}:{relation.name}"], task.outputs)
