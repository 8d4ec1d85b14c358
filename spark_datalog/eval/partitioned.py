"""A decomposable recursive stratum as one Spark job: every partition runs its own fixpoint.

When a stratum's recursion keeps some columns in place (``plan.partitioning.decomposition``:
``tc(X, Z) :- tc(X, Y), arc(Y, Z).`` never changes X), hash-partitioning the round-0 facts on
those columns splits the fixpoint into independent ones, one per partition (seed 002's
decomposable plans, BigDatalog's "decomposable" programs). The other relations the recursive
rules read are collected once and broadcast to every task; each task then runs the semi-naive
rounds in memory with the local backend (``spark_datalog.local``). The whole stratum costs one
Spark job (plus one to collect each broadcast relation) instead of one or two per round, which
on this kind of machine is the per-round cost that dominates deep fixpoints.

It is used only when the broadcast relations are small (``max_broadcast_rows`` rows each; a
larger one falls back to rounds of Spark joins), and a partition's facts must fit in one Python
worker's memory: with many facts, raise ``spark.sql.shuffle.partitions``. Executors need the
``spark_datalog`` package importable, as any Python UDF library.
"""

from __future__ import annotations

import logging
import time
from functools import reduce
from typing import Optional

from pyspark.sql import DataFrame

from ..errors import NonTerminationError
from ..local.partition import PartitionTask, ReportsParam, run_partition
from ..plan.partitioning import Decomposition
from ..spark.inputs import empty_frame
from ..spark.types import schema as spark_schema
from .checkpoint import cut_lineage
from .stats import IterationStats, StratumStats

log = logging.getLogger("spark_datalog")

MAX_BROADCAST_ROWS = 1_000_000


def evaluate_partitioned(run, plan, decomposition: Decomposition, relations: dict,
                         max_broadcast_rows: Optional[int] = None
                         ) -> Optional[tuple[dict, StratumStats]]:
    """(results, stats) of the stratum ``plan`` evaluated partition by partition, or None when
    a relation to broadcast has more than ``max_broadcast_rows`` rows (default
    ``MAX_BROADCAST_ROWS``). ``run`` is the driver's ``_Run`` (session, settings, candidate
    compilation)."""
    if max_broadcast_rows is None:
        max_broadcast_rows = MAX_BROADCAST_ROWS
    started = time.perf_counter()
    spark = run.spark
    name = decomposition.relation
    schema = run.checked.relations[name]
    run._describe(plan, None, "partition-local fixpoint")
    static = _collect_static(decomposition.static, relations, max_broadcast_rows)
    if static is None:
        log.info("stratum %d · %s · a broadcast relation has over %d rows: rounds of Spark joins",
                 plan.index, name, max_broadcast_rows)
        return None

    scans = {(relation, "full"): frame for relation, frame in relations.items()}
    candidates = run._candidates(decomposition.exit_rules, scans, plan, with_facts=True)
    parts = candidates.get(name)
    spec = plan.aggregates.get(name)
    task = PartitionTask(
        relation=name, column_names=tuple(schema.column_names),
        column_types=tuple(column.type for column in schema.columns),
        variants=tuple(rule_plan.plan for rule_plan in decomposition.delta_rules),
        best=(spec.func, spec.position) if spec is not None else None,
        max_rounds=run.max_iterations)

    context = spark.sparkContext
    broadcast = context.broadcast(static)
    reports = context.accumulator({}, ReportsParam())
    try:
        if parts:
            base = reduce(DataFrame.union, parts)
            key = [schema.column_names[i] for i in decomposition.key]
            facts = base.repartition(run.partitions, *key).mapInArrow(
                lambda batches: run_partition(batches, task, broadcast, reports),
                spark_schema(task.column_names, task.column_types))
            try:
                result = cut_lineage(facts, run.reliable)
            except Exception as error:  # noqa: BLE001 - only a missing module is handled
                if "ModuleNotFoundError" not in str(error):
                    raise
                log.warning("stratum %d · %s · Spark's Python workers cannot import what the "
                            "partition-local fixpoint needs (%s); evaluating in rounds of Spark "
                            "joins. Point PYSPARK_PYTHON at this environment's interpreter, or "
                            "install spark_datalog on the executors.", plan.index, name,
                            _missing_module(str(error)))
                return None
        else:
            result = empty_frame(spark, schema)
    finally:
        broadcast.unpersist(blocking=False)

    stats = _stats(plan, name, run.strategy, reports.value, time.perf_counter() - started)
    for round_stats in stats.rounds:
        log.info("stratum %d · %s · iteration %d: %d new rows (partition-local) in %.2fs",
                 plan.index, name, round_stats.iteration, round_stats.total, round_stats.seconds)
    if any(report.exceeded for report in reports.value.values()):
        last = stats.rounds[-1].total if stats.rounds else 0
        raise NonTerminationError(
            f"stratum {plan.index} ({name}) did not reach a fixpoint within "
            f"{run.max_iterations} iterations; the last iteration derived {last} new rows")
    log.debug("stratum %d · %s · %d iterations in one partition-local job, %s rows in %.2fs",
             plan.index, name, stats.iterations, stats.rows[name], stats.seconds)
    return {name: result}, stats


def _missing_module(message: str) -> str:
    for line in message.splitlines():
        if "ModuleNotFoundError" in line:
            return line.strip()
    return "ModuleNotFoundError"


def _collect_static(names, relations: dict, max_rows: int) -> Optional[dict]:
    """relation -> pyarrow Table of each relation to broadcast, or None if one is too large."""
    tables = {}
    for name in names:
        table = relations[name].limit(max_rows + 1).toArrow()
        if table.num_rows > max_rows:
            return None
        tables[name] = table
    return tables


def _stats(plan, name: str, strategy: str, reports: dict, seconds: float) -> StratumStats:
    """The stratum's rounds as the rounds driver reports them: per round, the new rows of all
    partitions together and the seconds of the slowest partition."""
    rounds = max((len(report.sizes) for report in reports.values()), default=1)
    sizes = [0] * rounds
    times = [0.0] * rounds
    for report in reports.values():
        for i, (size, spent) in enumerate(zip(report.sizes, report.seconds)):
            sizes[i] += size
            times[i] = max(times[i], spent)
    stats = StratumStats(plan.index, (name,), True, strategy, iterations=rounds, seconds=seconds,
                         rows={name: sum(report.rows for report in reports.values())},
                         partitioned=True)
    stats.rounds = [IterationStats(i, {name: sizes[i]}, times[i]) for i in range(rounds)]
    return stats
