"""The one DRed (delete and re-derive) of a recursive stratum, for every backend.

Given the old facts of the stratum and the facts of lower relations that appeared or
disappeared, in three phases over the plans of ``plan.maintenance.dred_plans``:

1. remove: the old facts that may no longer hold. By over-deletion (:func:`over_deleted`):
   every fact with a derivation through a removed lower fact (one that disappeared under a
   positive atom, or appeared under a negated one), propagated semi-naively with every other
   literal read from the OLD state, a superset of what really goes. A backend may give the
   removed facts found by another strategy instead (the kernel's group repair of min/max
   relations and derivation levels: ``kernel.dred``, ``incremental.dropping``).
2. re-derive: of the removed facts, those the stratum's rules (and stated facts) still derive
   in one round from what remains and the new lower relations; of a min/max relation, every
   derivation of a removed row's group (``DredPlans.group_rules``).
3. insert: from the re-derived facts and the seeds of the other direction (a lower fact that
   appeared under a positive atom, disappeared under a negated one), rounds over the new state,
   the relations starting from what remains.

A negated literal ``not q(X, _)`` with ``_`` is kept beside its seed (``plan.maintenance``), so
that both phases only see genuine derivations. Each phase is a run of the engine's one
semi-naive loop (``seminaive.rounds``) through :func:`run_rounds`. The frames, relations and
their operations come from a :class:`Backend`: the kernel's (``kernel.dred.KERNEL``, Polars, in
the driver or in one Spark task) or Spark's (``incremental.dred.SparkBackend``, rounds of
Spark joins).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Protocol

from .plan import ir
from .plan.maintenance import DredPlans
from .seminaive import Collect, rounds


class Backend(Protocol):
    """The frames and relations of one backend, as DRed uses them."""

    collect: Collect

    def output(self, plan: Any, frames: Mapping, shape: ir.LocalRelation) -> Any:
        """A rule's output (lazy) with the columns and types of the relation ``shape``."""

    def relation(self, shape: ir.LocalRelation, known: Any = None) -> Any:
        """A ``seminaive.Relation`` of ``shape`` (set, or min/max when ``shape.best``),
        starting from the ``known`` facts."""

    def full(self, relation: Any) -> Any:
        """Every fact the relation holds (lazy)."""

    def recent(self, relation: Any) -> Any:
        """The facts the last round added (the next round's delta)."""

    def facts(self, relation: Any) -> Any:
        """Every fact the relation holds, computed."""

    def size(self, relation: Any) -> int:
        """How many facts it holds."""

    def has_rows(self, frame: Any) -> bool:
        """False only when ``frame`` is known to be empty (without computing it)."""

    def rows(self, frame: Any) -> int:
        """How many rows a frame of facts has."""

    def union(self, frames: list, shape: ir.LocalRelation) -> Any:
        """The rows of every frame (none: an empty frame of ``shape``)."""

    def within(self, frame: Any, facts: Any, on: Optional[list] = None) -> Any:
        """The rows of ``frame`` matching one of ``facts`` on ``on`` (default: every column;
        ``[]``: any row of it when it has one)."""

    def without(self, frame: Any, facts: Any) -> Any:
        """The rows of ``frame`` that are not among ``facts``."""

    def stated(self, shape: ir.LocalRelation, rows: tuple) -> Any:
        """The program's stated facts ``rows`` of ``shape`` as a frame."""

    def after_round(self, relations: dict, count: int, added: Optional[dict]) -> None:
        """Called after every round (e.g. to cut a long lineage)."""


@dataclass
class DredOutcome:
    """relation -> (inserted facts, deleted facts); whether a phase hit the round limit, or
    phase 1 removed more than allowed (``overflow``: no changes then); relation -> the facts
    phase 1 removed (``over``); relation -> the (round, frame) pairs of the rows phase 3 added
    (``added``); relation -> its final relation (``final``)."""

    changes: dict
    exceeded: bool = False
    overflow: bool = False
    over: dict = field(default_factory=dict)
    added: dict = field(default_factory=dict)
    final: dict = field(default_factory=dict)


