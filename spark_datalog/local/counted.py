"""Evaluate a rule's IR with derivation counts, in memory: ``spark.counted`` for the local backend.

Every row carries a signed weight: a scan row weighs its stored count (a frame's rows are the
relation's values followed by the count), a join multiplies the weights of the rows it pairs,
selections and projections keep them, and an anti-join keeps the left row's weight (against
the right rows of positive count). Summing the weights per head tuple gives the number of
derivations of each fact, or, fed with signed changes, the change in that number. A frame may
be a held pyarrow Table (``arrow.is_held``, the count as its last column): a join probes it by
key in bulk, so only its rows that meet the other side become tuples.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Callable

from ..plan import ir
from ..reference.terms import Undefined
from . import arrow
from .compile import _expression, _key, _predicate

Weighted = list  # of (row, weight)


def count_derivations(plan, frames) -> dict:
    """Head tuple -> the summed weight of its derivations (zero sums dropped)."""
    sums: dict = {}
    for row, weight in counted(plan, frames):
        sums[row] = sums.get(row, 0) + weight
    return {row: weight for row, weight in sums.items() if weight}


def counted(node, frames) -> Weighted:
    """The rows of ``node`` with their weights (rows are not merged)."""
    try:
        evaluate = _COUNTED[type(node)]
    except KeyError:
        raise TypeError(f"{type(node).__name__} has no derivation-count semantics") from None
    return evaluate(node, frames)


def _weighted(rows) -> Weighted:
    return [(row[:-1], row[-1]) for row in rows]


def _scan_rows(node: ir.Scan, frames, positions=None, wanted=None) -> Weighted:
    value = frames[(node.relation, node.source)]
    if arrow.is_held(value):
        if positions is not None:
            found = arrow.matching(value, positions, wanted)
            value = value if found is None else found
        return _weighted(arrow.table_rows(value))
    return _weighted(value)


def _scan(node: ir.Scan, frames) -> Weighted:
    return _scan_rows(node, frames)


def _unit(node: ir.Unit, frames) -> Weighted:
    return [((), 1)]


def _select(node: ir.Select, frames) -> Weighted:
    holds = _predicate(node.conditions, node.child.columns)
    return [(row, weight) for row, weight in counted(node.child, frames) if holds(row)]


def _project(node: ir.Project, frames) -> Weighted:
    outputs = [_expression(expr, node.child.columns) for _, expr in node.outputs]
    result = []
    for row, weight in counted(node.child, frames):
        try:
            result.append((tuple(output(row) for output in outputs), weight))
        except Undefined:
            continue
    return result


def _join(node: ir.Join, frames) -> Weighted:
    left = counted(node.left, frames)
    left_key = _key(node.on, node.left.columns)
    right_key = _key(node.on, node.right.columns)
    rest = [i for i, c in enumerate(node.right.columns) if c not in node.on]
    if isinstance(node.right, ir.Scan) and node.on:  # only the right rows some left row meets
        positions = [node.right.columns.index(c) for c in node.on]
        right = _scan_rows(node.right, frames, positions, {left_key(row) for row, _ in left})
    else:
        right = counted(node.right, frames)
    tail = (
        itemgetter(*rest) if len(rest) > 1 else ((lambda row: (row[rest[0]],)) if rest else (lambda row: ()))
    )
    index: dict = {}
    for row, weight in right:
        index.setdefault(right_key(row), []).append((tail(row), weight))
    return [
        (row + extra, weight * other) for row, weight in left for extra, other in index.get(left_key(row), ())
    ]


def _antijoin(node, frames) -> Weighted:
    """An ``AntiJoin`` or a ``SemiJoin``: the left rows whose key the right side lacks (has),
    with their own weight."""
    keep = isinstance(node, ir.SemiJoin)
    right_key = _key(node.on, node.right.columns)
    present = {right_key(row) for row, weight in counted(node.right, frames) if weight > 0}
    left_key = _key(node.on, node.left.columns)
    return [(row, weight) for row, weight in counted(node.left, frames) if (left_key(row) in present) is keep]


def _union(node: ir.Union_, frames) -> Weighted:
    result = []
    for child in node.children:
        order = [child.columns.index(c) for c in node.columns]
        result += [(tuple(row[i] for i in order), weight) for row, weight in counted(child, frames)]
    return result


_COUNTED: dict[type, Callable[..., Weighted]] = {
    ir.Scan: _scan,
    ir.Unit: _unit,
    ir.Select: _select,
    ir.Project: _project,
    ir.Join: _join,
    ir.AntiJoin: _antijoin,
    ir.SemiJoin: _antijoin,
    ir.Union_: _union,
}
