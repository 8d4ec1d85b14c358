"""incremental.dred_linear (DRed of a linear stratum in the driver) against the reference.

For random programs, inputs and changes of them: every linear recursive stratum maintained from
its old facts (Spark frames, as ``update`` passes them) and the changes of the relations below
it must end with exactly the facts the reference interpreter derives from the new inputs. Each
example costs a few Spark jobs per stratum, so the example count is small by default
(``SD_SPARK_EXAMPLES`` raises it).
"""

from __future__ import annotations

import os

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

import spark_datalog as sd
from programs import prem_programs, programs_with_changes, settings
from spark_datalog.errors import NonTerminationError
from spark_datalog.incremental.dred import dred_applies
from spark_datalog.placement import Declined
from spark_datalog.incremental.dred_linear import linear_dred_applies, linear_dred_changes, repairs_groups
from spark_datalog.kernel.frames import facts_table
from spark_datalog.plan.ir import scans
from spark_datalog.settings import KERNEL_VALUE_BYTES
from spark_datalog.spark.inputs import facts_frame

spark_settings = hypothesis_settings(
    max_examples=int(os.environ.get("SD_SPARK_EXAMPLES", "4")),
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.function_scoped_fixture,
    ],
)


def rows_of(table) -> list:
    """The rows of an Arrow table, as tuples."""
    if not table.num_columns:
        return [()] * table.num_rows
    return list(zip(*(column.to_pylist() for column in table.columns), strict=True))


def table_of(checked, name: str, facts) -> "pa.Table":
    """``facts`` of relation ``name`` as an Arrow table of its columns."""
    schema = checked.relations[name]
    return facts_table(schema.column_names, schema.types, sorted(facts, key=repr))


def _has_linear_stratum(case) -> bool:
    return any(linear_dred_applies(plan) for plan in sd.Program.parse(case[0]).plans)


def _reads(plan) -> set:
    return {scan.relation for rule_plan in plan.rules for scan in scans(rule_plan.plan)} - set(plan.relations)


def _changes(spark, program, plan, before: dict, after: dict, max_iterations=500):
    """The stratum's (inserted, deleted) facts per relation, from frames of the states."""
    relations = program.checked.relations

    def frame(name, facts):
        return facts_frame(spark, relations[name], facts)

    lower = _reads(plan)
    old = {n: frame(n, before.get(n, ())) for n in set(plan.relations) | lower}
    inserted = {
        n: frame(n, after.get(n, set()) - before.get(n, set()))
        for n in lower
        if after.get(n, set()) - before.get(n, set())
    }
    deleted = {
        n: frame(n, before.get(n, set()) - after.get(n, set()))
        for n in lower
        if before.get(n, set()) - after.get(n, set())
    }
    return linear_dred_changes(spark, program.checked, plan, old, inserted, deleted, max_iterations)


def _states(text, old_edb, new_edb):
    program = sd.Program.parse(text)
    before = {**old_edb, **sd.reference.evaluate(program, old_edb)}
    after = {**new_edb, **sd.reference.evaluate(program, new_edb)}
    return program, before, after


def _assert_maintained(spark, program, plan, before, after, changes_of=None):
    """The stratum's changes (by ``changes_of``, default ``_changes``) turn its old facts into
    the reference's new ones."""
    changes = (changes_of or _changes)(spark, program, plan, before, after)
    assert changes is not None
    for name in plan.relations:
        added, removed = (set(rows_of(facts)) for facts in changes[name])
        assert not added & before[name] and removed <= before[name], name
        assert (before[name] - removed) | added == after[name], name


def _maintained_strata(program, before, after):
    """The strata DRed maintains in the driver under this change."""
    for plan in program.plans:
        lower = _reads(plan)
        appeared = {n for n in lower if after.get(n, set()) - before.get(n, set())}
        gone = {n for n in lower if before.get(n, set()) - after.get(n, set())}
        if linear_dred_applies(plan) and dred_applies(plan, appeared, gone):
            yield plan


@spark_settings
@given(case=programs_with_changes().filter(_has_linear_stratum))
def test_linear_dred_of_random_programs_gives_the_new_facts(spark, case):
    program, before, after = _states(*case)
    for plan in _maintained_strata(program, before, after):
        _assert_maintained(spark, program, plan, before, after)


def _held_changes(spark, program, plan, before: dict, after: dict):
    """``_changes`` with every relation read from storage and every change given as a pyarrow
    Table, as ``update`` passes them from the embedded warehouse: no Spark job at all."""

    def table(name, facts):
        return table_of(program.checked, name, facts)

    lower = _reads(plan)
    names = set(plan.relations) | lower
    inserted = {n: table(n, after.get(n, set()) - before.get(n, set())) for n in lower}
    deleted = {n: table(n, before.get(n, set()) - after.get(n, set())) for n in lower}
    return linear_dred_changes(
        spark,
        program.checked,
        plan,
        dict.fromkeys(names),
        {n: t for n, t in inserted.items() if t.num_rows},
        {n: t for n, t in deleted.items() if t.num_rows},
        None,  # no round limit
        stored=lambda name, limit: table(name, before.get(name, ())),
    )


@settings(default=100)
@given(case=programs_with_changes().filter(_has_linear_stratum))
def test_linear_dred_from_stored_tables_gives_the_new_facts(spark, case):
    """Relations read as Arrow tables (as from storage): the same facts, many examples (no
    Spark job)."""
    program, before, after = _states(*case)
    for plan in _maintained_strata(program, before, after):
        _assert_maintained(spark, program, plan, before, after, _held_changes)


@st.composite
def prem_insertions(draw):
    """A min/max-in-recursion program whose inputs only gain facts."""
    text, new_edb = draw(prem_programs())
    old_edb = {name: {row for row in rows if draw(st.integers(0, 2)) > 0} for name, rows in new_edb.items()}
    return text, old_edb, new_edb


