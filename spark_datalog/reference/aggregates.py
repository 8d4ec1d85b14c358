"""Head aggregates: the per-group reduction of min/max relations and count/sum/avg.

A relation with an aggregate at ``position`` has one row per group; the group is the row
without that position.
"""

from __future__ import annotations

import math
from typing import Iterable

from .terms import is_number

PREMAPPABLE = ("min", "max")


def group_of(row: tuple, position: int) -> tuple:
    return row[:position] + row[position + 1 :]


def with_value(group: tuple, position: int, value) -> tuple:
    return group[:position] + (value,) + group[position:]


def better(func: str, candidate, current) -> bool:
    """Whether ``candidate`` beats ``current`` for ``min`` or ``max``."""
    return candidate < current if func == "min" else candidate > current


def best_per_group(rows: Iterable[tuple], position: int, func: str) -> dict:
    """{group: row} keeping, per group, the row with the best value at ``position``."""
    best: dict = {}
    for row in rows:
        group = group_of(row, position)
        current = best.get(group)
        if current is None or better(func, row[position], current[position]):
            best[group] = row
    return best


def reduce_values(func: str, values: list):
    """``func`` over a non-empty multiset of values. ``count`` counts distinct values; ``sum`` of
    integers is an integer; ``avg`` is a float. Float sums are exactly rounded (``math.fsum``)
    so the result does not depend on the order of the contributions."""
    if func == "count":
        return len(set(values))
    if func == "min":
        return min(values)
    if func == "max":
        return max(values)
    if not all(is_number(v) for v in values):
        raise TypeError(f"{func} needs numbers, got {values!r}")
    exact = all(isinstance(v, int) for v in values)
    total = sum(values) if exact else math.fsum(values)
    if func == "sum":
        return total
    if func == "avg":
        return total / len(values)
    raise ValueError(f"unknown aggregate {func!r}")


def aggregate(contributions: Iterable[tuple], position: int, func: str) -> set:
    """Rows ``group + value`` from ``(group, value)`` contributions (a multiset)."""
    groups: dict = {}
    for group, value in contributions:
        groups.setdefault(group, []).append(value)
    return {with_value(group, position, reduce_values(func, values)) for group, values in groups.items()}
