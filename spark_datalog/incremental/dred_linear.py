"""DRed of a linear recursive stratum in the driver: work proportional to the change.

In a linear stratum every recursive rule reads one fact of the stratum and facts of lower
relations (``tc(X, Z) :- tc(X, Y), arc(Y, Z).``, reachability, same generation). Its semi-naive
rounds then need, besides the current delta, only the lower relations the recursive rules read
(the *static* ones, typically the input graph) and the stratum's old facts as a set, to tell new
facts from known ones. So DRed's three phases run in memory here (``local`` backend), and Spark
does only the joins that read the stored stratum, each driven by a small set of facts:

1. over-delete: the seeds (``dred.seed_candidates``: the rules read with one changed lower
   literal as the delta, against the old state) are a Spark join of the changed facts with the
   stored stratum; from them the over-deleted facts are propagated in memory through the
   recursive rules over the old static relations. Linear rules derive only old facts from old
   facts, so nothing else of the stratum is read.
2. re-derive: every rule is planned once more with its own head atom, read from the
   over-deleted facts, joined first, and the stratum's atoms last (``rederive_plan``); in Spark
   over what remains and the new lower relations, it yields the over-deleted facts that still
   have a derivation, without evaluating the rules over the whole stratum.
3. insert: those facts and the insertion seeds (the same Spark joins over what remains) start
   semi-naive rounds in memory over the new static relations, the old facts that remain being
   known.

A min/max relation (PreM) is maintained here under insertions only (``dred.dred_applies``): its
old best values are known, the insertion seeds improve some groups, the rounds continue from
there, and each improved group's old row is replaced by its new best.

Cost: the static relations and the stratum's old facts are read once from the stored tables
(a scan, no join, no evaluation); the rest is proportional to the seeds, the over-deleted facts
and the facts gained. Jobs: one per collected relation and one per phase that has seeds; no
round is a Spark job. Limits: the static relations are bounded like broadcast relations and the
stratum's facts like a partition-local task's (``eval.partitioned.limits``); beyond them, or for
strata that are not linear, the caller uses another method.
"""

from __future__ import annotations

import dataclasses
import logging
from functools import reduce
from typing import Callable, Optional

from pyspark.sql import DataFrame

from ..errors import NonTerminationError
from ..eval import partitioned
from ..eval.driver import conform
from ..local import arrow
from ..local.compile import compile_plan
from ..local.fixpoint import fixpoint
from ..plan import ir
from ..plan.partitioning import is_linear
from ..plan.translate import plan_rule
from ..spark.compile import compile_node
from ..spark.inputs import empty_frame, facts_frame
from ..syntax import ast
from ..reference.aggregates import group_of
from .dred import dred_applies, seed_candidates

log = logging.getLogger("spark_datalog")


def linear_dred_applies(stratum_plan) -> bool:
    """True for a recursive stratum this module maintains: a linear one (its min/max relations
    under insertions only, as ``dred.dred_applies`` allows)."""
    return stratum_plan.recursive and is_linear(stratum_plan)


def linear_dred_changes(spark, checked, stratum_plan, old: dict, new: dict, inserted: dict,
                        deleted: dict, max_iterations: Optional[int] = None,
                        stored: Optional[Callable] = None) -> Optional[dict]:
    """Relation -> (inserted facts, deleted facts) of the stratum, as
    ``incremental.dred.dred_changes`` computes them (same arguments), or None when the static
    relations or the stratum's facts are more than ``eval.partitioned.limits`` allows.
    ``stored(relation, max_rows)`` may give a stratum relation's old facts as a pyarrow Table
    read straight from storage (``Warehouse.read_facts``), or None: then ``old`` is collected."""
    relations = tuple(stratum_plan.relations)
    own = frozenset(relations)
    best = {name: (spec.func, spec.position) for name, spec in stratum_plan.aggregates.items()}
    if best and not dred_applies(stratum_plan, set(inserted), set(deleted)):
        raise ValueError(f"stratum {stratum_plan.index}: removals reaching min/max relations "
                         "are recomputed, not maintained by DRed")
    max_rows, max_facts = partitioned.limits(spark)
    what = f"stratum {stratum_plan.index} · {', '.join(relations)}"
    static_names = sorted({scan.relation for rule_plan in stratum_plan.delta_rules
                           for scan in ir.scans(rule_plan.plan) if scan.relation not in own})
    static_new = {}
    for name in static_names:
        static_new[name] = _collect(new[name], max_rows)
        if static_new[name] is None:
            log.info("%s · %s has over %d rows (%s): DRed by other means", what, name,
                     max_rows, partitioned.BROADCAST_ROWS_SETTING)
            return None
    known = {}
    for name in relations:
        table = stored(name, max_facts) if stored is not None else None
        rows = arrow.table_rows(table) if table is not None else _collect(old[name], max_facts)
        if rows is None:
            log.info("%s · over %d facts for the driver (%s): DRed by other means", what,
                     max_facts, partitioned.LOCAL_FACTS_SETTING)
            return None
        known[name] = rows if name in best else set(rows)

    # 1. over-delete against the old state
    over = {name: set() for name in relations}
    old_scans = {(name, "full"): frame for name, frame in old.items()}
    seeds = _collect_candidates(seed_candidates(checked, stratum_plan, old_scans, deleted,
                                                inserted), relations)
    if any(seeds.values()):
        static_old = _old_static(static_new, inserted, deleted)
        outcome = fixpoint(seeds, _variants(stratum_plan), _frames(static_old),
                           max_rounds=max_iterations, max_facts=max_facts, fixed_full=True)
        _check(outcome, stratum_plan.index, max_iterations)
        if outcome.overflow:
            return None
        over = {name: set(outcome.facts[name]) & known[name] for name in relations}

    # 2. what remains, and the over-deleted facts it still derives
    scans = {(name, "full"): frame for name, frame in new.items()}
    over_frames = {}
    for name in relations:
        remaining = old[name]
        if over[name]:
            known[name] -= over[name]
            over_frames[name] = _frame(spark, checked.relations[name], over[name])
            remaining = remaining.join(over_frames[name], list(remaining.columns), "left_anti")
        scans[(name, "full")] = remaining
    candidates = seed_candidates(checked, stratum_plan, scans, inserted, deleted)
    for rule_plan in stratum_plan.rules:
        name = rule_plan.relation
        if name in over_frames:
            frames = dict(scans)
            frames[(name, "delta")] = over_frames[name]
            frame = conform(compile_node(rederive_plan(checked, rule_plan.rule, own), frames),
                            checked.relations[name])
            candidates.setdefault(name, []).append(frame)
    seeds = _collect_candidates(candidates, relations)
    for name in relations:
        seeds[name] += [fact for fact in checked.facts.get(name, ()) if fact in over[name]]

    # 3. insert semi-naively over the new state, the remaining facts known
    outcome = fixpoint(seeds, _variants(stratum_plan), _frames(static_new), best,
                       max_rounds=max_iterations, max_facts=max_facts, known=known,
                       only_new=True)
    _check(outcome, stratum_plan.index, max_iterations)
    if outcome.overflow:
        return None
    result = {}
    for name in relations:
        schema = checked.relations[name]
        added = outcome.facts[name]
        if name in best:
            result[name] = _improved(spark, schema, best[name][1], added, known[name])
            continue
        kept = set(added) & over[name]
        result[name] = (_frame(spark, schema, [f for f in added if f not in over[name]]),
                        _frame(spark, schema, over[name] - kept))
    return result


