"""DRed of a recursive stratum in rounds of Spark joins: the Spark backend of the one DRed.

The phases, their reasoning and their plans are ``spark_datalog.dred``'s and
``plan.maintenance``'s; here they run over the driver's Spark states (``eval.state``) with the
settings of the driver's recursive strata (no adaptive execution), one or two Spark jobs per
round (:class:`SparkBackend`). A set relation's starting state is stored once, partitioned and
sorted like the driver's (``SetState.compact``), so no round shuffles or sorts it again; every
``checkpoint_interval`` rounds the states are compacted, the found pieces first stored as one
frame, since compaction releases them.

Min/max relations (PreM) keep their best value per group (``BestState``): insertions continue
the fixpoint from the stored best values (a group improves or stays). Removals (deleted facts,
or facts that appeared under a negation) reaching a PreM stratum are not handled here: the
caller recomputes that stratum (``dred_applies``), or repairs its groups on the kernel.
"""

from __future__ import annotations

from functools import reduce
from typing import Mapping, Optional

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..eval.checkpoint import cut_lineage
from ..eval.driver import conform, recursion_settings
from ..eval.state import IMPROVED, BestState, SetState, stored_together
from ..dred import dred
from ..eval.stats import non_termination
from ..plan.ir import LocalRelation
from ..plan.maintenance import dred_plans
from ..spark.compile import compile_node, match
from ..spark.inputs import empty_frame, facts_frame
from ..syntax import ast


def dred_applies(stratum_plan, inserted_lower, deleted_lower) -> bool:
    """True when :func:`dred_changes` maintains this recursive stratum for lower relations whose
    facts appeared (``inserted_lower``) or disappeared (``deleted_lower``): always, except for
    a removal (a deletion under a positive atom, an insertion under a negated one) reaching a
    stratum with min/max relations."""
    if not stratum_plan.aggregates:
        return True
    for rule_plan in stratum_plan.rules:
        for literal in rule_plan.rule.body:
            if isinstance(literal, ast.Atom) and literal.predicate in deleted_lower:
                return False
            if isinstance(literal, ast.Negation) and literal.atom.predicate in inserted_lower:
                return False
    return True


def dred_changes(
    spark,
    checked,
    stratum_plan,
    old: Mapping,
    new: dict,
    inserted: dict,
    deleted: dict,
    max_iterations: Optional[int] = None,
    checkpoint_interval: int = 10,
) -> dict:
    """Relation -> (inserted facts, deleted facts) of the stratum's relations.

    ``old``: relation -> old facts (plain frames) of the stratum's relations and every lower
    relation its rules read; ``new``: relation -> new facts of those lower relations;
    ``inserted`` / ``deleted``: lower relation -> facts that appeared / disappeared (only the
    relations that changed), read positively or negated.
    """
    own = set(stratum_plan.relations)
    plans = dred_plans(checked, stratum_plan, set(inserted), set(deleted))
    changed = {("inserted", name): frame for name, frame in inserted.items()}
    changed.update({("deleted", name): frame for name, frame in deleted.items()})
    backend = SparkBackend(spark, checked, checkpoint_interval)
    mine = {name: frame for name, frame in old.items() if name in own}
    lower_old = {name: frame for name, frame in old.items() if name not in own}
    with recursion_settings(spark, adaptive=False):
        outcome = dred(backend, plans, mine, lower_old, new, changed, max_iterations)
    if outcome.exceeded:
        assert max_iterations is not None  # the phases only stop early under a bound
        raise non_termination(stratum_plan, max_iterations, what="incremental iterations")
    return outcome.changes


class SparkBackend:
    """Spark frames and the driver's states (``eval.state``), for the one DRed
    (``spark_datalog.dred.Backend``)."""

    collect = staticmethod(stored_together)

    def __init__(self, spark, checked, checkpoint_interval: int = 10):
        self.spark, self.checked = spark, checked
        self.checkpoint_interval = checkpoint_interval
        self.partitions = int(spark.conf.get("spark.sql.shuffle.partitions"))
        self.reliable = spark.sparkContext.getCheckpointDir() is not None

    def output(self, plan, frames: Mapping, shape: LocalRelation) -> DataFrame:
        return conform(compile_node(plan, dict(frames)), self.checked.relations[shape.name])

    def relation(self, shape: LocalRelation, known: Optional[DataFrame] = None) -> SetState | BestState:
        """A set relation's known facts are stored as its state's base, partitioned and sorted
        (``SetState.compact``); a min/max one's as its stored merge (nothing improved)."""
        schema = self.checked.relations[shape.name]
        empty = empty_frame(self.spark, schema)
        if shape.best is not None:
            best = BestState(schema, empty, shape.best[0], shape.best[1])
            if known is not None:
                best.store(known.withColumn(IMPROVED, F.lit(False)), 0, None)
            return best
        state = SetState(schema, empty, self.partitions)
        if known is not None:  # non-empty or not, it is the starting state (count 1 keeps it)
            state.store(known, 1, None)
            state.absorb_nothing()  # not a delta: the first round reads the seed
            state.compact(False)
        return state

    def full(self, relation) -> DataFrame:
        return relation.full

    def recent(self, relation) -> DataFrame:
        return relation.delta

    def facts(self, relation) -> DataFrame:
        return relation.full

    def size(self, relation) -> int:
        return relation.rows or 0

    def has_rows(self, frame: DataFrame) -> bool:
        return True  # unknown without a Spark job: assume so

    def rows(self, frame: DataFrame) -> int:
        return frame.count()

    def union(self, frames: list, shape: LocalRelation) -> DataFrame:
        if not frames:
            return empty_frame(self.spark, self.checked.relations[shape.name])
        return reduce(DataFrame.union, frames)

    def within(self, frame: DataFrame, facts: DataFrame, on: Optional[list] = None) -> DataFrame:
        return match(frame, facts, list(facts.columns) if on is None else on, "left_semi")

    def without(self, frame: DataFrame, facts: DataFrame) -> DataFrame:
        return match(frame, facts, list(frame.columns), "left_anti")

    def stated(self, shape: LocalRelation, rows: tuple) -> DataFrame:
        return facts_frame(self.spark, self.checked.relations[shape.name], rows)

    def after_round(self, relations: dict, count: int, added: Optional[dict]) -> None:
        """Every ``checkpoint_interval`` rounds: the found pieces stored as one frame, then the
        states compacted (which releases their pieces)."""
        if count % self.checkpoint_interval:
            return
        for name, pairs in (added or {}).items():
            if len(pairs) > 1:
                assert added is not None
                union = reduce(DataFrame.union, [frame for _, frame in pairs]).coalesce(self.partitions)
                added[name] = [(pairs[-1][0], cut_lineage(union, False))]
        for state in relations.values():
            state.compact(self.reliable)
