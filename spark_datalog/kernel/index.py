"""The known facts of a relation, indexed by a 64-bit hash of each fact.

A semi-naive round keeps the candidates that are not known yet. Checked by a hash anti-join,
that costs a pass over every known fact, each round: a fixpoint of many rounds that each derive
few facts (a long chain, a graph of large diameter) spends its time re-reading what it knows.
:class:`HashIndex` answers the same question in time that follows the candidates: it keeps
the hash of every fact, sorted (in runs of doubling sizes, merged as they fill, like a log-
structured merge tree), with each hash's position in the relation's rows; a candidate's hash is
looked up by binary search and, when found, the fact at that position is compared with the
candidate column by column. Equal hashes of different facts are rare but handled: every
position with the candidate's hash is compared, so the answer is exact.

Hashes are Polars' (``DataFrame.hash_rows``): 0.0 and -0.0 hash alike, as do NaNs, as in the
kernel's joins. Searching is numpy's ``searchsorted`` over the sorted hashes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import polars as pl

# Runs merge when the newer one holds at least half as many hashes as the one before it.
_MERGE_RATIO = 2


@dataclass(frozen=True)
class IndexPolicy:
    """When a relation indexes its known facts (rent or buy). A round's facts are ``few`` when
    the relation knows at least ``few`` times more (None: always few); the known facts are
    indexed once the anti-joins of rounds that derived few facts have read them ``after``
    times over (None: never), and they are at least ``min_known``. Building the index costs
    7-45 anti-join passes (numpy's sort of the hashes, 375K to 9M facts; measured with
    ``benchmarks/profile_chain.py``), so it is built only where it pays back: never for the
    few rounds of large deltas of a tree or a dense graph, soon in a long chain of rounds that
    each derive little from a large relation. Below ``min_known`` it gained nothing
    measurable (chains of 100 and 300: within noise) and would only add its 16 bytes a fact.

    >>> IndexPolicy().is_worth_building(reread=32 * 10**6, known=10**6)
    True
    """

    few: Optional[int] = 16
    after: Optional[int] = 32
    min_known: int = 100_000

    def are_few(self, facts: int, known: int) -> bool:
        """Are ``facts`` few beside ``known`` facts?"""
        return self.few is None or facts * self.few <= known

    def is_worth_building(self, reread: int, known: int) -> bool:
        """Has re-reading ``reread`` facts paid for indexing ``known`` facts?"""
        if self.after is None or known < self.min_known:
            return False
        return reread >= self.after * max(known, 1)


DEFAULT = IndexPolicy()
NEVER = IndexPolicy(after=None)
ALWAYS = IndexPolicy(few=None, after=0, min_known=0)  # tests: every check goes through the index


def hashes(frame: pl.DataFrame, columns: list) -> np.ndarray:
    """One 64-bit hash per row of ``frame`` over ``columns`` (equal facts hash alike).

    >>> frame = pl.DataFrame({"x": [1, 1, 2]})
    >>> h = hashes(frame, ["x"]); bool(h[0] == h[1]), bool(h[0] == h[2])
    (True, False)
    """
    return frame.select(columns).hash_rows().to_numpy()


class HashIndex:
    """Which candidate facts a relation already holds; its rows are numbered in the order they
    were added (:meth:`add`), and :meth:`known` compares candidates with the rows it is given
    (the same rows, in that order).

    >>> index = HashIndex(["x"])
    >>> rows = pl.DataFrame({"x": [3, 1]})
    >>> index.add(rows)
    >>> asked = pl.DataFrame({"x": [1, 2]})
    >>> index.known(asked, rows, hashes(asked, ["x"])).tolist()
    [True, False]
    """

    def __init__(self, columns: list):
        self.columns = list(columns)
        self.runs: list = []  # (sorted hashes, each one's row position), oldest and largest first
        self.count = 0

    def add(self, frame: pl.DataFrame, found: Optional[np.ndarray] = None) -> None:
        """Index the rows of ``frame``, which follow the rows added before (``found``: their
        :func:`hashes`, when known)."""
        if not frame.height:
            return
        if found is None:
            found = hashes(frame, self.columns)
        order = np.argsort(found, kind="stable")
        self.runs.append((found[order], order.astype(np.int64) + self.count))
        self.count += frame.height
        self._merge()

    def _merge(self) -> None:
        while len(self.runs) > 1 and len(self.runs[-2][0]) <= _MERGE_RATIO * len(self.runs[-1][0]):
            (older, at_older), (newer, at_newer) = self.runs[-2:]
            merged = np.concatenate([older, newer])
            order = np.argsort(merged, kind="stable")  # two sorted runs: a linear merge
            self.runs[-2:] = [(merged[order], np.concatenate([at_older, at_newer])[order])]

    def known(self, candidates: pl.DataFrame, rows: pl.DataFrame, wanted: np.ndarray) -> np.ndarray:
        """A Boolean per row of ``candidates`` (whose :func:`hashes` are ``wanted``): is it one
        of ``rows`` (the indexed rows)?"""
        known = np.zeros(candidates.height, dtype=bool)
        for sorted_hashes, positions in self.runs:
            first = np.searchsorted(sorted_hashes, wanted, side="left")
            self._compare(candidates, rows, wanted, known, sorted_hashes, positions, first)
        return known

    def _compare(self, candidates, rows, wanted, known, sorted_hashes, positions, at) -> None:
        """Mark as known the candidates equal to the row at ``at`` in a run, and at the next
        places while the run's hash there is still the candidate's (a collision)."""
        size = len(sorted_hashes)
        while True:
            inside = np.minimum(at, size - 1)
            open_ = ~known & (at < size) & (sorted_hashes[inside] == wanted)
            which = np.flatnonzero(open_)
            if not which.size:
                return
            held = rows[positions[at[which]]]
            asked = candidates[which]
            equal = np.ones(which.size, dtype=bool)
            for column in self.columns:
                equal &= held[column].eq_missing(asked[column]).to_numpy()
            known[which[equal]] = True
            at = at + 1
