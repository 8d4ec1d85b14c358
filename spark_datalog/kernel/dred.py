"""DRed (delete and re-derive) of one recursive stratum on the kernel, and as one Spark task.

The three phases of ``incremental.dred`` (its docstring has the reasoning), each a run of the
kernel's one semi-naive loop (:func:`~.fixpoint.rounds`) over :class:`~.relation.Relation`\\ s:

1. over-delete: from the seeds (rules with one changed lower literal read as the delta),
   rounds whose other literals read the OLD state (the relations' ``full`` stays the old one);
2. re-derive: the over-deleted facts the stratum's rules (and stated facts) still derive in one
   round from what remains and the new lower relations;
3. insert: from the re-derived facts and the other direction's seeds, rounds over the new
   state, the relations starting from what remains (``known``).

:func:`dred` takes and returns Polars frames with the relations' columns; :func:`run_dred` is
the ``mapInArrow`` function of ``incremental.dred_local``, which sends every input of the
stratum into one partition. The plans (:class:`DredPlans`) are made by
``incremental.dred_local.dred_plans``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping, Optional

import polars as pl
import pyarrow as pa

from .compile import compile_node
from .fixpoint import conformed, rounds
from .frames import facts_table, to_frame, to_table
from .partition import LocalRelation, PartitionReport, new_relation, split_batches, wide_batches
from .relation import SetRelation


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

    relations: tuple  # LocalRelation of each relation of the stratum (columns, types, min/max)
    rules: tuple  # (relation, IR plan) of every rule, for re-deriving
    delta_rules: tuple  # (relation, IR plan) of the semi-naive variants
    over_seeds: tuple  # Seed, phase 1
    insert_seeds: tuple  # Seed, phase 3
    facts: dict = field(default_factory=dict)  # relation -> the program's stated facts

    @property
    def names(self) -> tuple:
        return tuple(relation.name for relation in self.relations)


@dataclass
class DredOutcome:
    """relation -> (inserted facts, deleted facts); whether a phase hit the round limit, or
    phase 1 over-deleted more than allowed (``overflow``: no changes then); and relation ->
    the facts phase 1 over-deleted."""

    changes: dict
    exceeded: bool = False
    overflow: bool = False
    over: dict = field(default_factory=dict)


def dred(
    plans: DredPlans,
    old: Mapping[str, pl.DataFrame],
    lower_old: Mapping[str, pl.DataFrame],
    lower_new: Mapping[str, pl.DataFrame],
    changed: Mapping[tuple, pl.DataFrame],
    max_rounds: Optional[int] = None,
    max_over: Optional[int] = None,
) -> DredOutcome:
    """The stratum's changes. ``old``: relation -> its old facts; ``lower_old`` /
    ``lower_new``: lower relation -> its facts before / after; ``changed``: ``("inserted" |
    "deleted", lower relation)`` -> the facts that appeared / disappeared. Phase 1 stops as
    soon as it has over-deleted more than ``max_over`` facts (``overflow``)."""
    shapes = {relation.name: relation for relation in plans.relations}
    old_full = {(name, "full"): frame for name, frame in {**lower_old, **old}.items()}
    # 1. over-delete against the old state
    over_seeds = _seeded(plans.over_seeds, old_full, changed, shapes)
    over_relations = {name: SetRelation(_dtypes(shape)) for name, shape in shapes.items()}
    exceeded = _run(
        over_relations, over_seeds, plans.delta_rules, lambda _: old_full, shapes, max_rounds, max_over
    )
    if max_over is not None and sum(r.size() for r in over_relations.values()) > max_over:
        return DredOutcome({}, overflow=True)
    over = {name: relation.facts() for name, relation in over_relations.items()}
    # 2. what remains, and the over-deleted facts it still derives
    remaining = {name: _without(old[name], over[name]) if over[name].height else old[name] for name in shapes}
    new_full = {(name, "full"): frame for name, frame in lower_new.items()}
    remaining_full = {**new_full, **{(name, "full"): frame for name, frame in remaining.items()}}
    rederived = _rederived(plans, remaining_full, over, shapes)
    # 3. insert over the new state, from what remains
    for name, frames in _seeded(plans.insert_seeds, remaining_full, changed, shapes).items():
        rederived.setdefault(name, []).extend(frames)
    inserting = {name: new_relation(shape, remaining[name]) for name, shape in shapes.items()}

    def current(states: dict) -> dict:
        return {**new_full, **{(name, "full"): state.full() for name, state in states.items()}}

    added: dict = {name: [] for name in shapes}
    exceeded |= _run(inserting, rederived, plans.delta_rules, current, shapes, max_rounds, added=added)
    changes = {}
    for name, relation in inserting.items():
        if isinstance(relation, SetRelation):  # final = remaining + new, old = remaining + over
            new = pl.concat(added[name], how="vertical") if added[name] else relation.recent
            changes[name] = (_without(new, over[name]), _without(over[name], new))
        else:  # a group's best may change several times: the whole relation compared
            final = relation.facts()
            changes[name] = (_without(final, old[name]), _without(old[name], final))
    return DredOutcome(changes, exceeded, over=over)


def _run(
    relations: dict,
    base: dict,
    delta_rules,
    full: Callable,
    shapes,
    max_rounds: Optional[int],
    max_facts: Optional[int] = None,
    added: Optional[dict] = None,
) -> bool:
    """Run rounds from the ``base`` frames (relation -> lazy frames); each later round's delta
    variants read ``full(states)`` and the recent facts. True when stopped at ``max_rounds``;
    stops (False) once the relations hold more than ``max_facts``. Each round's new facts are
    appended to ``added`` (relation -> frames) when given."""

    def candidates(iteration: int, states: dict) -> list:
        if iteration == 0:
            return [(name, frame) for name, frames in base.items() for frame in frames]
        frames = dict(full(states))
        frames.update({(name, "delta"): state.recent for name, state in states.items()})
        return [(name, _output(plan, frames, shapes[name])) for name, plan in delta_rules]

    for count, sizes in enumerate(rounds(relations, candidates, recursive=True), start=1):
        for name, size in sizes.items():
            if added is not None and size:
                added[name].append(relations[name].recent)
        if max_facts is not None and sum(r.size() for r in relations.values()) > max_facts:
            return False
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


def _rederived(plans: DredPlans, frames: Mapping, over: Mapping, shapes) -> dict:
    """Relation -> lazy frames of its over-deleted facts that the rules or stated facts still
    derive from ``frames`` (what remains and the new lower relations)."""
    found: dict = {name: [] for name in shapes}
    for name, plan in plans.rules:
        if over[name].height:
            found[name].append(_within(_output(plan, frames, shapes[name]), over[name]))
    for name, rows in plans.facts.items():
        if name in over and over[name].height and rows:
            shape = shapes[name]
            stated = to_frame(facts_table(shape.column_names, shape.column_types, rows), shape.column_types)
            found[name].append(_within(stated.lazy(), over[name]))
    return found


def _output(plan, frames: Mapping, shape: LocalRelation) -> pl.LazyFrame:
    return conformed(compile_node(plan, frames).frame, shape.column_names, shape.column_types)


def _within(frame: pl.LazyFrame, facts: pl.DataFrame) -> pl.LazyFrame:
    return frame.join(facts.lazy(), on=facts.columns, how="semi")


def _without(frame: pl.DataFrame, facts: pl.DataFrame) -> pl.DataFrame:
    return frame.join(facts, on=frame.columns, how="anti")


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
