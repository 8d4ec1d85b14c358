"""A recursive stratum as one Spark job in which each partition runs its own fixpoint.

Each round of the rounds driver is one or two Spark jobs, and on small data those jobs' fixed
cost, not the data, is the time. This module evaluates the whole fixpoint inside Spark tasks
instead, with the kernel (``spark_datalog.kernel``, Polars) running the semi-naive rounds in
memory, so the stratum costs a few jobs however many rounds it takes:

- When the stratum *decomposes* (``plan.partitioning.decomposition`` has a key:
  ``tc(X, Z) :- tc(X, Y), arc(Y, Z).`` never changes X), its round-0 facts are hash-partitioned
  on the key and every partition computes its own, independent fixpoint (seed 002's
  decomposable plans with a discriminating set; BigDatalog's decomposable programs). This
  scales with the cluster: no fact ever moves between partitions.
- Otherwise (several relations, non-linear rules, nothing kept in place) the stratum runs in one
  task, when its round-0 facts fit one task: small recursive problems finish
  in one job instead of hundreds.

The other relations the recursive rules read are read whole by every task: collected once
and broadcast to every task when they have at most ``spark.datalog.maxBroadcastRows`` rows.
A stratum with a key needs every one broadcast. A stratum in one task gets a larger one from
Spark in its partition, after its round-0 facts, never through the driver (a relation's rules'
outputs before Spark's distinct, made a set by the kernel), and its values count against the
task's memory. A stratum in one task derives its round-0 facts in the task from the rules that
read only those relations (``is_read_from_static``); Spark computes the others' and sends them
in. A task stops when its relations hold more facts than its memory budget allows
(``spark.datalog.taskMemory``, or
``spark.datalog.maxLocalFacts``: ``spark_datalog.settings``); every task then yields the facts
it derived (all of them, or those until it stopped), and the stratum continues from them in
rounds of Spark joins: they are facts of the fixpoint, so the result is the same, and the rounds
need only the depth the tasks did not reach.
Executors need the ``spark_datalog`` package importable, as any Python UDF library: on a
cluster that is checked once before the first task (``spark.executors``: an ``ExecutorError``
saying how to ship it); on a local master where the workers cannot import it, rounds are used,
with a warning.
"""

from __future__ import annotations

import logging
import time
from functools import reduce
from typing import Optional, Union

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from .. import progress
from ..kernel.frames import distinct_rows
from ..kernel.partition import (
    TAG,
    LocalRelation,
    PartitionTask,
    ReportsParam,
    run_partition,
    unsupported,
    wide_columns,
    wide_names,
)
from ..placement import Declined
from ..plan import ir
from ..plan.partitioning import Decomposition
from ..settings import (
    BROADCAST_ROWS_SETTING,
    INPUT_VALUE_BYTES,
    KERNEL_VALUE_BYTES,
    LOCAL_FACTS_SETTING,
    TASK_MEMORY_SETTING,
    settings_of,
)
from ..spark.executors import require_executor_package
from ..spark.inputs import empty_frame
from ..spark.types import schema as spark_schema
from ..spark.types import spark_type
from ..storage.datafiles import collect_small
from .checkpoint import keep, materialise, release
from .stats import IterationStats, StratumStats, non_termination

log = logging.getLogger("spark_datalog")


