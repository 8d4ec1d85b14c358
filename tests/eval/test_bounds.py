"""The default bound on a recursive stratum's rounds (issue 19, item 16), on every entry point.

``n(Y) :- n(X), Y = X + 1.`` never reaches a fixpoint. Every entry point stops it with a
``NonTerminationError`` naming the stratum's relation and the bound: here an explicit small
bound keeps the tests quick, and the default of every entry point is checked to be the one
shared constant ``spark_datalog.bounds.MAX_ITERATIONS``.
"""

from __future__ import annotations

import importlib
import inspect
import logging

import pyarrow as pa
import pytest

import spark_datalog as sd
from spark_datalog import cli, job
from spark_datalog.bounds import MAX_ITERATIONS
from spark_datalog.errors import NonTerminationError
from spark_datalog.kernel import fixpoint
from spark_datalog.kernel.evaluate import evaluate_program
from spark_datalog.storage.warehouse import Warehouse

COUNTER = """
.decl start(x: long)
n(X) :- start(X).
n(Y) :- n(X), Y = X + 1.
"""

# a min recursion whose best values keep decreasing: its repair runs value by value
DECREASING = """
.decl start(x: long, d: long)
d(X, min<D>) :- start(X, D).
d(X, min<D>) :- d(X, E), D = E - 1.
"""

BOUND = 50
MESSAGE = rf"stratum \d+ \(n\) did not reach a fixpoint within {BOUND} "


def test_every_entry_point_defaults_to_the_shared_bound():
    functions = [
        sd.reference.evaluate,
        sd.Program.materialize,
        sd.Program.update,
        importlib.import_module("spark_datalog.eval.materialize").materialize,
        importlib.import_module("spark_datalog.eval.driver").evaluate,
        importlib.import_module("spark_datalog.incremental.update").update,
    ]
    for function in functions:
        default = inspect.signature(function).parameters["max_iterations"].default
        assert default == MAX_ITERATIONS, function.__qualname__
    assert job.JobArgs(program="p.dl", warehouse="wh").max_iterations == MAX_ITERATIONS
    assert job.parse_args(["--program", "p.dl", "--warehouse", "wh"]).max_iterations == MAX_ITERATIONS
    assert cli.build_parser().parse_args(["run", "p.dl"]).max_iterations == MAX_ITERATIONS
    assert MAX_ITERATIONS == 100_000


def test_reference_stops_at_the_bound():
    program = sd.Program.parse(COUNTER)
    with pytest.raises(NonTerminationError, match=MESSAGE):
        sd.reference.evaluate(program, {"start": {(0,)}}, max_iterations=BOUND)


def test_kernel_fixpoint_stops_at_the_bound(monkeypatch):
    rounds = []
    loop = fixpoint.rounds

    def counted(*arguments):
        for sizes in loop(*arguments):
            rounds.append(sizes)
            yield sizes

    monkeypatch.setattr(fixpoint, "rounds", counted)
    start = pa.table({"x": pa.array([1], pa.int64()), "d": pa.array([0], pa.int64())})
    message = rf"stratum \d+ \(d\) did not reach a fixpoint within {BOUND} "
    with pytest.raises(NonTerminationError, match=message):
        evaluate_program(sd.Program.parse(DECREASING), {"start": start}, max_iterations=BOUND)
    assert len(rounds) == BOUND


def test_a_bound_does_not_change_what_the_kernel_finds():
    program = sd.Program.parse(
        """
    .decl arc(x: long, y: long)
    .decl start(x: long, d: long)
    d(X, min<D>) :- start(X, D).
    d(Y, min<D>) :- d(X, E), arc(X, Y), D = E + 1.
    """
    )
    arcs = [(i, (i * 7 + 3) % 40) for i in range(40)] + [(i, i + 1) for i in range(39)]
    inputs = {
        "arc": pa.table({"x": [a for a, _ in arcs], "y": [b for _, b in arcs]}),
        "start": pa.table({"x": [0, 17], "d": [0, 0]}),
    }
    free = evaluate_program(program, inputs, max_iterations=None)["d"]
    bounded = evaluate_program(program, inputs, max_iterations=40)["d"]
    assert sorted(bounded.to_pylist(), key=repr) == sorted(free.to_pylist(), key=repr)
    assert free.num_rows == 40  # every node is reached
    with pytest.raises(NonTerminationError):
        evaluate_program(program, inputs, max_iterations=2)


