"""The job's ``facts_dir`` and ``output_dir`` (Soufflé's -F and -D): config, checks, and runs over
the ``tests/dialect`` cases that test reading, writing or storing (see ``JOB_CASES``)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import spark_datalog as sd
from spark_datalog import job
from spark_datalog.job import UsageError

from dialect.test_dialect import CASES, check_outputs


# The cases the job runs: every I/O case, and those whose values are read from fact files or
# stored in a way of their own (records, ADTs, lists and nil read from files, `?name` columns,
# rules adding to an input, functors bound through the job's arguments). The other cases test
# evaluation, which is the same engine as `spark-datalog run --engine spark` (test_spark_engine
# runs every case there): through the job they cost minutes of suite time and test nothing more.
_STORED = ("adt_input", "input_rules", "lists", "records_input", "records_nil", "records_question_names")
_OWN = (*_STORED, "user_functors")
JOB_CASES = [case for case in CASES if case.name.startswith("io_") or case.name in _OWN]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_facts_and_output_dirs_from_flags_and_config(tmp_path):
    args = job.parse_args(
        ["--program", "p.dl", "--warehouse", "wh", "--facts-dir", "s3a://b/facts", "--output-dir", "-"]
    )
    assert (args.facts_dir, args.output_dir) == ("s3a://b/facts", "-")
    config = write(
        tmp_path / "conf" / "job.yaml",
        """
        program: p.dl
        warehouse: wh
        facts_dir: facts
        output-dir: out
        """,
    )
    args = job.parse_args(["--config", str(config)])
    assert args.facts_dir == str(tmp_path / "conf" / "facts")
    assert args.output_dir == str(tmp_path / "conf" / "out")
    stdout = write(tmp_path / "stdout.yaml", "program: p.dl\nwarehouse: wh\noutput_dir: '-'\n")
    assert job.parse_args(["--config", str(stdout)]).output_dir == "-"


def test_the_dialect_from_flags_and_config(tmp_path):
    assert job.parse_args(["--program", "p.dl", "--warehouse", "wh"]).dialect == "datalog"
    assert (
        job.parse_args(["--program", "p.dl", "--warehouse", "wh", "--dialect", "souffle"]).dialect
        == "souffle"
    )
    config = write(tmp_path / "job.yaml", "program: p.dl\nwarehouse: wh\ndialect: souffle\n")
    assert job.parse_args(["--config", str(config)]).dialect == "souffle"
    bad = write(tmp_path / "bad.yaml", "program: p.dl\nwarehouse: wh\ndialect: prolog\n")
    with pytest.raises(UsageError, match="dialect: must be one of datalog, souffle, not 'prolog'"):
        job.parse_args(["--config", str(bad)])


def test_facts_dir_is_for_full_runs():
    with pytest.raises(UsageError, match="--facts-dir is for --mode full"):
        job.parse_args(
            ["--program", "p.dl", "--warehouse", "wh", "--mode", "incremental", "--facts-dir", "f"]
        )


def test_an_unsupported_io_kind_fails_before_spark_starts(tmp_path, monkeypatch):
    program = write(
        tmp_path / "p.dl", '.decl e(x: number)\n.input e(IO=json, filename="e.json")\n.output e\n'
    )
    monkeypatch.setattr(job, "get_session", lambda: pytest.fail("Spark was started"))
    argv = ["--program", str(program), "--warehouse", str(tmp_path / "wh"), "--facts-dir", str(tmp_path)]
    with pytest.raises(sd.DirectiveError, match="IO=json is not supported for .input e"):
        job.run_job(job.parse_args(argv), out=False)


def test_the_job_cases_exist():
    """Every name ``JOB_CASES`` picks is a case (a renamed folder would drop out silently)."""
    names = {case.name for case in JOB_CASES}
    assert set(_OWN) <= names and len(names - set(_OWN)) >= 9  # the io_ cases


@pytest.mark.spark
@pytest.mark.parametrize("case", JOB_CASES, ids=lambda case: case.name)
def test_the_job_reads_and_writes_soufflé_files(spark, case, tmp_path, capsys, monkeypatch):
    facts = case / "facts"
    out_dir = tmp_path / "out"
    argv = [
        "--program",
        str(case / "prog.dl"),
        "--warehouse",
        str(tmp_path / "wh"),
        "--facts-dir",
        str(facts if facts.is_dir() else case),
        "--output-dir",
        str(out_dir),
        "--show",
        "0",
        "--dialect",
        "souffle",
    ]
    if (case / "args").exists():  # --functor bindings, their module in the case's folder
        argv += (case / "args").read_text(encoding="utf-8").split()
        monkeypatch.syspath_prepend(str(case))
    summary = job.run_job(job.parse_args(argv), spark=spark, out=False)
    out, _ = capsys.readouterr()
    check_outputs(case, out_dir, out)
    for name in ("adult.csv", "minor.csv") if case.name == "io_headers" else ():  # the header first
        first = (case / "expected" / name).read_text().splitlines()[0]
        assert (out_dir / name).read_text().splitlines()[0] == first
    expected = case / "expected"  # none: the case writes no file (git keeps no empty folder)
    assert {Path(line.split(" -> ")[1]).name for line in summary.files} == {
        p.name for p in (expected.iterdir() if expected.is_dir() else ())
    }
