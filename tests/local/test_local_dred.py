"""local.dred (DRed of one stratum in memory) against the reference interpreter, without Spark.

For random programs, inputs and batches of inserted and deleted input facts: every recursive
stratum maintained by DRed from its old facts and the changes of the relations below it must
end with exactly the facts the reference interpreter derives from the new inputs.
"""

from __future__ import annotations

from hypothesis import given

import spark_datalog as sd
from programs import programs_with_changes, settings
from spark_datalog.incremental.dred import dred_applies
from spark_datalog.incremental.dred_local import dred_plans
from spark_datalog.local.dred import dred


def _reads(plan) -> set:
    return {scan.relation for rule_plan in plan.rules for scan in _scans(rule_plan.plan)} - set(
        plan.relations
    )


def _scans(node):
    from spark_datalog.plan.ir import scans

    return scans(node)


@settings(default=100)
@given(case=programs_with_changes())
def test_dred_of_every_recursive_stratum_gives_the_new_facts(case):
    text, old_edb, new_edb = case
    program = sd.Program.parse(text)
    before = {**old_edb, **sd.reference.evaluate(program, old_edb)}
    after = {**new_edb, **sd.reference.evaluate(program, new_edb)}
    for plan in program.plans:
        if not plan.recursive:
            continue
        lower = _reads(plan)
        inserted = {n for n in lower if after.get(n, set()) - before.get(n, set())}
        deleted = {n for n in lower if before.get(n, set()) - after.get(n, set())}
        if not dred_applies(plan, inserted, deleted):
            continue
        changed = {}
        for name in inserted:
            changed[("inserted", name)] = list(after[name] - before.get(name, set()))
        for name in deleted:
            changed[("deleted", name)] = list(before[name] - after.get(name, set()))
        outcome = dred(
            dred_plans(program.checked, plan, inserted, deleted),
            {n: list(before[n]) for n in plan.relations},
            {n: list(before.get(n, ())) for n in lower},
            {n: list(after.get(n, ())) for n in lower},
            changed,
            max_rounds=500,
        )
        assert not outcome.exceeded
        for name in plan.relations:
            added, removed = (set(rows) for rows in outcome.changes[name])
            assert not added & before[name] and removed <= before[name]
            assert (before[name] - removed) | added == after[name], (text, name)
