"""One partition's fixpoint as a Spark task: Arrow batches in, Arrow batches out.

``eval.partitioned`` hands :func:`run_partition` to ``DataFrame.mapInArrow``. The rows in and
out use one *wide* schema for all the stratum's relations (:func:`wide_columns`): a relation
tag, then each relation's columns in turn, null outside the tagged relation's own block. Each
task reads its partition's round-0 facts, runs :func:`local.fixpoint.fixpoint` against the
broadcast relations, yields the facts, and reports its rounds through an accumulator keyed by
partition, so a recomputed task overwrites its report instead of adding to it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Iterator, Optional

import pyarrow as pa
from pyspark.accumulators import AccumulatorParam

from .arrow import ARROW_TYPES, arrays
from .arrow import rows as arrow_rows
from .compile import compile_plan
from .fixpoint import fixpoint

BATCH_ROWS = 65536
TAG = "__relation"


@dataclass(frozen=True)
class LocalRelation:
    name: str
    column_names: tuple
    column_types: tuple  # Datalog type names
    best: Optional[tuple] = None  # (func, position) of a min/max relation


@dataclass(frozen=True)
class PartitionTask:
    """What every task needs (pickled once into the Spark job)."""

    relations: tuple  # LocalRelation, in tag order
    variants: tuple  # (relation name, IR plan) of the delta variants
    max_rounds: Optional[int]
    max_facts: Optional[int]


@dataclass
class PartitionReport:
    """One task's rounds: new rows per relation and seconds per round, final rows per relation,
    and whether it hit the round limit or the fact limit."""

    sizes: list
    seconds: list
    rows: dict
    exceeded: bool
    overflow: bool
    task_seconds: float = 0.0  # from the task's start to the end of its fixpoint


class ReportsParam(AccumulatorParam):
    """Accumulates ``{partition id: PartitionReport}``; a later report of a partition wins."""

    def zero(self, value) -> dict:
        return {}

    def addInPlace(self, first, second) -> dict:
        first.update(second)
        return first


def wide_columns(relations) -> list:
    """(column name, Datalog type) of the wide schema: the tag (``int``), then every relation's
    columns, named ``r<tag>_<column>``."""
    columns = [(TAG, "int")]
    for tag, relation in enumerate(relations):
        columns += [
            (f"r{tag}_{name}", type_)
            for name, type_ in zip(relation.column_names, relation.column_types, strict=True)
        ]
    return columns


def run_partition(
    batches: Iterator[pa.RecordBatch], task: PartitionTask, static, reports
) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` function: ``static`` is a broadcast ``{relation: (pyarrow.Table,
    rows)}``, ``reports`` an accumulator of :class:`ReportsParam`."""
    from pyspark import TaskContext

    started = time.perf_counter()

    base = _split(batches, task.relations)
    frames = {
        (name, "full"): list(arrow_rows(table.columns, count))
        for name, (table, count) in static.value.items()
    }
    dynamic = frozenset(base)
    variants = [(relation, compile_plan(plan, dynamic)) for relation, plan in task.variants]
    best = {r.name: r.best for r in task.relations if r.best is not None}
    outcome = fixpoint(base, variants, frames, best, task.max_rounds, task.max_facts)
    context = TaskContext.get()
    partition = context.partitionId() if context is not None else 0
    reports.add(
        {
            partition: PartitionReport(
                outcome.sizes,
                outcome.seconds,
                {n: len(f) for n, f in outcome.facts.items()},
                outcome.exceeded,
                outcome.overflow,
                time.perf_counter() - started,
            )
        }
    )
    if outcome.overflow:
        return  # incomplete: the driver evaluates the stratum otherwise
    for tag, relation in enumerate(task.relations):
        yield from _batches(outcome.facts[relation.name], tag, task.relations)


def _split(batches, relations) -> dict:
    """Relation name -> rows (tuples of Python values) of the wide batches."""
    blocks, start = [], 1
    for relation in relations:
        blocks.append((relation.name, start, start + len(relation.column_names)))
        start += len(relation.column_names)
    base: dict = {relation.name: [] for relation in relations}
    for batch in batches:
        if len(relations) == 1:
            name, first, last = blocks[0]
            base[name].extend(arrow_rows(batch.columns[first:last], batch.num_rows))
            continue
        tags = batch.column(0).to_pylist()
        for tag, (name, first, last) in enumerate(blocks):
            mine = [i for i, t in enumerate(tags) if t == tag]
            if mine:
                taken = batch.take(pa.array(mine))
                base[name].extend(arrow_rows(taken.columns[first:last], taken.num_rows))
    return base


def _batches(facts: list, tag: int, relations) -> Iterator[pa.RecordBatch]:
    relation = relations[tag]
    for start in range(0, len(facts), BATCH_ROWS):
        chunk = facts[start : start + BATCH_ROWS]
        size = len(chunk)
        mine = arrays(chunk, relation.column_types)
        columns = [pa.array([tag] * size, type=pa.int32())]
        for other, block in enumerate(relations):
            columns += (
                mine
                if other == tag
                else [pa.nulls(size, type=ARROW_TYPES[type_]) for type_ in block.column_types]
            )
        yield pa.RecordBatch.from_arrays(columns, schema=_schema(relations))


def _schema(relations) -> pa.Schema:
    return pa.schema([pa.field(name, ARROW_TYPES[type_]) for name, type_ in wide_columns(relations)])


@dataclass(frozen=True)
class DredTask:
    """A stratum's DRed in one task: the input blocks (``old:R``, ``new:L``, ``inserted:L``,
    ``deleted:L``) and the output blocks (``inserted:R``, ``deleted:R``) of the wide schema."""

    plans: Any  # local.dred.DredPlans
    inputs: tuple  # LocalRelation
    outputs: tuple  # LocalRelation
    max_rounds: Optional[int]
    max_facts: Optional[int]


def run_dred(batches: Iterator[pa.RecordBatch], task: DredTask, reports) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` function of ``incremental.dred_local``: all of the stratum's inputs
    arrive in this one partition; it yields the changes, or nothing when the inputs are more
    than ``task.max_facts`` rows (reported as an overflow)."""
    from .dred import dred

    data = _split(batches, task.inputs)
    if task.max_facts is not None and sum(len(rows) for rows in data.values()) > task.max_facts:
        reports.add({0: PartitionReport([], [], {}, False, True)})
        return
    blocks: dict = {"old": {}, "new": {}, "inserted": {}, "deleted": {}}
    for name, rows in data.items():
        kind, relation = name.split(":", 1)
        blocks[kind][relation] = rows
    old = {name: rows for name, rows in blocks["old"].items() if name in task.plans.relations}
    lower_old = {name: rows for name, rows in blocks["old"].items() if name not in old}
    changed = {(kind, name): rows for kind in ("inserted", "deleted") for name, rows in blocks[kind].items()}
    outcome = dred(task.plans, old, lower_old, blocks["new"], changed, task.max_rounds)
    reports.add({0: PartitionReport([], [], {}, outcome.exceeded, False)})
    if outcome.exceeded:
        return
    tags = {relation.name: tag for tag, relation in enumerate(task.outputs)}
    for name, (inserted, deleted) in outcome.changes.items():
        yield from _batches(inserted, tags[f"inserted:{name}"], task.outputs)
        yield from _batches(deleted, tags[f"deleted:{name}"], task.outputs)
