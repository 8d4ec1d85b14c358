"""Running a program on the kernel and on the reference interpreter, with comparable results."""

from __future__ import annotations

import math

import spark_datalog as sd
from spark_datalog.kernel.evaluate import evaluate_program
from spark_datalog.kernel.frames import facts_table
from spark_datalog.kernel.index import DEFAULT, IndexPolicy

NAN = "NaN"  # NaN as a value sets can compare (NaN != NaN)


def _value(value):
    if isinstance(value, dict):  # a record (a struct column)
        return tuple(_value(v) for v in value.values())
    return NAN if isinstance(value, float) and math.isnan(value) else value


def rows(table) -> set:
    """The rows of an Arrow table as a set of tuples (NaN made comparable)."""
    columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
    if not columns:
        return {()} if table.num_rows else set()
    return {tuple(_value(v) for v in row) for row in zip(*columns, strict=True)}


def kernel_result(program, edb: dict, max_iterations: int = 500, index: IndexPolicy = DEFAULT) -> dict:
    """Kernel results (relation -> set of tuples) from EDB sets of tuples; ``index``: when its
    relations index their known facts."""
    inputs = {}
    for name, tuples in edb.items():
        schema = program.relations[name]
        inputs[name] = facts_table(schema.column_names, schema.types, tuples)
    result = evaluate_program(program, inputs, max_iterations, index)
    return {name: rows(table) for name, table in result.items()}


def reference_result(program, edb: dict, max_iterations: int = 500) -> dict:
    result = sd.reference.evaluate(program, edb, max_iterations=max_iterations)
    return {name: {tuple(_value(v) for v in row) for row in rows_} for name, rows_ in result.items()}


def outcome(run):
    """("ok", result) or (error class, line, column, the rule the message names)."""
    try:
        return "ok", run()
    except sd.DatalogError as error:
        return type(error).__name__, error.line, error.column, error.message.partition(" (in rule ")[2]


def assert_same(
    text: str, edb: dict, max_iterations: int = 500, index: IndexPolicy = DEFAULT, functors=None
) -> None:
    """The kernel's outcome on ``text`` and ``edb`` is the reference's (``index``: the kernel
    relations' index policy; ``functors``: the user-defined functors' functions)."""
    program = sd.Program.parse(text, functors=functors)
    expected = outcome(lambda: reference_result(program, edb, max_iterations))
    actual = outcome(lambda: kernel_result(program, edb, max_iterations, index))
    if expected[0] == "NonTerminationError":  # the messages count rows differently
        assert actual[0] == expected[0], f"{text}\nEDB {edb}\nkernel: {actual}"
        return
    assert actual == expected, f"{text}\nEDB {edb}\nkernel: {actual}\nreference: {expected}"
