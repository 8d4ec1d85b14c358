"""Stratum plans evaluated to a fixpoint without Spark, for tests of the translator.

Plans are evaluated by the local backend (``spark_datalog.local.compile``, the one each
partition of a decomposed stratum runs); this module only adds the fixpoint over whole programs
(naive and semi-naive, aggregates), so that plans evaluated here must give the facts a program
means (``test_semantics`` checks them against the reference interpreter).
"""

from __future__ import annotations

from spark_datalog.local.compile import compile_plan
from spark_datalog.reference.aggregates import reduce_values


def evaluate(node, frames) -> list:
    """Rows (tuples in ``node.columns`` order) of ``node``; ``frames`` maps (relation, source)
    to a set of tuples."""
    return list(compile_plan(node, frozenset()).rows(frames))


# ---------------------------------------------------------------------------------------------
# Fixpoint over stratum plans


def run(stratum_plans, edb: dict, strategy: str = "seminaive", max_iterations: int = 1000) -> dict:
    """Every relation after evaluating ``stratum_plans`` over ``edb`` (relation -> set of tuples)."""
    db = {name: set(rows) for name, rows in edb.items()}
    for stratum in stratum_plans:
        for name in stratum.relations:
            db.setdefault(name, set())
        if strategy == "naive" or not stratum.recursive:
            _naive(stratum, db, max_iterations)
        else:
            _seminaive(stratum, db, max_iterations)
    return db


def _tuples(rule_plan, frames):
    return evaluate(rule_plan.plan, frames)


def _derive(stratum, rule_plans, frames, current):
    """relation -> derived facts of ``rule_plans``; aggregate relations are aggregated with the
    facts they already hold as candidates (min/max) or from the contributions alone."""
    contributions = {name: [] for name in stratum.relations}
    for rule_plan in rule_plans:
        contributions[rule_plan.relation] += _tuples(rule_plan, frames)
    derived = {}
    for name, rows in contributions.items():
        spec = stratum.aggregates.get(name)
        if spec is None:
            derived[name] = set(rows)
        else:
            if spec.func in ("min", "max"):
                rows = rows + list(current[name])
            derived[name] = _aggregate_rows(rows, spec)
    return derived


def _aggregate_rows(rows, spec):
    groups = {}
    for row in rows:
        key = row[: spec.position] + row[spec.position + 1 :]
        groups.setdefault(key, []).append(row[spec.position])
    return {
        key[: spec.position] + (reduce_values(spec.func, values),) + key[spec.position :]
        for key, values in groups.items()
    }


def _full(db):
    return {(name, "full"): rows for name, rows in db.items()}


def _naive(stratum, db, max_iterations):
    for _ in range(max_iterations):
        derived = _derive(stratum, stratum.rules, _full(db), db)
        new = {name: derived[name] if stratum.aggregates.get(name) else db[name] | derived[name]
               for name in stratum.relations}
        if all(new[name] == db[name] for name in stratum.relations):
            return
        db.update(new)
        if not stratum.recursive:
            return
    raise RuntimeError("no fixpoint")


def _seminaive(stratum, db, max_iterations):
    delta = _merge(stratum, db, _derive(stratum, stratum.rules, _full(db), db))
    for _ in range(max_iterations):
        if not any(delta.values()):
            return
        frames = {**_full(db), **{(name, "delta"): rows for name, rows in delta.items()}}
        delta = _merge(stratum, db, _derive(stratum, stratum.delta_rules, frames, db))
    raise RuntimeError("no fixpoint")


def _merge(stratum, db, derived):
    """Add ``derived`` to ``db``; return the delta (new facts; for min/max, improved groups)."""
    delta = {}
    for name in stratum.relations:
        if stratum.aggregates.get(name):
            delta[name] = derived[name] - db[name]
            db[name] = derived[name]
        else:
            delta[name] = derived[name] - db[name]
            db[name] = db[name] | delta[name]
    return delta
