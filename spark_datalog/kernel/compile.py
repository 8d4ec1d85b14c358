"""Compile the relational-algebra IR into Polars lazy frames.

One small function per IR node, chosen through ``_NODE_COMPILERS`` (as ``spark.compile``);
children are compiled first. Every function returns a :class:`Compiled`: the lazy frame, whose
columns are the node's ``columns`` in order, and their Polars types, tracked node by node so
that no plan is resolved to learn them. Values follow ``reference.terms`` (see
:mod:`.expressions`); a node without columns carries the one column :data:`~.types.UNIT`.
Nothing is collected here: the caller collects once per round.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Union

import polars as pl
import pyarrow as pa

from ..generators import polars_generate
from ..plan import ir
from .aggregates import aggregate_frame
from .checks import passes
from .expressions import Staging, both, defined
from .frames import to_frame
from .types import UNIT, KernelUnsupported, polars_type

Source = Union[pl.DataFrame, pl.LazyFrame, pa.Table]
Frames = Mapping  # (relation, "full" | "delta") -> Source, its columns in relation order


@dataclass(frozen=True)
class Compiled:
    """A node's lazy frame and its column types (name -> Polars type)."""

    frame: pl.LazyFrame
    dtypes: dict

    @property
    def columns(self) -> list:
        """The frame's column names (``[UNIT]`` for a node without columns)."""
        return list(self.dtypes) or [UNIT]


def compile_node(node, frames: Frames) -> Compiled:
    """The lazy frame computing ``node``, with columns ``node.columns`` in order.

    ``frames`` maps ``(relation, source)`` to a Polars frame or an Arrow table whose columns
    are the relation's, positionally. Example::

        >>> scan = ir.Scan("e", ("X", "Y"))
        >>> compile_node(scan, {("e", "full"): pa.table({"a": [1], "b": [2]})}).frame.collect().rows()
        [(1, 2)]
    """
    try:
        compiler = _NODE_COMPILERS[type(node)]
    except KeyError:
        raise TypeError(f"not an IR node: {node!r}") from None
    return compiler(node, frames)


def _scan(node: ir.Scan, frames: Frames) -> Compiled:
    key = (node.relation, node.source)
    if key not in frames:
        raise KeyError(f"no frame for {node.source} relation {node.relation!r}")
    source = frames[key]
    frame = (to_frame(source) if isinstance(source, pa.Table) else source).lazy()
    schema = source.schema if isinstance(source, pl.DataFrame) else frame.collect_schema()
    types = [dtype for name, dtype in schema.items() if name != UNIT]
    if len(types) != len(node.columns):
        raise ValueError(
            f"scan {node.relation}: frame has {len(types)} columns, scan names {len(node.columns)}"
        )
    if not node.columns:
        return Compiled(frame.select(UNIT), {})
    renamed = frame.select([pl.nth(i).alias(name) for i, name in enumerate(node.columns)])
    return Compiled(renamed, dict(zip(node.columns, types, strict=True)))


def _unit(node: ir.Unit, frames: Frames) -> Compiled:
    return Compiled(pl.LazyFrame({UNIT: [True]}), {})


def _select(node: ir.Select, frames: Frames) -> Compiled:
    child = compile_node(node.child, frames)
    if not node.conditions:
        return child
    staging = Staging(child.dtypes)
    holds = None
    for condition in node.conditions:  # the next condition is evaluated where these hold
        holds = both(holds, staging.condition(condition, holds))
    assert holds is not None
    if staging.checks:
        holds = passes(staging.checks) & holds
    frame = staging.apply(child.frame).filter(holds).select(child.columns)
    return Compiled(frame, child.dtypes)


def _project(node: ir.Project, frames: Frames) -> Compiled:
    child = compile_node(node.child, frames)
    staging = Staging(child.dtypes)
    reached, outputs = None, []
    for _, expr in node.outputs:  # the next output is evaluated where these are defined
        operand = staging.operand(expr, reached)
        reached = both(reached, defined(operand))
        outputs.append(operand)
    names = [staging.temporary() for _ in outputs]
    frame = staging.apply(child.frame).with_columns(
        [o.expr.alias(n) for o, n in zip(outputs, names, strict=True)] + [pl.lit(True).alias(UNIT)]
    )
    keep = both(passes(staging.checks) if staging.checks else None, reached)
    if keep is not None:
        frame = frame.filter(keep)
    if not node.outputs:
        return Compiled(frame.select(UNIT), {})
    frame = frame.select([pl.col(n).alias(name) for n, (name, _) in zip(names, node.outputs, strict=True)])
    return Compiled(frame, {name: o.dtype for (name, _), o in zip(node.outputs, outputs, strict=True)})


