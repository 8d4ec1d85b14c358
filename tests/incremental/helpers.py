"""Helpers shared by the incremental tests: base warehouses, and checks against a recomputation."""

from __future__ import annotations

import shutil

from spark_datalog.reference import evaluate as reference
from spark_datalog.storage.warehouse import Warehouse

from .test_update import materialized


class Bases:
    """Warehouses materialized once (per fixture scope); each test updates its own copy.

    ``programs`` maps a key to (program text, EDB: relation -> rows, schemas: relation ->
    Spark DDL schema).
    """

    def __init__(self, spark, root, programs: dict):
        self.spark, self.root, self.programs, self.made = spark, root, programs, {}

    def copy(self, key, dest):
        if key not in self.made:
            text, edb, schemas = self.programs[key]
            self.made[key] = materialized(self.spark, self.root / key, text, edb, schemas)
        program, _ = self.made[key]
        shutil.copytree(self.root / key, dest)
        return program, Warehouse(self.spark, str(dest))


def assert_recomputed(program, wh, edb: dict):
    """The warehouse holds what a full evaluation over ``edb`` (relation -> facts) derives (the
    reference interpreter's), and every set-valued relation (recursive, aggregate, numbered by
    ``autoinc()``) stores each fact once, with ``_count`` 1. Each table is read once."""
    expected = reference(program.checked, {name: set(rows) for name, rows in edb.items()})
    for plan in program.plans:
        for name in plan.relations:
            rows = [tuple(r) for r in wh.read(name, with_counts=True).collect()]
            assert {r[:-1] for r in rows if r[-1] > 0} == expected[name], name
            if plan.set_valued(name):
                assert {r[-1] for r in rows} <= {1}, (name, rows)


def methods(report) -> dict:
    """Relation tuple -> the method its stratum used."""
    return {s.relations: s.method for s in report.strata}
