"""incremental.levels (derivation levels, removals without flooding) against the reference.

For random programs and histories of their inputs, every linear stratum of sets or of min/max
relations is maintained in the driver from its facts' levels, batch after batch, the levels
carried over: after each batch its facts are exactly the reference's, and its levels satisfy
the invariant (checked here by the reference's own rule evaluation, level by level). No Spark
job.
"""

from __future__ import annotations

import logging
import random

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import spark_datalog as sd
from programs import CONNECTED_COMPONENTS, DOMAIN, programs_with_changes, settings
from spark_datalog.incremental import dred_linear
from spark_datalog.incremental import levels as levels_module
from spark_datalog.incremental.dred import dred_applies
from spark_datalog.incremental.dred_linear import linear_dred_changes
from spark_datalog.incremental.levels import (
    LevelPlans,
    Levels,
    bootstrap,
    dropped,
    flooded,
    levels_apply,
    pays_off,
    levels_frame,
    relation_frame,
    stored_levels,
)
from spark_datalog.plan.ir import scans
from spark_datalog.reference.body import head_tuple, order_body, substitutions
from spark_datalog.reference.relation import Relation
from spark_datalog.reference.terms import Undefined, coerce
from spark_datalog.plan.maintenance import LEVEL

from .test_dred_linear import rows_of, table_of
from .test_update import TC, assert_matches_reference, change, materialized, stored


def _reads(plan) -> set:
    return {scan.relation for rule_plan in plan.rules for scan in scans(rule_plan.plan)} - set(plan.relations)


def _table(checked, name, facts):
    return table_of(checked, name, facts)


def _facts(table) -> dict:
    """Fact -> level of a table of facts with levels."""
    return {row[:-1]: row[-1] for row in rows_of(table)}


def _assert_valid(checked, plan, levels: dict, state: dict) -> None:
    """Every fact of the stratum is stated, or derived in one step from the lower relations of
    ``state`` and the stratum's facts of smaller level (the reference evaluates the rules)."""
    own = set(plan.relations)
    by_level = {name: _facts(table) for name, table in levels.items()}
    for level in sorted({lv for facts in by_level.values() for lv in facts.values()}):
        db = {name: Relation(set(state.get(name, ()))) for name in _reads(plan)}
        db.update(
            {name: Relation({f for f, lv in facts.items() if lv < level}) for name, facts in by_level.items()}
        )
        derived = {name: set(checked.facts.get(name, ())) for name in own}
        for rule in (rule_plan.rule for rule_plan in plan.rules):
            schema = checked.relations[rule.head.predicate]

            def relation_for(position, body=rule.body, db=db):
                literal = body[position]
                atom = literal.atom if hasattr(literal, "atom") else literal
                return db.get(atom.predicate, Relation())

            for subst in substitutions(rule.body, order_body(rule.body), relation_for):
                try:
                    derived[rule.head.predicate].add(
                        tuple(
                            coerce(v, t)
                            for v, t in zip(head_tuple(rule.head, subst), schema.types, strict=True)
                        )
                    )
                except Undefined:
                    continue
        for name, facts in by_level.items():
            unsupported = {f for f, lv in facts.items() if lv == level} - derived[name]
            assert not unsupported, f"{name} at level {level}: {sorted(unsupported)[:3]}"


@st.composite
def histories(draw):
    """``(text, [edb, ...])``: a random program and three successive states of its inputs."""
    text, first, second = draw(programs_with_changes())
    relations = sd.Program.parse(text).relations
    third = {}
    for name, rows in second.items():
        arity = len(relations[name].column_names)
        kept = {row for row in rows if draw(st.integers(0, 2)) > 0}
        third[name] = kept | draw(st.sets(st.tuples(*[st.integers(*DOMAIN)] * arity), max_size=3))
    return text, [first, second, third, first]


def _levelled_strata(text: str, best: bool) -> list:
    """The strata of the program maintained with levels: of min/max relations (``best``) or of
    sets."""
    program = sd.Program.parse(text)
    return [
        plan
        for plan in program.plans
        if levels_apply(program.checked, plan) and bool(plan.aggregates) == best
    ]


