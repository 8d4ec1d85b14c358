"""DRed of a linear recursive stratum in the driver: work proportional to the change.

In a linear stratum every recursive rule reads one fact of the stratum and facts of lower
relations (``tc(X, Z) :- tc(X, Y), arc(Y, Z).``, reachability, same generation, label
propagation). Its semi-naive rounds then need, besides the current delta, only the lower
relations and the stratum's old facts as a set, to tell new facts from known ones. So DRed's
three phases run here, in memory (``local`` backend), with no Spark job per round or phase:

1. over-delete: the seeds (the rules read with one changed lower literal as the delta, against
   the old state) are propagated through the recursive rules over the old lower relations.
   Linear rules derive only old facts from old facts, so nothing else of the stratum is read.
2. re-derive: every rule is planned once more with its own head atom, read from the
   over-deleted facts, joined first, and the stratum's atoms last (``rederive_plan``): over
   what remains and the new lower relations it yields the over-deleted facts that still have
   a derivation, probing the remaining facts (a set) instead of evaluating the rules over the
   whole stratum.
3. insert: those facts and the insertion seeds (over what remains) start semi-naive rounds
   over the new lower relations, the old facts that remain being known.

A min/max relation (PreM) is maintained here under insertions: its old best values are known,
the insertion seeds improve some groups, the rounds continue from there, and each improved
group's old row is replaced by its new best. In a stratum of min/max relations only, with no
double value (``repairs_groups``), removals are maintained too: phase 1 finds the *affected
groups* instead of over-deleted facts (``_affected``; with levels, the groups whose row loses
its support: ``incremental.levels``), phase 2 evaluates every rule again for them from the
other groups and the new lower relations, and phase 3 runs best value first.

A stratum without min/max relations and without stored levels (``incremental.levels``) runs the
three phases on the kernel (``kernel.dred``, Polars frames: ``_on_kernel``), within the task
memory budget (``spark.datalog.taskMemory`` at the kernel's bytes per value); the others still
run on the tuple evaluator (``local``), described next.

Cost: the stratum's old facts and the lower relations it reads are read once (by delta-rs from
the warehouse, when the caller passes ``stored``: no Spark job) and kept as pyarrow Tables that
joins probe by key (``arrow.matching``); the changed lower facts come as the driver holds them
(or are collected, one small job per kind), and the rest is proportional to the seeds, the
over-deleted facts (or affected groups) and the facts gained. A rule evaluated over a large
delta runs over Arrow tables (``local.columnar``). Limits: each lower relation is bounded like
a broadcast relation and the stratum like a partition-local task
(``eval.partitioned.limits``); beyond them, or for strata that are not linear, the caller uses
another method.
"""

from __future__ import annotations

import logging
from functools import cached_property
from typing import Callable, Mapping, Optional

import polars as pl
import pyarrow as pa

from ..eval.stats import non_termination
from ..eval import partitioned
from ..kernel.dred import dred
from ..kernel.frames import to_frame, to_table
from ..local import arrow
from ..local.compile import compile_plan
from ..local.fixpoint import fixpoint
from ..plan.partitioning import is_linear
from ..reference.aggregates import group_of, with_value
from ..settings import BROADCAST_ROWS_SETTING, KERNEL_VALUE_BYTES, TASK_MEMORY_SETTING, settings_of
from ..storage.datafiles import collect_arrow, collect_small, is_arrow
from ..storage.levels import LEVEL
from .dred import dred_applies
from .dred_local import dred_plans, rederive_plan
from .levels import (
    LevelPlans,
    Levels,
    added_rounds,
    dropped,
    flooded,
    is_flood,
    levels_apply,
    relevelled,
    relevelled_best,
)

log = logging.getLogger("spark_datalog")

