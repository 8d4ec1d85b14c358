"""DRed (delete and re-derive) for recursive strata, on sets of facts.

Given the old state of a recursive stratum and the facts of lower relations that appeared or
disappeared (presence changes):

1. Over-delete: every fact with a derivation that uses a deleted fact — or a negated atom
   ``not q(…)`` whose ``q`` fact appeared — propagated semi-naively with every other literal
   read from the OLD state (a superset of what really goes).
2. Re-derive: of the over-deleted facts, those the stratum's rules still derive in one round
   from what remains (old minus over-deleted, and the new lower relations) — the program's
   own facts included. Cost: one round of every rule over the remaining state (a join per
   rule, no fixpoint), so deletions cost at least one pass over the stratum's data.
3. Insert: the re-derived facts and the one-step consequences of the inserted lower facts — and
   of the deleted facts of negated relations — seed a semi-naive fixpoint over the new state
   (the driver's states, ``eval.state``).

A changed lower literal seeds a phase through the rule with that literal read from the changed
facts as a positive atom (the semi-naive delta), the other literals from the phase's state. For
``not q(X, _)`` the negation itself is kept as well: a ``q`` fact that appeared falsifies it only
if no other ``q(X, …)`` was there (phase 1, old state), and one that disappeared satisfies it only
if none is left (phase 3, new state), so both phases only see genuine derivations.

Min/max relations (PreM) keep their best value per group (``BestState``): insertions continue
the fixpoint from the stored best values (a group improves or stays). Removals (deleted facts,
or facts that appeared under a negation) reaching a PreM stratum are not handled here: the
caller recomputes that stratum (``dred_applies``).

Both phases run the engine's one semi-naive loop (``seminaive.rounds``) over the Spark states
(``eval.state``), from a given state and seed: round 0 inserts the seed, later rounds run the
delta rules that read a relation with new rows.
"""

from __future__ import annotations

