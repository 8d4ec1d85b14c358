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

from dataclasses import dataclass
from typing import Iterator, Mapping, Optional

import polars as pl
import pyarrow as pa

from .compile import compile_node
from ..plan.maintenance import DredPlans
from ..dred import DredOutcome, run_rounds, seeded
from ..dred import dred as one_dred
from .checks import collect_all
from .fixpoint import conformed
from .frames import facts_table, to_frame, to_table
from .partition import LocalRelation, PartitionReport, new_relation, split_batches, wide_batches
from .relation import BestRelation, SetRelation

ROUND = "__round"  # the column of ``DredOutcome.added``: the round of phase 3 that added a row


class KernelBackend:
    """The kernel's frames (Polars) and relations (``.relation``), for the one DRed
    (``spark_datalog.dred.Backend``)."""

    collect = staticmethod(collect_all)

    def output(self, plan, frames: Mapping, shape: LocalRelation) -> pl.LazyFrame:
        return rule_output(plan, frames, shape)

    def relation(
        self, shape: LocalRelation, known: Optional[pl.DataFrame] = None
    ) -> SetRelation | BestRelation:
        return new_relation(shape, known)

    def full(self, relation) -> pl.LazyFrame:
        return relation.full()

    def recent(self, relation) -> pl.DataFrame:
        return relation.recent

    def facts(self, relation) -> pl.DataFrame:
        return relation.facts()

    def size(self, relation) -> int:
        return relation.size()

    def has_rows(self, frame: pl.DataFrame) -> bool:
        return frame.height > 0

    def rows(self, frame: pl.DataFrame) -> int:
        return frame.height

    def union(self, frames: list, shape: LocalRelation) -> pl.DataFrame:
        return pl.concat(frames, how="vertical") if frames else _empty(shape)

    def within(self, frame: pl.LazyFrame, facts: pl.DataFrame, on: Optional[list] = None) -> pl.LazyFrame:
        if on == []:  # a min/max relation of one group: any row of it
            return frame if facts.height else frame.clear()
        return frame.join(facts.lazy(), on=on or facts.columns, how="semi")

    def without(self, frame: pl.DataFrame, facts: pl.DataFrame) -> pl.DataFrame:
        # lazily: Polars' streaming engine removes 12 facts from 9.2M in a third of the time
        # the eager join takes over a frame of many chunks (as read from many files)
        return frame.lazy().join(facts.lazy(), on=frame.columns, how="anti").collect()

    def stated(self, shape: LocalRelation, rows: tuple) -> pl.LazyFrame:
        table = facts_table(shape.column_names, shape.column_types, rows)
        return to_frame(table, shape.column_types).lazy()

    def after_round(self, relations: dict, count: int, added: Optional[dict]) -> None:
        """Nothing to do between rounds."""


KERNEL = KernelBackend()


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
    """The stratum's changes by the one DRed (``spark_datalog.dred.dred``, same arguments) on
    the kernel; phase 1 of a stratum of min/max relations finds the ``affected_groups`` unless
    the caller gives what it ``removed``. In the outcome, ``over`` has every relation (empty
    frames too), ``added`` is relation -> the rows phase 3 added with their round in column
    ``ROUND``, ``final`` relation -> its final facts."""
    if removed is None and plans.regroups:
        removed = affected_groups(plans, old, lower_old, lower_new, changed)
    outcome = one_dred(KERNEL, plans, old, lower_old, lower_new, changed, max_rounds, max_over, removed)
    if outcome.overflow:
        return outcome
    shapes = {shape.name: shape for shape in plans.relations}
    outcome.over = {name: outcome.over.get(name, _empty(shape)) for name, shape in shapes.items()}
    outcome.added = {name: _rounds_frame(outcome.added[name], shape) for name, shape in shapes.items()}
    outcome.final = {name: relation.facts() for name, relation in outcome.final.items()}
    return outcome


