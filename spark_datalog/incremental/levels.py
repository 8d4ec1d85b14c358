"""Derivation levels: removals in a linear stratum without over-deleting what still holds.

DRed over-deletes every fact with a derivation through a removed one. Where one fact supports
almost all others (reachability from a source over a random graph: every reached vertex is
downstream of some removed edge) that is the whole relation, then re-derived from the source:
the cost of a recomputation. Levels bound the over-deletion to the facts that lose their
*support*.

Every fact of a linear recursive stratum (``levels_apply``) stores a level, an integer with
this invariant: the fact is stated in the program, or has a derivation from the lower relations
alone (an exit rule), or has a derivation whose fact of the stratum has a smaller level. (The
semi-naive round that first derived a fact is such a level: ``bootstrap`` runs the kernel's
loop and records it.) By induction on
levels, every fact then has a well-founded derivation, so facts cannot support each other in a
cycle.

A stratum of min/max relations is read the same way, its facts being the stored best rows and
a derivation counting only if it yields that very row (the rules are planned with the head's
value bound). Its non-dropped rows then keep a derivation of their value, which removals cannot
improve on, so only the groups of dropped rows are evaluated again; the levels of those rows
(and of groups that improved) come from the rounds of that evaluation if they satisfy the
invariant (checked), else from ``tight_levels``; the old row of a group that improved no longer
holds, so what it supported is decided again (``dropped`` with ``removed``).

Removals (``dropped``, in ``incremental.dropping``: DRed's phase 1 by levels, handed to
``kernel.dred.dred`` as the facts it removes). The candidates are the facts that lost a
derivation: the removal seeds (rules read with one removed lower fact, over the old state).
They are decided in increasing order of level, a whole level at a time; a candidate keeps its
level if some derivation over the new lower relations reads a fact of the stratum with a
smaller level that was not dropped (``#witness`` plans: the rule with its head read from the
candidates), or if it is stated or derived by an exit rule. Otherwise it is dropped, and the
facts it derives with a greater level (``#successors`` plans: the semi-naive variant with the
head's level looked up) become candidates; a fact of level at most the dropped one's cannot
have had it as its support. When a level is decided, every smaller level is, so the check reads
final decisions. The dropped facts are then DRed's over-deleted facts
(``incremental.dred_linear``: re-derived from what remains, then insertions propagated), and
the invariant holds again for what remains.

New levels (``relevelled``): the facts that remain keep theirs; the facts the insertion phase
adds in its round ``r`` (re-derived or new; the kernel's DRed records the round that added each
row, ``DredOutcome.added``) get ``top + 1 + r``, ``top`` being the largest
level before: each such fact derives from remaining facts (level at most ``top``) or from a
fact of round ``r - 1``. Levels of new facts are larger than needed, which is safe: it only
makes more of their derivations count as support.

Cost: proportional to the candidates and the dropped facts, plus, per level decided, a hash
join of its candidates with the stored levels and the lower relations (the plans run on the
kernel: Polars frames, no loop over facts in Python).

Where levels are kept: they pay off only where facts have other derivations (``pays_off``,
sampled when a materialization stores the stratum); elsewhere they would drop what DRed
over-deletes, at a higher cost. Levels that went stale (the stratum committed without them) are
computed again by an update whose DRed ``flooded``: re-derived most of what it over-deleted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Mapping, Optional

import polars as pl
import pyarrow as pa

from ..kernel.compile import compile_node
from ..dred import run_rounds
from ..kernel.dred import KERNEL, ROUND, rule_output
from ..kernel.fixpoint import conformed
from ..kernel.frames import facts_table, to_frame, to_table
from ..kernel.partition import new_relation
from ..kernel.relation import SetRelation
from ..kernel.types import polars_type
from ..plan import ir
from ..settings import KERNEL_VALUE_BYTES, settings_of
from ..plan.maintenance import LEVEL
from ..plan.maintenance import DredPlans, dred_plans, rederive_plan
from ..plan.maintenance import CANDIDATES, LEVELS, levels_apply
from .dropping import LevelPlans, dropped

__all__ = [
    "LevelPlans",
    "Levels",
    "bootstrap",
    "dropped",
    "flooded",
    "is_flood",
    "levels_apply",
    "pays_off",
    "relevelled",
    "relevelled_best",
    "stored_levels",
    "tight_levels",
]

log = logging.getLogger("spark_datalog")


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


def pays_off(checked, stratum_plan, facts: Mapping, lower: Mapping) -> bool:
    """Whether at least ``MIN_REDUNDANCY`` of a sample of the stratum's ``facts`` (relation ->
    Arrow table or frame) have two derivations or more from them and the ``lower`` relations
    (of a min/max relation, derivations of its stored best row).

    Each rule is read from the sampled facts (``rederive_plan``) and its derivations counted
    per fact (joins keep one row per derivation)."""
    own = frozenset(stratum_plan.relations)
    frames = {
        (name, "full"): relation_frame(rows, checked.relations[name])
        for name, rows in {**lower, **facts}.items()
    }
    samples = {
        name: frames[(name, "full")].sample(n=min(frames[(name, "full")].height, REDUNDANCY_SAMPLE), seed=0)
        for name in own
    }
    found: dict = {
        name: [_stated(checked, name).join(samples[name], on=samples[name].columns, how="semi")]
        for name in own
    }
    for rule_plan in stratum_plan.rules:
        name, spec = rule_plan.relation, stratum_plan.aggregates.get(rule_plan.relation)
        plan = rederive_plan(checked, rule_plan.rule, own, spec.position if spec else None)
        schema = checked.relations[name]
        rows = conformed(
            compile_node(plan, {**frames, (name, "delta"): samples[name]}).frame,
            schema.column_names,
            schema.types,
        )
        found[name].append(rows.collect().join(samples[name], on=samples[name].columns, how="semi"))
    several = sum(
        pl.concat(parts, how="vertical")
        .group_by(samples[name].columns)
        .len()
        .filter(pl.col("len") > 1)
        .height
        for name, parts in found.items()
    )
    sampled = sum(sample.height for sample in samples.values())
    return sampled > 0 and several >= MIN_REDUNDANCY * sampled


def flooded(over: Mapping, added: Mapping, flood_min: int) -> bool:
    """Whether an over-deletion of at least ``flood_min`` facts (``over``: relation -> frame;
    ``spark.datalog.floodMin``) was at least half re-derived (among ``added``: relation ->
    frame): the waste levels avoid.

    >>> flooded({"r": pl.DataFrame({"x": [1, 2]})}, {"r": pl.DataFrame({"x": [1]})}, flood_min=2)
    True
    """
    total = sum(frame.height for frame in over.values())
    if total < flood_min:
        return False
    back = sum(
        frame.join(added[name], on=frame.columns, how="semi").height
        for name, frame in over.items()
        if name in added
    )
    return is_flood(total, back, flood_min)


def is_flood(over: int, back: int, flood_min: int) -> bool:
    """Whether ``over`` over-deleted facts, ``back`` of them re-derived, make a flood (see
    :func:`flooded`).

    >>> is_flood(10, 5, 10), is_flood(10, 4, 10), is_flood(9, 9, 10)
    (True, False, False)
    """
    return over >= flood_min and 2 * back >= over


def relation_frame(rows, schema) -> pl.DataFrame:
    """A relation's facts (an Arrow table of its columns in order, or a kernel frame) as a
    kernel frame with the relation's column names and types.

    >>> from spark_datalog.analysis.checked import Column, RelationSchema
    >>> schema = RelationSchema("r", (Column("x", "long"),), "edb")
    >>> relation_frame(pa.table({"a": [1]}), schema).columns
    ['x']
    """
    if isinstance(rows, pl.DataFrame):
        return rows
    if rows.num_columns:
        rows = rows.rename_columns(list(schema.column_names))
    return to_frame(rows, schema.types)


def levels_frame(table: pa.Table, schema) -> pl.DataFrame:
    """A stored levels table (facts, then ``LEVEL``) as a kernel frame."""
    facts = relation_frame(table.drop_columns([LEVEL]), schema)
    return facts.with_columns(pl.Series(LEVEL, table.column(LEVEL).to_numpy(), pl.Int64))


def levels_table(frame: pl.DataFrame, schema) -> pa.Table:
    """A kernel frame of facts and their ``LEVEL`` as the stored levels table."""
    table = to_table(frame.drop(LEVEL), schema.column_names, schema.types)
    return table.append_column(LEVEL, frame[LEVEL].cast(pl.Int64).to_arrow())


def _stated(checked, name: str) -> pl.DataFrame:
    schema = checked.relations[name]
    return to_frame(facts_table(schema.column_names, schema.types, checked.facts.get(name, ())), schema.types)


def _schemas(checked, stratum_plan) -> list:
    return [checked.relations[name] for name in set(stratum_plan.relations) | lower_relations(stratum_plan)]


def bootstrap(checked, stratum_plan, lower: Mapping, max_facts: Optional[int] = None) -> Optional[dict]:
    """Relation -> its facts with their levels (an Arrow table: the facts, then ``LEVEL``),
    evaluating the stratum from ``lower`` (relation -> Arrow table or frame) on the kernel:
    a set's level is the round that first derived it, a min/max row's comes from
    ``tight_levels``. None when the stratum holds more than ``max_facts`` facts."""
    plans = dred_plans(checked, stratum_plan, set(), set())
    shapes = {shape.name: shape for shape in plans.relations}
    lower_full = {
        (name, "full"): relation_frame(rows, checked.relations[name]) for name, rows in lower.items()
    }
    relations = {name: new_relation(shape) for name, shape in shapes.items()}
    empty = {(name, "full"): relation.facts() for name, relation in relations.items()}
    base: dict = {name: [_stated(checked, name).lazy()] for name in shapes}
    for name, plan in plans.rules:
        base[name].append(rule_output(plan, {**lower_full, **empty}, shapes[name]))

    def current(states: dict) -> dict:
        return {**lower_full, **{(name, "full"): state.full() for name, state in states.items()}}

    added: dict = {name: [] for name in shapes}
    run_rounds(KERNEL, relations, base, plans.delta_rules, current, shapes, None, max_facts, added)
    if max_facts is not None and sum(relation.size() for relation in relations.values()) > max_facts:
        return None
    schemas = {name: checked.relations[name] for name in shapes}
    if not stratum_plan.aggregates:
        return {
            name: levels_table(_rounds_levels(added[name], shapes[name], 0), schemas[name]) for name in shapes
        }
    final = {name: relation.facts() for name, relation in relations.items()}
    derived = {name: pl.concat(frames, how="vertical").collect() for name, frames in base.items()}
    found = tight_levels(plans, lower_full, final, derived, 0)
    return None if found is None else {name: levels_table(found[name], schemas[name]) for name in shapes}


def _rounds_levels(added: list, shape, first: int) -> pl.DataFrame:
    """The rows of ``added`` ((round, frame) pairs of ``run_rounds``) with ``first`` plus their
    round as their ``LEVEL``."""
    frames = [frame.with_columns(pl.lit(first + round_, pl.Int64).alias(LEVEL)) for round_, frame in added]
    if frames:
        return pl.concat(frames, how="vertical")
    dtypes = {name: polars_type(t) for name, t in zip(shape.column_names, shape.column_types, strict=True)}
    return pl.DataFrame(schema={**dtypes, LEVEL: pl.Int64})


def tight_levels(
    plans: DredPlans, lower: Mapping, targets: Mapping, base: Mapping, first: int
) -> Optional[dict]:
    """Relation -> the ``targets`` (relation -> best rows of min/max relations) with their
    ``LEVEL``: the rows of ``base`` (relation -> rows with a derivation from below, or stated)
    among them get level ``first``, then, round by round (the kernel's loop, each round's rows
    being the next round's delta), the targets the recursive rules derive from the last
    round's rows over ``lower`` (``(relation, "full")`` -> the lower relations) get the next
    level; a row's level is then larger than that of a row with its best value it derives from.
    None when a target is not reached (it would have no support)."""
    shapes = {shape.name: shape for shape in plans.relations}
    relations = {name: SetRelation(dict(targets[name].schema)) for name in shapes}

    def current(states: dict) -> dict:
        return {**lower, **{(name, "full"): state.full() for name, state in states.items()}}

    added: dict = {name: [] for name in shapes}
    seeds = {name: [base[name].lazy()] for name in shapes if name in base}
    run_rounds(
        KERNEL, relations, seeds, plans.delta_rules, current, shapes, None, added=added, within=dict(targets)
    )
    if any(relations[name].size() != targets[name].unique().height for name in shapes):
        return None
    return {name: _rounds_levels(added[name], shapes[name], first) for name in shapes}


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
    reads at ``versions``; None when one is not readable here or too large for the driver
    (``spark.datalog.driverMemory``, as for ``dred_linear``: 0 keeps no levels, which only the
    driver's DRed reads), or, with ``test``, when levels would not pay off there
    (``pays_off``)."""
    settings = settings_of(warehouse.spark)
    if not settings.driver_budget():
        return None
    width = max(len(warehouse_schema.columns) for warehouse_schema in _schemas(checked, stratum_plan))
    max_rows = settings.driver_read_rows(KERNEL_VALUE_BYTES)
    max_facts = settings.driver_facts(width + 1, KERNEL_VALUE_BYTES)
    tables = {}
    for name in lower_relations(stratum_plan) | set(stratum_plan.relations if test else ()):
        table = warehouse.read_facts(
            name, versions[name], max_facts if name in stratum_plan.relations else max_rows
        )
        if table is None:
            return None
        tables[name] = table
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


def relevelled(old: Mapping, dropped: Mapping, added: Mapping) -> dict:
    """Relation -> its new facts with their levels: ``old`` (relation -> facts with levels)
    without the ``dropped`` facts, and the facts ``added`` by phase 3 of DRed (with their
    ``ROUND``) at levels above every old one (``top + 1 + round``)."""
    top = _top(old)
    result = {}
    for name, frame in old.items():
        facts = [c for c in frame.columns if c != LEVEL]
        kept = frame.join(dropped[name], on=facts, how="anti") if dropped[name].height else frame
        fresh = added[name].with_columns((pl.col(ROUND) + top + 1).cast(pl.Int64).alias(LEVEL)).drop(ROUND)
        result[name] = pl.concat([kept, fresh.select(frame.columns)], how="vertical")
    return result


def _top(levels: Mapping) -> int:
    """The largest level of ``levels`` (relation -> facts with levels), 0 when none."""
    found = [frame[LEVEL].max() for frame in levels.values() if frame.height]
    return max((int(level) for level in found if level is not None), default=0)  # type: ignore[arg-type]


def relevelled_best(
    level_plans: LevelPlans,
    plans: DredPlans,
    old: Mapping,
    gone: Mapping,
    targets: Mapping,
    lower: Mapping,
    rounds: Optional[Mapping] = None,
) -> Optional[dict]:
    """Relation -> its new rows with their levels, for a stratum of min/max relations: ``old``
    (relation -> rows with levels) without the ``gone`` rows, and the ``targets`` (relation ->
    rows: new best values, and rows whose support went) at levels above every old one.

    ``rounds`` (relation -> rows with the ``ROUND`` of phase 3 that added them) proposes
    levels: they are kept if every target then has a derivation from a row of smaller level
    (checked by the ``#witness`` plans), which holds unless a value improved after it was
    propagated to an equal one. Otherwise (or without ``rounds``) ``tight_levels`` computes
    them: those derived from what remains, from ``lower`` (``(relation, "full")`` -> its new
    facts) or stated first. None when a target has no support (the levels are then not kept)."""
    top = _top(old)
    remaining = {
        name: frame.join(gone[name], on=targets[name].columns, how="anti") for name, frame in old.items()
    }
    targets = {name: frame.unique() for name, frame in targets.items()}
    if rounds is not None:
        proposed = {
            name: frame.join(rounds[name].unique(subset=frame.columns), on=frame.columns, how="inner")
            .with_columns((pl.col(ROUND) + top + 1).cast(pl.Int64).alias(LEVEL))
            .drop(ROUND)
            for name, frame in targets.items()
        }
        if all(proposed[name].height == frame.height for name, frame in targets.items()):
            tables = _joined(remaining, proposed)
            supported = level_plans.supported(_level_frames(lower, tables, proposed), proposed)
            if all(supported[name].height == frame.height for name, frame in targets.items()):
                return tables
    candidates = {
        name: frame.with_columns(pl.lit(top + 1, pl.Int64).alias(LEVEL)) for name, frame in targets.items()
    }
    base = level_plans.supported(_level_frames(lower, remaining, candidates), candidates)
    found = tight_levels(plans, lower, targets, base, top + 1)
    return None if found is None else _joined(remaining, found)


def _joined(remaining: Mapping, found: Mapping) -> dict:
    return {
        name: pl.concat([frame, found[name].select(frame.columns)], how="vertical")
        for name, frame in remaining.items()
    }


def _level_frames(lower: Mapping, levels: Mapping, candidates: Mapping) -> dict:
    """The frames the ``#witness`` plans read: the ``lower`` relations, the stratum's facts
    with their ``levels`` and the ``candidates`` (relation -> facts with a level)."""
    frames = dict(lower)
    frames.update({(LEVELS + name, "full"): frame for name, frame in levels.items()})
    frames.update({(CANDIDATES + name, "delta"): frame for name, frame in candidates.items()})
    return frames


def added_rounds(added: Mapping) -> dict:
    """Relation -> the rows phase 3 added with the ``ROUND`` that added them (what
    ``relevelled_best`` proposes as levels)."""
    return dict(added)
