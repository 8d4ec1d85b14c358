"""The fixpoint driver: evaluate a program's stratum plans on Spark, stratum by stratum.

A non-recursive stratum is one round: the union of its rules' outputs, made a set (or
aggregated per group). A recursive stratum iterates, semi-naive by default: round 0 runs every
rule in full; each later round runs the semi-naive variants, which read the previous round's new
facts (the delta) at one body atom. New facts are the candidates not known yet; the stratum is
done when no relation gains any. ``strategy="naive"`` reruns every full rule each round instead.
Min/max relations keep one best row per group; their delta is the set of improved groups.

Costs: each round materialises its deltas with one Spark job that also counts them
(``checkpoint.materialise``); nothing else is collected in the loop. Every
``checkpoint_interval`` rounds each relation is compacted into one stored frame, which bounds
both the plans and the number of pieces a round scans. By default a recursive stratum first
tries ``eval.partitioned``: the whole fixpoint as one Spark job in which each partition runs
the rounds in memory; these rounds of Spark joins are what it falls back to.
"""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager, nullcontext
from functools import reduce
from typing import Iterator, Mapping, Optional

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ..analysis.checked import CheckedProgram, RelationSchema
from ..bounds import MAX_ITERATIONS
from ..plan.ir import StratumPlan, computes
from .choice import ChoiceState
from .subsumption import Dominated, SubsumedState
from ..placement import Declined, Placement, logged, place_evaluation
from ..seminaive import Round, bounded, rounds
from ..plan.partitioning import decomposition, stable_positions
from ..settings import settings_of
from .. import progress
from ..spark.compile import aggregate_frame, compile_node
from ..spark.inputs import empty_frame, facts_frame
from ..spark.labels import describe, group_id, labelled
from ..spark.session import session_settings
from ..spark.types import spark_type
from .checkpoint import is_stored, release
from .bsp import evaluate_bsp
from .partitioned import evaluate_partitioned
from .state import BestState, SetState, least_frame, stored_together
from .stats import IterationStats, StratumStats

log = logging.getLogger("spark_datalog")

STRATEGIES = ("seminaive", "naive")


