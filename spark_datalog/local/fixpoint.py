"""A semi-naive fixpoint of one recursive stratum, in memory.

Given the round-0 facts of the stratum's relations (their exit rules and stated facts) and the
compiled delta variants of the recursive rules, run rounds until no relation gains a fact (or,
for a min/max relation, no group improves). Rounds are counted as the Spark driver counts them:
round 0 stores the base facts, and the last round is the first that derives nothing new.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, field
from typing import Mapping, Optional

import pyarrow as pa

from ..reference.aggregates import with_value
from . import arrow


@dataclass
class Outcome:
    """What a fixpoint computed: the facts of every relation, the new rows of every round (one
    dict per round) and its seconds, and why it stopped early if it did: ``exceeded`` (the
    round limit, with new facts still coming) or ``overflow`` (more facts than allowed)."""

    facts: dict = field(default_factory=dict)
    sizes: list = field(default_factory=list)
    seconds: list = field(default_factory=list)
    exceeded: bool = False
    overflow: bool = False


def fixpoint(
    base: Mapping[str, list],
    variants: list,
    static: Mapping,
    best: Optional[Mapping[str, tuple]] = None,
    max_rounds: Optional[int] = None,
    max_facts: Optional[int] = None,
    known: Optional[Mapping[str, list]] = None,
    fixed_full: bool = False,
    only_new: bool = False,
    by_value: bool = False,
) -> Outcome:
    """Evaluate the relations of ``base`` (name -> round-0 rows) with the delta ``variants``
    (``(relation, compiled plan)`` pairs reading ``(name, "delta")`` and ``(name, "full")``),
    the other relations in ``static`` (``(name, "full") -> rows``). ``best``: name ->
    ``(func, position)`` for min/max relations, which keep one row per group with the best value
    at ``position``. Stops after ``max_rounds`` rounds, or when the relations together hold
    more than ``max_facts`` facts (facts are then incomplete: the caller must not use them).

    Maintenance starts from a state: ``known`` (name -> rows) is held before round 0 without
    being a delta, and with ``fixed_full`` the variants read the relations' ``full`` from
    ``static`` (an old state) instead of from what the fixpoint holds. A ``set`` in ``known``
    is taken over, not copied (it grows), and so is a dict (group -> best value) of a min/max
    relation; a pyarrow Table (``arrow.is_held``) stays one, and each round's candidates are
    looked up in it in bulk. With ``only_new``, ``facts`` holds
    only the facts the run added to ``known`` (set relations).

    ``by_value`` (only min/max relations): each round propagates, per relation, only the
    improved rows of its best pending value, the others wait (``_Agenda``) and are dropped if
    their group improves meanwhile. The fixpoint is the same (min and max commute with the
    rules: PreM), reached with far fewer improvements per group when values arrive out of
    order (label propagation recomputing groups) — in more, smaller rounds. ``max_rounds`` then
    bounds the depth of the rounds (a round is one deeper than the deepest rows it
    propagates), which the semi-naive rounds of the same rows would at least need."""
    if by_value and set(best or {}) != set(base):
        raise ValueError("by_value needs min/max relations only")
    states = _states(base, best or {}, known or {})
    # the relations' current facts are given only to variants that read them
    full = set().union(*(plan.reads for _, plan in variants)) if variants else set()
    outcome = Outcome()
    added: Optional[dict] = {name: [] for name in states} if only_new else None
    started = time.perf_counter()
    deltas = {name: states[name].merge(rows) for name, rows in base.items()}
    _record(outcome, deltas, started, added)
    depth = 0  # the round that derived the deltas (by value: the deepest of them)
    agenda = _Agenda(states) if by_value else None
    if agenda is not None:
        deltas, depth = agenda.after(deltas, depth)
    while any(deltas.values()):
        if _too_many(states, max_facts):
            outcome.overflow = True
            break
        if max_rounds is not None and depth + 1 >= max_rounds:
            outcome.exceeded = True
            break
        started = time.perf_counter()
        frames = dict(static)
        for name, state in states.items():
            frames[(name, "delta")] = deltas[name]
            if not fixed_full and (name, "full") in full:
                frames[(name, "full")] = state.rows()
        candidates: dict = {name: [] for name in states}
        for relation, plan in variants:
            candidates[relation].extend(plan.rows(frames))
        deltas = {name: states[name].merge(rows) for name, rows in candidates.items()}
        _record(outcome, deltas, started, added)
        depth += 1
        if agenda is not None:
            deltas, depth = agenda.after(deltas, depth)
    if _too_many(states, max_facts):
        outcome.overflow = True
    outcome.facts = added if added is not None else {name: state.facts() for name, state in states.items()}
    return outcome


def _states(base: Mapping, best: Mapping, known: Mapping) -> dict:
    """Relation -> its state, holding the ``known`` rows (see :func:`fixpoint`)."""
    states = {name: _BestState(*best[name]) if name in best else _SetState() for name in base}
    for name, rows in known.items():
        state = states[name]
        if isinstance(rows, set) and isinstance(state, _SetState):
            state.known = rows
        elif arrow.is_held(rows) and isinstance(state, _SetState):
            states[name] = _HeldSetState(rows)
        elif isinstance(rows, dict) and isinstance(state, _BestState):
            state.best = rows
        else:
            state.merge(arrow.table_rows(rows) if isinstance(rows, pa.Table) else rows)
    return states


def _too_many(states: dict, max_facts: Optional[int]) -> bool:
    return max_facts is not None and sum(len(s) for s in states.values()) > max_facts


def _record(outcome: Outcome, deltas: dict, started: float, added: Optional[dict]) -> None:
    if added is not None:
        for name, rows in deltas.items():
            added[name].extend(rows)
    outcome.sizes.append({name: len(rows) for name, rows in deltas.items()})
    outcome.seconds.append(time.perf_counter() - started)


class _SetState:
    def __init__(self):
        self.known: set = set()

    def __len__(self) -> int:
        return len(self.known)

    def merge(self, candidates) -> list:
        """The candidates not known yet (each once), now known."""
        known = self.known
        new = []
        for row in candidates:
            if row not in known:
                known.add(row)
                new.append(row)
        return new

    def rows(self):
        return self.known

    def facts(self) -> list:
        return list(self.known)


class _HeldSetState(_SetState):
    """A set relation known from a pyarrow Table: the facts added since are held in ``known``;
    each merge looks its new candidates up in the table at once (``arrow.among``)."""

    def __init__(self, table):
        super().__init__()
        self.table = table

    def __len__(self) -> int:
        return self.table.num_rows + len(self.known)

    def merge(self, candidates) -> list:
        known = self.known
        fresh = list(dict.fromkeys(row for row in candidates if row not in known))
        if fresh:
            stored = arrow.among(self.table, fresh)
            fresh = [row for row in fresh if row not in stored]
            known.update(fresh)
        return fresh

    def rows(self):
        return pa.concat_tables([self.table, arrow.like(self.table, list(self.known))])

    def facts(self) -> list:
        return arrow.table_rows(self.table) + list(self.known)


class _Agenda:
    """Improved rows of min/max relations waiting to be propagated, best value first: a round
    takes the rows of one value per relation (measured on label propagation, taking several
    values per round costs more in improvements that are improved on later than it saves in
    rounds)."""

    def __init__(self, states: dict):
        self.states = states
        # best first: bare values for min (a heap pops the smallest), ``_Key`` for max
        self.heaps: dict = {name: [] for name in states}
        self.rows: dict = {name: {} for name in states}  # value -> rows of that value
        self.depths: dict = {name: {} for name in states}  # value -> round of its deepest row

    def __bool__(self) -> bool:
        return any(self.heaps.values())

    def after(self, improved: dict, depth: int) -> tuple:
        """Add the ``improved`` rows (derived in round ``depth``); return, per relation, the
        rows of its best pending value whose group still has that value, and the round of the
        deepest of them."""
        for name, rows in improved.items():
            state, waiting, heap = self.states[name], self.rows[name], self.heaps[name]
            position, keyed = state.position, state.func != "min"
            depths = self.depths[name]
            for row in rows:
                depths[row[position]] = max(depths.get(row[position], 0), depth)
                value = row[position]
                if value not in waiting:
                    heapq.heappush(heap, _Key(value) if keyed else value)
                    waiting[value] = [row]
                else:
                    waiting[value].append(row)
        ready, deepest = {}, 0
        for name, heap in self.heaps.items():
            state, waiting, rows = self.states[name], self.rows[name], []
            best, position, after = state.best, state.position, state.position + 1
            while heap and not rows:  # a value whose rows all went stale costs no round
                value = heapq.heappop(heap)
                value = value.value if isinstance(value, _Key) else value
                rows = [row for row in waiting.pop(value) if best.get(row[:position] + row[after:]) == value]
                found = self.depths[name].pop(value)
            if rows:
                deepest = max(deepest, found)
            ready[name] = rows
        return ready, deepest


class _Key:
    """A max value in a heap, which pops the smallest: ordered descending."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __lt__(self, other) -> bool:
        return self.value > other.value


def _better_nan(smaller: bool):
    """Whether a value beats the current one where a NaN is involved (NaN is the largest
    value); the plain comparison of the caller decides the rest."""
    if smaller:
        return lambda value, current: current != current and value == value
    return lambda value, current: value != value and current == current


class _BestState:
    def __init__(self, func: str, position: int):
        self.func, self.position = func, position
        self.best: dict = {}  # group -> best value

    def __len__(self) -> int:
        return len(self.best)

    def merge(self, candidates) -> list:
        """Rows of the groups whose value improved, with their new best value."""
        position, best, after, smaller = self.position, self.best, self.position + 1, self.func == "min"
        better_nan = _better_nan(smaller)
        improved: dict = {}
        for row in candidates:  # group_of and better, inlined: this runs per candidate
            group = row[:position] + row[after:]
            value = row[position]
            current = best.get(group)
            if (
                current is None
                or (value < current if smaller else value > current)
                or better_nan(value, current)
            ):
                best[group] = value
                improved[group] = value
        return [with_value(group, position, value) for group, value in improved.items()]

    def rows(self) -> list:
        return self.facts()

    def facts(self) -> list:
        return [with_value(group, self.position, value) for group, value in self.best.items()]