@settings(default=80)
@given(case=histories().filter(lambda case: _levelled_strata(case[0], best=False)))
def test_levels_maintain_random_programs_through_histories(spark, case):
    _assert_maintained(spark, case, best=False)


@pytest.mark.parametrize("proposed", [True, False], ids=["rounds", "tight"])
@settings(default=60)
@given(case=histories().filter(lambda case: _levelled_strata(case[0], best=True)))
def test_levels_of_min_max_groups_maintain_random_programs_through_histories(spark, proposed, case):
    """A min/max row's level is that of a derivation of its best value (the reference's rule
    evaluation derives that very row from rows of smaller level). New rows get the rounds that
    added them as levels, or (``tight``: no rounds proposed) levels found anew."""
    with pytest.MonkeyPatch.context() as patch:
        if not proposed:
            patch.setattr(dred_linear, "added_rounds", lambda added: None)
        _assert_maintained(spark, case, best=True)


def _assert_maintained(spark, case, best: bool) -> None:
    text, edbs = case
    program = sd.Program.parse(text)
    checked = program.checked
    states = [{**edb, **sd.reference.evaluate(program, edb)} for edb in edbs]
    for plan in _levelled_strata(text, best):
        lower = _reads(plan)
        first = states[0]
        old = bootstrap(checked, plan, {n: _table(checked, n, first.get(n, ())) for n in lower})
        for name in plan.relations:
            assert set(_facts(old[name])) == first[name], name
        _assert_valid(checked, plan, old, first)
        for before, after in zip(states, states[1:], strict=False):
            appeared = {n: after.get(n, set()) - before.get(n, set()) for n in lower}
            gone = {n: before.get(n, set()) - after.get(n, set()) for n in lower}
            appeared = {n: _table(checked, n, f) for n, f in appeared.items() if f}
            gone = {n: _table(checked, n, f) for n, f in gone.items() if f}
            if not (best or dred_applies(plan, set(appeared), set(gone))):
                break
            levels = Levels(old)
            changes = linear_dred_changes(
                spark,
                checked,
                plan,
                dict.fromkeys(set(plan.relations) | lower),
                appeared,
                gone,
                None,
                stored=lambda name, limit, b=before: _table(checked, name, b.get(name, ())),
                levels=levels,
            )
            for name in plan.relations:
                added, removed = (set(rows_of(facts)) for facts in changes[name])
                assert (before[name] - removed) | added == after[name], name
                assert set(_facts(levels.new[name])) == after[name], name
                assert levels.new[name].num_rows == len(after[name]), name
            _assert_valid(checked, plan, levels.new, after)
            old = levels.new


def test_levels_maintain_a_stratum_without_columns(spark):
    """``go()`` (no columns) loses its only support when ``stop()`` appears, and its cycle
    through ``e`` does not hold it; the stored levels of a fact without columns are a level
    alone."""
    from .test_nullary import INPUTS

    edbs = [
        {"e": {(1, 2), (2, 3)}, "on": {()}, "stop": set()},
        {"e": {(1, 2), (2, 3)}, "on": {()}, "stop": {()}},
        {"e": set(), "on": {()}, "stop": {()}},
        {"e": {(1, 7)}, "on": {()}, "stop": set()},
        {"e": {(1, 7)}, "on": set(), "stop": set()},
        {"e": {(1, 7), (7, 1)}, "on": {()}, "stop": set()},
    ]
    _assert_maintained(spark, (INPUTS, edbs), best=False)


REACH = """
.decl arc(x: long, y: long)
.decl source(x: long)
reach(X) :- source(X).
reach(Y) :- reach(X), arc(X, Y).
"""


def _reach_levels(arcs, sources=(0,)):
    program = sd.Program.parse(REACH)
    checked = program.checked
    (plan,) = [p for p in program.plans if p.recursive]
    lower = {
        "arc": _table(checked, "arc", arcs),
        "source": _table(checked, "source", [(s,) for s in sources]),
    }
    return checked, plan, lower, bootstrap(checked, plan, lower)


