"""Derivation levels: removals in a linear stratum without over-deleting what still holds.

DRed over-deletes every fact with a derivation through a removed one. Where one fact supports
almost all others (reachability from a source over a random graph: every reached vertex is
downstream of some removed edge) that is the whole relation, then re-derived from the source:
the cost of a recomputation. Levels bound the over-deletion to the facts that lose their
*support*.

Every fact of a linear recursive stratum (``levels_apply``) stores a level, an integer with
this invariant: the fact is stated in the program, or has a derivation from the lower relations
alone (an exit rule), or has a derivation whose fact of the stratum has a smaller level. (The
semi-naive round that first derived a fact is such a level: ``bootstrap``.) By induction on
levels, every fact then has a well-founded derivation, so facts cannot support each other in a
cycle.

A stratum of min/max relations is read the same way, its facts being the stored best rows and
a derivation counting only if it yields that very row (the rules are planned with the head's
value bound). Its non-dropped rows then keep a derivation of their value, which removals cannot
improve on, so only the groups of dropped rows are evaluated again; the levels of those rows
(and of groups that improved) come from the rounds of that evaluation if they satisfy the
invariant (checked), else from ``tight_levels``; the old row of a group that improved no longer
holds, so what it supported is decided again (``dropped`` with ``removed``).

Removals (``dropped``). The candidates are the facts that lost a derivation: the removal seeds
(rules read with one removed lower fact, over the old state). They are decided in increasing
order of level; a candidate keeps its level if some derivation over the new lower relations
reads a fact of the stratum with a smaller level that was not dropped (``#witness`` plans: the
rule with its head read from the candidates), or if it is stated or derived by an exit rule.
Otherwise it is dropped, and the facts it derives with a greater level (``#successors`` plans:
the semi-naive variant with the head's level looked up) become candidates; a fact of level at
most the dropped one's cannot have had it as its support. When a level is decided, every
smaller level is, so the check reads final decisions. The dropped facts are then DRed's
over-deleted facts (``incremental.dred_linear``: re-derived from what remains, then insertions
propagated), and the invariant holds again for what remains.

New levels (``relevelled``): the facts that remain keep theirs; the facts the insertion phase
adds in its round ``r`` (re-derived or new) get ``top + 1 + r``, ``top`` being the largest
level before: each such fact derives from remaining facts (level at most ``top``) or from a
fact of round ``r - 1``. Levels of new facts are larger than needed, which is safe: it only
makes more of their derivations count as support.

Cost: proportional to the candidates and the dropped facts; the plans that decide them run
over Arrow (hash joins with the stored levels and the lower relations).

Where levels are kept: they pay off only where facts have other derivations (``pays_off``,
sampled when a materialization stores the stratum); elsewhere they would drop what DRed
over-deletes, at a higher cost. Levels that went stale (the stratum committed without them) are
computed again by an update whose DRed ``flooded``: re-derived most of what it over-deleted.
"""

from __future__ import annotations

import dataclasses
import heapq
import logging
import random
from dataclasses import dataclass
from typing import Optional

import pyarrow as pa
import pyarrow.compute as pc

from ..analysis.checked import Column, RelationSchema
from ..eval import partitioned
from ..local import arrow
from ..local.compile import compile_plan
from ..local.fixpoint import fixpoint
from ..plan import ir
from ..plan.partitioning import is_linear
from ..plan.translate import plan_rule
from ..storage.levels import LEVEL
from ..syntax import ast
from .dred_local import rederive_plan

log = logging.getLogger("spark_datalog")

# The level plans run over Arrow from this many candidates: each reads the stratum's stored
# levels and a lower relation (large held tables) once per level, which a hash join built on
# the candidates does faster than probing an index row by row (measured on reach over 400,000
# edges, 1% deleted: 0.17 s against 0.41 s for the 30 levels).
LEVEL_COLUMNAR_ROWS = 1

_CANDIDATES = "#candidates:"  # (name, "delta"): facts to decide, with their level
_LEVELS = "#levels:"  # (name, "full"): the stratum's old facts with their levels


