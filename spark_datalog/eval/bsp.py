"""A recursive stratum that does not decompose, as BSP rounds across all partitions.

Without a decomposition key (reachability, connected components, shortest paths: the rounds
move facts between keys) a stratum's fixpoint cannot run partition by partition. Here it runs
in bulk-synchronous rounds instead (seed 002, BSP; BigDatalog's SetRDD): every relation is
hash-partitioned on the column its recursive rules join on (``reach(X), arc(X, Y)``: reach on
X, arc on X), so each partition holds all its facts join with. The relations the rules read are
partitioned once and stored; the accumulated facts are stored round by round, each round's
pieces already in place. A round is one Spark job: one ``mapInArrow`` over the union of the
stored pieces (Spark's union keeps their common partitioning, so nothing of them moves), in
which the kernel (``kernel.bsp.superstep``) keeps the candidates sent to the partition that are
new, joins them with the partition's relations and yields the new facts and the next round's
candidates; only those are shuffled, to the partitions of their join key.

``placement.place_evaluation`` chooses this path for a stratum without a key when
``spark.datalog.bspMinRows`` is set; :func:`evaluate_bsp` declines it (``placement.Declined``,
then one task or rounds of Spark joins are tried) when the relations it reads hold at most that
many rows, or :func:`bsp_plan` cannot place it: non-linear rules (two recursive atoms), rules
whose read relations share no column with the recursive atom.
"""

from __future__ import annotations

import logging
import time
from functools import reduce
from typing import Optional, Union

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from .. import progress
from ..kernel.bsp import BUCKET, ROUND, BspTask, superstep
from ..kernel.partition import TAG, LocalRelation, ReportsParam, unsupported, wide_columns, wide_names
from ..placement import Declined
from ..plan import ir
from ..plan.partitioning import Decomposition, is_linear
from ..settings import BSP_ROWS_SETTING, settings_of
from ..spark.executors import require_executor_package
from ..spark.types import schema as spark_schema
from .checkpoint import cut_lineage, release
from .stats import IterationStats, StratumStats, non_termination

log = logging.getLogger("spark_datalog")


def bsp_plan(run, plan, split: Decomposition) -> Union[tuple, str]:
    """``(task, keys)`` of a BSP evaluation of the stratum (``keys``: slot name -> the positions
    its rows are partitioned on), or the reason (a string) why it cannot run so.

    Each relation of the stratum is partitioned on one position that every rule reading its
    delta joins with each relation it reads (``reach(Y) :- reach(X), arc(X, Y).``: reach on 0,
    arc on 0)."""
    if not is_linear(plan):
        return "a rule reads two recursive atoms (non-linear)"
    own = [_local(run, plan, name) for name in plan.relations]
    keys = _own_keys(plan, split, own)
    if isinstance(keys, str):
        return keys
    statics: dict = {}
    variants = []
    for rule_plan in split.delta_rules:
        delta, others = _scans(rule_plan, set(plan.relations))
        variable = delta.columns[keys[delta.relation][0]]
        reads: dict = {}
        for scan in others:
            slot = f"{scan.relation}@{scan.columns.index(variable)}"
            if reads.setdefault(scan.relation, slot) != slot:
                return f"a rule reads {scan.relation} joined on two different columns"
            statics[slot] = (
                scan.relation,
                scan.columns.index(variable),
                delta.relation,
                keys[delta.relation][0],
            )
        variants.append((rule_plan.relation, rule_plan.plan, reads))
    mismatch = _type_mismatch(run, statics)
    if mismatch:
        return mismatch
    static_slots = [_static_slot(run, slot, relation) for slot, (relation, *_) in sorted(statics.items())]
    slots = (*own, *[_candidate_slot(r) for r in own], *static_slots)
    keys.update({f"{r.name}·candidates": keys[r.name] for r in own})
    keys.update({slot: (position,) for slot, (_, position, *_) in statics.items()})
    task = BspTask(slots, len(own), tuple(variants))
    refused = _refused(task)
    return f"the kernel cannot evaluate it ({refused})" if refused else (task, keys)


def _local(run, plan, name: str) -> LocalRelation:
    schema = run.checked.relations[name]
    spec = plan.aggregates.get(name)
    best = (spec.func, spec.position) if spec is not None else None
    return LocalRelation(name, tuple(schema.column_names), tuple(c.type for c in schema.columns), best)


def _scans(rule_plan, own: set) -> tuple:
    """(the delta scan, the other scans) of a linear semi-naive variant."""
    scans = ir.scans(rule_plan.plan)
    return next(s for s in scans if s.relation in own), [s for s in scans if s.relation not in own]