def _dropped(checked, plan, seeds: dict, levels: dict, lower: dict) -> dict:
    """``dropped`` from seeds (relation -> facts), stored levels and lower relations (Arrow
    tables), as sets of facts."""
    schemas = checked.relations
    lost = dropped(
        LevelPlans(checked, plan),
        checked,
        {n: relation_frame(_table(checked, n, facts), schemas[n]) for n, facts in seeds.items()},
        {n: levels_frame(table, schemas[n]) for n, table in levels.items()},
        {n: relation_frame(table, schemas[n]) for n, table in lower.items()},
    )
    return {name: set(frame.rows()) for name, frame in lost.items()}


def test_bootstrap_levels_are_the_rounds_of_first_derivation():
    _, _, _, levels = _reach_levels([(0, 1), (1, 2), (0, 2), (2, 3), (3, 1)])
    assert _facts(levels["reach"]) == {(0,): 0, (1,): 1, (2,): 1, (3,): 2}


def test_an_edge_with_an_alternative_support_drops_nothing():
    """Deleting 1 -> 2 where 3 -> 2 also reaches 2 from a smaller level: nothing is dropped,
    where DRed would over-delete 2 and everything after it."""
    arcs = [(0, 1), (0, 3), (1, 2), (3, 2), (2, 4), (4, 5)]
    checked, plan, lower, levels = _reach_levels(arcs)
    lower["arc"] = _table(checked, "arc", [a for a in arcs if a != (1, 2)])
    assert _facts(levels["reach"])[(2,)] == 2
    lost = _dropped(checked, plan, {"reach": [(2,)]}, levels, lower)
    assert lost == {"reach": set()}


def test_a_cycle_does_not_support_itself():
    """1 and 2 reach each other; cutting 0 -> 1 drops both (the arc 2 -> 1 comes from a
    larger level), and 3 after them."""
    arcs = [(0, 1), (1, 2), (2, 1), (2, 3)]
    checked, plan, lower, levels = _reach_levels(arcs)
    lower["arc"] = _table(checked, "arc", [a for a in arcs if a != (0, 1)])
    lost = _dropped(checked, plan, {"reach": [(1,)]}, levels, lower)
    assert lost == {"reach": {(1,), (2,), (3,)}}


def test_only_the_facts_that_lose_their_support_are_dropped(spark):
    """A chain 0 -> 1 -> ... -> 9 with a bypass 0 -> 5: cutting 2 -> 3 drops 3 and 4 only (5
    has level 1 by the bypass, so what follows it keeps its support)."""
    arcs = [(i, i + 1) for i in range(9)] + [(0, 5)]
    checked, plan, lower, levels = _reach_levels(arcs)
    lower["arc"] = _table(checked, "arc", [a for a in arcs if a != (2, 3)])
    lost = _dropped(checked, plan, {"reach": [(3,)]}, levels, lower)
    assert lost == {"reach": {(3,), (4,)}}
    levels_after = Levels(levels)
    changes = linear_dred_changes(
        spark,
        checked,
        plan,
        {"arc": None, "source": None, "reach": None},
        {},
        {"arc": _table(checked, "arc", [(2, 3)])},
        None,
        stored=lambda name, limit: _table(checked, name, arcs if name == "arc" else [(0,)]),
        levels=levels_after,
    )
    assert sorted(rows_of(changes["reach"][1])) == [(3,), (4,)] and not changes["reach"][0].num_rows
    assert LEVEL in levels_after.new["reach"].column_names


# -- through the warehouse: kept where they pay off, used and maintained by update ---------


def _random_arcs(nodes: int, edges: int, seed: int) -> list:
    rng = random.Random(seed)
    arcs = set()
    while len(arcs) < edges:
        x, y = rng.randrange(nodes), rng.randrange(nodes)
        if x != y:
            arcs.add((x, y))
    return sorted(arcs)


