"""One partition's fixpoint on the kernel as a Spark task: Arrow batches in, Arrow batches out.

``eval.partitioned`` hands :func:`run_partition` to ``DataFrame.mapInArrow``. The rows in and
out use one *wide* schema for all the stratum's relations (:func:`wide_columns`): a relation
tag, then columns the relations share by type (:func:`wide_names`), null where the tagged
relation has no column. Each
task takes its partition's round-0 facts as Polars frames (no row ever becomes a Python
value), runs the engine's semi-naive loop (``seminaive.rounds``) against the relations below the
stratum (broadcast to every task, or, for a stratum in one task, sent in its partition after
the round-0 facts: ``PartitionTask.inputs``), yields the facts as Arrow batches, and reports its
rounds through an accumulator keyed by partition, so a recomputed task overwrites its report
instead of adding to it.
"""

from __future__ import annotations

import re

import math
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterator, Optional

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.accumulators import AccumulatorParam

from .compile import compile_node
from ..plan.ir import LocalRelation
from ..seminaive import rounds
from .checks import collect_all
from .fixpoint import conformed
from .frames import to_frame, to_table, unit_frame
from .relation import BestRelation, SetRelation
from .types import ARROW_TYPES, polars_type

BATCH_ROWS = 65536
TAG = "__relation"


@dataclass(frozen=True)
class PartitionTask:
    """What every task needs (pickled once into the Spark job)."""

    relations: tuple  # LocalRelation, in tag order
    variants: tuple  # (relation name, IR plan) of the delta variants
    max_rounds: Optional[int]
    max_facts: Optional[int]
    exits: tuple = ()  # (relation name, IR plan) of round-0 rules read from the static relations
    # LocalRelation of the relations below read whole, sent in the partition after the stratum's
    # blocks (a stratum in one task); those in ``sets`` arrive with repeated rows (a relation's
    # rules' outputs before Spark's distinct) and are made sets in the task
    inputs: tuple = ()
    sets: frozenset = frozenset()
    # facts of ``max_facts`` one value of the inputs takes (0: not counted)
    input_weight: float = 0.0

    def facts_limit(self, input_values: int) -> Optional[int]:
        """Facts the task may derive when its ``inputs`` hold ``input_values`` values:
        ``max_facts`` less what they take at ``input_weight``.

        >>> rel = LocalRelation("cc", ("X", "L"), ("long", "long"))
        >>> PartitionTask((rel,), (), None, 100, input_weight=0.5).facts_limit(40)
        80
        """
        if self.max_facts is None:
            return None
        return self.max_facts - math.ceil(input_values * self.input_weight)


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
    """(column name, Datalog type) of the wide schema: the tag (``int``), then the columns the
    relations' blocks share: a relation's k-th column of type t is the column ``t_k``
    (:func:`wide_names`), so a row carries as many columns as the widest relation has of each
    type, not the columns of every relation (the rows of a relation sent to a task are written
    to Arrow by Spark column by column).

    >>> wide_columns([LocalRelation("tc", ("X", "Y"), ("int", "int")), LocalRelation("n", ("A",), ("int",))])
    [('__relation', 'int'), ('int_0', 'int'), ('int_1', 'int')]
    """
    counts: dict = {}
    for relation in relations:
        for type_, count in Counter(relation.column_types).items():
            counts[type_] = max(counts.get(type_, 0), count)
    return [(TAG, "int")] + [
        (f"{_slot(type_)}_{k}", type_) for type_, count in counts.items() for k in range(count)
    ]


def _slot(type_: str) -> str:
    """The prefix of the wide columns of a type: its name, a record type's made a plain name
    (``[x: long]``: ``record_x__long``)."""
    return "record_" + re.sub(r"\W", "_", type_[1:-1]) if type_.startswith("[") else type_


def wide_names(relation: LocalRelation) -> list:
    """The wide columns that hold ``relation``'s columns, in its column order.

    >>> wide_names(LocalRelation("p", ("a", "b", "c"), ("long", "string", "long")))
    ['long_0', 'string_0', 'long_1']
    """
    seen: Counter = Counter()
    names = []
    for type_ in relation.column_types:
        names.append(f"{_slot(type_)}_{seen[type_]}")
        seen[type_] += 1
    return names