def evaluate_partitioned(
    run, plan, split: Decomposition, relations: dict
) -> Union[tuple[dict, StratumStats], Declined]:
    """(results, stats) of the recursive stratum ``plan`` evaluated by partition-local
    fixpoints (one task when ``split`` has no key), or ``Declined`` with the reason: a relation
    to broadcast or the facts are too many, the kernel refuses a plan, or the executors cannot
    run the kernel. ``run`` is the driver's ``_Run`` (session, settings, candidate
    compilation)."""
    started = time.perf_counter()
    run._describe(plan, None, "partition-local fixpoint")
    prepared = _prepare(run, plan, split, relations)
    if isinstance(prepared, str):
        return Declined(prepared)
    task, static = prepared
    placed = _placed_base(run, plan, split, task, relations)
    if isinstance(placed, str):
        return Declined(placed)
    stored, reports = None, {}
    if placed is not None:
        ran = _run_stratum_tasks(run, plan, task, static, *placed)
        if ran is None:
            return Declined("Spark's Python workers cannot import spark_datalog")
        stored, reports = ran
    if any(report.overflow for report in reports.values()):
        derived = split_wide(stored, task.relations) if stored is not None else None
        sent = (
            f", counting what {', '.join(r.name for r in task.inputs)} took"
            if task.inputs and task.input_weight
            else ""
        )
        return Declined(
            f"a partition held more than {task.max_facts} facts{sent} ({TASK_MEMORY_SETTING} or "
            f"{LOCAL_FACTS_SETTING}; raise spark.sql.shuffle.partitions to spread a decomposable "
            "stratum wider); continuing from the facts derived",
            warn=True,
            derived=derived,
            leaf=stored,
        )
    stats = _stats(plan, run.strategy, reports, time.perf_counter() - started)
    for round_stats in stats.rounds:  # known when the job is done: reported then
        progress.round_finished(plan.index, plan.relations, round_stats, "in tasks")
    if any(report.exceeded for report in reports.values()):
        release(stored)
        raise non_termination(plan, run.max_iterations, stats.rounds[-1].new_rows)
    if stored is None:
        empty = {r.name: empty_frame(run.spark, run.checked.relations[r.name]) for r in task.relations}
        return empty, stats
    return split_wide(stored, task.relations), stats


def _prepare(run, plan, split: Decomposition, relations: dict):
    """``(task, static)``: what every task needs and the broadcast relations (a stratum with a
    key needs all it reads; one task gets those over the limit in its partition instead), or
    the reason (a string) why the kernel cannot take the stratum."""
    found = settings_of(run.spark)
    max_rows = found.broadcast_rows(KERNEL_VALUE_BYTES)
    static = _collect_static(split.static, relations, run.unions, max_rows, bool(split.key))
    if split.key and len(static) < len(split.static):
        return f"a relation to broadcast has over {max_rows} rows ({BROADCAST_ROWS_SETTING})"
    task = _task(run, plan, split, found, tuple(name for name in split.static if name not in static))
    if task.inputs:
        names = ", ".join(relation.name for relation in task.inputs)
        log.info(
            "stratum %d · over %d rows (%s), sent into the task by Spark: %s",
            plan.index,
            max_rows,
            BROADCAST_ROWS_SETTING,
            names,
        )
    refused = unsupported(task, {name: table.schema for name, (table, _) in static.items()})
    if refused is not None:
        return f"the kernel cannot evaluate it ({refused})"
    return task, static


def _placed_base(run, plan, split: Decomposition, task: PartitionTask, relations: dict):
    """``(partitioned, stored)``: the round-0 facts in the wide schema, hash-partitioned on the
    decomposition key, or in one partition followed by the relations the task reads
    (``task.inputs``); ``stored``: a leaf to release after the tasks. None when the tasks would
    derive nothing; the reason (a string) when the round-0 facts are too many for one task."""
    scans = {(relation, "full"): frame for relation, frame in relations.items()}
    rules = [rule_plan for rule_plan in split.exit_rules if not is_read_from_static(rule_plan, split)]
    candidates = run._candidates(rules, scans, plan, with_facts=True)
    parts = [
        (tag, frame)
        for tag, relation in enumerate(task.relations)
        for frame in candidates.get(relation.name, ())
    ]
    wide = task.relations + task.inputs
    base = wide_frame(parts, wide)
    if split.key:
        if base is None:
            return None
        names = wide_names(task.relations[0])
        key = [names[i] for i in split.key]
        return base.repartition(run.partitions, *key), None
    if base is None and not task.exits:
        return None
    stored = None
    if base is not None:
        leaves, counts, _ = materialise({"base": base})
        stored = leaves["base"]
        if task.max_facts is not None and counts["base"] > task.max_facts:
            release(stored)
            return f"{counts['base']} round-0 facts are too many for one task ({TASK_MEMORY_SETTING})"
    inputs = wide_frame(
        [
            (tag, run.unions.get(relation.name, relations[relation.name]))
            for tag, relation in enumerate(wide)
            if tag >= len(task.relations)
        ],
        wide,
    )
    frames = [frame for frame in (stored, inputs) if frame is not None]
    one = reduce(DataFrame.union, frames) if frames else empty_wide_frame(run.spark, wide)
    return one.coalesce(1), stored


