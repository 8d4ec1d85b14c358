"""Head aggregates: the per-group reduction of min/max relations and count/sum/avg.

A relation with an aggregate at ``position`` has one row per group; the group is the row
without that position.
"""

from __future__ import annotations

import math
from typing import Iterable

from ..overflow import fits, sum_overflow
from .terms import Record, Value, compare, is_number, normal, order_key

PREMAPPABLE = ("min", "max")


def group_of(row: tuple, position: int) -> tuple:
    return row[:position] + row[position + 1 :]


def with_value(group: tuple, position: int, value) -> tuple:
    return group[:position] + (value,) + group[position:]


def better(func: str, candidate, current) -> bool:
    """Whether ``candidate`` beats ``current`` for ``min`` or ``max`` (records: an eqrel's
    labels, :mod:`spark_datalog.syntax.eqrel`, in value order)."""
    if isinstance(candidate, Record):
        candidate, current = order_key(candidate), order_key(current)
    if candidate == candidate and current == current:
        return candidate < current if func == "min" else candidate > current
    # a NaN: it is the largest value
    return compare("<" if func == "min" else ">", candidate, current)


def best_per_group(rows: Iterable[tuple], position: int, func: str) -> dict:
    """{group: row} keeping, per group, the row with the best value at ``position``."""
    best: dict = {}
    for row in rows:
        group = group_of(row, position)
        current = best.get(group)
        if current is None or better(func, row[position], current[position]):
            best[group] = row
    return best


def reduce_values(func: str, values: list, relation: str = "") -> Value:
    """``func`` over a non-empty multiset of values. ``count`` counts distinct values; ``sum`` of
    integers is an integer, which must fit ``long`` (else Overflow, naming ``relation``);
    ``avg`` is a float. Float sums are exactly rounded (``math.fsum``) so the result does not
    depend on the order of the contributions."""
    if func == "count":
        return len(set(map(normal, values)))
    if func == "min":
        return min(values, key=order_key)
    if func == "max":
        return max(values, key=order_key)
    if not all(is_number(v) for v in values):
        raise TypeError(f"{func} needs numbers, got {values!r}")
    exact = all(isinstance(v, int) for v in values)
    total = sum(values) if exact or not all(map(math.isfinite, values)) else math.fsum(values)
    total = normal(total)
    if func == "sum":
        if isinstance(total, int) and not fits(total, "long"):  # an int exactly when ``exact``
            raise sum_overflow(relation)
        return total
    if func == "avg":
        return total / len(values)
    raise ValueError(f"unknown aggregate {func!r}")


def aggregate(contributions: Iterable[tuple], position: int, func: str, relation: str = "") -> set:
    """Rows ``group + value`` from ``(group, value)`` contributions (a multiset) of ``relation``."""
    groups: dict = {}
    for group, value in contributions:
        groups.setdefault(group, []).append(value)
    return {
        with_value(group, position, reduce_values(func, values, relation)) for group, values in groups.items()
    }