def evaluate(
    spark: SparkSession,
    checked: CheckedProgram,
    stratum_plans,
    frames: Mapping[str, DataFrame],
    strategy: str = "seminaive",
    max_iterations: Optional[int] = MAX_ITERATIONS,
    checkpoint_interval: int = 10,
    checkpoint_dir: Optional[str] = None,
    adaptive: bool = False,
    decompose: bool = True,
) -> tuple[dict, list]:
    """Evaluate ``stratum_plans`` (from ``plan.translate.plan_program(checked)``) over the EDB
    ``frames`` (relation -> frame with the relation's columns, see ``spark.inputs``).

    Returns (IDB relation -> DataFrame, one ``StratumStats`` per stratum). Result frames are
    sets with the relations' column names and types; they are cached or checkpointed, so reading
    them does not re-run the fixpoint. ``max_iterations`` bounds the rounds of each recursive
    stratum (``NonTerminationError`` beyond it; None means no bound). Lineage is cut every
    ``checkpoint_interval`` rounds, with reliable checkpoints when the SparkContext has a
    checkpoint directory (or ``checkpoint_dir`` is given, which then becomes the context's),
    local checkpoints otherwise.

    ``adaptive`` keeps Spark's adaptive query execution on inside recursive strata. It is off by
    default there: it runs every shuffle stage as a job of its own, which on the small deltas
    of most rounds costs more than its re-planning saves (measured: 5 jobs per round instead of
    2, and about a third slower). Non-recursive strata and reading results use the session's
    setting.

    ``decompose`` lets a semi-naive recursive stratum run as one Spark job in which each
    partition computes its own fixpoint (``eval.partitioned``): partitioned on the columns its
    rounds keep in place where there are such, else in one partition when its facts are few.
    Without it, or where that does not apply, each round is Spark joins.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, not {strategy!r}")
    if checkpoint_interval is None or checkpoint_interval < 1:
        raise ValueError("checkpoint_interval must be a positive number of iterations")
    if max_iterations is not None and max_iterations < 1:
        raise ValueError("max_iterations must be positive (or None for no bound)")
    context = spark.sparkContext
    if checkpoint_dir is not None:
        context.setCheckpointDir(checkpoint_dir)
    reliable = context.getCheckpointDir() is not None

    # inputs Spark stores already (a cached input frame) are read from there, not stored twice
    owned = [name for name, frame in frames.items() if not is_stored(frame)]
    edb = {name: frame.persist() if name in owned else frame for name, frame in frames.items()}
    relations: dict = dict(edb)
    run = _Run(spark, checked, strategy, max_iterations, checkpoint_interval, reliable, adaptive, decompose)
    stats = []
    try:
        for plan in stratum_plans:
            progress.stratum_started(plan, strategy)
            with labelled(spark, stratum_label(plan), group_id("stratum", plan.index)):
                results, stratum_stats = run.stratum(plan, relations)
            progress.stratum_finished(stratum_stats)
            relations.update(results)
            stats.append(stratum_stats)
    finally:
        for name in owned:
            edb[name].unpersist(blocking=False)
    return {name: relations[name] for name in checked.idb if name in relations}, stats


class _Run:
    """Settings and helpers shared by the strata of one evaluation."""

    def __init__(
        self, spark, checked, strategy, max_iterations, checkpoint_interval, reliable, adaptive, decompose
    ):
        self.spark = spark
        self.checked = checked
        self.strategy = strategy
        self.max_iterations = max_iterations
        self.checkpoint_interval = checkpoint_interval
        self.reliable = reliable
        self.adaptive = adaptive
        self.decompose = decompose and strategy == "seminaive"
        self.partitions = int(spark.conf.get("spark.sql.shuffle.partitions"))
        # relation -> its rules' outputs before Spark's distinct, for the kernel, which removes
        # duplicates itself (2M rows: 0.1 s, where Spark's distinct took 1.2-1.7 s)
        self.unions: dict = {}
        self._conforms: dict = {}  # id(RulePlan) -> whether its output needs conform()

    # -- strata ----------------------------------------------------------------------------

    def non_recursive(self, plan: StratumPlan, relations: dict) -> tuple[dict, StratumStats]:
        """One round: each relation is the set (or per-group aggregate) of its rules' outputs."""
        started = time.perf_counter()
        self._describe(plan, None)
        scans = {(name, "full"): frame for name, frame in relations.items()}
        candidates = self._candidates(plan.rules, scans, plan, with_facts=True)
        results = {}
        for name in plan.relations:
            schema = self.checked.relations[name]
            parts = candidates.get(name)
            if not parts:
                results[name] = empty_frame(self.spark, schema)
                continue
            union = reduce(DataFrame.union, parts)
            spec = plan.aggregates.get(name)
            if spec is not None:
                result = self._aggregate(union, schema, spec.func, spec.position)
            elif name in plan.limits:  # its least facts up to the limit
                order = [F.col(c) for c in schema.column_names]
                result = least_frame(union.distinct(), order, plan.limits[name])
            else:
                result = union.distinct()
                self.unions[name] = union
            results[name] = result.persist()
        eager = may_overflow(plan)
        if eager:
            for result in results.values():
                result.count()
        seconds = time.perf_counter() - started
        stats = StratumStats(
            plan.index,
            tuple(plan.relations),
            False,
            self.strategy,
            iterations=1,
            seconds=seconds,
            rows={name: None for name in plan.relations},
            lazy=not eager,
        )
        return results, stats

    def stratum(self, plan: StratumPlan, relations: dict) -> tuple[dict, StratumStats]:
        """The stratum's relations and stats, run where ``placement.place_evaluation`` places
        it: a recursive one in Spark tasks on the kernel where that applies and fits, else as
        rounds of Spark joins; a placement declined at run time is asked again."""
        split = decomposition(plan)
        bsp = settings_of(self.spark).bsp_min_rows is not None
        history: tuple = ()
        derived: Optional[dict] = None
        leaves: list = []  # what holds the facts of declined placements
        try:
            with recursion_settings(self.spark, self.adaptive) if plan.recursive else nullcontext():
                while True:
                    placement = place_evaluation(plan, split, self.strategy, self.decompose, bsp, history)
                    ran = self._run_placed(logged(plan, placement), plan, split, relations, derived)
                    if not isinstance(ran, Declined):
                        ran[1].placement = placement
                        return ran
                    history = placement.refused(ran)
                    if not plan.limits:  # a limit needs the stratum's rounds from the start
                        derived = ran.derived or derived
                    leaves.append(ran.leaf)
        finally:
            for leaf in leaves:
                release(leaf)

    def _run_placed(self, placement: Placement, plan: StratumPlan, split, relations: dict, derived):
        """(results, stats) of the stratum run as ``placement`` says, or ``Declined``; rounds
        of Spark joins continue from the facts ``derived`` by a placement declined before."""
        if placement.where == "plan":
            return self.non_recursive(plan, relations)
        if placement.where == "rounds":
            return self._iterate(plan, relations, derived)
        if placement.where == "bsp":
            return evaluate_bsp(self, plan, split, relations)
        return evaluate_partitioned(self, plan, split, relations)

    def _iterate(self, plan: StratumPlan, relations: dict, derived=None) -> tuple[dict, StratumStats]:
        """The stratum in rounds of Spark joins: the engine's semi-naive loop over the Spark
        states, their pieces compacted every ``checkpoint_interval`` rounds."""
        started = time.perf_counter()
        states = {name: self._state(name, plan, relations) for name in plan.relations}
        stats = StratumStats(plan.index, tuple(plan.relations), True, self.strategy)
        found = rounds(states, self._round(plan, relations, derived), True, stored_together)
        try:
            round_started = time.perf_counter()
            limited = bounded(plan, found, self.max_iterations, relations=states)
            for iteration, sizes in enumerate(limited, start=1):
                if iteration % self.checkpoint_interval == 0:
                    for state in states.values():
                        state.compact(self.reliable)
                stats.rounds.append(IterationStats(iteration - 1, sizes, time.perf_counter() - round_started))
                progress.round_finished(plan.index, plan.relations, stats.rounds[-1])
                round_started = time.perf_counter()
            results = {}
            for name, state in states.items():
                state.finish(self.reliable)
                results[name] = state.full
        except BaseException:
            for state in states.values():
                state.release()
            raise
        finally:
            stats.iterations = len(stats.rounds)
            stats.seconds = time.perf_counter() - started
            stats.rows = {name: state.rows for name, state in states.items()}
        return results, stats

    def _round(self, plan: StratumPlan, relations: dict, derived) -> Round:
        """The candidates of each round of Spark joins (round 0: every rule, the stated facts
        and the facts ``derived`` by a placement declined before; later: the semi-naive
        variants, or every rule when naive), for ``seminaive.rounds``."""

        def candidates(iteration: int, states: dict) -> list:
            self._describe(plan, iteration)
            first = iteration == 0
            rules = plan.rules if first or self.strategy == "naive" else plan.delta_rules
            scans = {(name, "full"): frame for name, frame in relations.items()}
            for name, state in states.items():
                scans[(name, "full")] = state.full
                scans[(name, "delta")] = state.delta
            found = self._candidates(rules, scans, plan, with_facts=first)
            for name, frame in (derived or {}).items() if first else ():
                found.setdefault(name, []).append(frame)
            return [(name, frame) for name, frames in found.items() for frame in frames]

        return candidates

    # -- helpers ---------------------------------------------------------------------------

    def _state(self, name: str, plan: StratumPlan, relations: dict):
        schema = self.checked.relations[name]
        empty = empty_frame(self.spark, schema)
        spec = plan.aggregates.get(name)
        if name in plan.subsumed:
            pseudo, plans = plan.subsumed[name]
            return SubsumedState(schema, empty, self._dominance(schema, pseudo, plans, relations))
        if name in plan.choices:
            return ChoiceState(schema, empty, self.partitions, plan.choices[name])
        if spec is not None:
            if spec.func not in ("min", "max"):
                raise ValueError(f"{spec.func} aggregate of {name} inside a recursive stratum")
            return BestState(schema, empty, spec.func, spec.position)
        key = stable_positions(name, plan.delta_rules)
        return SetState(schema, empty, self.partitions, key, plan.limits.get(name))

    def _dominance(self, schema: RelationSchema, pseudo: str, plans: tuple, relations: dict) -> Dominated:
        """The tuples of ``U`` the ``plans`` of a relation's dominated tuples derive, with its
        ``pseudo`` relation of all tuples bound to ``U`` and the lower ``relations`` read."""

        def dominated(every: DataFrame) -> DataFrame:
            scans = {(name, "full"): frame for name, frame in relations.items()}
            scans[(pseudo, "full")] = every
            found = [conform(compile_node(p.plan, scans), schema) for p in plans]
            return reduce(DataFrame.union, found, every.limit(0))

        return dominated

    def _candidates(self, rule_plans, scans, plan: StratumPlan, with_facts: bool) -> dict:
        """Relation -> frames of candidate rows (rule outputs, and the stated facts)."""
        candidates: dict = {}
        for rule_plan in rule_plans:
            frame = compile_node(rule_plan.plan, scans)
            schema = self.checked.relations[rule_plan.relation]
            spec = plan.aggregates.get(rule_plan.relation)
            # an aggregate's contributions keep the aggregated variable's own type (count<S>
            # over strings yields a long): only the aggregated result gets the column's type
            keep = spec.position if spec is not None and spec.func not in ("min", "max") else None
            candidates.setdefault(rule_plan.relation, []).append(
                self._conform(rule_plan, frame, schema, keep)
            )
        if with_facts:
            for name in plan.relations:
                facts = self.checked.facts.get(name)
                if facts:
                    schema = self.checked.relations[name]
                    candidates.setdefault(name, []).append(facts_frame(self.spark, schema, facts))
        return candidates

    def _conform(self, rule_plan, frame: DataFrame, schema: RelationSchema, keep: Optional[int]):
        # A rule's output types are the same in every round: decide once per plan whether it
        # needs renaming or casting (asking Spark for a schema is a round trip to the JVM).
        key = id(rule_plan)
        if key not in self._conforms:
            self._conforms[key] = tuple(rule_plan.plan.columns) != schema.column_names or needs_cast(
                frame, schema, keep
            )
        return conform(frame, schema, keep) if self._conforms[key] else frame

    def _aggregate(
        self, contributions: DataFrame, schema: RelationSchema, func: str, position: int
    ) -> DataFrame:
        value = schema.column_names[position]
        group = [c for c in schema.column_names if c != value]
        return conform(
            aggregate_frame(contributions, group, func, value, value, schema.name).select(
                *schema.column_names
            ),
            schema,
        )

    def _describe(self, plan: StratumPlan, iteration: Optional[int], what: str = "") -> None:
        """Describe the next Spark jobs (inside the stratum's ``labels.labelled`` block)."""
        text = stratum_label(plan)
        if iteration is not None:
            text += f" · iteration {iteration}"
        if what:
            text += f" · {what}"
        describe(self.spark, text)


