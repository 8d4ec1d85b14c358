"""A subsumption in recursion on the kernel: each round's dominated facts removed, in Polars.

In each round (:mod:`spark_datalog.syntax.subsumption`) the relation's facts ``R`` and the
round's new candidates ``N`` make ``U = R ∪ N``; the stratum's plans of the dominated tuples
run over ``U`` (bound to the relation's pseudo relation of all tuples), and the relation keeps
``U`` without them; the new facts kept are the round's delta. The Spark backend
(``eval.subsumption``) runs the same steps on DataFrames.
"""

from __future__ import annotations

from typing import Callable

import polars as pl

from .relation import ReplacedRelation

Dominated = Callable[[pl.LazyFrame], pl.LazyFrame]  # U -> its dominated tuples


class SubsumedRelation(ReplacedRelation):
    """A relation whose dominated facts each round removes (``dominated``: the tuples of ``U``
    some other tuple of ``U`` dominates).

    >>> above = lambda u: u.join(u, how="cross").filter(pl.col("x_right") > pl.col("x")).select("x")
    >>> r = SubsumedRelation({"x": pl.Int64}, above)
    >>> r.insert(pl.LazyFrame({"x": [1, 3, 2]}))
    >>> r.absorb(r.pending().collect()), r.facts().rows()
    (1, [(3,)])
    """

    def __init__(self, dtypes: dict, dominated: Dominated):
        super().__init__(dtypes)
        self.dominated = dominated

    def pending(self) -> pl.LazyFrame:
        """The distinct candidates not known yet (``N``)."""
        if not self.to_add:
            return self.recent.clear().lazy()
        candidates = pl.concat(self.to_add, how="vertical", rechunk=False)
        return candidates.join(self.full(), on=self.columns, how="anti").unique()

    def absorb(self, recent: pl.DataFrame) -> int:
        """``U`` without its dominated tuples becomes the relation; ``N`` without them the delta."""
        self.to_add = []
        if not recent.height:
            self.recent = recent
            return 0
        every = pl.concat([self.stable, recent], how="vertical")
        dominated = self.dominated(every.lazy()).unique().collect()
        self.stable = every.join(dominated, on=self.columns, how="anti")
        self.recent = recent.join(dominated, on=self.columns, how="anti")
        return self.recent.height