def _kept(wh, program, name: str):
    """``name``'s facts with levels stored for the tables' current versions, or None."""
    (plan,) = [p for p in program.plans if name in p.relations]
    versions = {n: wh.version(n) for n in wh.relations()}
    old = stored_levels(wh, program.fingerprint, plan, versions).old
    return None if old is None else old[name]


REACH_SCHEMAS = {"arc": "x long, y long", "source": "x long"}


def test_levels_are_kept_used_and_maintained_through_updates(spark, tmp_path, monkeypatch):
    """Reachability over a random graph (facts with several derivations): materialize keeps
    levels, each update removes through them (never over-deleting the whole relation) and
    stores the new ones, and the warehouse equals the reference after every batch."""
    arcs = _random_arcs(120, 360, seed=3)
    edb = {"arc": list(arcs), "source": [(0,)]}
    program, wh = materialized(spark, tmp_path / "wh", REACH, edb, REACH_SCHEMAS)
    assert _kept(wh, program, "reach") is not None
    over_deleted = _updated_through_levels(
        spark, monkeypatch, program, wh, edb, "reach", nodes=120, deletes=6, inserts=8, seed=4
    )
    assert all(n < len(stored(wh, "reach")) for n in over_deleted), over_deleted


def _updated_through_levels(
    spark, monkeypatch, program, wh, edb: dict, name: str, nodes: int, deletes: int, inserts: int, seed: int
) -> list:
    """Three updates of ``edb["arc"]`` (random deletions and insertions), each checked against
    the reference and leaving ``name``'s levels stored for its facts; the number of facts
    ``dropped`` by each (at least one call per update asserted)."""
    counts = []
    original = levels_module.dropped

    def recording(*args, **kwargs):
        lost = original(*args, **kwargs)
        if not kwargs.get("removed"):  # not the old rows of improved min/max groups
            counts.append(sum(map(len, lost.values())))
        return lost

    monkeypatch.setattr(dred_linear, "dropped", recording)
    rng = random.Random(seed)
    for step in range(3):
        gone = rng.sample(edb["arc"], deletes)
        added = [a for a in _random_arcs(nodes, inserts, seed=seed + 10 + step) if a not in edb["arc"]]
        program.update(spark, wh, changes={"arc": change(spark, "arc", added, gone)})
        edb["arc"] = sorted(set(edb["arc"]) - set(gone) | set(added))
        assert_matches_reference(program, wh, edb)
        kept = _kept(wh, program, name)
        assert kept is not None
        assert set(_facts(kept)) == stored(wh, name)
    assert len(counts) == 3
    return counts


CC = CONNECTED_COMPONENTS


