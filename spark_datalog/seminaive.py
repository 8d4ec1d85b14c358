"""The one semi-naive loop, for every backend.

A relation during a fixpoint has the datafrog shape: what is stable (settled in earlier rounds),
what is recent (new in the last round: the next round's delta) and what is to be added (this
round's candidates). A round inserts the candidates, asks every relation what would become
recent (:meth:`Relation.pending`, lazy), computes those together (the backend's ``collect``: one
Polars ``collect_all`` in the kernel, one Spark job for the Spark states) and hands each relation
its collected rows back (:meth:`Relation.absorb`). Two backends implement :class:`Relation`: the
kernel's Polars relations (``kernel.relation``) and the Spark states (``eval.state``).

The loop runs every fixpoint of the engine: a stratum on the kernel (``kernel.fixpoint``), in a
Spark task (``kernel.partition``), in rounds of Spark joins (``eval.driver``), each BSP superstep
(``kernel.bsp``, one round), and the phases of DRed on the kernel (``kernel.dred``) and in Spark
rounds (``incremental.dred``).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Optional, Protocol

from .limits import reached


class Relation(Protocol):
    """What the semi-naive loop needs of a relation."""

    def insert(self, candidates: Any) -> None:
        """Add candidate rows (one rule's output, a lazy frame of the backend) to ``to_add``."""

    def pending(self) -> Any:
        """What ``to_add`` makes recent (new facts, or improved groups), for ``collect``."""

    def absorb(self, recent: Any) -> int:
        """Take the collected :meth:`pending` rows as recent; returns how many are new."""


Collect = Callable[..., list]  # the relations' pending (a sequence), computed together
Round = Callable[[int, dict], Iterable[tuple]]  # (iteration, relations) -> (name, candidates)


def decide(relations: dict, collect: Collect) -> dict:
    """One round's decision: every relation's pending rows computed together by ``collect`` and
    absorbed; returns name -> how many rows became recent."""
    names = list(relations)
    collected = collect([relations[name].pending() for name in names])
    return {name: relations[name].absorb(new) for name, new in zip(names, collected, strict=True)}


def rounds(relations: dict, candidates: Round, recursive: bool, collect: Collect) -> Iterator[dict]:
    """The semi-naive loop: yields each round's new rows per relation (name -> count) until a
    round adds none (after one round if not ``recursive``), or a limited relation holds its
    N facts (``limits``: its ``reached``); the caller may stop it earlier, and
    may act on the relations between rounds (the next round starts when it asks for it).
    ``candidates(iteration, relations)`` gives the round's ``(relation, frame)`` pairs, which
    are inserted; ``relations``: name -> :class:`Relation`.

    >>> class Bag:  # a toy backend: Python sets
    ...     def __init__(self): self.known, self.to_add = set(), set()
    ...     def insert(self, rows): self.to_add |= rows
    ...     def pending(self): return self.to_add - self.known
    ...     def absorb(self, new): self.known |= new; self.to_add = set(); return len(new)
    >>> list(rounds({"x": Bag()}, lambda i, r: [("x", {1, 2})], True, list))
    [{'x': 2}, {'x': 0}]
    """
    iteration = 0
    while True:
        for name, frame in candidates(iteration, relations):
            relations[name].insert(frame)
        sizes = decide(relations, collect)
        iteration += 1
        yield sizes
        if not recursive or not any(sizes.values()) or reached(relations.values()):
            return


def bounded(
    plan,
    found: Iterator[dict],
    max_iterations: Optional[int],
    what: str = "iterations",
    relations: Optional[dict] = None,
) -> Iterator[dict]:
    """The rounds of ``found`` (from :func:`rounds` over ``relations``), raising the driver's
    ``NonTerminationError`` when the stratum ``plan`` still derives facts in its
    ``max_iterations``-th round (None: no bound), unless a limited relation of ``relations``
    holds its N facts then (the stratum ends there: ``limits``)."""
    from .eval.stats import non_termination  # here: a Spark task imports the kernel alone

    if max_iterations is not None and max_iterations < 1:
        raise ValueError("max_iterations must be positive (or None for no bound)")
    for count, sizes in enumerate(found, start=1):
        yield sizes
        if max_iterations is None or count < max_iterations or not plan.recursive:
            continue
        if any(sizes.values()) and not reached((relations or {}).values()):
            raise non_termination(plan, max_iterations, sizes, what)