# DRed handles each over-deleted fact about three times (over-delete, re-derive, re-insert),
# in the driver: about 7 µs per over-deleted fact. Recomputing the stratum with Spark costs
# about 1.5 s plus 3 µs per fact of it. (Measured on this project's 2-core machine with the
# incremental benchmark's tc, sg and reach graphs, deleting 0.1-10% of the edges: DRed over
# 100% of reach's 159K facts 1.7 s against 2.3 s; over 52% of tc's 917K 3.3 s against 4.5 s;
# over 82% of sg's 1.4M 8.1 s against 5.9 s.) So beyond ``spark.datalog.overDeletionMin``
# (200,000) over-deleted facts plus ``spark.datalog.overDeletionShare`` (0.4) of the stratum,
# recomputing costs less: the caller is told by ``OverDeletion``.


class RecomputeInstead(Exception):
    """This stratum is better (or only) recomputed; the message says why."""


class OverDeletion(RecomputeInstead):
    """The over-deleted facts exceed ``spark.datalog.overDeletionMin`` plus
    ``overDeletionShare`` of the stratum: recomputing it costs less."""


def linear_dred_applies(stratum_plan) -> bool:
    """True for a recursive stratum this module maintains: a linear one (its min/max relations
    under insertions, and under removals too when ``repairs_groups``)."""
    return stratum_plan.recursive and is_linear(stratum_plan)


def repairs_groups(checked, stratum_plan) -> bool:
    """True for a linear stratum of min/max relations only, none with a double value (those of
    ``incremental.levels.levels_apply``): removals reaching it are maintained here by
    recomputing the affected groups (see ``_affected``)."""
    return bool(stratum_plan.aggregates) and levels_apply(checked, stratum_plan)


def linear_dred_changes(
    spark,
    checked,
    stratum_plan,
    old: Mapping,
    inserted: dict,
    deleted: dict,
    max_iterations: Optional[int] = None,
    stored: Optional[Callable] = None,
    recompute_if_larger: bool = False,
    levels: Optional[Levels] = None,
) -> Optional[dict]:
    """Relation -> (inserted facts, deleted facts) of the stratum, pyarrow Tables (as
    ``incremental.dred.dred_changes`` computes them as frames, from the same arguments but the
    new states, which it derives from the old ones and the changes; ``inserted`` and
    ``deleted`` may also give pyarrow Tables), or
    None when a lower relation or the stratum holds more than ``eval.partitioned.limits``
    allows.
    ``stored(relation, max_rows)`` may give a relation's old facts (those of ``old``) as a
    pyarrow Table read straight from storage (``Warehouse.read_facts``), or None: then
    ``old`` is collected. With ``recompute_if_larger``, raises ``OverDeletion`` as soon as
    the over-deleted facts exceed ``spark.datalog.overDeletionMin`` plus ``overDeletionShare``
    of the stratum. ``levels`` (a stratum of ``incremental.levels.levels_apply``) gives its facts'
    old levels: then they are its old facts, removals over-delete only the facts that lose
    their support (``incremental.levels.dropped``), and ``levels.new`` is set to the new
    facts' levels. ``Levels(None)`` (none stored): ``levels.flooded`` tells whether the
    over-deletion was mostly re-derived (``incremental.levels.flooded``)."""
    run = _LinearDRed(spark, checked, stratum_plan, old, inserted, deleted, max_iterations, stored)
    if levels is not None and not levels_apply(checked, stratum_plan):
        raise ValueError(
            f"{run.what}: levels are kept only for the strata of incremental.levels.levels_apply"
        )
    if not run.best and (levels is None or levels.old is None):
        return _on_kernel(run, levels, recompute_if_larger)
    if not run.read_lower():
        return None
    run.levels = levels
    if run.levelled and set(run.old_levels) != run.own:
        raise ValueError(f"{run.what}: levels given for {sorted(run.old_levels)}, not its relations")
    if not run.read_own():
        return None
    if run.plans.over_seeds and run.regroup:
        run.find_affected_groups()
    elif run.plans.over_seeds and not run.over_delete(recompute_if_larger):
        return None
    seeds = run.rederive()
    outcome = run.insert(seeds)
    if outcome is None:
        return None
    tables = {}
    for name, facts in run.changes(outcome).items():
        schema = checked.relations[name]
        tables[name] = tuple(arrow.table(rows, schema.column_names, schema.types) for rows in facts)
    return tables


