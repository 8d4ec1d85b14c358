"""DRed of a linear recursive stratum in the driver: work proportional to the change.

In a linear stratum every recursive rule reads one fact of the stratum and facts of lower
relations (``tc(X, Z) :- tc(X, Y), arc(Y, Z).``, reachability, same generation, label
propagation). Its semi-naive rounds then need, besides the current delta, only the lower
relations and the stratum's old facts as a set, to tell new facts from known ones. So DRed's
three phases (``kernel.dred``: Polars frames, the kernel's one semi-naive loop) run here, in
memory, with no Spark job per round or phase:

1. remove: the seeds (the rules read with one changed lower literal as the delta, against the
   old state) are propagated through the recursive rules over the old lower relations (linear
   rules derive only old facts from old facts, so nothing else of the stratum is read); with
   stored levels (``incremental.levels``), only the facts that lose their support are removed
   (``incremental.levels.dropped``);
2. re-derive: the removed facts the rules (and stated facts) still derive in one round from
   what remains and the new lower relations;
3. insert: those facts and the insertion seeds (over what remains) start semi-naive rounds
   over the new lower relations, the old facts that remain being known.

A min/max relation (PreM) is maintained under insertions: its old best values are known, the
insertion seeds improve some groups, the rounds continue from there, and each improved group's
old row is replaced by its new best. In a stratum of min/max relations only, with no double
value (``repairs_groups``), removals are maintained too (group repair): phase 1 finds the
*affected groups* instead of over-deleted facts (``kernel.dred.affected_groups``; with levels,
the groups whose row loses its support), phase 2 evaluates every rule again for them from the
other groups and the new lower relations (``DredPlans.group_rules``), and phase 3 runs as for
insertions.

Cost: the stratum's old facts (or its stored levels) and the lower relations it reads are read
once (by delta-rs from the warehouse, when the caller passes ``stored``: no Spark job) as Arrow
tables and turned into Polars frames without copying; the changed lower facts come as the
driver holds them (or are collected, one small job per kind), and the rest is joins
proportional to the seeds, the removed facts (or affected groups) and the facts gained.
Limits: the driver's budget, ``spark.datalog.driverMemory`` (by default the task memory): each
lower relation at most what a quarter of it holds in two columns at the kernel's bytes per
value, the stratum (and what phase 1 removes) what all of it holds; beyond them, or for strata
that are not linear, the caller uses another method.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional, Union

import polars as pl
import pyarrow as pa

from ..eval.stats import non_termination
from ..kernel.dred import ROUND, DredOutcome, dred, seed_facts
from ..kernel.frames import to_table
from ..plan.partitioning import is_linear
from ..placement import Declined
from ..settings import DRIVER_MEMORY_SETTING, KERNEL_VALUE_BYTES, settings_of
from ..storage.datafiles import collect_arrow, collect_small, is_arrow
from ..plan.maintenance import LEVEL
from .dred import dred_applies
from ..plan.maintenance import DredPlans, dred_plans
from .levels import (
    LevelPlans,
    Levels,
    added_rounds,
    dropped,
    flooded,
    levels_apply,
    levels_frame,
    levels_table,
    relation_frame,
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
    recomputing the affected groups (see ``kernel.dred.affected_groups``)."""
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
) -> Union[dict, Declined]:
    """Relation -> (inserted facts, deleted facts) of the stratum, pyarrow Tables (as
    ``incremental.dred.dred_changes`` computes them as frames, from the same arguments but the
    new states, which it derives from the old ones and the changes; ``inserted`` and
    ``deleted`` may also give pyarrow Tables), or ``placement.Declined`` saying which relation
    holds more than the driver may read (see the module docstring).
    ``stored(relation, max_rows)`` may give a relation's old facts (those of ``old``) as a
    pyarrow Table read straight from storage (``Warehouse.read_facts``), or None: then
    ``old`` is collected. With ``recompute_if_larger``, raises ``OverDeletion`` as soon as
    the over-deleted facts exceed ``spark.datalog.overDeletionMin`` plus ``overDeletionShare``
    of the stratum. ``levels`` (a stratum of ``incremental.levels.levels_apply``) gives its facts'
    old levels: then they are its old facts, removals over-delete only the facts that lose
    their support (``incremental.levels.dropped``), and ``levels.new`` is set to the new
    facts' levels. ``Levels(None)`` (none stored): ``levels.flooded`` tells whether the
    over-deletion was mostly re-derived (``incremental.levels.flooded``).

    Example (``tc`` of ``1 -> 2 -> 3`` losing the arc ``2 -> 3``)::

        changes = linear_dred_changes(spark, checked, plan, {"arc": None, "tc": None}, {},
                                      {"arc": lost_arcs}, stored=read)
        changes["tc"]  # (no inserted facts, the deleted facts (1, 3) and (2, 3))
    """
    run = _LinearDRed(spark, checked, stratum_plan, old, inserted, deleted, max_iterations, stored)
    if levels is not None and not levels_apply(checked, stratum_plan):
        raise ValueError(
            f"{run.what}: levels are kept only for the strata of incremental.levels.levels_apply"
        )
    if levels is not None and levels.old is not None and set(levels.old) != run.own:
        raise ValueError(f"{run.what}: levels given for {sorted(levels.old)}, not its relations")
    state = run.read(levels)
    if state is None:
        return Declined(run.refusal)
    outcome = run.dred(state, recompute_if_larger)
    if outcome is None:
        return Declined(run.refusal)
    if levels is not None:
        _set_levels(run, state, outcome, levels)
    schemas = {name: checked.relations[name] for name in run.relations}
    return {
        name: tuple(
            to_table(frame, schemas[name].column_names, schemas[name].types)
            for frame in outcome.changes[name]
        )
        for name in run.relations
    }