@spark_settings
@given(case=prem_insertions().filter(_has_linear_stratum))
def test_linear_dred_of_min_max_recursion_under_insertions(spark, case):
    """Groups improve: each improved group's old row goes and its new best comes."""
    program, before, after = _states(*case)
    for plan in program.plans:
        if not (plan.aggregates and linear_dred_applies(plan)):
            continue
        _assert_maintained(spark, program, plan, before, after)


@st.composite
def prem_batches(draw):
    """A min/max-in-recursion program whose inputs gain and lose facts in one batch."""
    text, edb = draw(prem_programs())
    old_edb, new_edb = (
        {name: {row for row in rows if draw(st.booleans())} for name, rows in edb.items()} for _ in range(2)
    )
    return text, old_edb, new_edb


@settings(default=120)
@given(case=prem_batches())
def test_min_max_recursion_under_removals_recomputes_the_affected_groups(spark, case):
    """Removals reaching min/max relations: the affected groups get their new best (or
    disappear), the others are unchanged — as the reference computes the new state."""
    program, before, after = _states(*case)
    for plan in program.plans:
        if repairs_groups(program.checked, plan):
            _assert_maintained(spark, program, plan, before, after, _held_changes)


def test_groups_are_repaired_only_for_linear_integer_min_max_strata():
    program = sd.Program.parse("""
        .decl arc(x: long, y: long, w: long)
        .decl warc(x: long, y: long, w: double)
        dist(Y, min<D>) :- arc(0, Y, D).
        dist(Y, min<D>) :- dist(X, D1), arc(X, Y, W), D = D1 + W.
        wdist(Y, min<D>) :- warc(0, Y, D).
        wdist(Y, min<D>) :- wdist(X, D1), warc(X, Y, W), D = D1 + W.
        path(X, Y, min<D>) :- arc(X, Y, D).
        path(X, Y, min<D>) :- path(X, Z, D1), path(Z, Y, D2), D = D1 + D2.
        reach(Y) :- arc(0, Y, _).
        reach(Y) :- reach(X), arc(X, Y, _).
    """)
    repaired = {
        plan.relations[0]: repairs_groups(program.checked, plan) for plan in program.plans if plan.recursive
    }
    assert repaired == {"dist": True, "wdist": False, "path": False, "reach": False}


TC = """
.decl arc(x: long, y: long)
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), arc(Y, Z).
"""


def test_applies_to_linear_strata_only():
    program = sd.Program.parse(
        TC
        + """
        sg(X, Y) :- arc(P, X), arc(P, Y), X != Y.
        sg(X, Y) :- arc(A, X), sg(A, B), arc(B, Y).
        path(X, Y) :- arc(X, Y).
        path(X, Z) :- path(X, Y), path(Y, Z).
        cc(X, min<X>) :- arc(X, _).
        cc(Y, min<L>) :- cc(X, L), arc(X, Y).
        .input arc
    """
    )
    applies = {plan.relations[0]: linear_dred_applies(plan) for plan in program.plans if plan.recursive}
    assert applies == {"tc": True, "sg": True, "path": False, "cc": True}


def test_mixed_batch_over_a_cycle_and_two_derivations(spark):
    # deleting 2 -> 3 cuts the cycle 1 -> 2 -> 3 -> 1, inserting 2 -> 4 -> 1 closes it again
    old_edb = {"arc": {(1, 2), (2, 3), (3, 1), (1, 3)}}
    new_edb = {"arc": {(1, 2), (3, 1), (1, 3), (2, 4), (4, 1)}}
    program, before, after = _states(TC, old_edb, new_edb)
    inserted, deleted = (
        set(rows_of(facts)) for facts in _changes(spark, program, program.plans[0], before, after)["tc"]
    )
    assert inserted == after["tc"] - before["tc"] and deleted == before["tc"] - after["tc"]
    assert (before["tc"] - deleted) | inserted == after["tc"]


def test_over_the_limits_it_declines(spark, caplog, datalog_settings):
    # a chain of 9 arcs: tc holds 45 facts
    chain = {(i, i + 1) for i in range(9)}
    program, before, after = _states(TC, {"arc": chain}, {"arc": chain - {(4, 5)}})
    plan = program.plans[0]
    # the limits of tasks do not bound the driver
    datalog_settings(maxLocalFacts=2, maxBroadcastRows=0)
    _assert_maintained(spark, program, plan, before, after)
    # 9 * 384 bytes: arc's 9 rows at 2 * 48 bytes in a quarter, 36 facts of tc in the whole
    datalog_settings(driverMemory=9 * 4 * 2 * KERNEL_VALUE_BYTES)
    declined = _changes(spark, program, plan, before, after)
    assert isinstance(declined, Declined)
    assert declined.reason == "tc has over 36 rows for the driver (spark.datalog.driverMemory)"
    datalog_settings(driverMemory="3k")  # arc: 8 rows, tc: 32 facts
    declined = _changes(spark, program, plan, before, after)
    assert isinstance(declined, Declined)
    assert declined.reason == "arc has over 8 rows for the driver (spark.datalog.driverMemory)"
    datalog_settings(driverMemory="1m")
    _assert_maintained(spark, program, plan, before, after)


def test_runaway_recursion_raises(spark):
    text = """
    .decl start(x: long)
    up(X) :- start(X).
    up(Y) :- up(X), Y = X + 1.
    """
    program = sd.Program.parse(text)
    plan = program.plans[0]
    before = {"start": set(), "up": set()}
    after = {"start": {(0,)}}
    with pytest.raises(NonTerminationError, match="within 20 incremental iterations"):
        _changes(spark, program, plan, before, after, max_iterations=20)
