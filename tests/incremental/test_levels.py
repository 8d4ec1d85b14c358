"""incremental.levels (derivation levels, removals without flooding) against the reference.

For random programs and histories of their inputs, every linear stratum without min/max is
maintained in the driver from its facts' levels, batch after batch, the levels carried over:
after each batch its facts are exactly the reference's, and its levels satisfy the invariant
(checked here by the reference's own rule evaluation, level by level). No Spark job.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import spark_datalog as sd
from programs import DOMAIN, programs_with_changes, settings
from spark_datalog.incremental.dred import dred_applies
from spark_datalog.incremental.dred_linear import linear_dred_changes
from spark_datalog.incremental.levels import (LevelPlans, Levels, bootstrap, dropped,
                                              levels_apply)
from spark_datalog.local import arrow
from spark_datalog.plan.ir import scans
from spark_datalog.reference.body import head_tuple, order_body, substitutions
from spark_datalog.reference.relation import Relation
from spark_datalog.reference.terms import Undefined, coerce
from spark_datalog.storage.levels import LEVEL

from .test_dred_linear import _evaluated


def _reads(plan) -> set:
    return {scan.relation for rule_plan in plan.rules for scan in scans(rule_plan.plan)
            } - set(plan.relations)


def _table(checked, name, facts):
    schema = checked.relations[name]
    return arrow.table(sorted(facts, key=repr), schema.column_names,
                       [c.type for c in schema.columns])


def _facts(table) -> dict:
    """Fact -> level of a table of facts with levels."""
    return {row[:-1]: row[-1] for row in arrow.table_rows(table)}


def _assert_valid(checked, plan, levels: dict, state: dict) -> None:
    """Every fact of the stratum is stated, or derived in one step from the lower relations of
    ``state`` and the stratum's facts of smaller level (the reference evaluates the rules)."""
    own = set(plan.relations)
    by_level = {name: _facts(table) for name, table in levels.items()}
    for level in sorted({lv for facts in by_level.values() for lv in facts.values()}):
        db = {name: Relation(set(state.get(name, ()))) for name in _reads(plan)}
        db.update({name: Relation({f for f, lv in facts.items() if lv < level})
                   for name, facts in by_level.items()})
        derived = {name: set(checked.facts.get(name, ())) for name in own}
        for rule in (rule_plan.rule for rule_plan in plan.rules):
            schema = checked.relations[rule.head.predicate]

            def relation_for(position, body=rule.body):
                literal = body[position]
                atom = literal.atom if hasattr(literal, "atom") else literal
                return db.get(atom.predicate, Relation())

            for subst in substitutions(rule.body, order_body(rule.body), relation_for):
                try:
                    derived[rule.head.predicate].add(tuple(
                        coerce(v, t) for v, t in zip(head_tuple(rule.head, subst), schema.types)))
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
        third[name] = kept | draw(st.sets(st.tuples(*[st.integers(*DOMAIN)] * arity),
                                          max_size=3))
    return text, [first, second, third, first]


def _has_levelled_stratum(case) -> bool:
    return any(levels_apply(plan) for plan in sd.Program.parse(case[0]).plans)


@pytest.mark.parametrize("columnar", [False, True], ids=["tuples", "columnar"])
@settings(default=40)
@given(case=histories().filter(_has_levelled_stratum))
def test_levels_maintain_random_programs_through_histories(spark, columnar, case):
    text, edbs = case
    program = sd.Program.parse(text)
    checked = program.checked
    states = [{**edb, **sd.reference.evaluate(program, edb)} for edb in edbs]
    with _evaluated(columnar):
        for plan in program.plans:
            if not levels_apply(plan):
                continue
            lower = _reads(plan)
            first = states[0]
            old = bootstrap(checked, plan, {n: _table(checked, n, first.get(n, ()))
                                            for n in lower})
            for name in plan.relations:
                assert set(_facts(old[name])) == first[name], name
            _assert_valid(checked, plan, old, first)
            for before, after in zip(states, states[1:]):
                appeared = {n: after.get(n, set()) - before.get(n, set()) for n in lower}
                gone = {n: before.get(n, set()) - after.get(n, set()) for n in lower}
                appeared = {n: _table(checked, n, f) for n, f in appeared.items() if f}
                gone = {n: _table(checked, n, f) for n, f in gone.items() if f}
                if not dred_applies(plan, set(appeared), set(gone)):
                    break
                levels = Levels(old)
                changes = linear_dred_changes(
                    spark, checked, plan, dict.fromkeys(set(plan.relations) | lower), appeared,
                    gone, None, stored=lambda name, limit, b=before: _table(checked, name,
                                                                            b.get(name, ())),
                    levels=levels)
                for name in plan.relations:
                    added, removed = (set(facts) for facts in changes[name])
                    assert (before[name] - removed) | added == after[name], name
                    assert set(_facts(levels.new[name])) == after[name], name
                    assert levels.new[name].num_rows == len(after[name]), name
                _assert_valid(checked, plan, levels.new, after)
                old = levels.new


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
    lower = {"arc": _table(checked, "arc", arcs),
             "source": _table(checked, "source", [(s,) for s in sources])}
    return checked, plan, lower, bootstrap(checked, plan, lower)


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
    lost = dropped(LevelPlans(checked, plan), checked, {"reach": [(2,)]}, levels, lower)
    assert lost == {"reach": set()}


def test_a_cycle_does_not_support_itself():
    """1 and 2 reach each other; cutting 0 -> 1 drops both (the arc 2 -> 1 comes from a
    larger level), and 3 after them."""
    arcs = [(0, 1), (1, 2), (2, 1), (2, 3)]
    checked, plan, lower, levels = _reach_levels(arcs)
    lower["arc"] = _table(checked, "arc", [a for a in arcs if a != (0, 1)])
    lost = dropped(LevelPlans(checked, plan), checked, {"reach": [(1,)]}, levels, lower)
    assert lost == {"reach": {(1,), (2,), (3,)}}


def test_only_the_facts_that_lose_their_support_are_dropped(spark):
    """A chain 0 -> 1 -> ... -> 9 with a bypass 0 -> 5: cutting 2 -> 3 drops 3 and 4 only (5
    has level 1 by the bypass, so what follows it keeps its support)."""
    arcs = [(i, i + 1) for i in range(9)] + [(0, 5)]
    checked, plan, lower, levels = _reach_levels(arcs)
    lower["arc"] = _table(checked, "arc", [a for a in arcs if a != (2, 3)])
    lost = dropped(LevelPlans(checked, plan), checked, {"reach": [(3,)]}, levels, lower)
    assert lost == {"reach": {(3,), (4,)}}
    levels_after = Levels(levels)
    changes = linear_dred_changes(
        spark, checked, plan, {"arc": None, "source": None, "reach": None}, {},
        {"arc": _table(checked, "arc", [(2, 3)])}, None,
        stored=lambda name, limit: _table(checked, name, arcs if name == "arc" else [(0,)]),
        levels=levels_after)
    assert sorted(changes["reach"][1]) == [(3,), (4,)] and not changes["reach"][0]
    assert LEVEL in levels_after.new["reach"].column_names
