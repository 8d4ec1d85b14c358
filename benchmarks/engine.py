"""This engine as a benchmarked system: ``Program.from_file(...).materialize(...)`` on the same
cached input frames as the Spark anchors, forced with one ``count`` of the output relation."""

from __future__ import annotations

from .anchors import Outcome

KIND = "spark"


def supports(problem: str):
    return None


def version() -> str:
    import spark_datalog

    return spark_datalog.__version__


def load(task):
    """The parsed and checked program (parsing is not timed: it takes milliseconds)."""
    import spark_datalog as sd

    return sd.Program.from_file(task.program_path)


def run(spark, frames: dict, task, program, strategy: str, decompose: bool = True) -> Outcome:
    """Materialize the program and count its output relation (the one action that forces it).
    ``max_iterations`` is lifted so that long chains are bounded by the case's time budget.
    ``decompose=False`` is the rounds driver even where a stratum decomposes."""
    result = program.materialize(
        spark, inputs=frames, strategy=strategy, max_iterations=1_000_000, decompose=decompose
    )
    output = result[task.output]
    facts = output.count()
    return Outcome(
        facts=facts,
        iterations=_iterations(result.stats),
        fetch=lambda: {tuple(r) for r in output.collect()},
        release=lambda: _release(result),
    )


def _release(result) -> None:
    """Unpersist the result's frames so the next case starts from a clean cache."""
    for name in result.relations:
        result[name].unpersist(blocking=False)


def _iterations(stats) -> int | None:
    """Iterations summed over the recursive strata (None if the result carries no stats)."""
    total, found = 0, False
    for stratum in stats or ():
        recursive = getattr(stratum, "recursive", None)
        iterations = getattr(stratum, "iterations", None)
        if recursive and iterations is not None:
            total += iterations
            found = True
    return total if found else None
