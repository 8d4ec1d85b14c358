"""The greedy ``choice-domain`` on the reference: a sequential filter of a round's candidates.

A round's candidates are considered in value order (tuple order); one is accepted iff it agrees
on no key with a tuple accepted before, in an earlier round (``taken``) or earlier in this round
(:mod:`spark_datalog.syntax.choice`). The interpreter applies it to each round's new tuples of a
choice relation before they join it: the accepted ones are the round's delta.
"""

from __future__ import annotations

from typing import Iterable

from ..record_types import order_key


def taken_keys(keys: tuple, rows: Iterable) -> list:
    """Per key (column positions), the set of its values among ``rows``.

    >>> taken_keys(((0,), (1,)), [(1, 2)])
    [{(1,)}, {(2,)}]
    """
    taken: list = [set() for _ in keys]
    for row in rows:
        _take(keys, taken, row)
    return taken


def greedy(candidates: Iterable, keys: tuple, taken: list) -> list:
    """The ``candidates`` the greedy choice accepts, in order; ``taken`` (per key, the values
    of the tuples accepted before: :func:`taken_keys`) is updated with them.

    >>> taken = taken_keys(((0,), (1,)), [(1, 1)])
    >>> greedy({(1, 2), (2, 1), (2, 3), (3, 3), (4, 4)}, ((0,), (1,)), taken)
    [(2, 3), (4, 4)]
    """
    accepted = []
    for row in sorted(set(candidates), key=lambda row: tuple(map(order_key, row))):
        values = [tuple(row[i] for i in key) for key in keys]
        if any(value in seen for value, seen in zip(values, taken, strict=True)):
            continue
        accepted.append(row)
        for value, seen in zip(values, taken, strict=True):
            seen.add(value)
    return accepted


def _take(keys: tuple, taken: list, row: tuple) -> None:
    for key, seen in zip(keys, taken, strict=True):
        seen.add(tuple(row[i] for i in key))
