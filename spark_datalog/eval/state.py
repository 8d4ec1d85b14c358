"""The facts of one relation accumulated during a recursive stratum.

Like datafrog's variables, a state knows what is stable (``full``) and what the previous round
added (``delta``). The states are the Spark backend of the engine's one semi-naive loop
(``seminaive.Relation``): a round inserts candidate frames (:meth:`insert`), asks each state for
the frame to store (``pending``: :meth:`step` over the candidates, lazy), materialises those
frames as leaves together (:func:`stored_together`, one Spark job) and hands each its leaf back
(``absorb``). Two kinds:

- :class:`SetState` — set semantics. The stored frame is the new rows: distinct candidates not
  known yet. The relation is the union of a compacted base and the (disjoint) deltas since, all
  stored leaves. Every leaf is hash-partitioned on a key — the columns every round keeps in
  place (``plan.partitioning``), else all columns, the partitioning the candidates' ``distinct``
  has anyway — sorted on all columns within its partitions, and non-nullable. The candidates are
  anti-joined by sort-merge joins with the base and with the union of the pieces since, which
  keeps the pieces' common partitioning (the driver runs recursive strata with
  ``requireAllClusterKeysForCoPartition=false``): no round shuffles or broadcasts the known facts;
  only the recent pieces are sorted again. Two anti-joins instead of one per leaf keep a round's
  plan small: planning, not data, dominates small rounds (measured: ~10 ms per extra leaf).
- :class:`BestState` — a min/max relation (Pre-Mappability): one row per group with the best
  value. The stored frame is the whole relation merged with the candidates, with a flag marking
  the groups that improved (the delta), so one stored leaf serves as both
  (:class:`ReplacedState`, which a subsumption's state, ``eval.subsumption``, shares).

Every ``checkpoint_interval`` rounds the driver calls :meth:`compact`, which bounds the number
of pieces a round scans (and stores them reliably when a checkpoint directory is set).
"""

from __future__ import annotations

from functools import reduce
from typing import Callable, Optional, Sequence

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..analysis.checked import RelationSchema
from ..spark.compile import aggregate_frame, match
from ..limits import room
from .checkpoint import cut_lineage, materialise, release

IMPROVED = "__improved"


class _Rounds:
    """What both states do in the semi-naive loop (``seminaive.Relation``)."""

    flag: Optional[str]
    _to_add: list
    # each state defines these (declared here for the type checker only)
    step: Callable[[DataFrame], DataFrame]
    store: Callable[[DataFrame, int, Optional[int]], None]
    absorb_nothing: Callable[[], None]

    def insert(self, candidates: DataFrame) -> None:
        """Add a frame of candidate rows to this round's."""
        self._to_add.append(candidates)

    def pending(self) -> Optional[tuple]:
        """(the frame to store, the flag column of its new rows) of this round's candidates, for
        :func:`stored_together`; None without candidates."""
        if not self._to_add:
            return None
        return self.step(reduce(DataFrame.union, self._to_add)), self.flag

    def absorb(self, stored: Optional[tuple]) -> int:
        """Take the (leaf, new rows, total rows) :func:`stored_together` made of :meth:`pending`
        (None: nothing was pending); returns the new rows."""
        self._to_add = []
        if stored is None:
            self.absorb_nothing()
            return 0
        leaf, new_rows, total_rows = stored
        self.store(leaf, new_rows, total_rows)
        return new_rows


def least_frame(frame: DataFrame, order: list, count: int) -> DataFrame:
    """The ``count`` least rows of the distinct ``frame`` in value order (``order``: its
    columns; none for a relation without columns), for a ``.limitsize``."""
    return (frame.orderBy(*order) if order else frame).limit(count)


def stored_together(pending: Sequence[Optional[tuple]]) -> list:
    """The Spark states' ``collect`` (``seminaive.rounds``): every pending frame stored as a
    leaf, with its new and total rows, in one Spark job (``checkpoint.materialise``); None for
    a state without candidates."""
    keys = [str(i) for i in range(len(pending))]
    frames = {key: p[0] for key, p in zip(keys, pending, strict=True) if p is not None}
    flags = {key: p[1] for key, p in zip(keys, pending, strict=True) if p is not None and p[1]}
    leaves, new, total = materialise(frames, flags) if frames else ({}, {}, {})
    return [(leaves[key], new[key], total[key]) if key in leaves else None for key in keys]