def _join(node: ir.Join, frames: Frames) -> Compiled:
    left = compile_node(node.left, frames)
    right = compile_node(node.right, frames)
    dtypes = {**right.dtypes, **left.dtypes}
    if not node.on:
        joined = left.frame.join(right.frame, how="cross", suffix="__right")
    else:
        left, right = _aligned(left, right, node.on)
        dtypes.update(left.dtypes)
        joined = left.frame.join(right.frame, on=list(node.on), how="inner")
    if not node.columns:
        return Compiled(joined.select(UNIT), {})
    return Compiled(joined.select(list(node.columns)), {c: dtypes[c] for c in node.columns})


def _antijoin(node: ir.AntiJoin, frames: Frames) -> Compiled:
    return _matching(node, frames, "anti")


def _semijoin(node: ir.SemiJoin, frames: Frames) -> Compiled:
    return _matching(node, frames, "semi")


def _matching(node, frames: Frames, how: str) -> Compiled:
    """Rows of the left side with (``semi``) or without (``anti``) a right row agreeing on
    ``node.on``; on no columns, by whether the right side has a row at all."""
    left = compile_node(node.left, frames)
    right = compile_node(node.right, frames)
    if not node.on:
        key = "__any"
        marker = right.frame.with_columns(pl.lit(True).alias(key)).select(key).head(1)
        matched = left.frame.with_columns(pl.lit(True).alias(key)).join(marker, on=key, how=how)  # type: ignore[arg-type]
        return Compiled(matched.drop(key), left.dtypes)
    left_aligned, right = _aligned(left, right, node.on)
    keys = right.frame.select(list(node.on))
    matched = left_aligned.frame.join(keys, on=list(node.on), how=how)  # type: ignore[arg-type]
    return Compiled(matched, left_aligned.dtypes)


def _aligned(left: Compiled, right: Compiled, on: tuple) -> tuple:
    """``left`` and ``right`` with their columns ``on`` of one type (integers widened)."""
    for name in on:
        a, b = left.dtypes[name], right.dtypes[name]
        if a != b:
            common = _common(a, b, f"join column {name}")
            left, right = _cast(left, name, common), _cast(right, name, common)
    return left, right


def _common(a, b, what: str):
    if a.is_integer() and b.is_integer():
        return pl.Int64
    raise KernelUnsupported(f"{what}: values of types {a} and {b} meet (only integer types are widened)")


def _cast(compiled: Compiled, name: str, dtype) -> Compiled:
    if compiled.dtypes[name] == dtype:
        return compiled
    return Compiled(compiled.frame.with_columns(pl.col(name).cast(dtype)), {**compiled.dtypes, name: dtype})


def _union(node: ir.Union_, frames: Frames) -> Compiled:
    parts = [compile_node(child, frames) for child in node.children]
    dtypes = dict(parts[0].dtypes)
    for name in node.columns:
        for part in parts[1:]:
            if part.dtypes[name] != dtypes[name]:
                dtypes[name] = _common(dtypes[name], part.dtypes[name], f"union column {name}")
    columns = list(node.columns) or [UNIT]
    frames_ = [
        p.frame.select([pl.col(c).cast(dtypes[c]) if node.columns else pl.col(c) for c in columns])
        for p in parts
    ]
    return Compiled(pl.concat(frames_, how="vertical", rechunk=False), {c: dtypes[c] for c in node.columns})


def _distinct(node: ir.Distinct, frames: Frames) -> Compiled:
    child = compile_node(node.child, frames)
    return Compiled(child.frame.unique(), child.dtypes)


def _aggregate(node: ir.Aggregate, frames: Frames) -> Compiled:
    child = compile_node(node.child, frames)
    frame, dtype = aggregate_frame(
        child.frame, child.dtypes, node.group_by, node.func, node.argument, node.output
    )
    return Compiled(frame, {**{c: child.dtypes[c] for c in node.group_by}, node.output: dtype})


def _generate(node: ir.Generate, frames: Frames) -> Compiled:
    child = compile_node(node.child, frames)
    dtype = polars_type(node.type)
    frame = polars_generate(child.frame, list(node.args), node.output, node.type, dtype)
    return Compiled(frame, {**child.dtypes, node.output: dtype})


def _number(node: ir.Number, frames: Frames) -> Compiled:
    """Rows sorted by all their columns (NaN the largest double, strings by code point),
    numbered from 0."""
    child = compile_node(node.child, frames)
    frame = child.frame.sort(list(node.child.columns)) if node.child.columns else child.frame
    index = pl.int_range(0, pl.len(), dtype=pl.Int64).alias(node.output)
    return Compiled(frame.with_columns(index), {**child.dtypes, node.output: pl.Int64})


_NODE_COMPILERS: dict[type, Callable[..., Compiled]] = {
    ir.Scan: _scan,
    ir.Unit: _unit,
    ir.Select: _select,
    ir.Project: _project,
    ir.Join: _join,
    ir.AntiJoin: _antijoin,
    ir.SemiJoin: _semijoin,
    ir.Union_: _union,
    ir.Distinct: _distinct,
    ir.Aggregate: _aggregate,
    ir.Generate: _generate,
    ir.Number: _number,
}