def levels_apply(checked, stratum_plan) -> bool:
    """True for a stratum maintained with levels: recursive and linear, its relations all sets
    or all min/max ones without a double value (whose stored best may differ in the last bit
    from the same derivation computed again, which would hide a derivation of it)."""
    if not (stratum_plan.recursive and is_linear(stratum_plan)):
        return False
    aggregates = stratum_plan.aggregates
    return not aggregates or (
        set(aggregates) == set(stratum_plan.relations)
        and all(
            checked.relations[name].columns[spec.position].type != "double"
            for name, spec in aggregates.items()
        )
    )


def levels_key(fingerprint: str, versions: dict) -> dict:
    """What stored levels describe: the program and the versions of the tables they depend on."""
    return {"program": fingerprint, "versions": {name: versions[name] for name in sorted(versions)}}


@dataclass
class Levels:
    """The levels of a stratum's facts before an update (relation -> facts with their
    ``LEVEL``, or None when none are stored), and after it once ``dred_linear`` has maintained
    them; without old levels, whether its over-deletion ``flooded``."""

    old: Optional[dict]
    new: Optional[dict] = None
    flooded: bool = False


# Levels are kept only for strata where they pay off (``pays_off``, ``flooded``). Where (almost)
# no fact has two derivations, levels drop what DRed over-deletes, at twice its cost or more
# (measured at 1% deletions: same generation on a binary tree of depth 10, 2.5 s with levels
# against 1.2 s without; transitive closure on one of depth 15, 0.9 s against 0.5 s). Where
# many have (reachability over G(200,000, 400,000): 60% of sampled facts), they cut the
# over-deletion from every fact (159,457) to 18,562, and the update from 1.3 s to 0.7 s.
REDUNDANCY_SAMPLE = 2_000  # facts sampled by ``pays_off``
MIN_REDUNDANCY = 0.01  # share of them with two derivations or more


def pays_off(checked, stratum_plan, facts: dict, lower: dict) -> bool:
    """Whether at least ``MIN_REDUNDANCY`` of a sample of the stratum's ``facts`` (relation ->
    held table or tuples) have two derivations or more from them and the ``lower`` relations."""
    own = frozenset(stratum_plan.relations)
    rng = random.Random(0)
    frames = {(name, "full"): rows for name, rows in {**lower, **facts}.items()}
    sampled, counts = 0, {}
    for name, rows in facts.items():
        size = rows.num_rows if isinstance(rows, pa.Table) else len(rows)
        picked = sorted(rng.sample(range(size), min(size, REDUNDANCY_SAMPLE)))
        sample = arrow.rows_at(rows, picked) if isinstance(rows, pa.Table) else [rows[i] for i in picked]
        sampled += len(sample)
        frames[(name, "delta")] = sample
        counts[name] = dict.fromkeys(sample, 0)
        for fact in checked.facts.get(name, ()):
            if fact in counts[name]:
                counts[name][fact] += 1
    for rule_plan in stratum_plan.rules:
        spec = stratum_plan.aggregates.get(rule_plan.relation)
        plan = compile_plan(
            rederive_plan(checked, rule_plan.rule, own, spec.position if spec else None), own, columnar=True
        )
        found = counts[rule_plan.relation]
        for row in plan.rows(frames):  # of a min/max group, only its best value counts
            if row in found:
                found[row] += 1
    several = sum(1 for found in counts.values() for n in found.values() if n > 1)
    return sampled > 0 and several >= MIN_REDUNDANCY * sampled


def flooded(over: dict, added: dict, flood_min: int) -> bool:
    """Whether an over-deletion of at least ``flood_min`` facts (``over``: relation -> facts;
    ``spark.datalog.floodMin``) was at least half re-derived (among ``added``): the waste
    levels avoid.

    >>> flooded({"r": {(1,), (2,)}}, {"r": [(1,)]}, flood_min=2)
    True
    """
    total = sum(map(len, over.values()))
    if total < flood_min:
        return False
    back = sum(1 for name, facts in added.items() for fact in facts if fact in over[name])
    return is_flood(total, back, flood_min)