def _own_keys(plan, split: Decomposition, own: list):
    """Relation of the stratum -> its partitioning positions, or why there are none."""
    options: dict = {}
    for rule_plan in split.delta_rules:
        delta, others = _scans(rule_plan, set(plan.relations))
        joined = {i for i, c in enumerate(delta.columns) if all(c in s.columns for s in others)}
        options[delta.relation] = options.get(delta.relation, joined) & joined
    keys = {}
    for relation in own:
        value = relation.best[1] if relation.best else None
        everywhere = set(range(len(relation.column_names))) - {value}
        found = sorted(options.get(relation.name, everywhere) - {value})
        if not found:
            return f"no column of {relation.name} joins every relation its recursive rules read"
        keys[relation.name] = (found[0],) if relation.name in options else tuple(found)
    return keys


def _type_mismatch(run, statics: dict) -> Optional[str]:
    for relation, position, own, own_position in statics.values():
        mine = run.checked.relations[relation].columns[position].type
        theirs = run.checked.relations[own].columns[own_position].type
        if mine != theirs:
            return f"{own} and {relation} join on columns of different types ({theirs}, {mine})"
    return None


def _static_slot(run, slot: str, relation: str) -> LocalRelation:
    schema = run.checked.relations[relation]
    return LocalRelation(slot, tuple(schema.column_names), tuple(c.type for c in schema.columns))


def _candidate_slot(relation: LocalRelation) -> LocalRelation:
    return LocalRelation(f"{relation.name}·candidates", relation.column_names, relation.column_types)


def _refused(task: BspTask) -> Optional[str]:
    """``kernel.partition.unsupported`` of every variant with its static slots."""
    from ..kernel.partition import PartitionTask
    from ..kernel.types import KernelUnsupported

    own = task.slots[: task.relations]
    for _, plan, statics in task.variants:
        slots = {s.name: s for s in task.slots}
        below = {name: _arrow_schema(slots[slot]) for name, slot in statics.items()}
        try:
            refused = unsupported(PartitionTask(own, (("", plan),), None, None), below)
        except KernelUnsupported as error:  # pragma: no cover - unsupported catches it
            refused = str(error)
        if refused:
            return refused
    return None


def _arrow_schema(slot: LocalRelation):
    import pyarrow as pa

    from ..kernel.types import ARROW_TYPES

    return pa.schema(
        [pa.field(n, ARROW_TYPES[t]) for n, t in zip(slot.column_names, slot.column_types, strict=True)]
    )


def evaluate_bsp(
    run, plan, split: Decomposition, relations: dict
) -> Union[tuple[dict, StratumStats], Declined]:
    """(results, stats) of the stratum ``plan`` evaluated in BSP rounds, or ``Declined``: it
    cannot run so (:func:`bsp_plan`), the relations it reads hold at most
    ``spark.datalog.bspMinRows`` rows, or Spark's Python workers cannot import the kernel."""
    planned = bsp_plan(run, plan, split)
    if isinstance(planned, str):
        return Declined(planned)
    rows, least = 0, settings_of(run.spark).bsp_min_rows or 0
    for name in split.static if least else ():
        rows += relations[name].limit(least + 1 - rows).count() if rows <= least else 0
    if least and rows <= least:
        return Declined(f"its relations hold {rows} rows, at most {BSP_ROWS_SETTING}")
    task, keys = planned
    started = time.perf_counter()
    run._describe(plan, None, "BSP rounds: placing relations")
    try:
        require_executor_package(run.spark)
        statics, candidates = _placed(run, plan, split, task, keys, relations)
    except Exception as error:  # noqa: BLE001 - only a missing module is handled
        if "ModuleNotFoundError" not in str(error):
            raise
        return Declined("Spark's Python workers cannot import spark_datalog")
    stats = StratumStats(plan.index, tuple(plan.relations), True, run.strategy, bsp=True)
    leaves = [candidates]
    try:
        _rounds(run, plan, task, keys, statics, leaves, stats)
        results = _results(run, plan, task, leaves)
    finally:
        for leaf in [statics, *leaves]:
            release(leaf)
    stats.seconds = time.perf_counter() - started
    return results, stats


def _placed(run, plan, split: Decomposition, task: BspTask, keys: dict, relations: dict) -> tuple:
    """(statics, candidates): the static slots and the round-0 candidates, each stored
    hash-partitioned on its key."""
    from .partitioned import empty_wide_frame, wide_frame

    tags = {slot.name: tag for tag, slot in enumerate(task.slots)}
    statics = [(tags[s.name], relations[s.name.rsplit("@", 1)[0]]) for s in task.slots[2 * task.relations :]]
    scans = {(relation, "full"): frame for relation, frame in relations.items()}
    found = run._candidates(split.exit_rules, scans, plan, with_facts=True)
    exits = [
        (task.relations + tag, frame)
        for tag, relation in enumerate(task.slots[: task.relations])
        for frame in found.get(relation.name, ())
    ]
    stored = []
    for parts in (statics, exits):
        wide = wide_frame(parts, task.slots)
        if wide is None:
            wide = empty_wide_frame(run.spark, task.slots)
        stored.append(_store(run, wide.withColumn(ROUND, F.lit(0)), task, keys))
    return stored[0], stored[1]