class SetState(_Rounds):
    """A relation under set semantics: base ∪ pieces, all stored leaves."""

    flag: Optional[str] = None  # every stored row is new

    def __init__(
        self,
        schema: RelationSchema,
        empty: DataFrame,
        partitions: int,
        key: Optional[tuple] = None,
        limit: Optional[int] = None,
    ):
        self.limit = limit  # a .limitsize: at most this many facts (``spark_datalog.limits``)
        self.columns = list(schema.column_names)
        self.partitions = partitions
        # the columns the leaves are hash-partitioned on (``plan.partitioning``): all by default
        self.key = [self.columns[i] for i in key] if key else list(self.columns)
        # Column expressions built once: each F.col costs JVM round trips, every round
        self._key_columns = [F.col(c) for c in self.key]
        self._order = [F.col(c) for c in self.columns]
        self._no_nulls = (
            reduce(lambda a, b: a & b, [c.isNotNull() for c in self._order]) if self.columns else None
        )
        self._empty = empty
        self._base: Optional[DataFrame] = None
        self._pieces: list = []
        self._delta: Optional[DataFrame] = None
        self._full: Optional[DataFrame] = None  # base ∪ pieces, grown by one union per round
        self._to_add: list = []
        self.rows = 0  # exact: the pieces are disjoint

    @property
    def full(self) -> DataFrame:
        return self._full if self._full is not None else self._empty

    @property
    def delta(self) -> DataFrame:
        return self._delta if self._delta is not None else self._empty

    def step(self, candidates: DataFrame) -> DataFrame:
        """Distinct candidates that are not known yet (lazy)."""
        if self.key == self.columns:
            fresh = candidates.distinct()
        else:
            # free when the candidates kept the delta's partitioning on the key (Spark drops a
            # repartition its input already satisfies); then nothing in the round shuffles
            fresh = candidates.repartition(self.partitions, *self._key_columns).distinct()
        for known in self._known():
            fresh = match(fresh, known.hint("merge"), self.columns, "left_anti")
        # non-nullable leaves: were constraint propagation on (``recursion_settings`` turns it
        # off), the optimizer would infer ``isnotnull`` filters on every read of a leaf and push
        # them into the pieces' union, which then loses its partitioning
        if self._no_nulls is not None:
            fresh = fresh.where(self._no_nulls)
        if self.limit is not None:  # the least new facts up to the limit
            fresh = least_frame(fresh, self._order, room(self.limit, self.rows))
        return self._sorted(fresh)

    def _known(self) -> list:
        """What the candidates are anti-joined with: the base, and the union of the pieces
        (which keeps their common partitioning, so it needs a sort but no shuffle)."""
        known = [self._base] if self._base is not None else []
        if self._pieces:
            known.append(reduce(DataFrame.union, self._pieces))
        return known

    def _sorted(self, frame: DataFrame) -> DataFrame:
        # A no-op on the anti-join's output (already in key order); it makes the first round's
        # leaf sorted too. A relation without columns has nothing to sort.
        return frame.sortWithinPartitions(*self._order) if self.columns else frame

    def store(self, stored: DataFrame, new_rows: int, total_rows: Optional[int]) -> None:
        """Add the stored new rows (disjoint from what is known)."""
        self.rows += new_rows
        if new_rows:
            self._pieces.append(stored)
            self._delta = stored
            # Spark flattens nested unions, so the plan stays one union of the leaves
            self._full = stored if self._full is None else self._full.union(stored)
        else:
            release(stored)
            self._delta = None

    def absorb_nothing(self) -> None:
        """A round without candidates: nothing is new."""
        self._delta = None

    @property
    def reached(self) -> bool:
        """Whether it holds the N facts of its limit: the stratum stops (``seminaive.rounds``)."""
        return self.limit is not None and self.rows >= self.limit

    def compact(self, reliable: bool) -> None:
        """Store base ∪ pieces as one leaf and release the pieces, except the current delta,
        which the next round reads."""
        pieces = [p for p in self._pieces if p is not self._delta]
        if not pieces:
            return
        old = ([self._base] if self._base is not None else []) + pieces
        union = reduce(DataFrame.union, old)
        partitioned = (
            union.repartition(self.partitions, *self._key_columns) if self.key else union.coalesce(1)
        )
        self._base = cut_lineage(self._sorted(partitioned), reliable)
        self._pieces = [self._delta] if self._delta is not None else []
        self._full = reduce(DataFrame.union, [self._base] + self._pieces)
        for frame in old:
            release(frame)

    def finish(self, reliable: bool) -> None:
        """Nothing to do: ``full`` is a union of stored leaves."""

    def release(self) -> None:
        """Free the pieces (after a failure; the base stays)."""
        for frame in self._pieces:
            release(frame)
        self._pieces = []
        self._delta = None
        self._full = self._base