def is_flood(over: int, back: int, flood_min: int) -> bool:
    """Whether ``over`` over-deleted facts, ``back`` of them re-derived, make a flood (see
    :func:`flooded`).

    >>> is_flood(10, 5, 10), is_flood(10, 4, 10), is_flood(9, 9, 10)
    (True, False, False)
    """
    return over >= flood_min and 2 * back >= over


def with_levels(facts: list, levels, schema) -> pa.Table:
    """``facts`` (tuples of ``schema``'s relation) and their ``levels`` (one int or a list)."""
    values = pa.array(levels if isinstance(levels, list) else [levels] * len(facts), pa.int64())
    if not schema.columns:
        return pa.table({LEVEL: values})
    table = arrow.table(facts, schema.column_names, [c.type for c in schema.columns])
    return table.append_column(LEVEL, values)


def bootstrap(checked, stratum_plan, lower: dict, max_facts: Optional[int] = None) -> Optional[dict]:
    """Relation -> its facts with their levels (the round that first derives them), evaluating
    the stratum from ``lower`` (relation -> held table or tuples) in memory; None when it holds
    more than ``max_facts`` facts."""
    own = frozenset(stratum_plan.relations)
    frames = {(name, "full"): rows for name, rows in lower.items()}
    frames.update({(name, "full"): [] for name in own})
    base = {name: list(checked.facts.get(name, ())) for name in own}
    for rule_plan in stratum_plan.rules:
        base[rule_plan.relation] += compile_plan(rule_plan.plan, own).rows(frames)
    variants = [(r.relation, compile_plan(r.plan, own, columnar=True)) for r in stratum_plan.delta_rules]
    best = {name: (spec.func, spec.position) for name, spec in stratum_plan.aggregates.items()}
    outcome = fixpoint(
        base, variants, frames, best, max_facts=max_facts, only_new=not best, by_value=bool(best)
    )
    if outcome.overflow:
        return None
    if not best:
        return {
            name: with_levels(outcome.facts[name], _rounds(outcome.sizes, name, 0), checked.relations[name])
            for name in own
        }
    found = tight_levels(variants, frames, outcome.facts, base, 0)
    if found is None:
        return None
    return {
        name: with_levels(list(found[name]), list(found[name].values()), checked.relations[name])
        for name in own
    }


def tight_levels(variants: list, frames: dict, targets: dict, base: dict, first: int) -> Optional[dict]:
    """Relation -> {row: level} for the ``targets`` (relation -> best rows of min/max
    relations): the rows of ``base`` (relation -> rows with a derivation from below, or
    stated) among them get level ``first``, then, round by round, the targets the recursive
    ``variants`` derive from the last round's rows (over ``frames``: the lower relations) get
    the next level; a row's level is then larger than that of a row with its best value it
    derives from. None when a target is not reached (it would have no support)."""
    wanted = {name: set(rows) for name, rows in targets.items()}
    found: dict = {name: {} for name in targets}
    delta = {
        name: [row for row in dict.fromkeys(base.get(name, ())) if row in wanted[name]] for name in targets
    }
    level = first
    while any(delta.values()):
        for name, rows in delta.items():
            found[name].update(dict.fromkeys(rows, level))
        round_frames = dict(frames)
        round_frames.update({(name, "delta"): rows for name, rows in delta.items()})
        candidates: dict = {name: [] for name in targets}
        for relation, plan in variants:
            candidates[relation].extend(plan.rows(round_frames))
        delta = {
            name: [row for row in dict.fromkeys(rows) if row in wanted[name] and row not in found[name]]
            for name, rows in candidates.items()
        }
        level += 1
    if any(len(found[name]) != len(wanted[name]) for name in targets):
        return None
    return found


def lower_relations(stratum_plan) -> set:
    """The relations below the stratum that its rules read."""
    return {scan.relation for rule_plan in stratum_plan.rules for scan in ir.scans(rule_plan.plan)} - set(
        stratum_plan.relations
    )