def dred(
    backend: Backend,
    plans: DredPlans,
    old: Mapping,
    lower_old: Mapping,
    lower_new: Mapping,
    changed: Mapping,
    max_rounds: Optional[int] = None,
    max_over: Optional[int] = None,
    removed: Optional[Mapping] = None,
) -> DredOutcome:
    """The stratum's changes. ``old``: relation -> its old facts; ``lower_old`` /
    ``lower_new``: lower relation -> its facts before / after; ``changed``: ``("inserted" |
    "deleted", lower relation)`` -> the facts that appeared / disappeared. Phase 1 over-deletes
    unless the caller gives the facts it ``removed`` (relation -> old facts); it stops as soon
    as more than ``max_over`` facts are removed (``overflow``)."""
    shapes = {shape.name: shape for shape in plans.relations}
    exceeded = False
    if removed is None:
        removed, sizes, exceeded = over_deleted(backend, plans, old, lower_old, changed, max_rounds, max_over)
    else:
        sizes = {name: backend.rows(frame) for name, frame in removed.items()}
    if max_over is not None and sum(sizes.values()) > max_over:
        return DredOutcome({}, overflow=True)
    over = {name: removed[name] for name in shapes if sizes.get(name)}
    remaining = {
        name: backend.without(old[name], over[name]) if name in over else old[name] for name in shapes
    }
    new_full = {(name, "full"): frame for name, frame in lower_new.items()}
    remaining_full = {**new_full, **{(name, "full"): frame for name, frame in remaining.items()}}
    base = rederived(backend, plans, remaining_full, over)
    for name, frames in seeded(backend, plans.insert_seeds, remaining_full, changed, shapes).items():
        base.setdefault(name, []).extend(frames)
    inserting = {name: backend.relation(shape, remaining[name]) for name, shape in shapes.items()}

    def current(states: dict) -> dict:
        return {**new_full, **{(name, "full"): backend.full(state) for name, state in states.items()}}

    added: dict = {name: [] for name in shapes}
    exceeded |= run_rounds(
        backend, inserting, base, plans.delta_rules, current, shapes, max_rounds, added=added
    )
    changes = {
        name: _changes(backend, shape, old[name], over, added[name], inserting[name])
        for name, shape in shapes.items()
    }
    return DredOutcome(changes, exceeded, over=over, added=added, final=inserting)


def over_deleted(
    backend: Backend,
    plans: DredPlans,
    old: Mapping,
    lower_old: Mapping,
    changed: Mapping,
    max_rounds,
    max_over,
) -> tuple:
    """Phase 1 by over-deletion: (relation -> the old facts with a derivation through a
    removed fact; relation -> how many; whether the round limit was hit). Stops once more
    than ``max_over`` facts are found."""
    shapes = {shape.name: shape for shape in plans.relations}
    old_full = {(name, "full"): frame for name, frame in {**lower_old, **old}.items()}
    seeds = seeded(backend, plans.over_seeds, old_full, changed, shapes)
    relations = {
        name: backend.relation(dataclasses.replace(shape, best=None)) for name, shape in shapes.items()
    }
    exceeded = run_rounds(
        backend, relations, seeds, plans.delta_rules, lambda _: old_full, shapes, max_rounds, max_over
    )
    sizes = {name: backend.size(relation) for name, relation in relations.items()}
    return {name: backend.facts(relation) for name, relation in relations.items()}, sizes, exceeded


def seeded(backend: Backend, seeds, frames: Mapping, changed: Mapping, shapes: Mapping) -> dict:
    """Relation -> the frames its ``seeds`` derive, each reading its changed lower facts as
    the delta (seeds whose lower relation did not change that way derive nothing); ``shapes``:
    relation -> its ``LocalRelation``."""
    found: dict = {}
    for seed in seeds:
        delta = changed.get((seed.changed, seed.lower))
        if delta is None or not backend.has_rows(delta):
            continue
        seed_frames = {**frames, (seed.lower, "delta"): delta}
        found.setdefault(seed.relation, []).append(
            backend.output(seed.plan, seed_frames, shapes[seed.relation])
        )
    return found


