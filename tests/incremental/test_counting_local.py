"""incremental.counting_local (the counting algorithm in the driver) and kernel.counted.

For random programs and random changes of their inputs, every non-recursive stratum without
aggregates: the telescoping sum computed in memory must equal, fact by fact, the change of the
derivation counts of the stratum's rules evaluated in full over the old and the new states
(states given as pyarrow Tables, the count last). And kernel.counted must weigh the rows of a
rule plan as spark.counted does (a few examples: those need Spark jobs).
"""

from __future__ import annotations

import os
from collections import Counter

from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings

import spark_datalog as sd
from programs import programs_with_changes, settings
from spark_datalog.incremental.counting_local import local_counting_changes
from spark_datalog.kernel.counted import count_derivations
from spark_datalog.kernel.frames import rows_table
from spark_datalog.plan.ir import scans
from spark_datalog.spark.counted import count_derivations as spark_count_derivations


def _counted_table(schema, facts, weight):
    """Facts with a count each (``weight(fact)``), as a table of the columns and ``_count``."""
    import pyarrow as pa

    facts = sorted(facts, key=repr)
    table = rows_table(schema.column_names, schema.types, facts)
    return table.append_column("_count", pa.array([weight(f) for f in facts], pa.int64()))


def _as_dict(counts) -> dict:
    """A frame of head tuples and their summed weight (last) as {tuple: weight}."""
    return {row[:-1]: row[-1] for row in counts.rows()}


def _counting_strata(program):
    for plan in program.plans:
        if not plan.recursive and not plan.aggregates:
            yield plan


def _reads(plan) -> set:
    return {s.relation for r in plan.rules for s in scans(r.plan)} - set(plan.relations)


def _full_counts(plan, states) -> dict:
    """Relation -> Counter of derivation counts of the stratum's rules over ``states``."""
    frames = {(name, "full"): table for name, table in states.items()}
    counts: dict = {}
    for rule_plan in plan.rules:
        counter = counts.setdefault(rule_plan.relation, Counter())
        counter.update(_as_dict(count_derivations(rule_plan.plan, frames)))
    return counts


@settings(default=80)
@given(case=programs_with_changes())
def test_telescoping_sum_equals_the_change_of_full_counts(case):
    text, old_edb, new_edb = case
    program = sd.Program.parse(text)
    relations = program.checked.relations
    before = {**old_edb, **sd.reference.evaluate(program, old_edb)}
    after = {**new_edb, **sd.reference.evaluate(program, new_edb)}
    for plan in _counting_strata(program):
        reads = _reads(plan)
        # lower facts weigh 1, or 2 when their first value is even (counts need not be 1)
        weight = lambda fact: 2 if fact and isinstance(fact[0], int) and fact[0] % 2 == 0 else 1  # noqa
        old = {n: _counted_table(relations[n], before.get(n, set()), weight) for n in reads}
        new = {n: _counted_table(relations[n], after.get(n, set()), weight) for n in reads}
        changes = {}
        for n in reads:
            delta = Counter({f: weight(f) for f in after.get(n, set())})
            delta.subtract({f: weight(f) for f in before.get(n, set())})
            delta = {f: c for f, c in delta.items() if c}
            if delta:
                changes[n] = _counted_table(relations[n], delta, delta.get)
        counts = local_counting_changes(
            program.checked, plan, reads, changes, lambda name, limit, old=old: old[name], 1_000
        )
        if counts is None:  # a changed relation occurs negated: left to Spark
            continue
        full_old, full_new = _full_counts(plan, old), _full_counts(plan, new)
        for name in plan.relations:
            expected = Counter(full_new.get(name, {}))
            expected.subtract(full_old.get(name, {}))
            assert counts.get(name, {}) == {f: c for f, c in expected.items() if c}, name


@hypothesis_settings(
    max_examples=int(os.environ.get("SD_SPARK_EXAMPLES", "4")),
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.function_scoped_fixture,
    ],
)
@given(case=programs_with_changes())
def test_kernel_weights_are_spark_weights(spark, case):
    text, old_edb, _ = case
    program = sd.Program.parse(text)
    relations = program.checked.relations
    before = {**old_edb, **sd.reference.evaluate(program, old_edb)}
    for plan in _counting_strata(program):
        reads = _reads(plan)
        if any(relations[n].arity == 0 for n in reads):
            continue
        tables = {n: _counted_table(relations[n], before.get(n, set()), lambda f: len(f)) for n in reads}
        for rule_plan in plan.rules:
            kernel = _as_dict(count_derivations(rule_plan.plan, {(n, "full"): t for n, t in tables.items()}))
            by_spark = spark_count_derivations(
                rule_plan.plan, {(n, "full"): spark.createDataFrame(t) for n, t in tables.items()}, spark
            ).collect()
            assert kernel == {tuple(row)[:-1]: row[-1] for row in by_spark}


def test_counts_by_hand_with_a_negation_and_a_relation_without_columns():
    # e(1, 2) weighs 2 and loses 1, e(3, 4) and e(0, 9) are added; f(4) blocks q(3); m() has a
    # derivation per e(X, Y) with X < Y: -1 + 1 + 1
    program = sd.Program.parse(".input e, f\nq(X) :- e(X, Y), !f(Y).\nm() :- e(X, Y), X < Y.\n")
    relations = program.checked.relations
    stored = {(1, 2): 2, (1, 5): 1, (7, 0): 1}
    change = {(1, 2): -1, (3, 4): 1, (0, 9): 1}
    old = {
        "e": _counted_table(relations["e"], stored, stored.get),
        "f": _counted_table(relations["f"], {(4,)}, lambda fact: 1),
    }
    changes = {"e": _counted_table(relations["e"], change, change.get)}
    expected = {"q": {(1,): -1, (0,): 1}, "m": {(): 1}}
    for plan in program.plans:
        (name,) = plan.relations
        reads = _reads(plan)
        counts = local_counting_changes(program.checked, plan, reads, changes, lambda n, _: old[n], 100)
        assert counts == {name: expected[name]}