def run_partition(
    batches: Iterator[pa.RecordBatch], task: PartitionTask, static, reports
) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` function: ``static`` is a broadcast ``{relation: (pyarrow.Table,
    rows)}`` (or None), ``reports`` an accumulator of :class:`ReportsParam`. It yields the facts
    the partition derived: all of them, or, when it stopped at its memory budget (``overflow``:
    its inputs alone may fill it) or at the round limit, those it derived until then."""
    from pyspark import TaskContext

    started = time.perf_counter()
    relations = {r.name: new_relation(r) for r in task.relations}
    received = _read_within(batches, task)
    if received is None:  # what it is sent alone fills its memory: it read no further
        report = PartitionReport([], [], {name: 0 for name in relations}, False, True)
    else:
        report = _run_received(received, task, static, relations)
    report.task_seconds = time.perf_counter() - started
    context = TaskContext.get()
    reports.add({context.partitionId() if context is not None else 0: report})
    # an overflowing task's facts are incomplete, but facts: the driver continues from them
    for tag, relation in enumerate(task.relations):
        table = to_table(relations[relation.name].facts(), relation.column_names, relation.column_types)
        yield from wide_batches(table, tag, task.relations)


def _read_within(batches: Iterator[pa.RecordBatch], task: PartitionTask) -> Optional[list]:
    """The task's batches, or None as soon as they are more rows than its memory allows the
    relations sent to it (``task.inputs``, counted at their widest: round-0 facts are few)."""
    widest = max((len(relation.column_names) or 1 for relation in task.inputs), default=0)
    bound = None
    if task.max_facts is not None and widest and task.input_weight:
        bound = task.max_facts / (widest * task.input_weight)
    received, rows = [], 0
    for batch in batches:
        received.append(batch)
        rows += batch.num_rows
        if bound is not None and rows > bound:
            return None
    return received


def _run_received(received: list, task: PartitionTask, static, relations: dict) -> PartitionReport:
    """The fixpoint of ``relations`` over the ``received`` batches: the round-0 facts, then
    the relations sent to the task (made sets where they repeat rows), beside the broadcast
    ``static`` ones."""
    blocks = split_batches(iter(received), task.relations + task.inputs)
    del received[:]
    limit = task.facts_limit(sum(blocks[r.name].height * blocks[r.name].width for r in task.inputs))
    base = {relation.name: blocks[relation.name] for relation in task.relations}
    below = {
        name: to_frame(table) if table.num_columns else unit_frame(rows)
        for name, (table, rows) in (static.value.items() if static is not None else ())
    }
    for relation in task.inputs:
        frame = blocks.pop(relation.name)
        # lazily: Polars' lazy unique took half the time of the eager one (8M rows, one thread)
        below[relation.name] = frame.lazy().unique().collect() if relation.name in task.sets else frame
    if limit is not None and limit <= 0:
        return PartitionReport([], [], {name: 0 for name in relations}, False, True)
    return run_fixpoint(task, base, below, relations, limit)


def new_relation(relation: LocalRelation, known: Optional[pl.DataFrame] = None) -> SetRelation | BestRelation:
    """The kernel relation holding ``relation``'s facts during the fixpoint, starting from the
    settled facts ``known`` (none by default).

    >>> new_relation(LocalRelation("tc", ("X", "Y"), ("int", "int"))).size()
    0
    """
    dtypes = {n: polars_type(t) for n, t in zip(relation.column_names, relation.column_types, strict=True)}
    if relation.best is None:
        return SetRelation(dtypes, known, limit=relation.limit)
    func, position = relation.best
    return BestRelation(dtypes, position, func, known)


def run_fixpoint(
    task: PartitionTask, base: dict, below: dict, relations: dict, max_facts: Optional[int]
) -> PartitionReport:
    """Run the stratum's rounds on ``relations`` (name -> kernel relation) from the round-0
    ``base`` frames, reading the relations ``below`` it; stops at the round limit
    (``exceeded``) or when the relations hold more than ``max_facts`` (``overflow``)."""
    shapes = {r.name: r for r in task.relations}

    def candidates(iteration: int, states: dict) -> list:
        frames = {(name, "full"): frame for name, frame in below.items()}
        if iteration == 0:
            return [(name, frame.lazy()) for name, frame in base.items()] + derive(task.exits, frames)
        for name, state in states.items():
            frames[(name, "full")] = state.full()
            frames[(name, "delta")] = state.recent
        return derive(task.variants, frames)

    def derive(variants, frames: dict) -> list:
        found = []
        for name, plan in variants:
            shape = shapes[name]
            frame = compile_node(plan, frames).frame
            found.append((name, conformed(frame, shape.column_names, shape.column_types)))
        return found

    report = PartitionReport([], [], {}, False, False)
    started = time.perf_counter()
    for sizes in rounds(relations, candidates, True, collect_all):
        report.sizes.append(sizes)
        report.seconds.append(time.perf_counter() - started)
        started = time.perf_counter()
        if max_facts is not None and sum(r.size() for r in relations.values()) > max_facts:
            report.overflow = True
            break
        if any(sizes.values()) and task.max_rounds is not None and len(report.sizes) >= task.max_rounds:
            report.exceeded = True
            break
    report.rows = {name: relation.size() for name, relation in relations.items()}
    return report


def split_batches(batches: Iterator[pa.RecordBatch], relations) -> dict:
    """Relation name -> its rows of the wide ``batches``, as a Polars frame with the relation's
    column names and types."""
    received = list(batches)
    if not received:
        return {relation.name: new_relation(relation).facts() for relation in relations}
    table = pa.Table.from_batches(received)
    del received
    frames = {}
    for tag, relation in enumerate(relations):
        # the block's own columns first: the filter copies only them
        block = table.select(wide_names(relation)).rename_columns(list(relation.column_names))
        mine = block.filter(pc.equal(table.column(0), tag)) if len(relations) > 1 else block
        frames[relation.name] = _frame(relation, mine)
    return frames


def _frame(relation: LocalRelation, block: pa.Table) -> pl.DataFrame:
    if not relation.column_names:
        return unit_frame(block.num_rows)
    return to_frame(block, relation.column_types)


def wide_batches(table: pa.Table, tag: int, relations) -> Iterator[pa.RecordBatch]:
    """The rows of relation ``relations[tag]`` (an Arrow table of its columns) as batches of the
    wide schema."""
    rows = table.num_rows
    mine = dict(zip(wide_names(relations[tag]), table.columns, strict=True))
    columns = [pa.repeat(pa.scalar(tag, pa.int32()), rows)]
    for name, type_ in wide_columns(relations)[1:]:
        columns.append(mine[name] if name in mine else pa.nulls(rows, type=ARROW_TYPES[type_]))
    wide = pa.Table.from_arrays(columns, schema=_schema(relations))
    yield from wide.to_batches(max_chunksize=BATCH_ROWS)


def _schema(relations) -> pa.Schema:
    return pa.schema([pa.field(name, ARROW_TYPES[type_]) for name, type_ in wide_columns(relations)])


def unsupported(task: PartitionTask, below: dict) -> Optional[str]:
    """Why the kernel cannot evaluate ``task``'s variants (a ``KernelUnsupported`` found by
    compiling them on empty frames: ``below`` is relation -> its Arrow schema, beside the
    task's ``inputs``), or None."""
    from .types import KernelUnsupported

    frames: dict[Any, Any] = {(n, "full"): to_frame(schema.empty_table()) for n, schema in below.items()}
    for relation in task.inputs:
        frames[(relation.name, "full")] = new_relation(relation).facts()
    for relation in task.relations:
        empty = new_relation(relation).facts()
        frames[(relation.name, "full")] = empty
        frames[(relation.name, "delta")] = empty
    try:
        for _, plan in task.variants + task.exits:
            compile_node(plan, frames)
    except KernelUnsupported as error:
        return str(error)
    return None
