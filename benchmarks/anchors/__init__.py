"""The systems a user would pick instead of this engine, one module each.

Every anchor module exposes ``SYSTEM`` (its name in results), ``KIND`` (``"spark"``: runs in the
benchmark's SparkSession on the input DataFrames; ``"python"``: runs in a worker process on the
input lists), ``supports(problem) -> str | None`` (``None`` when it can run the problem, else
the reason it cannot) and ``run(...) -> Outcome``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional


@dataclass
class Outcome:
    """What one run of one system produced: the number of output facts, the number of fixpoint
    iterations when the system reports it, ``fetch()`` returning the facts as a set of tuples
    (called after the timed part, only on small sizes, for the cross-system check) and
    ``release()`` freeing what the run cached."""

    facts: int
    iterations: Optional[int] = None
    fetch: Optional[Callable[[], set]] = None
    release: Callable[[], None] = lambda: None


@dataclass
class Task:
    """Everything a system needs to run one problem on one input: the problem name, the input
    relations (name -> list of tuples), their schemas (name -> ((column, type), ...)), the
    Datalog program file, its output relation, and whether the facts themselves are compared."""

    problem: str
    inputs: dict
    schemas: dict
    program_path: str
    output: str
    collect: bool = False

    @property
    def input_rows(self) -> int:
        return sum(len(rows) for rows in self.inputs.values())
