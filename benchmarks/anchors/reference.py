"""The project's reference interpreter (``spark_datalog.reference.evaluate``): the correctness
check, run on the small sizes only (it is a plain Python set-at-a-time evaluator)."""

from __future__ import annotations

from . import Outcome

SYSTEM = "reference"
KIND = "python"


def supports(problem: str):
    return None


def version() -> str:
    import spark_datalog

    return spark_datalog.__version__


def load(task):
    """The checked program and the inputs as sets (not timed)."""
    import spark_datalog as sd

    program = sd.Program.from_file(task.program_path)
    return program, {name: set(rows) for name, rows in task.inputs.items()}


def run(loaded, task) -> Outcome:
    from spark_datalog.reference import evaluate

    program, edb = loaded
    rows = evaluate(program, edb)[task.output]
    return Outcome(facts=len(rows), fetch=lambda: set(rows))