def _run_stratum_tasks(run, plan, task: PartitionTask, static: dict, partitioned, stored_base):
    """``(stored, reports)`` of the tasks over ``partitioned``, or None when the workers cannot
    import the kernel (``run_tasks``)."""
    names = ", ".join(plan.relations)
    broadcast = run.spark.sparkContext.broadcast(static) if static else None
    try:
        stored, reports = run_tasks(
            partitioned,
            lambda batches, accumulator: run_partition(batches, task, broadcast, accumulator),
            task.relations,
            # a reliable checkpoint only when recomputing would need the round-0 leaf released
            # below; else the lineage (the inputs, one job) recomputes a lost cached block
            run.reliable and stored_base is not None,
            f"stratum {plan.index} · {names}",
        )
    finally:
        if broadcast is not None:
            broadcast.unpersist(blocking=False)
        release(stored_base)
    return None if stored is None else (stored, reports)


def wide_frame(parts, relations) -> Optional[DataFrame]:
    """The union of ``parts`` (``(tag, frame)``: a frame with the columns of
    ``relations[tag]``) in the wide schema of ``relations`` (``kernel.partition.wide_columns``),
    or None when there are no parts."""
    columns = wide_columns(relations)
    frames = []
    for tag, frame in parts:
        values = dict(zip(wide_names(relations[tag]), frame.columns, strict=True))
        frames.append(
            frame.select(
                *[
                    (
                        F.lit(tag)
                        if name == TAG
                        else F.col(f"`{values[name]}`")
                        if name in values
                        else F.lit(None)
                    )
                    .cast(spark_type(type_))
                    .alias(name)
                    for name, type_ in columns
                ]
            )
        )
    return reduce(DataFrame.union, frames) if frames else None


def empty_wide_frame(spark, relations) -> DataFrame:
    """A frame without rows in the wide schema of ``relations``."""
    columns = wide_columns(relations)
    return spark.createDataFrame([], spark_schema([c for c, _ in columns], [t for _, t in columns]))


def run_tasks(frame: DataFrame, function, relations, reliable: bool, what: str) -> tuple:
    """``(stored, reports)``: ``function(batches, accumulator)`` run on every partition of the
    wide ``frame`` by ``mapInArrow``, its wide output kept (``checkpoint.keep``), and the
    ``kernel.partition.PartitionReport`` of every partition. ``(None, {})`` when Spark's Python
    workers on a local master cannot import the local backend (logged as a warning naming
    ``what``); on a cluster that is an ``ExecutorError`` before any task runs
    (``spark.executors``)."""
    require_executor_package(frame.sparkSession)  # on a cluster: one line, before any task fails
    columns = wide_columns(relations)
    accumulator = frame.sparkSession.sparkContext.accumulator({}, ReportsParam())
    output = frame.mapInArrow(
        lambda batches: function(batches, accumulator),
        spark_schema([c for c, _ in columns], [t for _, t in columns]),
    )
    try:
        stored = keep(output, reliable)
    except Exception as error:  # noqa: BLE001 - only a missing module is handled
        if "ModuleNotFoundError" not in str(error):
            raise
        log.warning(
            "%s · Spark's Python workers cannot import what the partition-local "
            "evaluation needs (%s); running rounds of Spark joins instead. Point "
            "PYSPARK_PYTHON at this environment's interpreter, or install "
            "spark_datalog on the executors.",
            what,
            _missing_module(str(error)),
        )
        return None, {}
    return stored, accumulator.value


def split_wide(stored: DataFrame, relations) -> dict:
    """Relation name -> its rows of a stored wide frame, with the relation's column names."""
    return {
        relation.name: stored.where(F.col(TAG) == tag).select(
            *[
                F.col(name).alias(c)
                for name, c in zip(wide_names(relation), relation.column_names, strict=True)
            ]
        )
        for tag, relation in enumerate(relations)
    }