def stored_levels(warehouse, fingerprint: str, stratum_plan, versions: dict) -> Levels:
    """The stratum's levels kept in ``warehouse`` for the tables at ``versions`` (``old`` is
    None when there are none)."""
    key = levels_key(fingerprint, _depended(stratum_plan, versions))
    old = {name: warehouse.levels.read(name, key) for name in stratum_plan.relations}
    return Levels(old if all(table is not None for table in old.values()) else None)


def computed_levels(warehouse, checked, stratum_plan, versions: dict, test: bool = True) -> Optional[dict]:
    """The stratum's facts with levels, evaluated in memory (``bootstrap``) from the tables it
    reads at ``versions``; None when one is not readable here or too large
    (``eval.partitioned.limits``), or, with ``test``, when levels would not pay off there
    (``pays_off``)."""
    max_rows, max_facts = partitioned.limits(warehouse.spark)
    tables = {}
    for name in lower_relations(stratum_plan) | set(stratum_plan.relations if test else ()):
        table = warehouse.read_facts(
            name, versions[name], max_facts if name in stratum_plan.relations else max_rows
        )
        if table is None:
            return None
        tables[name] = table if arrow.is_held(table) else arrow.table_rows(table)
    lower = {name: tables[name] for name in lower_relations(stratum_plan)}
    if test and not pays_off(
        checked, stratum_plan, {name: tables[name] for name in stratum_plan.relations}, lower
    ):
        log.info(
            "stratum %d · no levels kept: almost no fact has two derivations, so DRed "
            "over-deletes no more than levels would drop",
            stratum_plan.index,
        )
        return None
    return bootstrap(checked, stratum_plan, lower, max_facts)


def keep_levels(warehouse, fingerprint: str, stratum_plan, versions: dict, tables: dict) -> None:
    """Store ``tables`` (relation -> facts with levels) as the stratum's levels for the tables
    at ``versions``. A failure only leaves the levels stale (logged): they are not needed."""
    key = levels_key(fingerprint, _depended(stratum_plan, versions))
    try:
        for name, table in tables.items():
            warehouse.levels.write(name, key, table)
    except (OSError, pa.ArrowException) as error:
        log.warning(
            "stratum %d · levels not stored (%s): the next removals over-delete as DRed does",
            stratum_plan.index,
            error,
        )


def _depended(stratum_plan, versions: dict) -> dict:
    return {name: versions[name] for name in set(stratum_plan.relations) | lower_relations(stratum_plan)}


def relevelled(checked, old: dict, dropped: dict, added: dict, sizes: list) -> dict:
    """Relation -> its new facts with their levels: ``old`` (relation -> facts with levels)
    without the ``dropped`` facts, and the facts ``added`` by a fixpoint (relation -> facts in
    the order of its rounds, whose ``sizes`` it gives) at levels above every old one."""
    top = max(
        (pc.max(table.column(LEVEL)).as_py() or 0 for table in old.values() if table.num_rows), default=0
    )
    result = {}
    for name, table in old.items():
        schema = checked.relations[name]
        kept = _without(table, dropped.get(name, ()), schema)
        fresh = with_levels(list(added.get(name, ())), _rounds(sizes, name, top + 1), schema)
        result[name] = pa.concat_tables([kept, fresh.cast(kept.schema)])
    return result