class _LinearDRed:
    """One DRed of a linear stratum (``linear_dred_changes``): its state between the phases."""

    def __init__(self, spark, checked, stratum_plan, old, inserted, deleted, max_iterations, stored):
        self.checked, self.stratum_plan, self.old = checked, stratum_plan, old
        self.max_iterations, self.stored = max_iterations, stored
        self.relations = tuple(stratum_plan.relations)
        self.own = frozenset(self.relations)
        self.best = {name: (spec.func, spec.position) for name, spec in stratum_plan.aggregates.items()}
        self.regroup = bool(self.best) and not dred_applies(stratum_plan, set(inserted), set(deleted))
        if self.regroup and not repairs_groups(checked, stratum_plan):
            raise ValueError(
                f"stratum {stratum_plan.index}: removals reaching min/max relations "
                "are recomputed, not maintained by DRed"
            )
        self.max_rows, self.max_facts = partitioned.limits(spark)
        self.settings = settings_of(spark)
        self.what = f"stratum {stratum_plan.index} · {', '.join(self.relations)}"
        self.changed_tables = {("inserted", name): _table(frame) for name, frame in inserted.items()}
        self.changed_tables.update({("deleted", name): _table(frame) for name, frame in deleted.items()})
        self.changed = {key: arrow.table_rows(table) for key, table in self.changed_tables.items()}
        self.plans = dred_plans(checked, stratum_plan, set(inserted), set(deleted))
        self.variants = _variants(stratum_plan)  # of phase 3; phase 1 of group repair shares them
        self.levels: Optional[Levels] = None
        self.lower_old: dict = {}
        self.lower_new: dict = {}
        self.known: dict = {}  # the stratum's facts: held tables, else sets of tuples (lists for min/max)
        self.stored_best: dict = {}  # of a min/max relation: group -> its stored best value
        self.affected: dict = {name: set() for name in self.best}  # groups computed again
        self.affected_rows: dict = {name: [] for name in self.best}  # their stored best rows
        self.over: dict = {name: set() for name in self.relations}

    @property
    def levelled(self) -> bool:
        return self.levels is not None and self.levels.old is not None

    @property
    def old_levels(self) -> dict:
        """The stratum's stored levels (relation -> table); only when ``levelled``."""
        assert self.levels is not None and self.levels.old is not None
        return self.levels.old

    @cached_property
    def level_plans(self) -> LevelPlans:
        return LevelPlans(self.checked, self.stratum_plan)

    def read(self, name: str, limit: int):
        """The relation's old facts: a held pyarrow Table (``arrow.is_held``), else tuples."""
        table = self.table(name, limit)
        if table is None:
            return None
        return table if arrow.is_held(table) else arrow.table_rows(table)

    def table(self, name: str, limit: int) -> Optional[pa.Table]:
        """The relation's old facts as a pyarrow Table, or None (logged) beyond ``limit`` rows."""
        table = self.stored(name, limit) if self.stored is not None else None
        if table is None:
            table = collect_small(self.old[name], limit)
        if table is None:
            setting = TASK_MEMORY_SETTING if name in self.own else BROADCAST_ROWS_SETTING
            log.info(
                "%s · %s has over %d rows for the driver (%s): DRed by other means",
                self.what,
                name,
                limit,
                setting,
            )
        return table

    def read_lower(self) -> bool:
        """Reads the lower relations before and after the change; False when one is too large."""
        for name in sorted(set(self.old) - self.own):
            rows = self.read(name, self.max_rows)
            if rows is None:
                return False
            self.lower_old[name] = rows
            self.lower_new[name] = _after(
                rows, self.changed.get(("inserted", name), ()), self.changed.get(("deleted", name), ())
            )
        return True

    def read_own(self) -> bool:
        """Reads the stratum's old facts (and stored best values); False when too large."""
        for name in self.relations:
            if self.levelled:
                rows = self.old_levels[name].drop_columns([LEVEL])
            else:
                rows = self.read(name, self.max_facts)
            if rows is None:
                return False
            if not arrow.is_held(rows) and isinstance(rows, pa.Table):
                rows = arrow.table_rows(rows)
            if name in self.best:
                self.stored_best[name] = _best_values(rows, self.best[name][1])
                self.known[name] = rows
            else:
                self.known[name] = rows if arrow.is_held(rows) else set(rows)
        return True

    def find_affected_groups(self) -> None:
        """Phase 1 of group repair: the min/max groups whose best value is computed again."""
        seeds = _seed_rows(
            self.plans.over_seeds, _frames({**self.lower_old, **self.known}), self.changed, self.own
        )
        # no switch to recomputing here, however many groups are affected: the repair
        # evaluates them best value first, which a recomputation does not (measured on
        # connected components by min label at 100,000 edges with nearly every group affected:
        # 3.5 s against 6.5 s)
        if self.levelled:  # the groups whose best row loses its support
            lost = dropped(self.level_plans, self.checked, seeds, self.old_levels, self.lower_new)
            self.affected = {
                name: {group_of(row, position) for row in lost[name]}
                for name, (_, position) in self.best.items()
            }
        else:
            frames = _frames({**self.lower_new, **self.known})
            self.affected = _affected(seeds, self.variants, frames, self.best, self.stored_best)
        for name, (_, position) in self.best.items():
            if self.affected[name]:
                values = self.stored_best[name]
                self.affected_rows[name] = [
                    with_value(group, position, values[group]) for group in self.affected[name]
                ]
                self.known[name] = _without(self.known[name], self.affected_rows[name])

    def over_delete(self, recompute_if_larger: bool) -> bool:
        """Phase 1: the over-deleted facts; False when they exceed what the driver holds.
        Raises ``OverDeletion`` when recomputing costs less (``recompute_if_larger``)."""
        old_frames = _frames({**self.lower_old, **self.known})
        seeds: dict = {name: [] for name in self.relations}
        seeds.update(_seed_rows(self.plans.over_seeds, old_frames, self.changed, self.own))
        limit = self.max_facts
        if recompute_if_larger:
            share = self.settings.over_deletion_share * sum(_size(rows) for rows in self.known.values())
            limit = min(limit, self.settings.over_deletion_min + int(share))
        if self.levelled:
            self.over = dropped(self.level_plans, self.checked, seeds, self.old_levels, self.lower_new)
            overflow = sum(map(len, self.over.values())) > limit
        else:
            outcome = fixpoint(
                seeds,
                _variants(self.stratum_plan),
                old_frames,
                max_rounds=self.max_iterations,
                max_facts=limit,
                fixed_full=True,
            )
            _check(outcome, self.stratum_plan, self.max_iterations)
            overflow = outcome.overflow
            if not overflow:
                self.over = {name: _among(self.known[name], outcome.facts[name]) for name in self.relations}
        if overflow and limit < self.max_facts:
            raise OverDeletion(
                f"{self.what} · over {limit} facts over-deleted: recomputing costs less than DRed"
            )
        return not overflow

    def rederive(self) -> dict:
        """Phase 2: what remains, and the seeds of phase 3 (the over-deleted facts it still
        derives, the affected groups' derivations anew, the insertion seeds)."""
        for name in self.relations:
            if self.over[name]:
                rows = self.known[name]
                self.known[name] = (
                    arrow.without(rows, self.over[name]) if arrow.is_held(rows) else rows - self.over[name]
                )
        self.new_frames = _frames({**self.lower_new, **self.known})
        seeds: dict = {name: [] for name in self.relations}
        seeds.update(_seed_rows(self.plans.insert_seeds, self.new_frames, self.changed, self.own))
        for rule_plan in self.stratum_plan.rules:
            name = rule_plan.relation
            if self.over[name]:
                seeds[name] += self._rederived(rule_plan.rule, self.over[name], None)
            if name in self.best and self.affected[name]:  # every derivation of an affected group, anew
                seeds[name] += self._rederived(rule_plan.rule, self.affected_rows[name], self.best[name][1])
        for name in self.relations:
            facts = self.checked.facts.get(name, ())
            seeds[name] += [fact for fact in facts if fact in self.over[name]]
            if name in self.best and self.affected[name]:
                position = self.best[name][1]
                seeds[name] += [fact for fact in facts if group_of(fact, position) in self.affected[name]]
        return seeds

    def _rederived(self, rule, delta, position: Optional[int]) -> list:
        frames = dict(self.new_frames)
        frames[(rule.head.predicate, "delta")] = delta
        plan = compile_plan(rederive_plan(self.checked, rule, self.own, position), self.own, columnar=True)
        return list(plan.rows(frames))

    def insert(self, seeds: dict):
        """Phase 3: semi-naive rounds over the new state, the remaining facts known; None when
        they exceed what the driver holds."""
        for name in self.best:
            self.known[name] = dict(self.stored_best[name])  # group -> value, taken over by the fixpoint
            for group in self.affected[name]:
                del self.known[name][group]
        outcome = fixpoint(
            seeds,
            self.variants,
            self.new_frames,
            self.best,
            max_rounds=self.max_iterations,
            max_facts=self.max_facts,
            known=self.known,
            only_new=True,
            by_value=set(self.best) == self.own,
        )
        _check(outcome, self.stratum_plan, self.max_iterations)
        return None if outcome.overflow else outcome

    def changes(self, outcome) -> dict:
        """Relation -> (inserted, deleted) of the stratum; sets the new levels."""
        final = {
            name: {group_of(row, position): row for row in outcome.facts[name]}
            for name, (_, position) in self.best.items()
        }  # a group's last improvement is its best
        self._set_levels(outcome, final)
        result = {}
        for name in self.relations:
            added = outcome.facts[name]
            if name in self.best:
                result[name] = _regrouped(
                    self.best[name][1], final[name], self.stored_best[name], self.affected[name]
                )
                continue
            kept = set(added) & self.over[name]
            result[name] = ([f for f in added if f not in self.over[name]], list(self.over[name] - kept))
        return result

    def _set_levels(self, outcome, final: dict) -> None:
        levels = self.levels
        if levels is None:
            return
        if self.levelled and self.best:
            levels.new = _relevelled_best(
                self.level_plans,
                self.checked,
                self.stratum_plan,
                self.variants,
                self.old_levels,
                self.stored_best,
                self.affected_rows,
                final,
                self.lower_new,
                added_rounds(outcome.facts, outcome.sizes),
            )
        elif self.levelled:
            levels.new = relevelled(self.checked, self.old_levels, self.over, outcome.facts, outcome.sizes)
        else:
            removed = {**self.over, **{name: set(rows) for name, rows in self.affected_rows.items()}}
            levels.flooded = flooded(removed, outcome.facts, self.settings.flood_min)