def rederived(backend: Backend, plans: DredPlans, frames: Mapping, over: Mapping) -> dict:
    """Relation -> frames of its removed facts (``over``: relation -> facts, for the relations
    with some) that the rules or stated facts still derive from ``frames`` (what remains and
    the new lower relations); of a min/max relation, every derivation of a removed row's
    group."""
    shapes = {shape.name: shape for shape in plans.relations}
    found: dict = {name: [] for name in shapes}
    for name, plan in plans.rules:
        if name in over and shapes[name].best is None:
            found[name].append(backend.within(backend.output(plan, frames, shapes[name]), over[name]))
    for name, plan in plans.group_rules:
        if name in over:
            found[name].append(backend.output(plan, {**frames, (name, "delta"): over[name]}, shapes[name]))
    for name, rows in plans.facts.items():
        if name in over and rows:
            stated = backend.stated(shapes[name], rows)
            found[name].append(backend.within(stated, over[name], group_columns(shapes[name])))
    return found


def run_rounds(
    backend: Backend,
    relations: dict,
    base: dict,
    delta_rules,
    full: Callable,
    shapes: Mapping,
    max_rounds: Optional[int],
    max_facts: Optional[int] = None,
    added: Optional[dict] = None,
    within: Optional[dict] = None,
) -> bool:
    """Run rounds of the engine's loop from the ``base`` frames (relation -> frames); each
    later round runs the delta rules (``(relation, plan)`` pairs) that read a relation with new
    facts, over ``full(relations)`` and the recent facts (``shapes``: relation -> its
    ``LocalRelation``). True when stopped at ``max_rounds``;
    stops (False) once the relations hold more than ``max_facts``. Each round's new facts are
    appended to ``added`` (relation -> (round, frame) pairs) when given; with ``within``
    (relation -> frame), only candidates among its rows are kept."""
    reads = [
        (name, plan, {s.relation for s in ir.scans(plan) if s.source == "delta"})
        for name, plan in delta_rules
    ]
    grown: set = set()

    def kept(name: str, frame):
        return frame if within is None else backend.within(frame, within[name])

    def candidates(iteration: int, states: dict) -> list:
        if iteration == 0:
            return [(name, kept(name, frame)) for name, frames in base.items() for frame in frames]
        frames = dict(full(states))
        frames.update({(name, "delta"): backend.recent(state) for name, state in states.items()})
        return [
            (name, kept(name, backend.output(plan, frames, shapes[name])))
            for name, plan, deltas in reads
            if deltas & grown
        ]

    for count, sizes in enumerate(rounds(relations, candidates, True, backend.collect), start=1):
        grown.clear()
        grown.update(name for name, size in sizes.items() if size)
        if added is not None:
            for name in grown:
                added[name].append((count - 1, backend.recent(relations[name])))
        backend.after_round(relations, count, added)
        if max_facts is not None and sum(backend.size(r) for r in relations.values()) > max_facts:
            return False
        if grown and max_rounds is not None and count >= max_rounds:
            return True
    return False


def group_columns(shape: ir.LocalRelation) -> Optional[list]:
    """The columns of a min/max relation's group (None for a set relation: all of them)."""
    if shape.best is None:
        return None
    return [name for i, name in enumerate(shape.column_names) if i != shape.best[1]]


def _changes(backend: Backend, shape: ir.LocalRelation, old, over: Mapping, added: list, final) -> tuple:
    """(inserted, deleted) of a relation: a set's final facts are what remained plus what phase
    3 added, its old ones what remained plus the removed ones; a min/max group's best may change
    several times, so its final rows are compared with the old ones."""
    if shape.best is None:
        new = backend.union([frame for _, frame in added], shape)
        if shape.name not in over:
            return new, backend.union([], shape)
        return backend.without(new, over[shape.name]), backend.without(over[shape.name], new)
    facts = backend.facts(final)
    return backend.without(facts, old), backend.without(old, facts)
