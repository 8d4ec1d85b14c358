"""The removal strategies of kernel.dred against recomputation and the reference interpreter.

Group repair (a stratum of min/max relations: ``affected_groups``) and derivation levels
(``incremental.levels.dropped``, given to ``dred`` as the facts it removes) on random graphs
with random removals and insertions: the maintained relation equals the reference's evaluation
of the new inputs and the kernel's recomputation of the stratum. Levels drop every fact that
goes (but a min/max row an insertion improves on), and under deletions alone no more than DRed
over-deletes. No Spark.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import spark_datalog as sd
from programs import CONNECTED_COMPONENTS, settings
from spark_datalog.plan.maintenance import dred_plans
from spark_datalog.incremental.levels import LevelPlans, bootstrap, dropped, levels_frame
from spark_datalog.dred import over_deleted
from spark_datalog.kernel.dred import KERNEL, dred, seed_facts
from spark_datalog.kernel.fixpoint import evaluate_stratum
from spark_datalog.kernel.frames import facts_table, to_frame

CC = CONNECTED_COMPONENTS

SSSP = """
.decl warc(x: long, y: long, w: long)
dist(Y, min<D>) :- warc(0, Y, D).
dist(Y, min<D>) :- dist(X, D1), warc(X, Y, W), D = D1 + W.
"""

WIDEST = """
.decl warc(x: long, y: long, w: long)
wide(Y, max<W>) :- warc(0, Y, W).
wide(Y, max<W>) :- wide(X, V), warc(X, Y, U), U <= V, W = U.
wide(Y, max<W>) :- wide(X, V), warc(X, Y, U), V < U, W = V.
"""

REACH = """
.decl arc(x: long, y: long)
.decl source(x: long)
reach(X) :- source(X).
reach(Y) :- reach(X), arc(X, Y).
"""

_NODES = st.integers(0, 11)


@st.composite
def graph_changes(draw, weighted: bool):
    """(old arcs, new arcs): a random graph, and it with random arcs removed and added."""
    arc = st.tuples(_NODES, _NODES, st.integers(1, 5)) if weighted else st.tuples(_NODES, _NODES)
    old = draw(st.sets(arc, max_size=30))
    removed = {a for a in old if draw(st.integers(0, 3)) == 0}
    added = draw(st.sets(arc, max_size=4))
    return old, (old - removed) | added


def _frame(checked, name, rows):
    schema = checked.relations[name]
    return to_frame(facts_table(schema.column_names, schema.types, sorted(rows)), schema.types)


def _maintained(text: str, name: str, old_edb: dict, new_edb: dict, by_levels: bool) -> None:
    """Maintains the stratum of ``name`` from ``old_edb`` to ``new_edb`` and checks it."""
    program = sd.Program.parse(text)
    checked = program.checked
    before = {**old_edb, **sd.reference.evaluate(program, old_edb)}
    after = {**new_edb, **sd.reference.evaluate(program, new_edb)}
    (plan,) = [p for p in program.plans if name in p.relations]
    lower = {n for n in checked.relations if n not in plan.relations and n in before}
    inserted = {n for n in lower if after[n] - before[n]}
    deleted = {n for n in lower if before[n] - after[n]}
    changed = {("inserted", n): _frame(checked, n, after[n] - before[n]) for n in inserted}
    changed.update({("deleted", n): _frame(checked, n, before[n] - after[n]) for n in deleted})
    plans = dred_plans(checked, plan, inserted, deleted)
    old = {name: _frame(checked, name, before[name])}
    lower_old = {n: _frame(checked, n, before[n]) for n in lower}
    lower_new = {n: _frame(checked, n, after[n]) for n in lower}
    removed = None
    if by_levels:
        levels = bootstrap(checked, plan, lower_old)
        levels = {n: levels_frame(table, checked.relations[n]) for n, table in levels.items()}
        seeds = seed_facts(plans, old, lower_old, changed)
        removed = dropped(LevelPlans(checked, plan), checked, seeds, levels, lower_new)
        lost_rows = set(removed[name].rows())
        if not (inserted and plan.aggregates):  # (an insertion may improve a min/max group)
            assert before[name] - after[name] <= lost_rows  # every fact that goes is dropped
        if not inserted:  # under deletions alone, at most what DRed over-deletes
            over, _, _ = over_deleted(KERNEL, plans, old, lower_old, changed, None, None)
            assert lost_rows <= set(over[name].rows())
    outcome = dred(plans, old, lower_old, lower_new, changed, removed=removed)
    added, lost = (set(frame.rows()) for frame in outcome.changes[name])
    assert not added & before[name] and lost <= before[name]
    assert (before[name] - lost) | added == after[name]
    inputs = {n: _frame(checked, n, after[n]).to_arrow() for n in lower}
    recomputed = evaluate_stratum(plan, checked, inputs, None)[name]
    assert set(zip(*(c.to_pylist() for c in recomputed.columns), strict=True)) == after[name]


@settings(default=100)
@given(case=graph_changes(weighted=False))
def test_group_repair_of_connected_components_equals_recomputation(case):
    old, new = case
    _maintained(CC, "cc", {"arc": old}, {"arc": new}, by_levels=False)


@settings(default=100)
@given(case=graph_changes(weighted=True), text=st.sampled_from([SSSP, WIDEST]))
def test_group_repair_of_weighted_paths_equals_recomputation(case, text):
    old, new = case
    name = "dist" if text == SSSP else "wide"
    _maintained(text, name, {"warc": old}, {"warc": new}, by_levels=False)


@settings(default=100)
@given(case=graph_changes(weighted=False), sources=st.sets(_NODES, min_size=1, max_size=2))
def test_dropping_by_levels_equals_recomputation(case, sources):
    old, new = case
    source = {(s,) for s in sources}
    _maintained(REACH, "reach", {"arc": old, "source": source}, {"arc": new, "source": source}, True)


@settings(default=100)
@given(case=graph_changes(weighted=False))
def test_group_repair_by_levels_equals_recomputation(case):
    old, new = case
    _maintained(CC, "cc", {"arc": old}, {"arc": new}, by_levels=True)
