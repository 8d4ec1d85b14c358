"""Progress of the command line and the job: stratum lines on stderr as they go, iteration lines
with --verbose, none with --quiet, --log-level for the spark_datalog logger; results and the
summary stay on stdout (``spark_datalog.logsetup``, ``spark_datalog.progress``)."""

from __future__ import annotations

import logging
import re

import pytest

from spark_datalog import job
from spark_datalog.cli import main
from spark_datalog.logsetup import cli_logging, progress_level

TC = """
.decl arc(src: long, dst: long)
.input arc
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), arc(Y, Z).
"""

STRATUM_DONE = re.compile(
    r"^\[ *\d+\.\ds\] stratum 0 · tc · done: partition-local, 4 iterations, tc 6 facts in "
)


@pytest.fixture
def files(tmp_path):
    (tmp_path / "tc.dl").write_text(TC)
    (tmp_path / "arcs.csv").write_text("src,dst\n1,2\n2,3\n3,4\n")
    return tmp_path


def test_quiet_and_verbose_exclude_each_other_and_levels_are_checked(capsys):
    assert main(["run", "p.dl", "--quiet", "--verbose"]) == 2
    assert "not allowed with argument" in capsys.readouterr().err
    assert main(["run", "p.dl", "--log-level", "chatty"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_progress_levels_follow_the_flags():
    assert progress_level() == logging.INFO
    assert progress_level(verbose=True) == logging.DEBUG
    assert progress_level("DEBUG") == logging.DEBUG
    assert progress_level("DEBUG", quiet=True) == logging.WARNING
    assert progress_level("ERROR") == logging.INFO  # the level is for the other messages


def test_cli_logging_shows_the_loggers_on_stderr_and_restores_them(capsys):
    root = logging.getLogger("spark_datalog")
    before = (root.level, root.propagate, list(root.handlers))
    with cli_logging("INFO"):
        logging.getLogger("spark_datalog.progress").info("stratum 0 · p · started")
        logging.getLogger("spark_datalog.progress").debug("an iteration")
        root.info("a message")
    err = capsys.readouterr().err.splitlines()
    assert re.match(r"^\[ *\d+\.\ds\] stratum 0 · p · started$", err[0]), err
    assert err[1:] == ["spark_datalog: info: a message"]
    assert (root.level, root.propagate, list(root.handlers)) == before


@pytest.mark.spark
def test_run_prints_progress_on_stderr_and_results_on_stdout(spark, files, capsys, monkeypatch):
    monkeypatch.chdir(files)
    argv = ["run", "tc.dl", "--input", "arc=arcs.csv"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "tc: 6 facts" in out and "stratum" not in out
    lines = err.splitlines()
    assert any(line.endswith("stratum 0 · tc · started (recursive, seminaive)") for line in lines), err
    assert any(STRATUM_DONE.match(line) for line in lines), err
    assert "iteration 0" not in err

    assert main([*argv, "--verbose"]) == 0
    out, err = capsys.readouterr()
    rounds = [line for line in err.splitlines() if " · iteration " in line]
    assert len(rounds) == 4 and all(line.endswith(" in tasks") for line in rounds), err

    assert main([*argv, "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "tc: 6 facts" in out and err == ""


@pytest.mark.spark
def test_the_job_prints_its_steps_on_stderr_and_the_summary_on_stdout(spark, files, capsys):
    argv = ["--program", str(files / "tc.dl"), "--warehouse", str(files / "wh"), "--run-id", "r1"]
    argv += ["--input", f"arc={files / 'arcs.csv'}", "--query", "tc(1, X)"]
    assert job.main(argv) == 0
    out, err = capsys.readouterr()
    assert out.startswith("run r1:") and "?- tc(1, X). 3 answers" in out
    steps = [line.split("] ", 1)[1] for line in err.splitlines()]
    assert steps[0] == f"run r1: {files / 'tc.dl'} -> {files / 'wh'} (full)", err
    assert steps[1].startswith("Spark ") and "master local[2]" in steps[1]
    order = [
        "stratum 0 · tc · started",
        "stratum 0 · tc · done",
        "committing 2 relations",
        "answering tc(1, X)",
    ]
    found = [next(i for i, step in enumerate(steps) if step.startswith(prefix)) for prefix in order]
    assert found == sorted(found), err