class ReplacedState(_Rounds):
    """A relation that each round replaces as a whole: the stored frame is the relation with a
    flag column marking the round's delta, so one stored leaf serves as both. Its kinds define
    :meth:`step` (the next relation, flagged): :class:`BestState`, and the subsumption's
    ``eval.subsumption.SubsumedState``."""

    flag: Optional[str] = IMPROVED

    def __init__(self, schema: RelationSchema, empty: DataFrame):
        self.columns = list(schema.column_names)
        self._empty = empty
        self._stored: Optional[DataFrame] = None  # the relation plus the flag
        self._unchanged = False  # a round without candidates: no delta, whatever the flags say
        self._to_add: list = []
        self.rows: Optional[int] = None

    @property
    def full(self) -> DataFrame:
        return self._full if self._stored is not None else self._empty

    @property
    def delta(self) -> DataFrame:
        if self._stored is None or self._unchanged:
            return self._empty
        return self._delta

    def store(self, stored: DataFrame, new_rows: int, total_rows: Optional[int]) -> None:
        """The stored frame replaces the relation; the previous one is no longer read."""
        release(self._stored)
        self._set_stored(stored)
        self._unchanged = False
        self.rows = total_rows

    def _set_stored(self, stored: DataFrame) -> None:
        self._stored = stored
        self._full = stored.select(*self.columns)
        self._delta = stored.filter(F.col(IMPROVED)).select(*self.columns)

    def absorb_nothing(self) -> None:
        """A round without candidates: nothing is new."""
        self._unchanged = True

    def compact(self, reliable: bool) -> None:
        """The relation is one stored leaf already; store it reliably when asked."""
        if reliable and self._stored is not None:
            previous = self._stored
            self._set_stored(cut_lineage(previous, reliable))
            release(previous)

    def finish(self, reliable: bool) -> None:
        """Nothing to do: the relation is one stored leaf."""

    def release(self) -> None:
        """Nothing to free beyond the relation itself, which the caller may still read."""


class BestState(ReplacedState):
    """A min/max relation: per group (every other column) only the best value is kept; the
    flag marks the groups that improved."""

    def __init__(self, schema: RelationSchema, empty: DataFrame, func: str, position: int):
        super().__init__(schema, empty)
        self.value = self.columns[position]
        self.group = [c for c in self.columns if c != self.value]
        self.func = func

    def step(self, candidates: DataFrame) -> DataFrame:
        """The relation merged with the best candidate per group, flagging improved groups."""
        best = aggregate_frame(candidates, self.group, self.func, self.value, self.value)
        if self._stored is None:
            return best.select(*self.columns, F.lit(True).alias(IMPROVED))
        old = "__known"
        known = self.full.withColumnRenamed(self.value, old)
        if self.group:
            merged = known.join(best, self.group, "full_outer")
        else:
            merged = known.join(best, on=F.lit(True), how="full_outer")
        candidate, current = F.col(self.value), F.col(old)
        better = candidate < current if self.func == "min" else candidate > current
        improved = candidate.isNotNull() & (current.isNull() | better)
        return merged.select(
            *self.group,
            F.when(improved, candidate).otherwise(current).alias(self.value),
            improved.alias(IMPROVED),
        ).select(*self.columns, IMPROVED)
