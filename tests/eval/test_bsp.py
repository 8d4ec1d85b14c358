"""Recursive strata without a decomposition key in BSP rounds across partitions (eval.bsp).

``spark.datalog.bspMinRows=0`` chooses BSP rounds wherever they apply (the ``datalog_settings``
fixture); the facts must equal the reference interpreter's, min/max relations included, and
the round limit must raise as on the other paths.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

import spark_datalog as sd
from spark_datalog.errors import NonTerminationError

pytestmark = pytest.mark.spark

PROGRAMS = Path(__file__).resolve().parents[2] / "benchmarks" / "programs"
REACH, COMPONENTS, SHORTEST = ((PROGRAMS / f"{name}.dl").read_text() for name in ("reach", "cc", "sssp"))

MUTUAL = """
.decl arc(src: long, dst: long)
.decl source(node: long)
even(X) :- source(X).
odd(Y) :- even(X), arc(X, Y), not blocked(X).
even(Y) :- odd(X), arc(X, Y).
blocked(5). blocked(9).
"""

NON_LINEAR = """
.decl arc(src: long, dst: long)
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), tc(Y, Z).
"""

ARCS = [(i, (i * 7 + 3) % 23) for i in range(23)] + [(i, i + 1) for i in range(30)] + [(40, 41)]


def _inputs(text: str) -> dict:
    inputs = {"arc": ARCS, "source": [(0,)], "warc": [(a, b, (a + b) % 5 + 1) for a, b in ARCS]}
    return {name: rows for name, rows in inputs.items() if f".decl {name}(" in text}


def _evaluate(spark, text: str, **options):
    program = sd.Program.parse(text)
    inputs = _inputs(text)
    frames = {
        name: spark.createDataFrame(
            rows, ", ".join(f"{c} long" for c in program.relations[name].column_names)
        )
        for name, rows in inputs.items()
    }
    result = program.materialize(spark, inputs=frames, **options)
    expected = sd.reference.evaluate(program, inputs)
    got = {name: {tuple(row) for row in result[name].collect()} for name in result.relations}
    return got, {name: set(rows) for name, rows in expected.items() if name in got}, result.stats


@pytest.mark.parametrize("text", [REACH, COMPONENTS, SHORTEST, MUTUAL], ids=["reach", "cc", "sssp", "mutual"])
def test_bsp_rounds_equal_the_reference(spark, datalog_settings, text):
    datalog_settings(bspMinRows=0)
    got, expected, stats = _evaluate(spark, text)
    assert got == expected
    recursive = [s for s in stats if s.recursive]
    assert recursive and all(s.bsp and not s.partitioned for s in recursive)
    assert "BSP rounds across partitions" in recursive[0].outcome()


def test_bsp_rounds_count_as_the_rounds_driver(spark, datalog_settings):
    datalog_settings(bspMinRows=0)
    _, _, bsp = _evaluate(spark, REACH, checkpoint_interval=2)  # compacted every 2 rounds
    _, _, rounds = _evaluate(spark, REACH, decompose=False)
    assert bsp[0].iterations == rounds[0].iterations
    assert bsp[0].rows_per_iteration == rounds[0].rows_per_iteration


def test_bsp_rounds_stop_at_the_round_limit(spark, datalog_settings):
    datalog_settings(bspMinRows=0)
    with pytest.raises(NonTerminationError, match="within 3 iterations"):
        _evaluate(spark, REACH, max_iterations=3)


def test_small_or_non_linear_strata_do_not_run_in_bsp_rounds(spark, datalog_settings, caplog):
    datalog_settings(bspMinRows=0)
    with caplog.at_level(logging.INFO, logger="spark_datalog"):
        got, expected, stats = _evaluate(spark, NON_LINEAR)
    assert got == expected and not stats[0].bsp
    assert "non-linear" in caplog.text
    datalog_settings(bspMinRows=1000)
    got, expected, stats = _evaluate(spark, REACH)
    assert got == expected and not stats[0].bsp and stats[0].partitioned


CLUSTER_JOB = """
import sys
from pyspark.sql import SparkSession
import spark_datalog as sd
from tests.eval.test_bsp import REACH, _inputs
spark = (SparkSession.builder.master("local-cluster[2,1,1024]").config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "4").config("spark.datalog.bspMinRows", "0").getOrCreate())
for text in (REACH,):  # cc, sssp and mutual recursion in BSP rounds: tests above, on local[2]
    program = sd.Program.parse(text)
    inputs = _inputs(text)
    frames = {n: spark.createDataFrame(rows, "src long, dst long" if n == "arc" else "node long")
              for n, rows in inputs.items()}
    result = program.materialize(spark, inputs=frames)
    expected = sd.reference.evaluate(program, inputs)
    for name in result.relations:
        assert {tuple(r) for r in result[name].collect()} == set(expected[name]), name
    assert [s.bsp for s in result.stats if s.recursive] == [True], result.stats
print("BSP-ON-CLUSTER-OK")
"""


@pytest.mark.slow
def test_bsp_rounds_on_a_local_cluster(tmp_path):
    """Two executor JVMs: facts really move between processes (about a minute). Reachability
    only: each program costs a cluster's worth of stages here (the others run above)."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root), "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run(
        [sys.executable, "-c", CLUSTER_JOB], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )
    assert "BSP-ON-CLUSTER-OK" in done.stdout, done.stderr[-3000:]