def _task(run, plan, split: Decomposition, found, streamed: tuple) -> PartitionTask:
    """What every task of the stratum needs; ``found``: the session's ``Settings``;
    ``streamed``: the relations below sent in the partition of a stratum in one task."""
    relations = tuple(
        _local_relation(run, name, plan.aggregates.get(name), plan.limits.get(name))
        for name in plan.relations
    )
    width = max(len(relation.column_names) for relation in relations)
    variants = tuple((rule_plan.relation, rule_plan.plan) for rule_plan in split.delta_rules)
    exits = tuple(
        (rule_plan.relation, rule_plan.plan)
        for rule_plan in split.exit_rules
        if is_read_from_static(rule_plan, split)
    )
    inputs = tuple(_local_relation(run, name, None) for name in streamed)
    return PartitionTask(
        relations,
        variants,
        run.max_iterations,
        found.local_facts(width, KERNEL_VALUE_BYTES),
        exits,
        inputs,
        frozenset(relation.name for relation in inputs if relation.name in run.unions),
        # maxLocalFacts counts facts only; a budget from taskMemory holds the inputs too
        INPUT_VALUE_BYTES / (KERNEL_VALUE_BYTES * max(width, 1)) if found.max_local_facts is None else 0.0,
    )


def _local_relation(run, name: str, spec, limit: Optional[int] = None) -> LocalRelation:
    """``name`` as the kernel holds it; ``spec``: its min/max aggregate, if any; ``limit``:
    the N of its ``.limitsize``, if any."""
    schema = run.checked.relations[name]
    return LocalRelation(
        name,
        tuple(schema.column_names),
        tuple(column.type for column in schema.columns),
        (spec.func, spec.position) if spec is not None else None,
        limit,
    )


def is_read_from_static(rule_plan, split: Decomposition) -> bool:
    """Whether the round-0 rule ``rule_plan`` of a stratum run in one task is evaluated by the
    kernel in the task: it reads only relations the task reads whole (``split.static``), so
    Spark need not compute its facts and move them into the task (cc over 1M edges: 2M round-0
    facts, 0.35 s to compute and store and 0.6 s to read in the task)."""
    return not split.key and all(scan.relation in split.static for scan in ir.scans(rule_plan.plan))


def _missing_module(message: str) -> str:
    for line in message.splitlines():
        if "ModuleNotFoundError" in line:
            return line.strip()
    return "ModuleNotFoundError"


def _collect_static(names, relations: dict, unions: dict, max_rows: int, distinct_too: bool) -> dict:
    """relation -> (pyarrow Table, its rows) of each relation of ``names`` that has at most
    ``max_rows`` rows (the others are left out). The rows travel beside the table: a pickled
    table without columns (a nullary relation) loses its row count. A relation with its rules'
    outputs before Spark's distinct in ``unions`` is collected from them and made a set here;
    when they are too many, its distinct relation is collected instead if ``distinct_too``."""
    tables = {}
    for name in names:
        table = collect_small(unions[name], max_rows) if name in unions else None
        if table is not None:
            table = distinct_rows(table)
        elif distinct_too or name not in unions:
            table = collect_small(relations[name], max_rows)
        if table is not None:
            tables[name] = (table, table.num_rows)
    return tables


def _stats(plan, strategy: str, reports: dict, seconds: float) -> StratumStats:
    """The stratum's rounds as the rounds driver reports them: per round, the new rows of all
    partitions together and the seconds of the slowest partition. Those seconds are measured
    inside the tasks and cover the in-memory round only: the rounds of all partitions run in
    one Spark job, whose scheduling, broadcast and reading and writing of facts is no round's.
    ``in_tasks`` is the slowest task's time from its start to the end of its fixpoint."""
    names = tuple(plan.relations)
    rounds = max((len(report.sizes) for report in reports.values()), default=1)
    sizes = [{name: 0 for name in names} for _ in range(rounds)]
    times = [0.0] * rounds
    rows = {name: 0 for name in names}
    for report in reports.values():
        for i, (counts, spent) in enumerate(zip(report.sizes, report.seconds, strict=True)):
            for name, count in counts.items():
                sizes[i][name] += count
            times[i] = max(times[i], spent)
        for name, count in report.rows.items():
            rows[name] += count
    stats = StratumStats(
        plan.index, names, True, strategy, iterations=rounds, seconds=seconds, rows=rows, partitioned=True
    )
    stats.in_tasks = max((report.task_seconds for report in reports.values()), default=0.0)
    stats.rounds = [IterationStats(i, sizes[i], times[i]) for i in range(rounds)]
    return stats