@dataclass
class _State:
    """The frames one DRed reads: the stratum's old facts, the lower relations before and
    after, the changes, and the old levels when stored (relation -> facts with ``LEVEL``)."""

    old: dict
    lower_old: dict
    lower_new: dict
    changed: dict
    levels: Optional[dict] = None
    max_facts: int = 0
    lower_full: dict = field(default_factory=dict)


class _LinearDRed:
    """One DRed of a linear stratum (``linear_dred_changes``): its inputs and plans."""

    def __init__(self, spark, checked, stratum_plan, old, inserted, deleted, max_iterations, stored):
        self.checked, self.stratum_plan, self.old = checked, stratum_plan, old
        self.max_iterations, self.stored = max_iterations, stored
        self.relations = tuple(stratum_plan.relations)
        self.own = frozenset(self.relations)
        self.regroup = bool(stratum_plan.aggregates) and not dred_applies(
            stratum_plan, set(inserted), set(deleted)
        )
        if self.regroup and not repairs_groups(checked, stratum_plan):
            raise ValueError(
                f"stratum {stratum_plan.index}: removals reaching min/max relations "
                "are recomputed, not maintained by DRed"
            )
        self.settings = settings_of(spark)
        self.what = f"stratum {stratum_plan.index} · {', '.join(self.relations)}"
        self.refusal = ""  # why the driver cannot hold the DRed, once it cannot
        self.changed_tables = {("inserted", name): _table(frame) for name, frame in inserted.items()}
        self.changed_tables.update({("deleted", name): _table(frame) for name, frame in deleted.items()})
        self.plans: DredPlans = dred_plans(checked, stratum_plan, set(inserted), set(deleted))
        self.schemas = {name: checked.relations[name] for name in old}

    def table(self, name: str, limit: int) -> Optional[pa.Table]:
        """The relation's old facts as a pyarrow Table, or None (logged) beyond ``limit`` rows."""
        table = self.stored(name, limit) if self.stored is not None else None
        if table is None:
            table = collect_small(self.old[name], limit)
        if table is None:
            self.holds(name, limit + 1, limit)
        return table

    def holds(self, name: str, rows: int, limit: int) -> bool:
        """Whether the driver holds ``rows`` rows of relation ``name`` (at most ``limit``);
        when not, ``refusal`` says why."""
        if rows <= limit:
            return True
        self.refusal = f"{name} has over {limit} rows for the driver ({DRIVER_MEMORY_SETTING})"
        return False

    def read(self, levels: Optional[Levels]) -> Optional[_State]:
        """The frames of the DRed (the stratum's facts from its ``levels`` when stored); None
        when a relation is too large for the driver."""
        width = max(len(self.schemas[name].columns) for name in self.relations)
        max_facts = self.settings.driver_facts(width, KERNEL_VALUE_BYTES)
        stored_levels = levels.old if levels is not None else None
        frames = {}
        for name in sorted(set(self.old) - self.own) + list(self.relations):
            if name in self.own and stored_levels is not None:
                if not self.holds(name, stored_levels[name].num_rows, max_facts):
                    return None
                continue
            limit = max_facts if name in self.own else self.settings.driver_read_rows(KERNEL_VALUE_BYTES)
            table = self.table(name, limit)
            if table is None:
                return None
            frames[name] = relation_frame(table, self.schemas[name])
        changed = {
            (kind, name): relation_frame(table, self.schemas[name])
            for (kind, name), table in self.changed_tables.items()
        }
        state = _State({}, {}, {}, changed, max_facts=max_facts)
        if stored_levels is not None:
            state.levels = {
                name: levels_frame(stored_levels[name], self.schemas[name]) for name in self.relations
            }
            frames.update({name: frame.drop(LEVEL) for name, frame in state.levels.items()})
        state.old = {name: frames[name] for name in self.relations}
        state.lower_old = {name: frame for name, frame in frames.items() if name not in self.own}
        state.lower_new = {
            name: _changed_frame(frame, name, changed) for name, frame in state.lower_old.items()
        }
        state.lower_full = {(name, "full"): frame for name, frame in state.lower_new.items()}
        return state

    def dred(self, state: _State, recompute_if_larger: bool) -> Optional[DredOutcome]:
        """The three phases; None when phase 1 removes more than the driver holds, and
        ``OverDeletion`` when recomputing costs less (``recompute_if_larger``)."""
        max_over: Optional[int] = None if self.regroup else state.max_facts
        if recompute_if_larger and max_over is not None:
            share = self.settings.over_deletion_share * sum(frame.height for frame in state.old.values())
            max_over = min(max_over, self.settings.over_deletion_min + int(share))
        removed = None
        if state.levels is not None and self.plans.over_seeds:
            seeds = seed_facts(self.plans, state.old, state.lower_old, state.changed)
            removed = dropped(
                LevelPlans(self.checked, self.stratum_plan),
                self.checked,
                seeds,
                state.levels,
                state.lower_new,
            )
        outcome = dred(
            self.plans,
            state.old,
            state.lower_old,
            state.lower_new,
            state.changed,
            self.max_iterations,
            max_over,
            removed,
        )
        if outcome.overflow:
            assert max_over is not None
            if max_over < state.max_facts:
                raise OverDeletion(
                    f"{self.what} · over {max_over} facts over-deleted: recomputing costs less than DRed"
                )
            held = f"more than the driver holds ({DRIVER_MEMORY_SETTING})"
            self.refusal = f"over {max_over} facts over-deleted, {held}"
            return None
        if outcome.exceeded:
            assert self.max_iterations is not None  # the phases only stop early under a bound
            raise non_termination(self.stratum_plan, self.max_iterations, what="incremental iterations")
        return outcome