def stratum_label(plan: StratumPlan) -> str:
    """The description of a stratum's Spark jobs: ``stratum 0 · tc``."""
    return f"stratum {plan.index} · {', '.join(plan.relations)}"


def may_overflow(plan: StratumPlan) -> bool:
    """Whether evaluating the stratum may find an integer overflow: then a non-recursive
    stratum is evaluated here (its cached result computed at once, a job that reading it
    would run anyway), so that the overflow is reported as an ArithmeticOverflowError by
    ``materialize`` instead of by the first action on a result frame."""
    return any(spec.func == "sum" for spec in plan.aggregates.values()) or any(
        computes(rule.plan) for rule in plan.rules
    )


def conform(frame: DataFrame, schema: RelationSchema, keep_type: Optional[int] = None) -> DataFrame:
    """``frame`` with ``schema``'s column names (positionally) and exact types, except the
    column at position ``keep_type``, which keeps its type."""
    columns = []
    for position, (field, column) in enumerate(zip(frame.schema.fields, schema.columns, strict=True)):
        target = spark_type(column.type)
        value = F.col(f"`{field.name}`")
        if position != keep_type and field.dataType != target:
            value = value.cast(target)
        columns.append(value.alias(column.name))
    return frame.select(*columns)


def needs_cast(frame: DataFrame, schema: RelationSchema, keep_type: Optional[int] = None) -> bool:
    """Whether some column of ``frame`` (other than ``keep_type``) differs from ``schema``'s type."""
    return any(
        position != keep_type and field.dataType != spark_type(column.type)
        for position, (field, column) in enumerate(zip(frame.schema.fields, schema.columns, strict=True))
    )


