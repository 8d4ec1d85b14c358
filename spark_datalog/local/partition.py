"""A recomputed stratum's DRed in one Spark task on Python tuples (``incremental.dred_local``).

The wide schema and the task reports are the kernel's (``kernel.partition``); the partition-local
fixpoint itself runs on the kernel. What is left here moves to the kernel with DRed (issue 21).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Optional

import pyarrow as pa

from ..kernel.partition import BATCH_ROWS, LocalRelation, PartitionReport, wide_columns
from .arrow import ARROW_TYPES, arrays
from .arrow import rows as arrow_rows

__all__ = ["DredTask", "LocalRelation", "run_dred"]


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