from functools import reduce
from typing import Mapping, Optional

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..eval.checkpoint import cut_lineage
from ..eval.driver import conform, recursion_settings
from ..eval.state import IMPROVED, BestState, SetState, stored_together
from ..plan.maintenance import seed_plans
from ..seminaive import bounded, rounds
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
    relations that changed), read positively or negated. The rounds run with the settings of
    the driver's recursive strata (``eval.driver.recursion_settings``: no adaptive execution).
    """
    with recursion_settings(spark, adaptive=False):
        return _dred(
            spark, checked, stratum_plan, old, new, inserted, deleted, max_iterations, checkpoint_interval
        )


def _dred(
    spark, checked, stratum_plan, old, new, inserted, deleted, max_iterations, checkpoint_interval
) -> dict:
    relations = stratum_plan.relations
    schemas = {name: checked.relations[name] for name in relations}
    empties = {name: empty_frame(spark, schemas[name]) for name in relations}
    partitions = int(spark.conf.get("spark.sql.shuffle.partitions"))

    # 1. over-delete against the old state
    over = {name: SetState(schemas[name], empties[name], partitions) for name in relations}
    if deleted or inserted:
        scans = {(name, "full"): frame for name, frame in old.items()}
        seed = seed_candidates(checked, stratum_plan, scans, deleted, inserted)
        _propagate(
            spark, checked, stratum_plan, over, seed, scans, False, max_iterations, checkpoint_interval
        )
    over_deleted = {name: state.full for name, state in over.items() if state.rows}

    # 2. what remains, and the over-deleted facts it still derives
    states = _remaining_states(spark, stratum_plan, schemas, empties, partitions, old, over_deleted)
    scans = {(name, "full"): frame for name, frame in new.items()}
    scans.update({(name, "full"): state.full for name, state in states.items()})
    seed = _rederived(spark, checked, stratum_plan, scans, over_deleted)

    # 3. insert semi-naively over the new state
    for name, parts in seed_candidates(checked, stratum_plan, scans, inserted, deleted).items():
        seed.setdefault(name, []).extend(parts)
    added = _propagate(
        spark, checked, stratum_plan, states, seed, scans, True, max_iterations, checkpoint_interval
    )
    return {
        name: _relation_changes(
            stratum_plan,
            schemas[name],
            old[name],
            states[name],
            added[name],
            over_deleted.get(name),
            empties[name],
        )
        for name in relations
    }


def _remaining_states(spark, stratum_plan, schemas, empties, partitions, old, over_deleted) -> dict:
    """Relation -> its state holding what remains of its old facts: phase 3's starting state. A
    set relation's is stored once as its state's base, partitioned and sorted like the driver's
    (``SetState.compact``), so no round shuffles or sorts it again."""
    states = {}
    for name in stratum_plan.relations:
        frame = old[name]
        if name in over_deleted:
            frame = match(frame, over_deleted[name], list(frame.columns), "left_anti")
        state = _state(spark, stratum_plan, schemas[name], empties[name], partitions)
        if isinstance(state, BestState):  # its stored frame carries the improved flag
            state.store(frame.withColumn(IMPROVED, F.lit(False)), 0, None)
        else:  # known non-empty or not, it is the starting state (count 1 keeps it)
            state.store(frame, 1, None)
            state.absorb_nothing()  # not a delta: the first round reads the seed
            state.compact(False)
        states[name] = state
    return states


def _rederived(spark, checked, stratum_plan, scans: dict, over_deleted: dict) -> dict:
    """Relation -> [the over-deleted facts that what remains (``scans``) still derives]."""
    seed: dict = {}
    for rule_plan in stratum_plan.rules:
        name = rule_plan.relation
        if name in over_deleted:
            frame = conform(compile_node(rule_plan.plan, scans), checked.relations[name])
            seed.setdefault(name, []).append(frame)
    for name in over_deleted:
        facts = checked.facts.get(name)
        if facts:
            seed.setdefault(name, []).append(facts_frame(spark, checked.relations[name], facts))
    return {
        name: [
            match(
                reduce(DataFrame.union, parts),
                over_deleted[name],
                list(checked.relations[name].column_names),
                "left_semi",
            )
        ]
        for name, parts in seed.items()
    }


def _relation_changes(stratum_plan, schema, old, state, added: list, over_deleted, empty) -> tuple:
    """(inserted, deleted) frames of one relation of the stratum."""
    columns = list(schema.column_names)
    gained = reduce(DataFrame.union, added) if added else empty
    if schema.name in stratum_plan.aggregates:  # an improved group replaces its old row
        final = state.full
        return match(final, old, columns, "left_anti"), match(old, final, columns, "left_anti")
    if over_deleted is not None:
        # the found facts are new to what remained: of the old facts, only the over-deleted
        # ones (re-derived) can be among them
        return match(gained, over_deleted, columns, "left_anti"), match(
            over_deleted, gained, columns, "left_anti"
        )
    return gained, empty


def _state(spark, stratum_plan, schema, empty, partitions):
    spec = stratum_plan.aggregates.get(schema.name)
    if spec is not None:
        return BestState(schema, empty, spec.func, spec.position)
    return SetState(schema, empty, partitions)


def seed_candidates(checked, stratum_plan, scans: dict, positive: dict, negated: dict) -> dict:
    """Relation -> candidate frames of the rules read with one changed lower literal as delta:
    a positive atom over the ``positive`` facts of its relation, or a negated atom over the
    ``negated`` facts of its relation (as a positive atom; with a ``_`` the negation is kept
    too, read from ``scans``): the seeds of ``plan.maintenance.seed_plans``."""
    candidates: dict = {}
    for seed in seed_plans(checked, stratum_plan, positive, negated):
        frames = dict(scans)
        frames[(seed.lower, "delta")] = (positive if seed.changed == "positive" else negated)[seed.lower]
        schema = checked.relations[seed.relation]
        candidates.setdefault(seed.relation, []).append(conform(compile_node(seed.plan, frames), schema))
    return candidates


def _propagate(
    spark,
    checked,
    stratum_plan,
    states: dict,
    seed: dict,
    scans: dict,
    full_from_states: bool,
    max_iterations: Optional[int],
    checkpoint_interval: int = 10,
) -> dict:
    """Semi-naive rounds (the engine's one loop, ``seminaive.rounds``, over the Spark
    ``states``) from ``seed`` (relation -> candidate frames) until nothing is new.

    The stratum's atoms read the round's delta and, elsewhere, ``scans`` — or the states
    themselves when ``full_from_states``. Returns relation -> the new rows found (stored frames;
    for set relations only). Every ``checkpoint_interval`` rounds the states are compacted, like
    the driver's; the found pieces are first stored as one frame, since compaction releases them.
    """
    relations = stratum_plan.relations
    empties = {name: empty_frame(spark, checked.relations[name]) for name in relations}
    reliable = spark.sparkContext.getCheckpointDir() is not None
    partitions = int(spark.conf.get("spark.sql.shuffle.partitions"))
    found: dict = {name: [] for name in relations}
    recent: set = set()  # the relations with new rows in the last round

    def candidates(iteration: int, states: dict) -> list:
        if iteration == 0:
            return [(name, frame) for name, frames in seed.items() for frame in frames]
        frames = dict(scans)
        for name in relations:
            if full_from_states:
                frames[(name, "full")] = states[name].full
            frames[(name, "delta")] = states[name].delta if name in recent else empties[name]
        return _round_candidates(checked, stratum_plan, frames, recent)

    loop = rounds(states, candidates, True, stored_together)
    for iteration, sizes in enumerate(
        bounded(stratum_plan, loop, max_iterations, "incremental iterations"), 1
    ):
        recent.clear()
        recent.update(name for name, size in sizes.items() if size)
        for name in recent:
            if isinstance(states[name], SetState):
                found[name].append(states[name].delta)
        if iteration % checkpoint_interval == 0:
            for name, pieces in found.items():
                if len(pieces) > 1:
                    found[name] = [cut_lineage(reduce(DataFrame.union, pieces).coalesce(partitions), False)]
            for state in states.values():
                state.compact(reliable)
    return found


def _round_candidates(checked, stratum_plan, frames: dict, recent: set) -> list:
    """``(relation, candidates)`` of the delta rules that read the delta of a ``recent``
    relation."""
    candidates = []
    for rule_plan in stratum_plan.delta_rules:
        if any(s.source == "delta" and s.relation in recent for s in _scans(rule_plan.plan)):
            schema = checked.relations[rule_plan.relation]
            candidates.append((rule_plan.relation, conform(compile_node(rule_plan.plan, frames), schema)))
    return candidates


def _scans(node):
    from ..plan.ir import scans

    return scans(node)
