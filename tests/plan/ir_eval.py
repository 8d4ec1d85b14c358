"""A tiny pure-Python evaluator of the plan IR, for tests only (the real oracle is
``spark_datalog.reference``). Rows are dicts keyed by column name; a node yields a list of rows
(a multiset). It exists to catch translator bugs without Spark: plans evaluated to a fixpoint
here must give the facts a program means.
"""

from __future__ import annotations

import operator

from spark_datalog.plan import ir


class _Undefined(Exception):
    """Division or mod by zero: the row fails, as in every engine."""


def _divide(a, b):
    if b == 0:
        raise _Undefined
    if isinstance(a, float) or isinstance(b, float):
        return a / b
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


def _mod(a, b):
    if b == 0:
        raise _Undefined
    if isinstance(a, float) or isinstance(b, float):
        import math

        return math.fmod(a, b)
    remainder = abs(a) % abs(b)
    return remainder if a >= 0 else -remainder


ARITHMETIC = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": _divide, "mod": _mod}
COMPARE = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def value(expr, row):
    if isinstance(expr, ir.ColumnRef):
        return row[expr.name]
    if isinstance(expr, ir.Literal):
        return expr.value
    if isinstance(expr, ir.Arithmetic):
        return ARITHMETIC[expr.op](value(expr.left, row), value(expr.right, row))
    if isinstance(expr, ir.Compare):
        return COMPARE[expr.op](value(expr.left, row), value(expr.right, row))
    raise TypeError(expr)


def _holds(conditions, row):
    try:
        return all(value(c, row) for c in conditions)
    except _Undefined:
        return False


def _project(outputs, row):
    try:
        return {name: value(expr, row) for name, expr in outputs}
    except _Undefined:
        return None


def _key(row, names):
    return tuple(row[n] for n in names)


def evaluate(node, frames) -> list:
    """Rows of ``node``; ``frames`` maps (relation, source) to a set of tuples."""
    return _EVAL[type(node)](node, frames)


def _scan(node, frames):
    rows = sorted(frames.get((node.relation, node.source), ()), key=repr)
    return [dict(zip(node.columns, t)) for t in rows]


def _select(node, frames):
    return [r for r in evaluate(node.child, frames) if _holds(node.conditions, r)]


def _project_node(node, frames):
    rows = (_project(node.outputs, r) for r in evaluate(node.child, frames))
    return [r for r in rows if r is not None]


def _join(node, frames):
    right = {}
    for r in evaluate(node.right, frames):
        right.setdefault(_key(r, node.on), []).append(r)
    return [{**l, **r} for l in evaluate(node.left, frames) for r in right.get(_key(l, node.on), [])]


def _antijoin(node, frames):
    keys = {_key(r, node.on) for r in evaluate(node.right, frames)}
    return [l for l in evaluate(node.left, frames) if _key(l, node.on) not in keys]


def _union(node, frames):
    return [r for c in node.children for r in evaluate(c, frames)]


def _distinct(node, frames):
    seen, out = set(), []
    for r in evaluate(node.child, frames):
        k = _key(r, node.columns)
        if k not in seen:
            seen.add(k)
            out.append(r)
    return out


def _aggregate_node(node, frames):
    groups = {}
    for r in evaluate(node.child, frames):
        groups.setdefault(_key(r, node.group_by), []).append(r[node.argument])
    return [
        {**dict(zip(node.group_by, k)), node.output: aggregate(node.func, vs)} for k, vs in groups.items()
    ]


_EVAL = {
    ir.Scan: _scan,
    ir.Unit: lambda node, frames: [{}],
    ir.Select: _select,
    ir.Project: _project_node,
    ir.Join: _join,
    ir.AntiJoin: _antijoin,
    ir.Union_: _union,
    ir.Distinct: _distinct,
    ir.Aggregate: _aggregate_node,
}


def aggregate(func, values):
    """The language's aggregate over a multiset of values (count: distinct values)."""
    if func == "count":
        return len(set(values))
    if func == "sum":
        return sum(values)
    if func == "avg":
        return sum(values) / len(values)
    return {"min": min, "max": max}[func](values)


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
    return [tuple(r[c] for c in rule_plan.plan.columns) for r in evaluate(rule_plan.plan, frames)]


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
        key[: spec.position] + (aggregate(spec.func, values),) + key[spec.position :]
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
