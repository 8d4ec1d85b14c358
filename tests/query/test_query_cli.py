"""Queries from the command line: ``run`` prints the answers of the program's ``?-`` lines and of
``--query``; ``query`` answers from a warehouse."""

from __future__ import annotations

import pytest

from test_cli import run_cli, write

PROGRAM = """\
.decl arc(src: long, dst: long)
.input arc
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), arc(Y, Z).
?- tc(1, X).
?- tc(3, 1).
"""
ARCS = "src,dst\n1,2\n2,3\n3,4\n"


@pytest.mark.parametrize("engine", ["reference", "spark"])
def test_run_prints_the_answers_of_the_programs_queries(spark, tmp_path, capsys, engine):
    program = write(tmp_path, "tc.dl", PROGRAM)
    arcs = write(tmp_path, "arcs.csv", ARCS)
    status, out, err = run_cli(capsys, "run", program, "--engine", engine, "--input", f"arc={arcs}")
    assert status == 0, err
    assert "tc: 6 facts" in out
    assert "?- tc(1, X). 3 answers\n  X = 2\n  X = 3\n  X = 4\n" in out
    assert "?- tc(3, 1). false" in out


@pytest.mark.parametrize("engine", ["reference", "spark"])
def test_run_query_answers_only_the_query(spark, tmp_path, capsys, engine):
    program = write(tmp_path, "tc.dl", PROGRAM)
    arcs = write(tmp_path, "arcs.csv", ARCS)
    args = ["run", program, "--engine", engine, "--input", f"arc={arcs}", "--query", "tc(X, 4)"]
    status, out, err = run_cli(capsys, *args, "--query", "?- tc(1, 4).", "--show", "2")
    assert status == 0, err
    assert "tc: " not in out  # the relations are not printed
    assert "?- tc(X, 4). 3 answers\n  X = 1\n  X = 2\n  ... 1 more\n" in out
    assert "?- tc(1, 4). true" in out


def test_run_reports_a_bad_query_with_a_caret(tmp_path, capsys):
    program = write(tmp_path, "tc.dl", PROGRAM)
    status, _, err = run_cli(capsys, "run", program, "--engine", "reference", "--query", "tc(1, X, 2)")
    assert status == 1
    assert "<query>:1:1: schema error" in err and "tc(1, X, 2)" in err and "^" in err
    assert "Traceback" not in err


def test_query_answers_from_a_warehouse(spark, tmp_path, capsys):
    import spark_datalog as sd
    from spark_datalog.storage import Warehouse

    program_path = write(tmp_path, "tc.dl", PROGRAM)
    wh = Warehouse(spark, str(tmp_path / "wh"), backend="embedded")
    arc = spark.createDataFrame([(1, 2), (2, 3), (3, 4)], "src long, dst long")
    sd.Program.from_file(program_path).materialize(spark, inputs={"arc": arc}, warehouse=wh)
    status, out, err = run_cli(capsys, "query", "--warehouse", wh.root, "tc(2, X)")
    assert status == 0, err
    assert "?- tc(2, X). 2 answers\n  X = 3\n  X = 4\n" in out
    status, out, err = run_cli(capsys, "query", "--warehouse", wh.root, "--program", program_path, "tc(X, 2)")
    assert status == 0, err
    assert "?- tc(X, 2). 1 answer\n  X = 1\n" in out
    status, _, err = run_cli(capsys, "query", "--warehouse", wh.root, "reach(1, X)")
    assert status == 1 and "relation 'reach' is never defined" in err and "Traceback" not in err