@contextmanager
def recursion_settings(spark: SparkSession, adaptive: bool) -> Iterator[None]:
    """Run the block with the session settings a recursive stratum wants, then restore them:
    adaptive query execution on or off (see ``evaluate``), and joins allowed to reuse a
    partitioning on a subset of their keys, so that the stored leaves of a relation partitioned
    on its stable columns (``plan.partitioning``) join without a shuffle. Constraint
    propagation is off: it infers nothing the rounds need, costs planning time every round, and
    on unions of stored leaves it fails in Spark 4.2 (``NoSuchElementException: key not found``
    in ``Union.rewriteConstraints``, seen on the RDFS benchmark program). Redundant aliases stay
    (:func:`kept_aliases`)."""
    settings = {
        "spark.sql.adaptive.enabled": "true" if adaptive else "false",
        "spark.sql.requireAllClusterKeysForCoPartition": "false",
        "spark.sql.constraintPropagation.enabled": "false",
        EXCLUDED_RULES: kept_aliases(spark.conf.get(EXCLUDED_RULES, None)),
    }
    with session_settings(spark, settings):
        yield


EXCLUDED_RULES = "spark.sql.optimizer.excludedRules"
REMOVE_REDUNDANT_ALIASES = "org.apache.spark.sql.catalyst.optimizer.RemoveRedundantAliases"


def kept_aliases(excluded: Optional[str]) -> str:
    """The optimizer rules to exclude, ``excluded`` plus the one that drops redundant aliases.

    A stored leaf (``checkpoint.materialise``) takes its columns' attribute ids from the stored
    frame's analyzed plan but its partitioning from the executed plan. Dropping an alias that
    keeps a name (``X AS X``, as a scan or a head naming a column as the relation does) gives
    the executed plan other ids: the leaf's partitioning then names no column of it, and every
    later round shuffles again. Example::

        >>> kept_aliases(None) == REMOVE_REDUNDANT_ALIASES
        True
    """
    rules = [rule.strip() for rule in (excluded or "").split(",") if rule.strip()]
    return ",".join(rules if REMOVE_REDUNDANT_ALIASES in rules else [*rules, REMOVE_REDUNDANT_ALIASES])