def _relevelled_best(
    plans,
    checked,
    stratum_plan,
    variants: list,
    old: dict,
    stored: dict,
    lost: dict,
    final: dict,
    lower: dict,
    rounds: dict,
) -> Optional[dict]:
    """The new levels of a stratum of min/max relations (``incremental.levels``): ``old``
    levels without the ``lost`` rows (of the affected groups) and the old rows of the groups
    that improved, whose successors may lose their support (found as ``dropped`` finds them);
    the groups' ``final`` rows (group -> row) and those successors get new levels."""
    lost = {name: set(rows) for name, rows in lost.items()}
    improved, targets, gone = {}, {}, {}
    for name, values in stored.items():
        position = stratum_plan.aggregates[name].position
        improved[name] = [
            row
            for row in (
                with_value(group, position, values[group]) for group in final[name] if group in values
            )
            if row not in lost[name]
        ]
    unsupported: dict = {name: set() for name in stored}
    if any(improved.values()):
        unsupported = dropped(
            plans,
            checked,
            {},
            old,
            lower,
            removed={name: improved[name] + list(lost[name]) for name in stored},
        )
    for name in stored:
        position, rows = stratum_plan.aggregates[name].position, final[name]
        targets[name] = list(rows.values()) + [
            row for row in unsupported[name] if group_of(row, position) not in rows and row not in lost[name]
        ]
        gone[name] = lost[name] | set(improved[name]) | unsupported[name]
    return relevelled_best(checked, stratum_plan, variants, old, gone, targets, lower, rounds)