@pytest.mark.parametrize("decompose", [True, False], ids=["partition-local", "rounds"])
def test_materialize_stops_at_the_bound(spark, decompose):
    program = sd.Program.parse(COUNTER)
    start = spark.createDataFrame([(0,)], "x long")
    with pytest.raises(NonTerminationError, match=MESSAGE):
        program.materialize(spark, inputs={"start": start}, max_iterations=BOUND, decompose=decompose)


# each DRed path, chosen through settings: a linear stratum runs in the driver by default, in
# one task with spark.datalog.driverMemory=0, in rounds of Spark joins with decompose=False;
# the log line of the placement chosen for n says where it ran
DRED_PATHS = {
    "linear dred in the driver": ({}, True, "in the driver"),
    "dred in one task": ({"driverMemory": 0}, True, "partition-local (one task)"),
    "dred in rounds": ({}, False, "rounds of Spark joins"),
}


@pytest.mark.parametrize("path", DRED_PATHS)
def test_update_stops_at_the_bound(spark, tmp_path, caplog, datalog_settings, path):
    settings, decompose, where = DRED_PATHS[path]
    datalog_settings(**settings)
    program = sd.Program.parse(COUNTER)
    wh = Warehouse(spark, str(tmp_path / "wh"))
    empty = spark.createDataFrame([], "x long")
    program.materialize(spark, inputs={"start": empty}, warehouse=wh, decompose=decompose)
    change = spark.createDataFrame([(0, 1)], "x long, _count long")
    stopped = pytest.raises(NonTerminationError, match=MESSAGE + "incremental iterations")
    with caplog.at_level(logging.INFO, logger="spark_datalog"), stopped:
        program.update(
            spark, warehouse=wh, changes={"start": change}, max_iterations=BOUND, decompose=decompose
        )
    placed = [r.getMessage() for r in caplog.records if " · n · dred, " in r.getMessage()]
    assert placed and placed[-1].split(" · n · dred, ")[1].startswith(f"{where}: "), placed
    assert ("(not in the driver: spark.datalog.driverMemory is 0)" in placed[-1]) == bool(settings)


def _program_file(tmp_path):
    path = tmp_path / "counter.dl"
    path.write_text(COUNTER + "start(0).\n")
    return str(path)


def test_cli_run_reference_stops_at_the_bound_with_exit_1(tmp_path, capsys):
    argv = ["run", _program_file(tmp_path), "--engine", "reference", "--max-iterations", str(BOUND)]
    assert cli.main(argv) == cli.EXIT_PROGRAM_ERROR == 1
    assert "did not reach a fixpoint within 50 iterations" in capsys.readouterr().err


def test_cli_run_spark_stops_at_the_bound_with_exit_1(spark, tmp_path, capsys):
    argv = ["run", _program_file(tmp_path), "--max-iterations", str(BOUND)]
    assert cli.main(argv) == cli.EXIT_PROGRAM_ERROR
    assert "(n) did not reach a fixpoint within 50 iterations" in capsys.readouterr().err


def test_job_stops_at_the_bound_with_exit_1(spark, tmp_path, capsys):
    argv = ["--program", _program_file(tmp_path), "--warehouse", str(tmp_path / "wh")]
    assert job.main([*argv, "--max-iterations", str(BOUND)]) == 1
    assert "(n) did not reach a fixpoint within 50 iterations" in capsys.readouterr().err
