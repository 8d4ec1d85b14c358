"""A set of tuples with hash indexes on the positions a lookup binds."""

from __future__ import annotations

from typing import Iterable


class Relation:
    """A mutable set of tuples. ``lookup(positions, key)`` returns the tuples whose values at
    ``positions`` equal ``key``; the index for ``positions`` is built on first use and kept up
    to date by :meth:`add` and :meth:`discard`. Do not mutate while iterating a lookup."""

    def __init__(self, tuples: Iterable[tuple] = ()):
        self.tuples: set = set(tuples)
        self._indexes: dict = {}  # positions -> {key: set of tuples}

    def __len__(self) -> int:
        return len(self.tuples)

    def __iter__(self):
        return iter(self.tuples)

    def __contains__(self, row) -> bool:
        return row in self.tuples

    def lookup(self, positions: tuple, key: tuple) -> Iterable[tuple]:
        if not positions:
            return self.tuples
        index = self._indexes.get(positions)
        if index is None:
            index = {}
            for row in self.tuples:
                index.setdefault(tuple(row[p] for p in positions), set()).add(row)
            self._indexes[positions] = index
        return index.get(key, ())

    def add(self, row: tuple) -> bool:
        """Add ``row``; True if it was new."""
        if row in self.tuples:
            return False
        self.tuples.add(row)
        for positions, index in self._indexes.items():
            index.setdefault(tuple(row[p] for p in positions), set()).add(row)
        return True

    def discard(self, row: tuple) -> None:
        if row not in self.tuples:
            return
        self.tuples.discard(row)
        for positions, index in self._indexes.items():
            key = tuple(row[p] for p in positions)
            bucket = index[key]
            bucket.discard(row)
            if not bucket:
                del index[key]