def _store(run, wide: DataFrame, task: BspTask, keys: dict) -> DataFrame:
    """``wide`` (rows of the slots, ``ROUND`` set) with its ``BUCKET``, hash-partitioned on it
    and stored: the layout every piece of a BSP evaluation shares."""
    bucket = F.lit(0)
    for tag, slot in reversed(list(enumerate(task.slots))):
        names = wide_names(slot)
        key = [F.col(names[i]) for i in keys[slot.name]]
        bucket = F.when(F.col(TAG) == tag, F.hash(*key) if key else F.lit(0)).otherwise(bucket)
    placed = wide.withColumn(BUCKET, bucket.cast("int")).select(
        *[c for c, _ in wide_columns(task.slots)], BUCKET, ROUND
    )
    return placed.repartition(run.partitions, F.col(BUCKET)).localCheckpoint(eager=True)


def _rounds(
    run, plan, task: BspTask, keys: dict, statics: DataFrame, leaves: list, stats: StratumStats
) -> None:
    """Run rounds until one finds nothing new; ``leaves`` (the stored pieces after ``statics``:
    facts and the latest candidates) and ``stats`` are updated in place."""
    round_ = 0
    while True:
        started = time.perf_counter()
        run._describe(plan, round_, "BSP round")
        sizes = _round(run, task, keys, [statics, *leaves], round_, leaves)
        if round_ == 0:
            release(leaves.pop(0))  # the round-0 candidates: absorbed
        round_ += 1
        stats.rounds.append(IterationStats(round_ - 1, sizes, time.perf_counter() - started))
        stats.iterations = round_
        progress.round_finished(plan.index, plan.relations, stats.rounds[-1])
        if not any(sizes.values()):
            break
        if run.max_iterations is not None and round_ >= run.max_iterations:
            raise non_termination(plan, run.max_iterations, sizes)
        if round_ % run.checkpoint_interval == 0:
            _compact(run, task, leaves, round_)
    stats.rows = {
        r.name: None if r.best else sum(s.new_rows[r.name] for s in stats.rounds)
        for r in task.slots[: task.relations]
    }


def _round(run, task: BspTask, keys: dict, pieces: list, round_: int, leaves: list) -> dict:
    """One round as one Spark job: the superstep over the union of ``pieces``, its output
    stored partitioned (appended to ``leaves``); returns the new facts per relation."""
    columns = [*wide_columns(task.slots), (BUCKET, "int"), (ROUND, "int")]
    reports = run.spark.sparkContext.accumulator({}, ReportsParam())
    output = reduce(DataFrame.union, pieces).mapInArrow(
        lambda batches: superstep(batches, task, round_, reports),
        spark_schema([c for c, _ in columns], [t for _, t in columns]),
    )
    leaves.append(_store(run, output.drop(BUCKET), task, keys))
    names = [r.name for r in task.slots[: task.relations]]
    return {name: sum(sizes.get(name, 0) for sizes, _ in reports.value.values()) for name in names}


def _compact(run, task: BspTask, leaves: list, round_: int) -> None:
    """Replace the stored pieces by one (their facts and the latest candidates): bounds the
    union each round reads and drops candidates already absorbed."""
    union = reduce(DataFrame.union, leaves)
    kept = (F.col(TAG) < task.relations) | (F.col(ROUND) == round_)
    compacted = union.where(kept).localCheckpoint(eager=True)
    for leaf in leaves:
        release(leaf)
    leaves[:] = [compacted]


def _results(run, plan, task: BspTask, leaves: list) -> dict:
    """Relation -> its facts: the new facts of every round (a min/max relation: each group's
    best), stored with their lineage cut."""
    from .partitioned import split_wide

    own = task.slots[: task.relations]
    facts = reduce(DataFrame.union, leaves).where(F.col(TAG) < task.relations).drop(BUCKET, ROUND)
    stored = cut_lineage(facts, run.reliable)
    results = split_wide(stored, own)
    for relation in own:
        if relation.best:
            schema = run.checked.relations[relation.name]
            func, position = relation.best
            results[relation.name] = run._aggregate(results[relation.name], schema, func, position).persist()
    return results
