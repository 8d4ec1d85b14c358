"""Soufflé's programs, run unchanged: every folder of ``tests/dialect`` holding a ``prog.dl``.

A folder is laid out as Soufflé's own tests are::

    tests/dialect/<name>/prog.dl          the program
    tests/dialect/<name>/facts/<rel>.facts  its .input files (-F; the folder itself without facts/)
    tests/dialect/<name>/expected/<file>  every file -D must hold (<rel>.csv unless filename=;
                                          a name ending in .gz: gzip-compressed, compared unpacked)
    tests/dialect/<name>/stdout           what it prints (IO=stdout, .printsize); none: nothing
    tests/dialect/<name>/args             more arguments of ``run``, one a line (``--functor``);
                                          the folder is on ``sys.path`` (its modules importable)

Each folder runs ``spark-datalog run prog.dl --dialect souffle -F facts -D OUT`` (in-process: the Spark engine
reuses the tests' session) on the reference engine and on Spark; OUT must hold exactly the
expected files, each with the same lines in any order, and stdout must be exactly ``stdout``.
The kernel runs each program too, on the facts the fact files give, and must derive what the
reference does.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from spark_datalog.cli import main

HERE = Path(__file__).resolve().parent
CASES = sorted(path.parent for path in HERE.glob("*/prog.dl"))


def run_case(case: Path, out_dir: Path, capsys, engine: str, monkeypatch) -> None:
    facts = case / "facts"
    argv = ["run", str(case / "prog.dl"), "--dialect", "souffle"]
    argv += ["-F", str(facts if facts.is_dir() else case), "-D", str(out_dir)]
    if (case / "args").exists():
        argv += (case / "args").read_text(encoding="utf-8").split()
        monkeypatch.syspath_prepend(str(case))
    status = main(argv + ["--engine", engine, "--quiet"])
    out, err = capsys.readouterr()
    assert status == 0, err
    check_outputs(case, out_dir, out)


def check_outputs(case: Path, out_dir: Path, out: str) -> None:
    """``out_dir`` holds exactly the files of ``case/expected`` (same lines, any order) and ``out``
    is ``case/stdout`` (empty without it)."""
    expected_dir = case / "expected"
    expected = {p.relative_to(expected_dir) for p in expected_dir.rglob("*") if p.is_file()}
    written = (
        {p.relative_to(out_dir) for p in out_dir.rglob("*") if p.is_file()} if out_dir.exists() else set()
    )
    assert written == expected
    for name in sorted(expected):
        want = _text(expected_dir / name).splitlines()
        got = _text(out_dir / name).splitlines()
        assert sorted(got) == sorted(want), f"{case.name}: {name}"
    stdout = case / "stdout"
    assert out == (stdout.read_text(encoding="utf-8") if stdout.exists() else "")


def _text(path: Path) -> str:
    """A file's text; a ``.gz`` one must be gzip-compressed (``gzip`` raises otherwise)."""
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8")


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_reference_engine(case, tmp_path, capsys, monkeypatch):
    run_case(case, tmp_path / "out", capsys, "reference", monkeypatch)


@pytest.mark.spark
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_spark_engine(spark, case, tmp_path, capsys, monkeypatch):
    run_case(case, tmp_path / "out", capsys, "spark", monkeypatch)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_kernel_engine(case, monkeypatch):
    """The kernel derives what the reference does from the case's fact files (the outputs' text
    is the reference's, checked above)."""
    from kernel.harness import kernel_result, reference_result

    from spark_datalog.cli import load_program
    from spark_datalog.souffle_io import plan_io, read_fact_file

    facts = case / "facts"
    functors = []
    if (case / "args").exists():
        monkeypatch.syspath_prepend(str(case))
        functors = (case / "args").read_text(encoding="utf-8").split()[1::2]  # --functor SPEC ...
    program = load_program(str(case / "prog.dl"), "souffle", functors=functors)
    plan = plan_io(program.checked, str(facts if facts.is_dir() else case), "-")
    edb: dict = {}
    for source in plan.inputs:
        edb.setdefault(source.relation, set()).update(read_fact_file(source))
    assert kernel_result(program, edb) == reference_result(program, edb)
