"""The greedy ``choice-domain`` in Spark rounds: each round's new facts filtered together.

:class:`ChoiceState` is a :class:`~.state.SetState` whose new facts of a round are those the
greedy choice accepts (:mod:`spark_datalog.syntax.choice`); :func:`greedy_frame` computes them
with the steps of the kernel's :func:`spark_datalog.kernel.choice.greedy`, whose docstring
argues they give the sequential greedy's answer: the candidates agreeing on a key with a fact
of an earlier round go (anti-joins with the relation), then the locally least candidates (the
least, in value order, of those agreeing with them on each key: a window per key) are
accepted and those agreeing with them on a key go, until none remain. Nothing is collected to
the driver; with one key that is one step, planned lazily; with several, every step is stored
(a local checkpoint) and the loop ends when none remain. Spark orders, partitions and joins
record and ADT columns (structs) field by field, the value order of
:mod:`spark_datalog.syntax.choice`.
"""

from __future__ import annotations

from functools import reduce
from typing import Optional

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from ..analysis.checked import RelationSchema
from .checkpoint import release
from .state import SetState

_LEAST = "__least"


class ChoiceState(SetState):
    """A relation with a greedy ``choice-domain`` (``keys``: column positions of each key)."""

    def __init__(self, schema: RelationSchema, empty: DataFrame, partitions: int, keys: tuple):
        # one key: the leaves partitioned on it, so the anti-join with the taken keys shuffles
        # only the candidates
        super().__init__(schema, empty, partitions, keys[0] if len(keys) == 1 else None)
        self.keys = [[self.columns[i] for i in key] for key in keys]
        self._steps: list = []  # the stored steps of this round's greedy choice

    def step(self, candidates: DataFrame) -> DataFrame:
        """The new candidates the greedy choice accepts (``SetState.step``, then the choice)."""
        known = self._full
        accepted, self._steps = greedy_frame(super().step(candidates), self.keys, known)
        return accepted

    def store(self, stored: DataFrame, new_rows: int, total_rows: Optional[int]) -> None:
        """Add the accepted rows; the steps that chose them are no longer read."""
        super().store(stored, new_rows, total_rows)
        for frame in self._steps:
            release(frame)
        self._steps = []


def greedy_frame(fresh: DataFrame, keys: list, known: Optional[DataFrame]) -> tuple:
    """(the rows of ``fresh`` the greedy choice accepts, the stored frames it made), for
    distinct new rows ``fresh``, ``keys`` (column names of each key) and the facts ``known``
    from earlier rounds (None: none)."""
    remaining = _unclaimed(fresh, keys, known) if known is not None else fresh
    if len(keys) == 1:
        return _least(remaining, keys), []
    stored = [remaining.localCheckpoint(eager=True)]
    accepted: list = []
    while not stored[-1].isEmpty():
        remaining = stored[-1]
        accepted.append(_least(remaining, keys).localCheckpoint(eager=True))
        stored.append(_unclaimed(remaining, keys, accepted[-1]).localCheckpoint(eager=True))
    return reduce(DataFrame.union, accepted, fresh.limit(0)), stored + accepted


def _unclaimed(frame: DataFrame, keys: list, claimed: DataFrame) -> DataFrame:
    """The rows of ``frame`` agreeing on no key with a row of ``claimed``."""
    for key in keys:
        frame = frame.join(claimed.select(*key), key, "left_anti")
    return frame.select(*claimed.columns)  # a join on columns puts them first


def _least(frame: DataFrame, keys: list) -> DataFrame:
    """The rows of ``frame`` that are the least (in value order) of the rows agreeing with them
    on each key."""
    order = [F.col(c) for c in frame.columns]
    least = reduce(
        lambda a, b: a & b,
        [F.row_number().over(Window.partitionBy(*key).orderBy(*order)) == 1 for key in keys],
    )
    return frame.select("*", least.alias(_LEAST)).where(F.col(_LEAST)).drop(_LEAST)