def relevelled_best(
    checked,
    stratum_plan,
    variants: list,
    old: dict,
    gone: dict,
    targets: dict,
    lower: dict,
    rounds: Optional[dict] = None,
) -> Optional[dict]:
    """Relation -> its new rows with their levels, for a stratum of min/max relations: ``old``
    (relation -> rows with levels) without the ``gone`` rows, and the ``targets`` (relation ->
    rows: new best values, and rows whose support went) at levels above every old one.

    ``rounds`` (relation -> {row: the round of the fixpoint that added it}) proposes levels:
    they are kept if every target then has a derivation from a row of smaller level (checked
    by the ``#witness`` plans), which holds unless a value improved after it was propagated to
    an equal one. Otherwise (or without ``rounds``) ``tight_levels`` computes them: those
    derived from what remains, from ``lower`` (relation -> its new facts) or stated first.
    None when a target has no support (the levels are then not kept)."""
    top = max(
        (pc.max(table.column(LEVEL)).as_py() or 0 for table in old.values() if table.num_rows), default=0
    )
    remaining = {
        name: _without(table, gone.get(name, ()), checked.relations[name]) for name, table in old.items()
    }

    def joined(found: dict) -> dict:
        return {
            name: pa.concat_tables(
                [
                    table,
                    with_levels(list(found[name]), list(found[name].values()), checked.relations[name]).cast(
                        table.schema
                    ),
                ]
            )
            for name, table in remaining.items()
        }

    if rounds is not None and all(row in rounds[name] for name, rows in targets.items() for row in rows):
        proposed = {
            name: {row: top + 1 + rounds[name][row] for row in rows} for name, rows in targets.items()
        }
        tables = joined(proposed)
        supported = _witnessed(checked, stratum_plan, tables, proposed, lower)
        if all(len(supported[name]) == len(set(rows)) for name, rows in targets.items()):
            return tables
    base = _witnessed(
        checked,
        stratum_plan,
        remaining,
        {name: dict.fromkeys(rows, top + 1) for name, rows in targets.items()},
        lower,
    )
    found = tight_levels(
        variants, {(name, "full"): rows for name, rows in lower.items()}, targets, base, top + 1
    )
    return None if found is None else joined(found)


def _witnessed(checked, stratum_plan, levels: dict, candidates: dict, lower: dict) -> dict:
    """Relation -> the ``candidates`` (relation -> {row: level}) stated, or derived from the
    ``lower`` relations and rows of ``levels`` (relation -> rows with levels) of smaller
    level."""
    frames = {(name, "full"): rows for name, rows in lower.items()}
    frames.update({(_LEVELS + name, "full"): table for name, table in levels.items()})
    frames.update(
        {
            (_CANDIDATES + name, "delta"): [row + (level,) for row, level in rows.items()]
            for name, rows in candidates.items()
        }
    )
    found = {
        name: {fact for fact in checked.facts.get(name, ()) if fact in rows}
        for name, rows in candidates.items()
    }
    # plans of their own: compiled plans keep what they read of the stored levels
    for head, _, plan in LevelPlans(checked, stratum_plan).witnesses:
        if candidates.get(head):
            width = checked.relations[head].arity
            found[head].update(row[:width] for row in plan.rows(frames))
    return found


def added_rounds(added: dict, sizes: list) -> dict:
    """Relation -> {fact: the round that added it}, from the facts ``added`` by a fixpoint
    (relation -> facts in the order of its rounds, whose ``sizes`` it gives)."""
    return {name: dict(zip(facts, _rounds(sizes, name, 0), strict=True)) for name, facts in added.items()}


def _rounds(sizes: list, name: str, first: int) -> list:
    """The level of each fact a fixpoint added, in order: ``first`` plus its round."""
    levels = []
    for round_, size in enumerate(sizes):
        levels += [first + round_] * size.get(name, 0)
    return levels


def _without(table: pa.Table, facts, schema) -> pa.Table:
    """``table`` (facts and levels) without the rows of ``facts`` (tuples)."""
    if not facts:
        return table
    names = list(schema.column_names)
    gone = arrow.table(list(facts), names, [c.type for c in schema.columns])
    try:
        return table.join(gone, names, join_type="left anti") if names else table.slice(0, 0)
    except arrow.MISFITS:
        facts = set(facts)
        rows = [row for row in arrow.table_rows(table) if row[:-1] not in facts]
        return (
            pa.Table.from_pylist([], schema=table.schema)
            if not rows
            else with_levels([r[:-1] for r in rows], [r[-1] for r in rows], schema)
        )