def seed_facts(plans: DredPlans, old: Mapping, lower_old: Mapping, changed: Mapping) -> dict:
    """Relation -> the distinct facts the removal seeds derive over the old state (what
    ``incremental.levels.dropped`` starts from)."""
    shapes = {relation.name: relation for relation in plans.relations}
    old_full = {(name, "full"): frame for name, frame in {**lower_old, **old}.items()}
    seeds = seeded(KERNEL, plans.over_seeds, old_full, changed, shapes)
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
    seeds = seeded(KERNEL, plans.over_seeds, old_full, changed, shapes)
    relations = {name: SetRelation(_dtypes(shape)) for name, shape in shapes.items()}
    tight = {name: old[name] for name in shapes}
    run_rounds(KERNEL, relations, seeds, plans.delta_rules, lambda _: new_full, shapes, None, within=tight)
    return {name: relation.facts() for name, relation in relations.items()}


def changed_state(
    old: pl.DataFrame, inserted: Optional[pl.DataFrame], deleted: Optional[pl.DataFrame]
) -> pl.DataFrame:
    """A lower relation's new facts: its ``old`` ones without those that disappeared
    (``deleted``), with those that appeared (``inserted``).

    >>> old, appeared, gone = pl.DataFrame({"x": [1, 2]}), pl.DataFrame({"x": [3]}), pl.DataFrame({"x": [1]})
    >>> changed_state(old, appeared, gone)["x"].to_list()
    [2, 3]
    """
    frame = old if deleted is None or not deleted.height else KERNEL.without(old, deleted)
    return frame if inserted is None or not inserted.height else pl.concat([frame, inserted], how="vertical")


def _rounds_frame(added: list, shape: LocalRelation) -> pl.DataFrame:
    """The rows of ``added`` ((round, frame) pairs) with their round in column ``ROUND``."""
    frames = [frame.with_columns(pl.lit(round_, pl.Int64).alias(ROUND)) for round_, frame in added]
    if not frames:
        return _empty(shape).with_columns(pl.lit(0, pl.Int64).alias(ROUND))
    return pl.concat(frames, how="vertical")


def rule_output(plan, frames: Mapping, shape: LocalRelation) -> pl.LazyFrame:
    return conformed(compile_node(plan, frames).frame, shape.column_names, shape.column_types)


def _empty(shape: LocalRelation) -> pl.DataFrame:
    return pl.DataFrame(schema=_dtypes(shape))


def _dtypes(shape: LocalRelation) -> dict:
    return new_relation(shape).dtypes


@dataclass(frozen=True)
class DredTask:
    """A stratum's DRed in one task: the input blocks (``old:R``, ``inserted:L``,
    ``deleted:L``; the new lower states are made from them, ``changed_state``) and the output
    blocks (``inserted:R``, ``deleted:R``) of the wide schema."""

    plans: DredPlans
    inputs: tuple  # LocalRelation
    outputs: tuple  # LocalRelation
    max_rounds: Optional[int]
    max_facts: Optional[int]


def run_dred(batches: Iterator[pa.RecordBatch], task: DredTask, reports) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` function of ``incremental.dred_local``: all of the stratum's inputs
    arrive in this one partition; it yields the changes, or nothing when the inputs are more
    than ``task.max_facts`` rows (reported as an overflow) or a phase hit the round limit."""
    blocks: dict = {"old": {}, "inserted": {}, "deleted": {}}
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
    lower_new = {
        name: changed_state(frame, blocks["inserted"].get(name), blocks["deleted"].get(name))
        for name, frame in lower_old.items()
    }
    outcome = dred(task.plans, old, lower_old, lower_new, changed, task.max_rounds)
    reports.add({0: PartitionReport([], [], {}, outcome.exceeded, False)})
    if outcome.exceeded:
        return
    tags = {relation.name: tag for tag, relation in enumerate(task.outputs)}
    for relation in task.plans.relations:
        for kind, facts in zip(("inserted", "deleted"), outcome.changes[relation.name], strict=True):
            table = to_table(facts, relation.column_names, relation.column_types)
            yield from wide_batches(table, tags[f"{kind}:{relation.name}"], task.outputs)
