"""One partition's fixpoint as a Spark task: Arrow batches in, Arrow batches out.

``eval.partitioned`` hands :func:`run_partition` to ``DataFrame.mapInArrow``; each task reads
its partition's round-0 facts, runs :func:`local.fixpoint.fixpoint` against the broadcast
relations, yields the facts, and reports its rounds through an accumulator keyed by partition,
so a recomputed task overwrites its report instead of adding to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

import pyarrow as pa
from pyspark.accumulators import AccumulatorParam

from .compile import compile_plan
from .fixpoint import fixpoint

BATCH_ROWS = 65536

ARROW_TYPES = {
    "int": pa.int32(),
    "long": pa.int64(),
    "double": pa.float64(),
    "string": pa.string(),
    "bool": pa.bool_(),
}


@dataclass(frozen=True)
class PartitionTask:
    """What every task needs (pickled once into the Spark job)."""

    relation: str
    column_names: tuple
    column_types: tuple  # Datalog type names
    variants: tuple  # IR plans of the delta variants
    best: Optional[tuple]  # (func, position) of a min/max relation
    max_rounds: Optional[int]


@dataclass
class PartitionReport:
    """One task's rounds: new rows and seconds per round, final rows, round limit hit."""

    sizes: list
    seconds: list
    rows: int
    exceeded: bool


class ReportsParam(AccumulatorParam):
    """Accumulates ``{partition id: PartitionReport}``; a later report of a partition wins."""

    def zero(self, value):
        return {}

    def addInPlace(self, first, second):
        first.update(second)
        return first


def run_partition(batches: Iterator[pa.RecordBatch], task: PartitionTask, static, reports
                  ) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` function: ``static`` is a broadcast ``{relation: pyarrow.Table}``,
    ``reports`` an accumulator of :class:`ReportsParam`."""
    from pyspark import TaskContext

    base = [row for batch in batches for row in _rows(batch)]
    frames = {(name, "full"): list(_rows(table)) for name, table in static.value.items()}
    dynamic = frozenset({task.relation})
    variants = [compile_plan(plan, dynamic) for plan in task.variants]
    outcome = fixpoint({task.relation: base}, [(task.relation, v) for v in variants], frames,
                       {task.relation: task.best} if task.best else None, task.max_rounds)
    facts = outcome.facts[task.relation]
    context = TaskContext.get()
    partition = context.partitionId() if context is not None else 0
    reports.add({partition: PartitionReport([s[task.relation] for s in outcome.sizes],
                                            outcome.seconds, len(facts), outcome.exceeded)})
    yield from _batches(facts, task)


def arrow_schema(task: PartitionTask) -> pa.Schema:
    return pa.schema([pa.field(name, ARROW_TYPES[type_]) for name, type_
                      in zip(task.column_names, task.column_types)])


def _rows(data) -> Iterator[tuple]:
    """The rows of an Arrow batch or table as tuples of Python values."""
    return zip(*[column.to_pylist() for column in data.columns])


def _batches(facts: list, task: PartitionTask) -> Iterator[pa.RecordBatch]:
    schema = arrow_schema(task)
    doubles = [i for i, type_ in enumerate(task.column_types) if type_ == "double"]
    for start in range(0, len(facts), BATCH_ROWS):
        columns = [list(values) for values in zip(*facts[start:start + BATCH_ROWS])]
        for i in doubles:  # an integer computed into a double column (Spark casts it)
            columns[i] = [float(v) for v in columns[i]]
        yield pa.RecordBatch.from_arrays(
            [pa.array(values, type=field.type) for values, field in zip(columns, schema)],
            schema=schema)