class LevelPlans:
    """The compiled plans of ``dropped`` for one stratum: per rule, its ``#witness`` plan
    (candidates of its head -> the facts of the stratum with a smaller level that its
    derivations read, after the candidate; for an exit rule, the candidates it derives), and
    per recursive rule its ``#successors`` plan (dropped facts -> the facts they derive that
    have a greater level, and that level)."""

    def __init__(self, checked, stratum_plan):
        own = frozenset(stratum_plan.relations)
        dynamic = frozenset(_CANDIDATES + name for name in own)
        self.own = own
        self.witnesses, self.successors = [], []
        for rule_plan in stratum_plan.rules:
            rule = rule_plan.rule
            mine = [
                atom.predicate for atom in rule.body if isinstance(atom, ast.Atom) and atom.predicate in own
            ]
            body = mine[0] if mine else None
            self.witnesses.append(
                (
                    rule.head.predicate,
                    body,
                    compile_plan(
                        _levelled_plan(checked, rule, own, from_head=True),
                        dynamic,
                        columnar=True,
                        columnar_rows=LEVEL_COLUMNAR_ROWS,
                    ),
                )
            )
            if body is not None:
                self.successors.append(
                    (
                        rule.head.predicate,
                        compile_plan(
                            _levelled_plan(checked, rule, own, from_head=False),
                            dynamic,
                            columnar=True,
                            columnar_rows=LEVEL_COLUMNAR_ROWS,
                        ),
                    )
                )


def dropped(
    plans: LevelPlans, checked, seeds: dict, levels: dict, lower: dict, removed: Optional[dict] = None
) -> dict:
    """Relation -> its facts that lose their support (see the module docstring). ``seeds``:
    relation -> facts that lost a derivation; ``levels``: relation -> its old facts with their
    levels (held tables); ``lower``: relation -> its new facts; ``removed``: relation -> old
    facts that no longer hold whatever their support (old rows of min/max groups that
    improved): they are dropped, and the facts they derive are candidates."""
    run = _Dropping(plans, checked, levels, lower)
    for name, facts in seeds.items():
        if facts:
            run.push(name, _levelled(levels[name], facts))
    if removed and any(removed.values()):
        run.drop_removed(removed)
    while run.queue:
        run.decide_level(heapq.heappop(run.queue))
    return run.lost


class _Dropping:
    """The state of one ``dropped``: facts pending by level, decided, lost."""

    def __init__(self, plans: LevelPlans, checked, levels: dict, lower: dict):
        self.plans, self.checked, self.levels = plans, checked, levels
        own = plans.own
        self.frames = {(name, "full"): rows for name, rows in lower.items()}
        self.frames.update({(_LEVELS + name, "full"): table for name, table in levels.items()})
        self.stated = {name: frozenset(checked.facts.get(name, ())) for name in own}
        self.decided: dict = {name: set() for name in own}
        self.lost: dict = {name: set() for name in own}
        self.pending: dict = {}  # level -> relation -> facts to decide
        self.queue: list = []  # the levels of ``pending``, smallest first

    def push(self, name: str, rows) -> None:
        """Pends the facts of ``rows`` (a fact's values, then its level) not yet decided."""
        for row in rows:
            fact, level = row[:-1], row[-1]
            if fact in self.decided[name]:
                continue
            if level not in self.pending:
                self.pending[level] = {}
                heapq.heappush(self.queue, level)
            self.pending[level].setdefault(name, set()).add(fact)

    def drop_removed(self, removed: dict) -> None:
        """Drops the ``removed`` facts and pends the facts they derive."""
        successors = dict(self.frames)
        for name in self.plans.own:
            rows = _levelled(self.levels[name], removed.get(name, ())) if removed.get(name) else []
            self.lost[name].update(row[:-1] for row in rows)
            self.decided[name].update(row[:-1] for row in rows)
            successors[(_CANDIDATES + name, "delta")] = rows
        for head, plan in self.plans.successors:
            self.push(head, plan.rows(successors))

    def decide_level(self, level: int) -> None:
        """Decides the facts pending at ``level``: those without a derivation from a smaller
        level (nor stated) are lost, and the facts they derive are pended."""
        own = self.plans.own
        batch = {name: facts - self.decided[name] for name, facts in self.pending.pop(level).items()}
        candidates = dict(self.frames)
        for name in own:
            self.decided[name] |= batch.get(name, set())
            candidates[(_CANDIDATES + name, "delta")] = [f + (level,) for f in batch.get(name, ())]
        supported = self._supported(batch, candidates)
        gone = {
            name: [f for f in facts if f not in supported[name] and f not in self.stated[name]]
            for name, facts in batch.items()
        }
        if not any(gone.values()):
            return
        successors = dict(self.frames)
        for name in own:
            self.lost[name].update(gone.get(name, ()))
            successors[(_CANDIDATES + name, "delta")] = [f + (level,) for f in gone.get(name, ())]
        for head, plan in self.plans.successors:
            self.push(head, plan.rows(successors))

    def _supported(self, batch: dict, candidates: dict) -> dict:
        """Relation -> the facts of ``batch`` that a witness derives from facts not lost."""
        supported: dict = {name: set() for name in self.plans.own}
        for head, body, plan in self.plans.witnesses:
            if not batch.get(head):
                continue
            width, found = self.checked.relations[head].arity, supported[head]
            for row in plan.rows(candidates):
                if body is None or row[width:] not in self.lost[body]:
                    found.add(row[:width])
        return supported