def _best_values(rows, position: int) -> dict:
    """Group -> value of a min/max relation's rows (a held table or tuples), one per group."""
    if not arrow.is_held(rows):
        return {group_of(row, position): row[position] for row in rows}
    columns = [column.to_pylist() for column in rows.columns]
    values = columns.pop(position)
    return dict(zip(zip(*columns, strict=True) if columns else [()] * len(values), values, strict=True))


def _without(rows, gone: list):
    """``rows`` (a held table or tuples, like ``_after``) without the ``gone`` ones."""
    if arrow.is_held(rows):
        return arrow.without(rows, gone)
    dropping = set(gone)
    return [row for row in rows if row not in dropping]


def _after(rows, appeared, gone):
    """A relation's facts after its change (a held table or tuples, like ``rows``): without
    those that disappeared, with those that appeared."""
    if not appeared and not gone:
        return rows
    if arrow.is_held(rows):
        return pa.concat_tables([_without(rows, gone), arrow.like(rows, list(appeared))])
    return _without(rows, gone) + list(appeared)


def _among(known, facts) -> set:
    """The ``facts`` that ``known`` (a held table or a set of tuples) holds."""
    return arrow.among(known, facts) if arrow.is_held(known) else set(facts) & known


def _size(rows) -> int:
    return rows.num_rows if arrow.is_held(rows) else len(rows)