def test_min_max_levels_are_kept_used_and_maintained_through_updates(spark, tmp_path, monkeypatch):
    """Connected components by min label over a random graph with one large component: levels
    are kept for the labels, each update re-evaluates only the groups whose label loses its
    support (not the whole component, as without levels), and stores the new levels; the
    warehouse equals the reference after every batch."""
    arcs = _random_arcs(150, 180, seed=5)
    edb = {"arc": list(arcs)}
    program, wh = materialized(spark, tmp_path / "wh", CC, edb, {"arc": "x long, y long"})
    assert set(_facts(_kept(wh, program, "cc"))) == stored(wh, "cc")
    dropped_groups = _updated_through_levels(
        spark, monkeypatch, program, wh, edb, "cc", nodes=150, deletes=4, inserts=6, seed=6
    )
    assert all(n < len(stored(wh, "cc")) // 2 for n in dropped_groups), dropped_groups


def test_no_levels_where_every_fact_has_one_derivation(spark, tmp_path, caplog):
    """Transitive closure on a tree: DRed over-deletes exactly what goes, levels would only
    cost more; none are kept, and updates maintain it as before."""
    tree = [(i, 2 * i + c) for i in range(1, 16) for c in (0, 1)]
    with caplog.at_level(logging.INFO, logger="spark_datalog"):
        program, wh = materialized(spark, tmp_path / "wh", TC, {"arc": tree})
    assert _kept(wh, program, "tc") is None
    assert any("no levels kept" in r.getMessage() for r in caplog.records)
    program.update(spark, wh, changes={"arc": change(spark, "arc", deletes=[(2, 4)])})
    assert_matches_reference(program, wh, {"arc": [a for a in tree if a != (2, 4)]})
    assert _kept(wh, program, "tc") is None


@pytest.mark.parametrize("flood_min", [1, 10**9])
def test_levels_computed_after_a_flooded_dred(spark, tmp_path, datalog_settings, flood_min):
    """Levels gone stale (here: removed) are computed again by the first update whose DRed
    re-derived most of what it over-deleted, and only then."""
    arcs = _random_arcs(60, 180, seed=5)
    edb = {"arc": list(arcs), "source": [(0,)]}
    program, wh = materialized(spark, tmp_path / "wh", REACH, edb, REACH_SCHEMAS)
    wh.levels.clear("reach")
    datalog_settings(floodMin=flood_min)
    first = [a for a in arcs if a[0] == 0][0]  # everything after it is over-deleted
    program.update(spark, wh, changes={"arc": change(spark, "arc", deletes=[first])})
    edb["arc"].remove(first)
    assert_matches_reference(program, wh, edb)
    kept = _kept(wh, program, "reach")
    if flood_min == 1:
        assert kept is not None and set(_facts(kept)) == stored(wh, "reach")
    else:
        assert kept is None


def test_flooded_and_pays_off():
    def frames(rows):
        return {"r": pl.DataFrame({"x": [row[0] for row in rows]}, schema={"x": pl.Int64})}

    assert flooded(frames([(1,), (2,)]), frames([(1,), (3,)]), flood_min=2)
    assert not flooded(frames([(1,), (2,)]), frames([(1,), (3,)]), flood_min=3)  # too few to count
    assert not flooded(frames([(1,), (2,), (3,)]), frames([(1,)]), flood_min=2)  # a third came back
    program = sd.Program.parse(REACH)
    checked = program.checked
    (plan,) = [p for p in program.plans if p.recursive]
    diamond = [(0, 1), (0, 2), (1, 3), (2, 3)]  # 3 has two derivations
    chain = [(0, 1), (1, 2), (2, 3)]
    for arcs, expected in ((diamond, True), (chain, False)):
        lower = {"arc": _table(checked, "arc", arcs), "source": _table(checked, "source", [(0,)])}
        facts = {"reach": _table(checked, "reach", [(n,) for n in range(4)])}
        assert pays_off(checked, plan, facts, lower) is expected


EMPTY_REACH = """
.decl arc(x: long, y: long)
reach(Y) :- arc(0, Y).
reach(Y) :- reach(X), arc(X, Y).
"""


def test_an_empty_linear_relation_materializes_empties_and_fills_again(spark, tmp_path):
    """Issue 19, item 2: levels sampled no fact of an empty relation (Arrow's ``take`` of an
    empty, null-typed index crashed); an update that empties the relation and one that fills
    it again are maintained like any other."""
    edb = {"arc": [(1, 2), (2, 3)]}
    program, wh = materialized(spark, tmp_path / "wh", EMPTY_REACH, edb)
    assert stored(wh, "reach") == set()
    assert_matches_reference(program, wh, edb)
    history = [([(0, 1)], []), ([], [(0, 1)]), ([(0, 2), (3, 0)], []), ([(5, 6)], [(0, 2)])]
    for inserts, deletes in history:
        program.update(spark, warehouse=wh, changes={"arc": change(spark, "arc", inserts, deletes)})
        edb["arc"] = sorted(set(edb["arc"]) - set(deletes) | set(inserts))
        assert_matches_reference(program, wh, edb)
    assert stored(wh, "reach") == set()


def test_pays_off_on_no_facts():
    program = sd.Program.parse(EMPTY_REACH)
    plan = next(p for p in program.plans if p.recursive)
    empty = _table(program.checked, "reach", [])
    assert (
        pays_off(program.checked, plan, {"reach": empty}, {"arc": _table(program.checked, "arc", [])})
        is False
    )