def _levelled(table: pa.Table, facts) -> list:
    """The rows of ``table`` (facts, then their level) for ``facts`` (tuples)."""
    positions = list(range(table.num_columns - 1))
    wanted = {f[0] for f in facts} if len(positions) == 1 else set(facts)
    found = arrow.matching(table, positions, wanted) if positions else table
    if found is None:
        facts = set(facts)
        return [row for row in arrow.table_rows(table) if row[:-1] in facts]
    return arrow.table_rows(found)


def _levelled_plan(checked, rule: ast.Rule, own: frozenset, from_head: bool):
    """The IR plan of ``rule`` read from its head (``from_head``: the ``#witness`` plan) or
    from its fact of the stratum (the ``#successors`` plan), each side with its level: the
    side read first from ``(_CANDIDATES + relation, "delta")``, the other looked up in
    ``(_LEVELS + relation, "full")``, the second's level smaller than the head's."""
    span = rule.head.span
    relations = dict(checked.relations)

    def levelled(atom, prefix, level):
        schema = checked.relations[atom.predicate]
        name = prefix + atom.predicate
        relations[name] = RelationSchema(name, schema.columns + (Column(LEVEL, "long"),), "idb")
        return ast.Atom(name, atom.args + (level,), atom.span)

    # a min/max head is read with its value: only derivations of that value support it
    rule = dataclasses.replace(
        rule,
        head=ast.Atom(
            rule.head.predicate,
            tuple(arg.variable if isinstance(arg, ast.Aggregate) else arg for arg in rule.head.args),
            span,
        ),
    )
    head_level = ast.Variable("_#head_level", span)
    body_level = ast.Variable("_#body_level", span)
    mine = [literal for literal in rule.body if isinstance(literal, ast.Atom) and literal.predicate in own]
    lower = tuple(
        literal for literal in rule.body if not (isinstance(literal, ast.Atom) and literal.predicate in own)
    )
    smaller = ast.Comparison("<", body_level, head_level, span)
    if from_head:
        body = (levelled(rule.head, _CANDIDATES, head_level),) + lower
        outputs = rule.head.args
        types = checked.relations[rule.head.predicate].types
        if mine:
            body += (levelled(mine[0], _LEVELS, body_level), smaller)
            outputs += mine[0].args
            types += checked.relations[mine[0].predicate].types
    else:
        body = (
            (levelled(mine[0], _CANDIDATES, body_level),)
            + lower
            + (levelled(rule.head, _LEVELS, head_level), smaller)
        )
        outputs = rule.head.args + (head_level,)
        types = checked.relations[rule.head.predicate].types + ("long",)
    relations["#pair"] = RelationSchema(
        "#pair", tuple(Column(f"c{i}", t) for i, t in enumerate(types)), "idb"
    )
    paired = dataclasses.replace(rule, head=ast.Atom("#pair", outputs, span), body=body)
    return plan_rule(paired, dataclasses.replace(checked, relations=relations), delta_position=0).plan
