"""Stratum plans evaluated to a fixpoint without Spark, for tests of the translator.

Plans are evaluated by the Polars kernel (``spark_datalog.kernel``, what each Spark task of a
partition-local stratum runs), stratum by stratum with ``kernel.fixpoint.evaluate_stratum``:
semi-naive runs the full rules in round 0 and the delta variants after it; naive runs the full
rules in every round (the same loop, given the full rules as its variants). Plans evaluated
here must give the facts a program means (``test_semantics`` checks them against the reference
interpreter and the seeds' expected results).
"""

from __future__ import annotations

import dataclasses

from spark_datalog.kernel.fixpoint import evaluate_stratum
from spark_datalog.kernel.frames import facts_table
from spark_datalog.reference.terms import normal


def run(checked, stratum_plans, edb: dict, strategy: str = "seminaive", max_iterations: int = 1000) -> dict:
    """Every relation (name -> set of tuples) after evaluating ``stratum_plans`` of ``checked``
    (a CheckedProgram) over ``edb`` (relation -> set of tuples)."""
    relations = checked.relations
    tables = {
        name: facts_table(relations[name].column_names, relations[name].types, rows)
        for name, rows in edb.items()
    }
    for stratum in stratum_plans:
        if strategy == "naive":
            stratum = dataclasses.replace(stratum, delta_rules=stratum.rules)
        tables.update(evaluate_stratum(stratum, checked, tables, max_iterations))
    return {name: rows_of(table) for name, table in tables.items()}


def rows_of(table) -> set:
    """The rows of an Arrow table as tuples of the reference's values (one NaN, no ``-0.0``)."""
    if not table.num_columns:
        return {()} if table.num_rows else set()
    columns = [[normal(v) for v in column.to_pylist()] for column in table.columns]
    return set(zip(*columns, strict=True))
