"""Per-stratum evaluation statistics (what ``Materialization.stats`` holds)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..errors import NonTerminationError
from ..placement import Placement


@dataclass
class IterationStats:
    """One evaluation round of a stratum: new rows per relation and wall-clock seconds.

    In rounds of Spark joins the seconds are the round's, Spark jobs included. In a
    partition-local fixpoint (``eval.partitioned``) they are measured inside the tasks (the
    slowest partition's) and cover the in-memory round alone: that one job's scheduling and
    its reading and writing of facts belong to no round (see ``StratumStats.in_tasks``).
    """

    iteration: int
    new_rows: dict  # relation -> rows new in this round (for min/max relations: improved groups)
    seconds: float

    @property
    def total(self) -> int:
        return sum(self.new_rows.values())


@dataclass
class StratumStats:
    """How one stratum was evaluated.

    ``iterations`` counts evaluation rounds (1 for a non-recursive stratum). ``rows`` holds the
    final size of each relation when it is known without an extra Spark job (a recursive
    stratum's plain relations: the sum of their disjoint deltas), else None.
    """

    index: int
    relations: tuple
    recursive: bool
    strategy: str
    iterations: int = 0
    seconds: float = 0.0
    rounds: list = field(default_factory=list)  # list[IterationStats]
    rows: dict = field(default_factory=dict)  # relation -> Optional[int]
    partitioned: bool = False  # one job, each partition running its fixpoint (eval.partitioned)
    in_tasks: Optional[float] = None  # partition-local: the slowest task's seconds, start to end
    lazy: bool = False  # non-recursive and only planned: evaluated when its result is read
    bsp: bool = False  # BSP rounds across all partitions (eval.bsp)
    placement: Optional[Placement] = None  # where it ran and why (placement.place_evaluation)

    @property
    def rows_per_iteration(self) -> list:
        """Total new rows of each round, in order (the delta sizes)."""
        return [r.total for r in self.rounds]

    def row_count(self, relation: str) -> Optional[int]:
        return self.rows.get(relation)

    def outcome(self) -> str:
        """How the stratum went, as progress reports it: ``partition-local, 51 iterations,
        tc 1275 facts in 2.83s (0.41s in tasks)``."""
        from ..progress import seconds

        if not self.recursive:
            verb = "planned (evaluated when read)" if self.lazy else "evaluated"
            return f"non-recursive, {verb} in {seconds(self.seconds)}"
        how = "partition-local" if self.partitioned else f"rounds of Spark joins, {self.strategy}"
        if self.bsp:
            how = "BSP rounds across partitions"
        facts = ", ".join(f"{n} {'?' if c is None else c} facts" for n, c in self.rows.items())
        text = f"{how}, {self.iterations} iteration{'s' if self.iterations != 1 else ''}, {facts}"
        text += f" in {seconds(self.seconds)}"
        if self.in_tasks is not None:
            text += f" ({seconds(self.in_tasks)} in tasks)"
        return text + self.why()

    def why(self) -> str:
        """``; partition-local: <reason>``: where it ran and why, or nothing."""
        return f"; {self.placement.explained()}" if self.placement is not None else ""

    def __str__(self) -> str:
        kind = f"recursive, {self.strategy}" if self.recursive else "non-recursive"
        if self.partitioned:
            kind += ", partition-local"
        if self.bsp:
            kind += ", BSP rounds"
        sizes = ", ".join(f"{n}={'?' if c is None else c}" for n, c in self.rows.items())
        return (
            f"stratum {self.index} ({', '.join(self.relations)}; {kind}): "
            f"{self.iterations} iteration{'s' if self.iterations != 1 else ''}, "
            f"{self.seconds:.2f}s, rows {sizes}{self.why()}"
        )


def per_relation(sizes: dict) -> str:
    """`` (p 3, q 0)`` for a round of several relations, nothing for one."""
    if len(sizes) < 2:
        return ""
    return " (" + ", ".join(f"{name} {size}" for name, size in sizes.items()) + ")"


def non_termination(
    plan, max_iterations: int, sizes: Optional[dict] = None, what: str = "iterations"
) -> NonTerminationError:
    """The error for a stratum (a ``StratumPlan``) still deriving ``sizes`` (relation -> new
    rows, when known) in its last allowed round; ``what`` names the rounds."""
    derived = (
        ""
        if sizes is None
        else (f"; the last iteration derived {sum(sizes.values())} new rows{per_relation(sizes)}")
    )
    return NonTerminationError(
        f"stratum {plan.index} ({', '.join(plan.relations)}) did not reach a fixpoint within "
        f"{max_iterations} {what}{derived}"
    )
