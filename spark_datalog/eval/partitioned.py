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

The other relations the recursive rules read are collected once and broadcast to every task;
each must have at most ``spark.datalog.maxBroadcastRows`` rows. A stratum in one task derives
its round-0 facts in the task from the rules that read only those relations
(``is_read_from_static``); Spark computes the others' and sends them in. A task stops when its relations
hold more facts than its memory budget allows (``spark.datalog.taskMemory``, or
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
)
from ..placement import Declined
from ..plan import ir
from ..plan.partitioning import Decomposition
from ..settings import (
    BROADCAST_ROWS_SETTING,
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
        return Declined(
            f"a partition held more than {task.max_facts} facts ({TASK_MEMORY_SETTING} or "
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
    """``(task, static)``: what every task needs and the broadcast relations, or the reason
    (a string) why the kernel cannot take the stratum."""
    found = settings_of(run.spark)
    width = max(len(run.checked.relations[name].columns) for name in plan.relations)
    max_rows = found.broadcast_rows(KERNEL_VALUE_BYTES)
    static = _collect_static(split.static, relations, run.unions, max_rows)
    if static is None:
        return f"a relation to broadcast has over {max_rows} rows ({BROADCAST_ROWS_SETTING})"
    task = _task(run, plan, split, found.local_facts(width, KERNEL_VALUE_BYTES))
    refused = unsupported(task, {name: table.schema for name, (table, _) in static.items()})
    if refused is not None:
        return f"the kernel cannot evaluate it ({refused})"
    return task, static


def _placed_base(run, plan, split: Decomposition, task: PartitionTask, relations: dict):
    """``(partitioned, stored)``: the round-0 facts in the wide schema, hash-partitioned on the
    decomposition key or in one partition (``stored``: a leaf to release after the tasks);
    None when there are none; the reason (a string) when they are too many for one task."""
    scans = {(relation, "full"): frame for relation, frame in relations.items()}
    rules = [rule_plan for rule_plan in split.exit_rules if not is_read_from_static(rule_plan, split)]
    candidates = run._candidates(rules, scans, plan, with_facts=True)
    parts = [
        (tag, frame)
        for tag, relation in enumerate(task.relations)
        for frame in candidates.get(relation.name, ())
    ]
    base = wide_frame(parts, task.relations)
    if base is None and task.exits:  # one task still runs: it derives round 0 itself
        return empty_wide_frame(run.spark, task.relations).coalesce(1), None
    if base is None:
        return None
    if split.key:
        first = task.relations[0]
        key = [f"r0_{first.column_names[i]}" for i in split.key]
        return base.repartition(run.partitions, *key), None
    leaves, counts, _ = materialise({"base": base})
    stored = leaves["base"]
    if task.max_facts is not None and counts["base"] > task.max_facts:
        release(stored)
        return f"{counts['base']} round-0 facts are too many for one task ({TASK_MEMORY_SETTING})"
    return stored.coalesce(1), stored


def _run_stratum_tasks(run, plan, task: PartitionTask, static: dict, partitioned, stored_base):
    """``(stored, reports)`` of the tasks over ``partitioned``, or None when the workers cannot
    import the kernel (``run_tasks``)."""
    names = ", ".join(plan.relations)
    broadcast = run.spark.sparkContext.broadcast(static)
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
        names = (f"r{tag}_{c}" for c in relations[tag].column_names)
        values = dict(zip(names, frame.columns, strict=True))
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
            *[F.col(f"r{tag}_{c}").alias(c) for c in relation.column_names]
        )
        for tag, relation in enumerate(relations)
    }


def _task(run, plan, split: Decomposition, max_facts: int) -> PartitionTask:
    relations = []
    for name in plan.relations:
        schema = run.checked.relations[name]
        spec = plan.aggregates.get(name)
        relations.append(
            LocalRelation(
                name,
                tuple(schema.column_names),
                tuple(column.type for column in schema.columns),
                (spec.func, spec.position) if spec is not None else None,
            )
        )
    variants = tuple((rule_plan.relation, rule_plan.plan) for rule_plan in split.delta_rules)
    exits = tuple(
        (rule_plan.relation, rule_plan.plan)
        for rule_plan in split.exit_rules
        if is_read_from_static(rule_plan, split)
    )
    return PartitionTask(tuple(relations), variants, run.max_iterations, max_facts, exits)


def is_read_from_static(rule_plan, split: Decomposition) -> bool:
    """Whether the round-0 rule ``rule_plan`` of a stratum run in one task is evaluated by the
    kernel in the task: it reads only relations broadcast to it (``split.static``), so Spark
    need not compute its facts and move them into the task (cc over 1M edges: 2M round-0
    facts, 0.35 s to compute and store and 0.6 s to read in the task)."""
    return not split.key and all(scan.relation in split.static for scan in ir.scans(rule_plan.plan))


def _missing_module(message: str) -> str:
    for line in message.splitlines():
        if "ModuleNotFoundError" in line:
            return line.strip()
    return "ModuleNotFoundError"


def _collect_static(names, relations: dict, unions: dict, max_rows: int) -> Optional[dict]:
    """relation -> (pyarrow Table, its rows) of each relation to broadcast, or None if one is
    too large. The rows travel beside the table: a pickled table without columns (a nullary
    relation) loses its row count. A relation with its rules' outputs before Spark's distinct
    in ``unions`` is collected from them and made a set here, unless they are too many."""
    tables = {}
    for name in names:
        table = collect_small(unions[name], max_rows) if name in unions else None
        table = distinct_rows(table) if table is not None else collect_small(relations[name], max_rows)
        if table is None:
            return None
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
