"""Compile a rule's IR with derivation counts: every row carries a signed ``_count``.

The counting algorithm (and the warehouse's derivation counts of non-recursive strata) needs the
multiset meaning of a rule body: a scan row weighs its stored count, a join multiplies the
weights of the rows it pairs, selections and projections keep them, and an anti-join or a
semi-join keeps the left row's weight (a negated atom, an existence test, is a condition, not a
factor). Summing the weights of a rule
plan's rows per head tuple gives the number of derivations of each fact — and, fed with signed
changes, the change in that number.

Rule plans of aggregate rules (which contain ``Distinct``) are not counted: an aggregate fact has
exactly one derivation, its group.
"""

from __future__ import annotations

from typing import Callable

from functools import reduce

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..generators import spark_generate
from ..plan import ir
from .types import spark_type
from .compile import _operand_types, defined_rows, anti_join, compile_condition, compile_expr, match

COUNT = "_count"
_RIGHT_COUNT = "_count_right"

CountedFrames = dict  # (relation, source) -> frame with the relation's columns + _count


def compile_counted(node, frames: CountedFrames, spark=None) -> DataFrame:
    """The frame of ``node``'s rows with their weight in ``_count`` (rows are not merged)."""
    try:
        compiler = _COUNTED[type(node)]
    except KeyError:
        raise TypeError(f"{type(node).__name__} has no derivation-count semantics") from None
    return compiler(node, frames, spark)


def count_derivations(plan, frames: CountedFrames, spark=None) -> DataFrame:
    """Per head tuple of a rule plan, the summed weight of its derivations (zero sums dropped)."""
    rows = compile_counted(plan, frames, spark)
    summed = (
        rows.groupBy(*plan.columns).agg(F.sum(COUNT).alias(COUNT))
        if plan.columns
        else (rows.agg(F.sum(COUNT).alias(COUNT)))
    )
    return summed.where(F.col(COUNT).isNotNull() & (F.col(COUNT) != 0))


def _scan(node: ir.Scan, frames, spark):
    frame = frames[(node.relation, node.source)]
    return frame.toDF(*node.columns, COUNT)


def _unit(node: ir.Unit, frames, spark):
    from pyspark.sql import SparkSession

    return (spark or SparkSession.active()).range(1).select(F.lit(1).cast("long").alias(COUNT))


def _select(node: ir.Select, frames, spark):
    child = compile_counted(node.child, frames, spark)
    if not node.conditions:
        return child
    types = _operand_types(child, [e for c in node.conditions for e in (c.left, c.right)])
    return child.filter(reduce(lambda a, b: a & b, (compile_condition(c, types) for c in node.conditions)))


def _project(node: ir.Project, frames, spark):
    child = compile_counted(node.child, frames, spark)
    types = _operand_types(child, [expr for _, expr in node.outputs])
    projected = child.select(*[compile_expr(e, types).alias(n) for n, e in node.outputs], COUNT)
    return defined_rows(projected, node.outputs)


def _join(node: ir.Join, frames, spark):
    left = compile_counted(node.left, frames, spark)
    right = compile_counted(node.right, frames, spark).withColumnRenamed(COUNT, _RIGHT_COUNT)
    joined = left.join(right, list(node.on), "inner") if node.on else left.crossJoin(right)
    weight = (F.col(COUNT) * F.col(_RIGHT_COUNT)).alias(COUNT)
    return joined.select(*node.columns, weight)


def _antijoin(node: ir.AntiJoin, frames, spark):
    left = compile_counted(node.left, frames, spark)
    right = compile_counted(node.right, frames, spark).where(F.col(COUNT) > 0)
    return anti_join(left, right.drop(COUNT), node.on)


def _semijoin(node: ir.SemiJoin, frames, spark):
    left = compile_counted(node.left, frames, spark)
    right = compile_counted(node.right, frames, spark).where(F.col(COUNT) > 0)
    return match(left, right.select(*node.on), list(node.on), "left_semi")


def _union(node: ir.Union_, frames, spark):
    parts = [compile_counted(c, frames, spark).select(*node.columns, COUNT) for c in node.children]
    return reduce(DataFrame.union, parts)


def _generate(node: ir.Generate, frames, spark):
    """Each generated row weighs what its input row weighs."""
    child = compile_counted(node.child, frames, spark)
    generated = spark_generate(child, list(node.args), node.output, node.type, spark_type(node.type))
    return generated.select(*node.columns, COUNT)


_COUNTED: dict[type, Callable[..., DataFrame]] = {
    ir.Scan: _scan,
    ir.Unit: _unit,
    ir.Select: _select,
    ir.Project: _project,
    ir.Join: _join,
    ir.AntiJoin: _antijoin,
    ir.SemiJoin: _semijoin,
    ir.Union_: _union,
    ir.Generate: _generate,
}