def _regrouped(position: int, final: dict, old: dict, affected: set) -> tuple:
    """(inserted, deleted) of a min/max relation: ``final`` (group -> row) holds the new best
    of the groups that a fixpoint added; an ``affected`` group not there lost every
    derivation. A group whose best is its ``old`` value (group -> value) is unchanged."""
    inserted = [row for group, row in final.items() if group not in old or old[group] != row[position]]
    deleted = [
        with_value(group, position, old[group])
        for group in final.keys() | affected
        if group in old and (group not in final or final[group][position] != old[group])
    ]
    return inserted, deleted


def _affected(seeds: dict, variants: list, frames: dict, best: dict, stored: dict) -> dict:
    """Relation -> the groups of its ``stored`` best values (group -> value) that a derivation
    through a removed fact may hold: rows of the removal ``seeds`` (derived over the old state)
    with the stored best value of their group (tight), then, round by round, the tight rows the
    recursive ``variants`` derive from the affected groups' rows over the new lower relations
    (``frames``, which phase 3 reads too: the variants keep their indexes over them).

    The other groups keep their value: a group's stored value has a derivation of tight rows
    only, and if none of its tight rows is derived through a removed fact or an affected group,
    that derivation survives, while removals can only make values worse. So only the affected
    groups are evaluated again (over the new state, from the other groups). Every derivation
    through a removed lower fact is a seed, and the others read lower facts that remain, so
    propagating over the new lower relations misses none; a derivation through an appeared
    fact can only mark more groups, which are then evaluated again for nothing."""
    affected: dict = {name: set() for name in best}

    def tight(name, rows) -> list:
        position, found, value = best[name][1], affected[name], stored[name]
        kept = []
        for row in rows:
            group = group_of(row, position)
            if group not in found and group in value and value[group] == row[position]:
                found.add(group)
                kept.append(row)
        return kept

    delta = {name: tight(name, seeds.get(name, ())) for name in best}
    while any(delta.values()):  # ends: each round adds groups, of finitely many
        round_frames = dict(frames)
        round_frames.update({(name, "delta"): rows for name, rows in delta.items()})
        candidates: dict = {name: [] for name in best}
        for relation, plan in variants:
            candidates[relation].extend(plan.rows(round_frames))
        delta = {name: tight(name, rows) for name, rows in candidates.items()}
    return affected


def _table(rows) -> pa.Table:
    """A Spark frame (collected: one job) or a pyarrow Table, as a pyarrow Table."""
    return rows if is_arrow(rows) else collect_arrow(rows)


def _variants(stratum_plan) -> list:
    """The compiled delta variants, evaluated over Arrow tables for large deltas (compiled per
    state of the lower relations: they keep what they read of them, which differs before and
    after the change)."""
    own = frozenset(stratum_plan.relations)
    return [(r.relation, compile_plan(r.plan, own, columnar=True)) for r in stratum_plan.delta_rules]