def _set_levels(run: _LinearDRed, state: _State, outcome: DredOutcome, levels: Levels) -> None:
    """Sets ``levels.new`` (from stored levels) or ``levels.flooded`` (none stored)."""
    if state.levels is None:
        added = {name: frame.drop(ROUND) for name, frame in outcome.added.items()}
        levels.flooded = flooded(outcome.over, added, run.settings.flood_min)
        return
    if run.stratum_plan.aggregates:
        found = _relevelled_best(run, state, outcome)
    else:
        found = relevelled(state.levels, outcome.over, outcome.added)
    levels.new = (
        None if found is None else {name: levels_table(found[name], run.schemas[name]) for name in found}
    )


def _relevelled_best(run: _LinearDRed, state: _State, outcome: DredOutcome) -> Optional[dict]:
    """The new levels of a stratum of min/max relations (``incremental.levels``): the old
    levels without the rows phase 1 removed (``lost``, of the affected groups) and the old rows
    of the groups that improved, whose successors may lose their support (found as ``dropped``
    finds them); the groups' final rows and those successors get new levels."""
    assert state.levels is not None
    lost, improved, touched, unsupported = outcome.over, {}, {}, {}
    for name, spec in run.stratum_plan.aggregates.items():
        group = [c for i, c in enumerate(run.schemas[name].column_names) if i != spec.position]
        touched[name] = _in_groups(outcome.final[name], outcome.added[name], group)
        improved[name] = _in_groups(state.old[name], outcome.added[name], group).join(
            lost[name], on=state.old[name].columns, how="anti"
        )
    plans = LevelPlans(run.checked, run.stratum_plan)
    if any(frame.height for frame in improved.values()):
        removed = {name: pl.concat([improved[name], lost[name]], how="vertical") for name in improved}
        unsupported = dropped(plans, run.checked, {}, state.levels, state.lower_new, removed=removed)
    targets, gone = {}, {}
    for name, spec in run.stratum_plan.aggregates.items():
        group = [c for i, c in enumerate(run.schemas[name].column_names) if i != spec.position]
        others = unsupported.get(name, state.old[name].clear())
        others = _out_of_groups(others, touched[name], group).join(lost[name], on=others.columns, how="anti")
        targets[name] = pl.concat([touched[name], others], how="vertical")
        gone[name] = pl.concat(
            [lost[name], improved[name], unsupported.get(name, others.clear())], how="vertical"
        )
    rounds = added_rounds(outcome.added)
    return relevelled_best(plans, run.plans, state.levels, gone, targets, state.lower_full, rounds)


def _in_groups(rows: pl.DataFrame, of: pl.DataFrame, group: list) -> pl.DataFrame:
    """The ``rows`` whose group (columns ``group``) some row ``of`` has."""
    if not group:
        return rows if of.height else rows.clear()
    return rows.join(of.select(group).unique(), on=group, how="semi")


def _out_of_groups(rows: pl.DataFrame, of: pl.DataFrame, group: list) -> pl.DataFrame:
    """The ``rows`` whose group no row ``of`` has."""
    if not group:
        return rows.clear() if of.height else rows
    return rows.join(of.select(group).unique(), on=group, how="anti")


def _table(rows) -> pa.Table:
    """A Spark frame (collected: one job) or a pyarrow Table, as a pyarrow Table."""
    return rows if is_arrow(rows) else collect_arrow(rows)


def _changed_frame(frame: pl.DataFrame, name: str, changed: Mapping) -> pl.DataFrame:
    """A lower relation's facts after its change: without those deleted, with those inserted."""
    deleted, inserted = changed.get(("deleted", name)), changed.get(("inserted", name))
    if deleted is not None and deleted.height:
        frame = frame.join(deleted, on=frame.columns, how="anti")
    if inserted is not None and inserted.height:
        frame = pl.concat([frame, inserted.select(frame.columns)], how="vertical_relaxed")
    return frame
