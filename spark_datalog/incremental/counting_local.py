"""The counting algorithm (``.counting``) in the driver, for small changes of small relations.

The same telescoping sum, term by term the same plans, evaluated on the columnar kernel
(``kernel.counted``) instead of by Spark: the old states come straight from storage
(``stored``, ``Warehouse.read_facts`` with counts: no Spark job), the new states are the old
ones with the changes added, and the changes are pyarrow Tables the driver already holds. So a
stratum fed by changes computed in the driver costs no Spark job.

It reads from storage only the relations a term reads the state of (not those of which only
the change is read, as by a rule of one atom). It declines (None: the caller runs
``.counting`` with Spark) when one of them is not readable from storage within ``max_rows``,
or when a changed relation occurs negated or as an existence test (the condition changes of
``.counting._existence_change`` are left to Spark).
"""

from __future__ import annotations

from typing import Callable, Mapping, Optional

import polars as pl

from ..kernel.checks import collect_all
from ..kernel.compile import compile_node
from ..kernel.counted import WEIGHT, summed, weighted
from ..kernel.frames import to_frame
from ..kernel.types import polars_type
from ..plan.ir import Node, scans
from ..plan.translate import binds_nothing
from ..record_types import from_struct
from ..syntax import ast
from ..counting import counted_changes
from ..plan.maintenance import NEW, OLD, counting_terms
from .counting import telescoping_frames


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
    terms = counting_terms(checked, stratum_plan, changes)
    read = {scan.relation for term in terms if term.plan is not None for scan in scans(term.plan)}
    old = {}
    for name in reads:
        if name + OLD not in read and name + NEW not in read:
            continue  # its terms read only its change (a rule of one atom): not read from storage
        table = stored(name, max_rows)
        if table is None:
            return None
        old[name] = to_frame(table)
    frames = telescoping_frames(old, old, changes)  # the changed new states follow
    changed = [name for name in changes if name + NEW in read]  # only the new states read
    added = collect_all([_added(old[name], to_frame(changes[name])) for name in changed])
    for name in changes:
        frames.pop((name + NEW, "full"), None)
    frames.update({(name + NEW, "full"): state for name, state in zip(changed, added, strict=True)})
    totals = counted_changes(KernelCounting(), checked, terms, frames)
    names = list(totals)
    result: dict = {r.relation: {} for r in stratum_plan.rules if r.relation not in stratum_plan.aggregates}
    for name, total in zip(names, collect_all([totals[name] for name in names]), strict=True):
        rows = total.rows()
        if any(isinstance(t, pl.Struct) for t in total.schema.dtypes()):  # records: hashable
            rows = [tuple(from_struct(v) for v in row) for row in rows]
        result[name] = {row[:-1]: row[-1] for row in rows}
    return result


class KernelCounting:
    """The kernel's weighted frames (``kernel.counted``), for the one counting
    (``spark_datalog.counting.Backend``). Existence tests are declined before."""

    def plan_of(self, term, frames: dict) -> Node:
        assert term.plan is not None  # existence tests were declined
        return term.plan

    def derivations(self, plan, frames: Mapping, schema) -> pl.LazyFrame:
        head = [
            pl.nth(i).cast(polars_type(type_)).alias(name)
            for i, (name, type_) in enumerate(zip(schema.column_names, schema.types, strict=True))
        ]
        return compile_node(weighted(plan), dict(frames)).frame.select(*head, WEIGHT)

    def net(self, parts: list, schema) -> pl.LazyFrame:
        return summed(pl.concat(parts), schema.column_names)


def _added(state: pl.DataFrame, change: pl.DataFrame) -> pl.LazyFrame:
    """A counted state (its columns, the count last) with the signed counts of ``change``
    (the same columns) added; facts reaching a count <= 0 left out. The count is named
    ``WEIGHT``: the scans read the columns by position."""
    names = list(state.columns)
    conformed = change.select([pl.nth(i).cast(t).alias(n) for i, (n, t) in enumerate(state.schema.items())])
    rows = pl.concat([state, conformed]).lazy().rename({names[-1]: WEIGHT})
    return summed(rows, names[:-1]).filter(pl.col(WEIGHT) > 0)
