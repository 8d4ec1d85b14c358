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
from typing import Callable, Optional

import pyarrow as pa

from ..eval.stats import non_termination
from ..eval import partitioned
from ..local import arrow
from ..local.compile import compile_plan
from ..local.dred import seed_rows
from ..local.fixpoint import fixpoint
from ..plan.partitioning import is_linear
from ..reference.aggregates import group_of, with_value
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
# over 82% of sg's 1.4M 8.1 s against 5.9 s.) So beyond OVER_DELETION_MIN over-deleted facts
# plus OVER_DELETION_SHARE of the stratum, recomputing costs less: the caller is told by
# ``OverDeletion``.
OVER_DELETION_MIN = 200_000
OVER_DELETION_SHARE = 0.4


class RecomputeInstead(Exception):
    """This stratum is better (or only) recomputed; the message says why."""


class OverDeletion(RecomputeInstead):
    """The over-deleted facts exceed ``OVER_DELETION_MIN`` plus ``OVER_DELETION_SHARE`` of the
    stratum: recomputing it costs less."""


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
    old: dict,
    inserted: dict,
    deleted: dict,
    max_iterations: Optional[int] = None,
    stored: Optional[Callable] = None,
    recompute_if_larger: bool = False,
    levels: Optional[Levels] = None,
) -> Optional[dict]:
    """Relation -> (inserted facts, deleted facts) of the stratum, lists of tuples (as
    ``incremental.dred.dred_changes`` computes them as frames, from the same arguments but the
    new states, which it derives from the old ones and the changes; ``inserted`` and
    ``deleted`` may also give pyarrow Tables), or
    None when a lower relation or the stratum holds more than ``eval.partitioned.limits``
    allows.
    ``stored(relation, max_rows)`` may give a relation's old facts (those of ``old``) as a
    pyarrow Table read straight from storage (``Warehouse.read_facts``), or None: then
    ``old`` is collected. With ``recompute_if_larger``, raises ``OverDeletion`` as soon as
    the over-deleted facts exceed ``OVER_DELETION_MIN`` plus ``OVER_DELETION_SHARE`` of the
    stratum. ``levels`` (a stratum of ``incremental.levels.levels_apply``) gives its facts'
    old levels: then they are its old facts, removals over-delete only the facts that lose
    their support (``incremental.levels.dropped``), and ``levels.new`` is set to the new
    facts' levels. ``Levels(None)`` (none stored): ``levels.flooded`` tells whether the
    over-deletion was mostly re-derived (``incremental.levels.flooded``)."""
    relations = tuple(stratum_plan.relations)
    own = frozenset(relations)
    best = {name: (spec.func, spec.position) for name, spec in stratum_plan.aggregates.items()}
    regroup = bool(best) and not dred_applies(stratum_plan, set(inserted), set(deleted))
    if regroup and not repairs_groups(checked, stratum_plan):
        raise ValueError(
            f"stratum {stratum_plan.index}: removals reaching min/max relations "
            "are recomputed, not maintained by DRed"
        )
    max_rows, max_facts = partitioned.limits(spark)
    what = f"stratum {stratum_plan.index} · {', '.join(relations)}"

    def read(name, limit):
        """The relation's old facts: a held pyarrow Table (``arrow.is_held``), else tuples."""
        table = stored(name, limit) if stored is not None else None
        if table is None:
            table = collect_small(old[name], limit)
        if table is None:
            log.info(
                "%s · %s has over %d rows for the driver (%s): DRed by other means",
                what,
                name,
                limit,
                partitioned.LOCAL_FACTS_SETTING if name in own else partitioned.BROADCAST_ROWS_SETTING,
            )
            return None
        return table if arrow.is_held(table) else arrow.table_rows(table)

    changed = {("inserted", name): _rows(frame) for name, frame in inserted.items()}
    changed.update({("deleted", name): _rows(frame) for name, frame in deleted.items()})
    lower_old, lower_new = {}, {}
    for name in sorted(set(old) - own):
        rows = read(name, max_rows)
        if rows is None:
            return None
        lower_old[name] = rows
        lower_new[name] = _after(
            rows, changed.get(("inserted", name), ()), changed.get(("deleted", name), ())
        )
    if levels is not None and not levels_apply(checked, stratum_plan):
        raise ValueError(f"{what}: levels are kept only for the strata of incremental.levels.levels_apply")
    levelled = levels is not None and levels.old is not None
    if levelled and set(levels.old) != own:
        raise ValueError(f"{what}: levels given for {sorted(levels.old)}, not its relations")
    known = {}  # the stratum's facts: held tables, else sets of tuples (lists for min/max ones)
    stored_best = {}  # of a min/max relation: group -> its stored best value
    for name in relations:
        rows = levels.old[name].drop_columns([LEVEL]) if levelled else read(name, max_facts)
        if rows is None:
            return None
        if not arrow.is_held(rows) and isinstance(rows, pa.Table):
            rows = arrow.table_rows(rows)
        if name in best:
            stored_best[name] = _best_values(rows, best[name][1])
            known[name] = rows
        else:
            known[name] = rows if arrow.is_held(rows) else set(rows)
    plans = dred_plans(checked, stratum_plan, set(inserted), set(deleted))
    level_plans = LevelPlans(checked, stratum_plan) if levelled else None
    affected = {name: set() for name in best}  # groups whose best value is computed again
    affected_rows = {name: [] for name in best}  # their stored best rows

    # 1. over-delete against the old state (for min/max relations: the affected groups)
    over = {name: set() for name in relations}
    variants = _variants(stratum_plan)  # of phase 3; phase 1 of group repair shares them
    if plans.over_seeds and regroup:
        seeds = seed_rows(plans.over_seeds, _frames({**lower_old, **known}), changed, own)
        # no switch to recomputing here, however many groups are affected: the repair
        # evaluates them best value first, which a recomputation does not (measured on
        # connected components by min label at 100,000 edges with nearly every group affected:
        # 3.5 s against 6.5 s)
        if levelled:  # the groups whose best row loses its support
            lost = dropped(level_plans, checked, seeds, levels.old, lower_new)
            affected = {
                name: {group_of(row, position) for row in lost[name]} for name, (_, position) in best.items()
            }
        else:
            affected = _affected(seeds, variants, _frames({**lower_new, **known}), best, stored_best)
        for name, (_, position) in best.items():
            if affected[name]:
                values = stored_best[name]
                affected_rows[name] = [with_value(group, position, values[group]) for group in affected[name]]
                known[name] = _without(known[name], affected_rows[name])
    elif plans.over_seeds:
        old_frames = _frames({**lower_old, **known})
        seeds = {name: [] for name in relations}
        seeds.update(seed_rows(plans.over_seeds, old_frames, changed, own))
        limit = max_facts
        if recompute_if_larger:
            share = OVER_DELETION_SHARE * sum(_size(rows) for rows in known.values())
            limit = min(limit, OVER_DELETION_MIN + int(share))
        if levelled:
            over = dropped(level_plans, checked, seeds, levels.old, lower_new)
            overflow = sum(map(len, over.values())) > limit
        else:
            outcome = fixpoint(
                seeds,
                _variants(stratum_plan),
                old_frames,
                max_rounds=max_iterations,
                max_facts=limit,
                fixed_full=True,
            )
            _check(outcome, stratum_plan, max_iterations)
            overflow = outcome.overflow
            if not overflow:
                over = {name: _among(known[name], outcome.facts[name]) for name in relations}
        if overflow and limit < max_facts:
            raise OverDeletion(f"{what} · over {limit} facts over-deleted: recomputing costs less than DRed")
        if overflow:
            return None

    # 2. what remains, and the over-deleted facts it still derives
    for name in relations:
        if over[name]:
            known[name] = (
                arrow.without(known[name], over[name])
                if arrow.is_held(known[name])
                else known[name] - over[name]
            )
    new_frames = _frames({**lower_new, **known})
    seeds = {name: [] for name in relations}
    seeds.update(seed_rows(plans.insert_seeds, new_frames, changed, own))
    for rule_plan in stratum_plan.rules:
        name = rule_plan.relation
        if over[name]:
            frames = dict(new_frames)
            frames[(name, "delta")] = over[name]
            plan = compile_plan(rederive_plan(checked, rule_plan.rule, own), own, columnar=True)
            seeds[name] += plan.rows(frames)
        if name in best and affected[name]:  # every derivation of an affected group, anew
            position = best[name][1]
            frames = dict(new_frames)
            frames[(name, "delta")] = affected_rows[name]
            plan = compile_plan(rederive_plan(checked, rule_plan.rule, own, position), own, columnar=True)
            seeds[name] += plan.rows(frames)
    for name in relations:
        seeds[name] += [fact for fact in checked.facts.get(name, ()) if fact in over[name]]
        if name in best and affected[name]:
            position = best[name][1]
            seeds[name] += [
                fact for fact in checked.facts.get(name, ()) if group_of(fact, position) in affected[name]
            ]

    # 3. insert semi-naively over the new state, the remaining facts known
    for name in best:
        known[name] = dict(stored_best[name])  # group -> value, taken over by the fixpoint
        for group in affected[name]:
            del known[name][group]
    outcome = fixpoint(
        seeds,
        variants,
        new_frames,
        best,
        max_rounds=max_iterations,
        max_facts=max_facts,
        known=known,
        only_new=True,
        by_value=set(best) == own,
    )
    _check(outcome, stratum_plan, max_iterations)
    if outcome.overflow:
        return None
    final = {
        name: {group_of(row, position): row for row in outcome.facts[name]}
        for name, (_, position) in best.items()
    }  # a group's last improvement is its best
    if levelled and best:
        levels.new = _relevelled_best(
            level_plans,
            checked,
            stratum_plan,
            variants,
            levels.old,
            stored_best,
            affected_rows,
            final,
            lower_new,
            added_rounds(outcome.facts, outcome.sizes),
        )
    elif levelled:
        levels.new = relevelled(checked, levels.old, over, outcome.facts, outcome.sizes)
    elif levels is not None:
        levels.flooded = flooded(
            {**over, **{name: set(rows) for name, rows in affected_rows.items()}}, outcome.facts
        )
    result = {}
    for name in relations:
        added = outcome.facts[name]
        if name in best:
            result[name] = _regrouped(best[name][1], final[name], stored_best[name], affected[name])
            continue
        kept = set(added) & over[name]
        result[name] = ([f for f in added if f not in over[name]], list(over[name] - kept))
    return result


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
    unsupported = {name: set() for name in stored}
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
    return dict(zip(zip(*columns) if columns else [()] * len(values), values))


def _without(rows, gone: list):
    """``rows`` (a held table or tuples, like ``_after``) without the ``gone`` ones."""
    if arrow.is_held(rows):
        return arrow.without(rows, gone)
    gone = set(gone)
    return [row for row in rows if row not in gone]


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
    affected = {name: set() for name in best}

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


def _rows(rows) -> list:
    """The tuples of a Spark frame (collected: one job) or of a pyarrow Table."""
    return arrow.table_rows(rows if is_arrow(rows) else collect_arrow(rows))


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
        raise non_termination(stratum_plan, max_iterations, what="incremental iterations")
