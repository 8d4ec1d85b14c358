"""The counting algorithm (``.counting``) in the driver, for small changes of small relations.

The same telescoping sum, term by term the same plans, evaluated in memory by
``local.counted`` instead of by Spark: the old states come straight from storage (``stored``,
``Warehouse.read_facts`` with counts: no Spark job), the new states are the old ones with the
changes added, and the changes are pyarrow Tables the driver already holds. So a stratum fed
by changes computed in the driver costs no Spark job.

It declines (None: the caller runs ``.counting`` with Spark) when a relation the stratum reads
is not readable from storage within ``max_rows``, or when a changed relation occurs negated or
as an existence test (the condition changes of ``.counting._existence_change`` are left to
Spark).
"""

from __future__ import annotations

from typing import Callable, Optional

import pyarrow as pa

from ..local import arrow
from ..local.counted import count_derivations
from ..plan.translate import binds_nothing, plan_rule
from ..syntax import ast
from .counting import aliased, body_atom, telescoping_frames, term


def local_counting_changes(
    checked, stratum_plan, reads, changes: dict, stored: Callable, max_rows: int
) -> Optional[dict]:
    """Relation -> {fact: change of its derivation count} (no zero) for every non-aggregate
    relation of the non-recursive stratum, or None (see the module docstring).

    ``reads``: the relations the stratum reads; ``changes``: relation -> its change, a pyarrow
    Table of its columns and ``_count``; ``stored(relation, max_rows)``: its old state, a
    pyarrow Table of its columns and ``_count``, or None."""
    conditions = {  # negated atoms and existence tests: their changes are Spark's
        literal.atom.predicate if isinstance(literal, ast.Negation) else literal.predicate
        for rule_plan in stratum_plan.rules
        for literal in rule_plan.rule.body
        if isinstance(literal, ast.Negation) or (isinstance(literal, ast.Atom) and binds_nothing(literal))
    }
    if set(changes) & conditions:
        return None
    old, new = {}, {}
    for name in reads:
        table = stored(name, max_rows)
        if table is None:
            return None
        old[name] = table if arrow.is_held(table) else arrow.table_rows(table)
        new[name] = _added(old[name], arrow.table_rows(changes[name])) if name in changes else old[name]
    deltas = {name: arrow.table_rows(change) for name, change in changes.items()}
    frames = telescoping_frames(old, new, deltas)
    patched = aliased(checked, frames)
    sums: dict = {}
    for rule_plan in stratum_plan.rules:
        if rule_plan.relation in stratum_plan.aggregates:
            continue
        totals = sums.setdefault(rule_plan.relation, {})
        for i, literal in enumerate(rule_plan.rule.body):
            atom = body_atom(literal)
            if atom is None or atom.predicate not in changes:
                continue
            variant, position = term(rule_plan.rule, i)
            plan = plan_rule(variant, patched, delta_position=position).plan
            for fact, weight in count_derivations(plan, frames).items():
                totals[fact] = totals.get(fact, 0) + weight
    return {name: {fact: n for fact, n in totals.items() if n} for name, totals in sums.items()}


def _added(state, change: list):
    """A counted state (held table or tuples, the count last) with the signed counts of
    ``change`` (tuples, the count last) added; facts reaching a count <= 0 left out."""
    delta = {row[:-1]: row[-1] for row in change}
    if arrow.is_held(state):
        width = state.num_columns - 1
        wanted = set(delta) if width > 1 else {fact[0] for fact in delta}
        found = arrow.matching(state, list(range(width)), wanted)
        if found is not None:
            before = {row[:-1]: row[-1] for row in arrow.table_rows(found)}
            names = state.column_names[:width]
            facts = arrow.like(state.select(names), list(delta))
            kept = state.join(facts, names, join_type="left anti")
            merged = [fact + (before.get(fact, 0) + n,) for fact, n in delta.items()]
            return pa.concat_tables([kept, arrow.like(state, [r for r in merged if r[-1] > 0])])
        state = arrow.table_rows(state)
    counts = {row[:-1]: row[-1] for row in state}
    for fact, n in delta.items():
        counts[fact] = counts.get(fact, 0) + n
    return [fact + (n,) for fact, n in counts.items() if n > 0]