def _improved(spark, schema, position: int, added: list, old: list) -> tuple:
    """(inserted, deleted) of a min/max relation whose groups only improved: the last row
    ``added`` per group is its best; the old row of such a group goes."""
    final = {group_of(row, position): row for row in added}  # later rounds improve more
    gone = [row for row in old if group_of(row, position) in final]
    return _frame(spark, schema, list(final.values())), _frame(spark, schema, gone)


def rederive_plan(checked, rule: ast.Rule, own: frozenset):
    """The plan of ``rule`` restricted to heads among the over-deleted facts: the head atom is
    added to the body, read from ``(relation, "delta")`` and joined first, and the atoms of the
    stratum (``own``) are joined last, so the join starts from the over-deleted facts and only
    looks the stratum's remaining facts up."""
    body = rule.body
    lower = tuple(literal for literal in body
                  if not (isinstance(literal, ast.Atom) and literal.predicate in own))
    mine = tuple(literal for literal in body
                 if isinstance(literal, ast.Atom) and literal.predicate in own)
    head = ast.Atom(rule.head.predicate, rule.head.args, rule.head.span)
    restricted = dataclasses.replace(rule, body=(head,) + lower + mine)
    return plan_rule(restricted, checked, delta_position=0).plan


def _collect(frame: DataFrame, limit: int) -> Optional[list]:
    """The rows of ``frame`` as tuples, or None when it has more than ``limit``."""
    table = frame.limit(limit + 1).toArrow()
    return None if table.num_rows > limit else arrow.table_rows(table)


def _rows(frame: DataFrame) -> list:
    return arrow.table_rows(frame.toArrow())


def _collect_candidates(candidates: dict, relations) -> dict:
    """Relation -> the rows of its candidate frames (one Spark job per relation that has some)."""
    rows = {name: [] for name in relations}
    for name, frames in candidates.items():
        if frames:
            rows[name] = _rows(reduce(DataFrame.union, frames))
    return rows


def _old_static(static_new: dict, inserted: dict, deleted: dict) -> dict:
    """The static relations' facts before the change: the new ones, without those that
    appeared, with those that disappeared."""
    old = {}
    for name, rows in static_new.items():
        if name in inserted or name in deleted:
            appeared = set(_rows(inserted[name])) if name in inserted else set()
            gone = _rows(deleted[name]) if name in deleted else []
            rows = [row for row in rows if row not in appeared] + gone
        old[name] = rows
    return old


def _variants(stratum_plan) -> list:
    """The compiled delta variants (compiled per phase: they keep what they read of the static
    relations, which differ before and after the change)."""
    own = frozenset(stratum_plan.relations)
    return [(r.relation, compile_plan(r.plan, own)) for r in stratum_plan.delta_rules]


def _frames(static: dict) -> dict:
    return {(name, "full"): rows for name, rows in static.items()}


def _check(outcome, index: int, max_iterations: Optional[int]) -> None:
    if outcome.exceeded:
        raise NonTerminationError(f"stratum {index} did not reach a fixpoint within "
                                  f"{max_iterations} incremental iterations")


def _frame(spark, schema, facts) -> DataFrame:
    """A Spark frame of ``facts`` (tuples) with the relation's columns and types."""
    facts = list(facts)
    if not facts:
        return empty_frame(spark, schema)
    if not schema.column_names:
        return facts_frame(spark, schema, facts)
    return spark.createDataFrame(arrow.table(facts, schema.column_names,
                                             [column.type for column in schema.columns]))
