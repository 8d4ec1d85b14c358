"""One BSP superstep of a recursive stratum in one Spark task, on the kernel.

``eval.bsp`` runs a stratum that does not decompose as rounds across all partitions: every
relation (the stratum's accumulated facts, the candidates sent to them, the relations the rules
read) is hash-partitioned on its join key, so a partition holds everything its facts join with.
Each round is one ``mapInArrow`` over the union of the stored pieces; :func:`superstep` is its
function. In one task it takes the partition's accumulated facts and the candidates sent to
it, keeps the new ones (dedup against the accumulated facts, or a better min/max value: the
kernel's :class:`~.relation.SetRelation` / :class:`~.relation.BestRelation`), joins them with
the partition's static relations (the semi-naive variants, :func:`~.compile.compile_node`) and
yields the new facts and the next round's candidates, which Spark then shuffles to their own
partitions (only new facts and candidates move).

Rows use the wide schema of :func:`~.partition.wide_columns` over the *slots* of
:class:`BspTask`, plus the columns :data:`BUCKET` and :data:`ROUND`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Iterator

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from ..seminaive import decide
from .aggregates import aggregate_frame
from .checks import collect_all
from .compile import compile_node
from .fixpoint import conformed
from .frames import to_table
from .partition import LocalRelation, new_relation, split_batches, wide_batches
from .relation import BestRelation, SetRelation

BUCKET = "__bucket"
ROUND = "__round"


@dataclass(frozen=True)
class BspTask:
    """What every superstep task needs. ``slots`` (``LocalRelation``, in tag order): the
    stratum's relations (tags ``0..k-1``: accumulated facts), their candidates (``k..2k-1``)
    and the static relations as each rule reads them (``2k..``, named ``rel@position``).
    ``variants``: ``(head relation, IR plan, {static relation: its slot name})``."""

    slots: tuple
    relations: int  # k
    variants: tuple


def superstep(
    batches: Iterator[pa.RecordBatch], task: BspTask, round_: int, reports
) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` function of round ``round_``: reports ``{partition: (new facts per
    relation, seconds)}`` to the accumulator ``reports`` and yields the wide rows of the new facts
    and of the next round's candidates (their ``BUCKET`` left null: Spark computes it)."""
    from pyspark import TaskContext

    started = time.perf_counter()
    frames = split_batches(_current(batches, task, round_), task.slots)
    own = task.slots[: task.relations]
    relations = {r.name: _known(r, frames[r.name]) for r in own}
    for tag, relation in enumerate(own):
        relations[relation.name].insert(frames[task.slots[task.relations + tag].name].lazy())
    sizes = decide(relations, collect_all)
    candidates = _candidates(task, frames, relations) if any(sizes.values()) else {}
    context = TaskContext.get()
    reports.add({context.partitionId() if context is not None else 0: (sizes, time.perf_counter() - started)})
    for tag, relation in enumerate(own):
        yield from _wide(relations[relation.name].recent, tag, task, round_)
        if relation.name in candidates:
            yield from _wide(candidates[relation.name], task.relations + tag, task, round_ + 1)


def _current(batches: Iterator[pa.RecordBatch], task: BspTask, round_: int) -> Iterator[pa.RecordBatch]:
    """The batches without the candidates of earlier rounds (the stored pieces keep them)."""
    first, last = task.relations, 2 * task.relations
    for batch in batches:
        tag, when = batch.column(0), batch.column(batch.schema.get_field_index(ROUND))
        stale = pc.and_(pc.and_(pc.greater_equal(tag, first), pc.less(tag, last)), pc.not_equal(when, round_))
        yield batch.filter(pc.invert(stale))


def _known(relation: LocalRelation, facts: pl.DataFrame) -> SetRelation | BestRelation:
    """The kernel relation of the accumulated facts: the stored pieces of a set relation are
    disjoint; those of a min/max relation hold every improvement of a group (its best wins)."""
    fresh = new_relation(relation)
    if isinstance(fresh, SetRelation):
        return SetRelation(fresh.dtypes, facts)
    return BestRelation(
        fresh.dtypes, fresh.columns.index(fresh.value), fresh.func, _best(fresh, facts.lazy()).collect()
    )


def _best(relation: BestRelation, frame: pl.LazyFrame) -> pl.LazyFrame:
    """The best row of every group of ``frame``, in the relation's column order."""
    best, _ = aggregate_frame(
        frame, relation.dtypes, relation.group, relation.func, relation.value, relation.value
    )
    return best.select(relation.columns)


def _candidates(task: BspTask, frames: dict, relations: dict) -> dict:
    """Head relation -> the next round's candidates from this round's new facts, already
    without duplicates (or reduced to each group's best) so that fewer rows are shuffled."""
    shapes = {r.name: r for r in task.slots[: task.relations]}
    found: dict = {}
    for head, plan, statics in task.variants:
        scans = {(name, "full"): frames[slot] for name, slot in statics.items()}
        for name, relation in relations.items():
            scans[(name, "delta")] = relation.recent
            scans[(name, "full")] = relation.full()
        shape = shapes[head]
        frame = conformed(compile_node(plan, scans).frame, shape.column_names, shape.column_types)
        found.setdefault(head, []).append(frame)
    reduced = []
    for head, parts in found.items():
        union = pl.concat(parts, how="vertical", rechunk=False)
        relation = relations[head]
        reduced.append(_best(relation, union) if isinstance(relation, BestRelation) else union.unique())
    return dict(zip(found, collect_all(reduced), strict=True))


def _wide(frame: pl.DataFrame, tag: int, task: BspTask, round_: int) -> Iterator[pa.RecordBatch]:
    """``frame`` (rows of slot ``tag``) as wide batches with a null bucket and ``round_``."""
    if not frame.height:
        return
    slot = task.slots[tag]
    table = to_table(frame, slot.column_names, slot.column_types)
    for batch in wide_batches(table, tag, task.slots):
        rows = batch.num_rows
        yield pa.RecordBatch.from_arrays(
            [*batch.columns, pa.nulls(rows, pa.int32()), pa.array([round_] * rows, pa.int32())],
            names=[*batch.schema.names, BUCKET, ROUND],
        )
