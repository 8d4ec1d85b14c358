"""Integer overflow on Spark: every path raises the ArithmeticOverflowError the reference
raises (same rule, position and message), and results at the bounds equal the reference's.

Paths: non-recursive strata, recursive strata partition-local (``decompose=True``) and in
rounds of Spark joins (``decompose=False``), ``sum<>``, and ``update`` by DRed in the driver,
in one task and in rounds, and by touched groups for a sum.
"""

from __future__ import annotations

import logging

import pytest

import spark_datalog as sd
from spark_datalog.placement import WHERE
from spark_datalog.storage.warehouse import Warehouse
from incremental.test_update import DRED_PATHS, DRED_WHERE, change, dred_path

LONG_MAX, LONG_MIN = 2**63 - 1, -(2**63)

CASES = {
    "long +": (
        ".decl a(x: long, y: long)\n.input a\nb(Z) :- a(X, Y), Z = X + Y.",
        [(LONG_MAX, 1), (1, 1)],
    ),
    "-2^63 / -1": (
        ".decl a(x: long, y: long)\n.input a\nb(Z) :- a(X, Y), Z = X / Y.",
        [(LONG_MIN, -1)],
    ),
    "int * in the head": (
        ".decl a(x: int, y: int)\n.input a\nb(X * Y) :- a(X, Y).",
        [(65536, 65536)],
    ),
    "int + in a comparison": (
        ".decl a(x: int, y: int)\n.input a\nb(X) :- a(X, Y), X + Y > 0.",
        [(2**31 - 1, 1)],
    ),
    "sum": (
        ".decl a(x: long, y: long)\n.input a\ns(X, sum<Y>) :- a(X, Y).",
        [(1, 2**62), (1, 2**62 + 1), (2, 1)],
    ),
    "recursive doubling": (
        ".decl a(x: long, y: long)\n.input a\nt(X, Y) :- a(X, Y).\nt(X, Z) :- t(X, Y), Z = Y * 2, Z > Y.",
        [(1, 2**60)],
    ),
    "non-linear recursion": (
        ".decl a(x: long, y: long)\n.input a\nt(X) :- a(X, _).\nt(Z) :- t(X), t(Y), Z = X * Y, Z > X, Z > Y.",
        [(2**20, 0), (2**21, 0)],
    ),
    # no overflow: results at the bounds
    "up to 2^63 - 1": (
        ".decl a(x: long, y: long)\n.input a\n"
        "t(X, Y) :- a(X, Y).\nt(X, Z) :- t(X, Y), Y < 9223372036854775807, Z = Y + 1.",
        [(1, LONG_MAX - 3), (2, LONG_MAX)],
    ),
    "down to -2^63": (
        ".decl a(x: long, y: long)\n.input a\nb(Z, W) :- a(X, Y), Z = X - Y, W = X mod Y.\n"
        "c(X) :- a(X, _), X = -9223372036854775808.",
        [(LONG_MIN + 1, 1), (LONG_MIN, -1), (LONG_MAX, LONG_MAX)],
    ),
    "int bound": (
        ".decl a(x: int, y: int)\n.input a\nb(X * Y) :- a(X, Y).\ns(sum<Z>) :- a(X, Y), Z = X * Y.",
        [(46340, 46340), (-(2**15), 2**16)],
    ),
}


def _schema(text: str) -> str:
    kind = "int" if "x: int" in text else "long"
    return f"x {kind}, y {kind}"


def _outcome(run):
    """("ok", relations) or (error class, (line, column), the rule it names). Which operands
    overflow first may differ between engines (the order of evaluation is not specified)."""
    try:
        return "ok", run()
    except sd.DatalogError as error:
        return type(error).__name__, (error.line, error.column), error.message.partition(" (in rule ")[2]


@pytest.mark.parametrize("decompose", [True, False], ids=["partition-local", "rounds"])
@pytest.mark.parametrize("case", list(CASES))
def test_spark_raises_the_overflow_the_reference_raises(spark, case, decompose):
    text, rows = CASES[case]
    program = sd.Program.parse(text)
    expected = _outcome(lambda: sd.reference.evaluate(program, {"a": set(rows)}))

    def on_spark():
        inputs = {"a": spark.createDataFrame(rows, _schema(text))}
        result = program.materialize(spark, inputs=inputs, decompose=decompose)
        return {name: {tuple(r) for r in result[name].collect()} for name in result.relations}

    assert _outcome(on_spark) == expected
    overflows = not case.startswith(("up to", "down to", "int bound"))
    assert (expected[0] == "ArithmeticOverflowError") == overflows


INCREMENTAL = (
    ".decl seed(x: long)\n.input seed\n.decl step(y: long, d: long)\n.input step\n"
    "t(X) :- seed(X).\nt(Z) :- t(Y), step(Y, D), Z = Y + D.\n"
    "s(sum<X>) :- seed(X).\n"
)


@pytest.mark.parametrize("path", DRED_PATHS)
def test_update_raises_the_overflow_the_reference_raises(spark, tmp_path, caplog, datalog_settings, path):
    decompose = dred_path(datalog_settings, path)
    program = sd.Program.parse(INCREMENTAL)
    seeds, steps = [(0,)], [(0, 1), (1, 1)]
    wh = Warehouse(spark, str(tmp_path / "wh"))
    inputs = {
        "seed": spark.createDataFrame(seeds, "x long"),
        "step": spark.createDataFrame(steps, "y long, d long"),
    }
    program.materialize(spark, inputs=inputs, warehouse=wh)
    new_step = (2, LONG_MAX)
    expected = _outcome(
        lambda: sd.reference.evaluate(program, {"seed": set(seeds), "step": set(steps) | {new_step}})
    )
    assert expected[0] == "ArithmeticOverflowError"
    changes = {"step": change(spark, "step", inserts=[new_step], schema="y long, d long")}
    with caplog.at_level(logging.INFO, logger="spark_datalog"):
        assert _outcome(lambda: program.update(spark, wh, changes=changes, decompose=decompose)) == expected
    placed = [r.getMessage() for r in caplog.records if " · t · dred, " in r.getMessage()]
    assert placed and placed[-1].split(" · t · dred, ")[1].startswith(f"{WHERE[DRED_WHERE[path]]}: "), placed


def test_update_of_a_sum_raises_the_overflow_the_reference_raises(spark, tmp_path):
    program = sd.Program.parse(INCREMENTAL)
    seeds, steps = [(LONG_MAX - 1,)], [(5, 1)]
    wh = Warehouse(spark, str(tmp_path / "wh"))
    inputs = {
        "seed": spark.createDataFrame(seeds, "x long"),
        "step": spark.createDataFrame(steps, "y long, d long"),
    }
    program.materialize(spark, inputs=inputs, warehouse=wh)
    expected = _outcome(
        lambda: sd.reference.evaluate(program, {"seed": {(LONG_MAX - 1,), (2,)}, "step": set(steps)})
    )
    assert expected[0] == "ArithmeticOverflowError" and expected[2].startswith("s(sum<X>)")
    changes = {"seed": change(spark, "seed", inserts=[(2,)], schema="x long")}
    assert _outcome(lambda: program.update(spark, wh, changes=changes)) == expected
