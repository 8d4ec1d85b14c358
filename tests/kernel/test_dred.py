"""kernel.dred (DRed of one stratum on the kernel) against the reference interpreter.

For random programs, inputs and batches of inserted and deleted input facts: every recursive
stratum maintained by the kernel's DRed from its old facts and the changes of the relations
below it must end with exactly the facts the reference interpreter derives from the new inputs
(random programs with changes, as ``tests/programs.py`` makes them).
"""

from __future__ import annotations

from hypothesis import given

import spark_datalog as sd
from programs import programs_with_changes, settings
from spark_datalog.incremental.dred import dred_applies
from spark_datalog.plan.maintenance import dred_plans
from spark_datalog.kernel.dred import dred
from spark_datalog.kernel.frames import facts_table, to_frame
from spark_datalog.plan.ir import scans


def _reads(plan) -> set:
    return {scan.relation for rule_plan in plan.rules for scan in scans(rule_plan.plan)} - set(plan.relations)


def _frame(checked, name, rows):
    schema = checked.relations[name]
    return to_frame(facts_table(schema.column_names, schema.types, rows), schema.types)


def _rows(frame) -> set:
    return set(frame.rows()) if frame.columns != ["__unit"] else {() for _ in range(frame.height)}


@settings(default=100)
@given(case=programs_with_changes())
def test_kernel_dred_of_every_recursive_stratum_gives_the_new_facts(case):
    text, old_edb, new_edb = case
    program = sd.Program.parse(text)
    checked = program.checked
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
            changed[("inserted", name)] = _frame(checked, name, after[name] - before.get(name, set()))
        for name in deleted:
            changed[("deleted", name)] = _frame(checked, name, before[name] - after.get(name, set()))
        outcome = dred(
            dred_plans(checked, plan, inserted, deleted),
            {n: _frame(checked, n, before[n]) for n in plan.relations},
            {n: _frame(checked, n, before.get(n, ())) for n in lower},
            {n: _frame(checked, n, after.get(n, ())) for n in lower},
            changed,
            max_rounds=500,
        )
        assert not outcome.exceeded
        for name in plan.relations:
            added, removed = (_rows(frame) for frame in outcome.changes[name])
            assert not added & before[name] and removed <= before[name]
            assert (before[name] - removed) | added == after[name], (text, name)
