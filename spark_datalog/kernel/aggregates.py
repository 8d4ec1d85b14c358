"""Aggregates over groups, as ``reference.aggregates.reduce_values`` defines them.

``count`` counts distinct values (every NaN one value); ``min`` and ``max`` order NaN above
every other double; an integer ``sum`` is exact (Int128) and must fit long, else the
reference's :class:`~spark_datalog.overflow.Overflow` naming the relation; an integer ``avg``
is the exact sum divided by the count, refused (:class:`~.types.KernelUnsupported`) when the
sum exceeds 2^53, where converting it to a double would round. The reference sums doubles
exactly rounded (``math.fsum``), which Polars cannot: ``sum`` and ``avg`` of doubles are refused.
Only groups with at least one row exist, also without group columns.
"""

from __future__ import annotations

from typing import Sequence

import polars as pl

from ..overflow import BOUNDS, sum_overflow
from .checks import Check, passes
from .types import KernelUnsupported

_GLOBAL = "__group"  # the group key of an aggregate without group columns
_EXACT = 2**53  # integers up to this magnitude convert to doubles exactly


def aggregate_frame(
    frame: pl.LazyFrame,
    dtypes: dict,
    group_by: Sequence[str],
    func: str,
    argument: str,
    output: str,
    relation: str = "",
) -> tuple:
    """(frame, type of ``output``): ``frame`` grouped by ``group_by`` with ``func(argument)``
    as ``output``, columns ``group_by + (output,)``.

    >>> grouped, _ = aggregate_frame(pl.LazyFrame({"g": [1, 1], "x": [2, 3]}), {"g": pl.Int64, "x": pl.Int64},
    ...                              ["g"], "sum", "x", "s")
    >>> grouped.collect().rows()
    [(1, 5)]
    """
    dtype = dtypes[argument]
    parts, value, result_type, checks = _reduction(func, pl.col(argument), dtype, relation)
    keys = list(group_by) or [_GLOBAL]
    if not group_by:
        frame = frame.with_columns(pl.lit(True).alias(_GLOBAL))
    grouped = frame.group_by(keys).agg(parts)
    if checks:
        grouped = grouped.filter(passes(checks))
    grouped = grouped.with_columns(value.cast(result_type).alias(output))
    return grouped.select([*group_by, output]), result_type


_SUM, _ROWS, _VALUE = "__sum", "__rows", "__value"


def _reduction(func: str, column: pl.Expr, dtype, relation: str) -> tuple:
    """(aggregations, the value computed from them, its type, checks on the grouped frame)."""
    if func == "count":
        return [column.n_unique().alias(_VALUE)], pl.col(_VALUE), pl.Int64, []
    if func == "min":
        least = column.sort().first() if isinstance(dtype, pl.Struct) else column.min()
        return [least.alias(_VALUE)], pl.col(_VALUE), dtype, []
    if func == "max":
        best = column.nan_max() if dtype.is_float() else column.max()
        return [best.alias(_VALUE)], pl.col(_VALUE), dtype, []
    if func not in ("sum", "avg"):
        raise ValueError(f"unknown aggregate {func!r}")
    if not dtype.is_integer():
        raise KernelUnsupported(
            f"{func}<> of {dtype} values: the reference sums doubles exactly rounded (math.fsum), "
            "which the kernel does not"
        )
    total = pl.col(_SUM)
    parts = [column.cast(pl.Int128).sum().alias(_SUM)]
    if func == "sum":
        low, high = BOUNDS["long"]
        check = Check(~total.is_between(low, high), (), lambda: sum_overflow(relation))
        return parts, total, pl.Int64, [check]
    check = Check(total.abs() > _EXACT, (), lambda: _inexact_average(relation))
    parts.append(pl.len().alias(_ROWS))
    mean = total.cast(pl.Float64) / pl.col(_ROWS).cast(pl.Float64)
    return parts, mean, pl.Float64, [check]


def _inexact_average(relation: str) -> KernelUnsupported:
    return KernelUnsupported(f"avg<> of {relation or 'a relation'}: a sum beyond 2^53 would round")
