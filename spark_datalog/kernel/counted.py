"""Derivation counts on the kernel: a rule's IR evaluated with a signed weight on every row.

The multiset meaning of a rule body that the counting algorithm needs (as ``spark.counted``):
a scan row weighs its stored count (a frame's last column), a join multiplies the weights of
the rows it pairs, selections and projections keep them (no rows are merged), and an
anti-join or a semi-join keeps the left row's weight, matching against the right rows of
positive weight (a negated atom, an existence test, is a condition, not a factor). Summing the
weights per head tuple gives the number of derivations of each fact, or, fed with signed
changes, the change in that number.

The mechanism is a rewrite of the plan, not a second compiler: :func:`weighted` turns a plan
into one of the same nodes that carries the weight as one more column, :data:`WEIGHT`, last
(a scan names the frame's count column, a join multiplies its sides' weights in a
projection), and ``compile.compile_node`` compiles it as any plan, so values follow the
reference's semantics node for node. A product of weights beyond ``long`` is an ``Overflow``
(never a wrapped count). Plans with ``Distinct`` or ``Aggregate`` (those of aggregate rules)
are refused: an aggregate fact has exactly one derivation, its group.
"""

from __future__ import annotations

from typing import Callable, Sequence

import polars as pl

from ..plan import ir
from .checks import collect_all
from .compile import Frames, compile_node

WEIGHT = "__weight"  # a row's weight; no rule variable or fresh column has this name
_RIGHT = "__weight_right"  # the right side's weight inside a join


def count_derivations(plan, frames: Frames) -> pl.DataFrame:
    """Per head tuple of ``plan``, the summed weight of its derivations in :data:`WEIGHT`
    (zero sums dropped). ``frames``: ``(relation, source)`` -> a frame of the relation's
    columns followed by its (signed) count.

    >>> import pyarrow as pa
    >>> e = pa.table({"x": [1, 1, 2], "y": [5, 6, 5], "_count": [2, 3, -1]})
    >>> plan = ir.Project(ir.Scan("e", ("X", "Y")), (("X", ir.ColumnRef("X")),))
    >>> sorted(count_derivations(plan, {("e", "full"): e}).rows())
    [(1, 5), (2, -1)]
    """
    (result,) = collect_all([summed(compile_node(weighted(plan), frames).frame, plan.columns)])
    return result


def summed(frame: pl.LazyFrame, columns: Sequence[str]) -> pl.LazyFrame:
    """The rows of ``frame`` merged per value of ``columns`` (none: all rows into one), their
    :data:`WEIGHT` summed; zero sums dropped."""
    total = pl.col(WEIGHT).sum()
    merged = frame.group_by(list(columns)).agg(total) if columns else frame.select(total)
    return merged.filter(pl.col(WEIGHT) != 0)


def weighted(node) -> ir.Node:
    """``node`` rewritten to carry each row's weight: a plan whose columns are ``node``'s and
    :data:`WEIGHT`, whose rows are ``node``'s rows (not merged), each with its weight."""
    try:
        rewrite = _WEIGHTED[type(node)]
    except KeyError:
        raise TypeError(f"{type(node).__name__} has no derivation-count semantics") from None
    return rewrite(node)


def _columns(names, *extra) -> tuple:
    return tuple((name, ir.ColumnRef(name)) for name in names) + extra


def _scan(node: ir.Scan) -> ir.Node:
    return ir.Scan(node.relation, node.columns + (WEIGHT,), node.source)


def _unit(node: ir.Unit) -> ir.Node:
    return ir.Project(node, ((WEIGHT, ir.Literal(1, "long")),))


def _select(node: ir.Select) -> ir.Node:
    return ir.Select(weighted(node.child), node.conditions)


def _project(node: ir.Project) -> ir.Node:
    return ir.Project(weighted(node.child), node.outputs + ((WEIGHT, ir.ColumnRef(WEIGHT)),))


def _join(node: ir.Join) -> ir.Node:
    right = ir.Project(weighted(node.right), _columns(node.right.columns, (_RIGHT, ir.ColumnRef(WEIGHT))))
    joined = ir.Join(weighted(node.left), right, node.on)
    product = ir.Arithmetic("*", ir.ColumnRef(WEIGHT), ir.ColumnRef(_RIGHT), "long")
    return ir.Project(joined, _columns(node.columns, (WEIGHT, product)))


def _matching(node) -> ir.Node:
    """An ``AntiJoin`` or a ``SemiJoin``: the left rows with their own weight, against the
    right rows of positive weight (the right weight is no factor)."""
    present = ir.Select(weighted(node.right), (ir.Compare(">", ir.ColumnRef(WEIGHT), ir.Literal(0, "long")),))
    return type(node)(weighted(node.left), present, node.on)


def _union(node: ir.Union_) -> ir.Node:
    return ir.Union_(tuple(weighted(child) for child in node.children))


def _generate(node: ir.Generate) -> ir.Node:
    """Each generated row weighs what its input row weighs."""
    generated = ir.Generate(weighted(node.child), node.func, node.args, node.output, node.type)
    return ir.Project(generated, _columns(node.columns, (WEIGHT, ir.ColumnRef(WEIGHT))))


_WEIGHTED: dict[type, Callable[..., ir.Node]] = {
    ir.Scan: _scan,
    ir.Unit: _unit,
    ir.Select: _select,
    ir.Project: _project,
    ir.Join: _join,
    ir.AntiJoin: _matching,
    ir.SemiJoin: _matching,
    ir.Union_: _union,
    ir.Generate: _generate,
}
