"""A subsumption in recursion in Spark rounds: each round's dominated facts removed.

:class:`SubsumedState` is a :class:`~.state.ReplacedState`: each round stores the whole
relation, flagging the round's delta. With ``R`` the relation and ``N`` the round's distinct
candidates not in ``R`` (:mod:`spark_datalog.syntax.subsumption`), the stored frame is
``U = R ∪ N`` (``N`` flagged) without the tuples the stratum's plans of the dominated tuples
derive over ``U`` (bound to the relation's pseudo relation of all tuples): the steps of the
kernel's :class:`spark_datalog.kernel.subsumption.SubsumedRelation`. Nothing is collected to
the driver; ``U`` is stored (a local checkpoint) since the plans read it twice and the result
once more.
"""

from __future__ import annotations

from functools import reduce
from typing import Callable

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..analysis.checked import RelationSchema
from ..spark.compile import match
from .checkpoint import release
from .state import IMPROVED, ReplacedState

Dominated = Callable[[DataFrame], DataFrame]  # U -> its dominated tuples


class SubsumedState(ReplacedState):
    """A relation whose dominated facts each round removes (``dominated``: the tuples of ``U``
    some other tuple of ``U`` dominates, lazily)."""

    def __init__(self, schema: RelationSchema, empty: DataFrame, dominated: Dominated):
        super().__init__(schema, empty)
        self.dominated = dominated
        self._every: list = []  # this round's stored U, released once the relation is stored

    def step(self, candidates: DataFrame) -> DataFrame:
        """``U`` without its dominated tuples, the new ones flagged."""
        fresh = candidates.distinct()
        if self._stored is not None:
            fresh = match(fresh, self.full, self.columns, "left_anti")
        parts = [fresh.select(*self.columns, F.lit(True).alias(IMPROVED))]
        if self._stored is not None:
            parts.append(self.full.select(*self.columns, F.lit(False).alias(IMPROVED)))
        every = reduce(DataFrame.union, parts).localCheckpoint(eager=True)
        self._every.append(every)
        dominated = self.dominated(every.select(*self.columns)).distinct()
        return match(every, dominated, self.columns, "left_anti").select(*self.columns, IMPROVED)

    def store(self, stored: DataFrame, new_rows: int, total_rows) -> None:
        """The stored relation replaces the old one; this round's ``U`` is no longer read."""
        super().store(stored, new_rows, total_rows)
        self.release()

    def release(self) -> None:
        """Free this round's stored ``U`` (after the round, or a failure; the relation stays)."""
        for frame in self._every:
            release(frame)
        self._every = []
