"""Stratum plans evaluated to a fixpoint without Spark, for tests of the translator.

Plans are evaluated by the local backend (``spark_datalog.local``, what each Spark task of a
partition-local stratum runs): its compiler, and its semi-naive fixpoint after round 0. This
module only adds the strata around it: naive evaluation, round 0 and aggregates. Plans evaluated
here must give the facts a program means (``test_semantics`` checks them against the reference
interpreter and the seeds' expected results).
"""

from __future__ import annotations

from spark_datalog.local.compile import compile_plan
from spark_datalog.local.fixpoint import fixpoint
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
        new = {
            name: derived[name] if stratum.aggregates.get(name) else db[name] | derived[name]
            for name in stratum.relations
        }
        if all(new[name] == db[name] for name in stratum.relations):
            return
        db.update(new)
        if not stratum.recursive:
            return
    raise RuntimeError("no fixpoint")


def _seminaive(stratum, db, max_iterations):
    """Round 0 runs every rule over ``db``; the rounds after it are the local backend's
    semi-naive fixpoint (``spark_datalog.local.fixpoint``, what each Spark task runs)."""
    own = frozenset(stratum.relations)
    frames = _full(db)
    base = {name: list(db[name]) for name in stratum.relations}
    for rule_plan in stratum.rules:
        base[rule_plan.relation] += evaluate(rule_plan.plan, frames)
    static = {key: rows for key, rows in frames.items() if key[0] not in own}
    variants = [(r.relation, compile_plan(r.plan, own)) for r in stratum.delta_rules]
    best = {name: (spec.func, spec.position) for name, spec in stratum.aggregates.items()}
    outcome = fixpoint(base, variants, static, best, max_rounds=max_iterations)
    if outcome.exceeded:
        raise RuntimeError("no fixpoint")
    db.update({name: set(facts) for name, facts in outcome.facts.items()})
