"""The check that Spark's executors can import spark_datalog before any Python task runs
(``spark.executors``): the message, once per session, a real probe, and a simulated cluster
whose Python workers lack the package (a subprocess whose worker Python runs without site
packages: the only stub is the kind of master, as ``local-cluster`` is not available here)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

import spark_datalog as sd
from spark_datalog.spark import executors

ROOT = Path(__file__).resolve().parents[2]


def test_only_non_local_masters_are_checked():
    assert executors.is_local("local") and executors.is_local("local[*]") and executors.is_local("local[2,3]")
    assert not executors.is_local("yarn") and not executors.is_local("spark://h:7077")
    assert not executors.is_local("local-cluster[2,1,1024]") and not executors.is_local("k8s://https://h")


def test_a_failed_import_is_one_line_saying_how_to_ship_the_package():
    answers = [
        (True, "0.1.0", "a", "/py"),
        (False, "ModuleNotFoundError: No module named 'x'", "b", "/usr/bin/py"),
    ]
    message = executors.problem(answers, "0.1.0")
    assert message is not None and "\n" not in message
    assert (
        "cannot import spark_datalog (ModuleNotFoundError: No module named 'x'; executor b, /usr/bin/py)"
        in message
    )
    for hint in ("--py-files", "spark.submit.pyFiles", "wheel", "--no-decompose"):
        assert hint in message
    assert executors.problem(answers[:1], "0.1.0") is None


def test_another_version_on_the_executors_is_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="spark_datalog"):
        assert executors.problem([(True, "0.0.9", "a", "/py")], "0.1.0") is None
    assert [r.getMessage() for r in caplog.records] == [
        "the executors run spark_datalog 0.0.9, the driver 0.1.0"
    ]


def test_the_probe_imports_the_package_on_the_workers(spark):
    answers = executors.probe(spark.sparkContext)
    assert answers and all(ok and version == sd.__version__ for ok, version, _, _ in answers)


def test_a_cluster_is_probed_once_per_session_and_refused_before_any_task(spark, monkeypatch):
    calls = []

    def failing(context):
        calls.append(context.applicationId)
        return [(False, "ModuleNotFoundError: No module named 'spark_datalog'", "h", "/py")]

    monkeypatch.setattr(executors, "_checked", {})
    monkeypatch.setattr(executors, "probe", failing)
    executors.require_executor_package(spark)  # local master: not probed
    assert calls == []
    monkeypatch.setattr(executors, "is_local", lambda master: False)
    for _ in range(2):
        with pytest.raises(sd.ExecutorError, match="cannot import spark_datalog"):
            executors.require_executor_package(spark)
    assert calls == [spark.sparkContext.applicationId]


TC = """
.decl arc(src: long, dst: long)
.input arc
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), arc(Y, Z).
"""

DRIVER = """
import sys
sys.path.insert(0, {root!r})
from spark_datalog.spark import executors
executors.is_local = lambda master: False  # a cluster: only the kind of master is stubbed
from spark_datalog.cli import main
sys.exit(main(["run", "tc.dl", "--input", "arc=arcs.csv"]))
"""


@pytest.mark.slow
@pytest.mark.spark
def test_workers_without_the_package_fail_in_one_line_before_any_task(tmp_path):
    """A fresh JVM whose Python workers run without site-packages and without PYTHONPATH (so
    they import pyspark from Spark's own zip, but not spark_datalog): the run stops with one
    line on stderr, and no task failed (no ERROR line, no traceback)."""
    worker = tmp_path / "python.sh"
    worker.write_text(f'#!/bin/sh\nexec {sys.executable} -S "$@"\n')
    worker.chmod(0o755)
    (tmp_path / "tc.dl").write_text(TC)
    (tmp_path / "arcs.csv").write_text("src,dst\n1,2\n2,3\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYSPARK_PYTHON=str(worker), SPARK_LOCAL_IP="127.0.0.1")
    done = subprocess.run(
        [sys.executable, "-c", DRIVER.format(root=str(ROOT))],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("executor error:")]
    assert len(errors) == 1, done.stderr
    assert "No module named 'spark_datalog'" in errors[0] and "--py-files" in errors[0]
    assert "ERROR" not in done.stderr and "Traceback" not in done.stderr, done.stderr