def _frames(static: dict) -> dict:
    return {(name, "full"): rows for name, rows in static.items()}


def _check(outcome, stratum_plan, max_iterations: Optional[int]) -> None:
    if outcome.exceeded:
        assert max_iterations is not None  # the fixpoints only stop early under a bound
        raise non_termination(stratum_plan, max_iterations, what="incremental iterations")


def _seed_rows(seeds, frames: Mapping, changed: Mapping, own) -> dict:
    """Relation -> the rows its seeds (``kernel.dred.Seed``) derive, each reading its changed
    lower facts as the delta."""
    rows: dict = {}
    for seed in seeds:
        seed_frames = dict(frames)
        seed_frames[(seed.lower, "delta")] = changed.get((seed.changed, seed.lower), ())
        plan = compile_plan(seed.plan, own | {seed.lower})
        rows.setdefault(seed.relation, []).extend(plan.rows(seed_frames))
    return rows


def _on_kernel(run: _LinearDRed, levels: Optional[Levels], recompute_if_larger: bool) -> Optional[dict]:
    """The stratum's changes by ``kernel.dred`` (no min/max relation, no stored levels): its
    old facts and the lower relations read as Arrow tables, the three phases on Polars frames.
    None when a relation is too large for the driver; ``OverDeletion`` as ``over_delete``."""
    schemas = {name: run.checked.relations[name] for name in run.old}
    width = max(len(schemas[name].columns) for name in run.relations)
    max_facts = run.settings.local_facts(width, KERNEL_VALUE_BYTES)
    frames = {}
    for name in sorted(set(run.old) - run.own) + list(run.relations):
        table = run.table(
            name, max_facts if name in run.own else run.settings.broadcast_rows(KERNEL_VALUE_BYTES)
        )
        if table is None:
            return None
        frames[name] = _kernel_frame(table, schemas[name])
    changed = {
        (kind, name): _kernel_frame(table, schemas[name])
        for (kind, name), table in run.changed_tables.items()
    }
    lower_old = {name: frame for name, frame in frames.items() if name not in run.own}
    lower_new = {name: _changed_frame(frame, name, changed) for name, frame in lower_old.items()}
    max_over = None
    if recompute_if_larger:
        share = run.settings.over_deletion_share * sum(frames[name].height for name in run.relations)
        max_over = min(max_facts, run.settings.over_deletion_min + int(share))
    old = {name: frames[name] for name in run.relations}
    outcome = dred(run.plans, old, lower_old, lower_new, changed, run.max_iterations, max_over)
    if outcome.overflow:
        raise OverDeletion(
            f"{run.what} · over {max_over} facts over-deleted: recomputing costs less than DRed"
        )
    _check(outcome, run.stratum_plan, run.max_iterations)
    if levels is not None:  # the over-deleted facts not deleted in the end came back
        total = sum(frame.height for frame in outcome.over.values())
        back = total - sum(outcome.changes[name][1].height for name in outcome.over)
        levels.flooded = is_flood(total, back, run.settings.flood_min)
    return {
        name: tuple(
            to_table(frame, schemas[name].column_names, schemas[name].types)
            for frame in outcome.changes[name]
        )
        for name in run.relations
    }


def _kernel_frame(table: pa.Table, schema) -> pl.DataFrame:
    """A relation's facts (an Arrow table of its columns, in order) as a kernel frame with the
    relation's column names and types."""
    if table.num_columns:
        table = table.rename_columns(list(schema.column_names))
    return to_frame(table, schema.types)


def _changed_frame(frame: pl.DataFrame, name: str, changed: Mapping) -> pl.DataFrame:
    """A lower relation's facts after its change: without those deleted, with those inserted."""
    deleted, inserted = changed.get(("deleted", name)), changed.get(("inserted", name))
    if deleted is not None and deleted.height:
        frame = frame.join(deleted, on=frame.columns, how="anti")
    if inserted is not None and inserted.height:
        frame = pl.concat([frame, inserted.select(frame.columns)], how="vertical_relaxed")
    return frame
