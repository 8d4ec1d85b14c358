"""Warehouse runs as users meet them: unwritable locations, re-run and repeated runs, replaced
programs (issue 19, items 12-14)."""

from __future__ import annotations

import os

import pytest

import spark_datalog as sd
from spark_datalog.errors import WarehouseError
from spark_datalog.storage import Warehouse

TC = """
.decl arc(x: long, y: long)
.input arc
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), arc(Y, Z).
"""


def arcs(spark, rows=((1, 2), (2, 3))):
    return spark.createDataFrame(list(rows), "x long, y long")


def no_evaluation(monkeypatch):
    """Make any evaluation fail the test: the refusal must come before it."""
    from spark_datalog.eval import driver

    def evaluate(*args, **kwargs):
        raise AssertionError("the program was evaluated")

    monkeypatch.setattr(driver, "evaluate", evaluate)


# ------------------------------------------------------------------- item 12: unwritable


def test_a_warehouse_under_a_regular_file_is_refused_before_evaluation(spark, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    warehouse = Warehouse(spark, str(blocker / "wh"))
    no_evaluation(monkeypatch)
    program = sd.Program.parse(TC)
    with pytest.raises(WarehouseError, match=r"cannot be created: .*file is a file"):
        program.materialize(spark, inputs={"arc": arcs(spark)}, warehouse=warehouse)
    with pytest.raises(WarehouseError, match="cannot be created"):
        program.update(spark, warehouse, changes={"arc": arcs(spark)})
    assert blocker.read_text() == "not a directory"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_read_only_warehouse_is_refused_before_evaluation(spark, tmp_path, monkeypatch):
    root = tmp_path / "ro"
    root.mkdir()
    root.chmod(0o500)
    try:
        no_evaluation(monkeypatch)
        with pytest.raises(WarehouseError, match="cannot be written"):
            sd.Program.parse(TC).materialize(
                spark, inputs={"arc": arcs(spark)}, warehouse=Warehouse(spark, str(root / "wh"))
            )
    finally:
        root.chmod(0o700)


def test_the_cli_reports_an_unwritable_warehouse_before_evaluation(spark, tmp_path, monkeypatch, capsys):
    from spark_datalog.cli import main

    program = tmp_path / "tc.dl"
    program.write_text(TC)
    (tmp_path / "arcs.csv").write_text("x,y\n1,2\n")
    blocker = tmp_path / "file"
    blocker.write_text("")
    no_evaluation(monkeypatch)
    status = main(
        ["materialize", "--program", str(program), "--input", f"arc={tmp_path / 'arcs.csv'}"]
        + ["--warehouse", str(blocker / "wh")]
    )
    _, err = capsys.readouterr()
    assert status == 1
    assert "warehouse error" in err and "cannot be created" in err and "Traceback" not in err


# ------------------------------------------------------------------- item 13: re-runs


def versions(wh) -> dict:
    return {name: wh.version(name) for name in wh.relations()}


def rows(frame) -> set:
    return {tuple(r) for r in frame.collect()}


def test_a_committed_run_id_is_not_run_again(spark, tmp_path, monkeypatch):
    program = sd.Program.parse(TC)
    wh = Warehouse(spark, str(tmp_path / "wh"))
    first = program.materialize(spark, inputs={"arc": arcs(spark)}, warehouse=wh, run_id="r1")
    assert first.skipped is None
    produced = dict(first.warehouse_versions)
    program.materialize(spark, inputs={"arc": arcs(spark, [(5, 6)])}, warehouse=wh, run_id="r2")
    after_r2 = versions(wh)
    assert after_r2 != produced
    no_evaluation(monkeypatch)
    again = program.materialize(spark, inputs={"arc": arcs(spark, [(7, 8)])}, warehouse=wh, run_id="r1")
    assert again.skipped == "already committed" and again.run_id == "r1"
    assert again.warehouse_versions == produced  # what r1 produced, not the latest versions
    assert rows(again["tc"]) == sd.reference.evaluate(program, {"arc": {(1, 2), (2, 3)}})["tc"]
    assert versions(wh) == after_r2 and [r["run_id"] for r in wh.runs()] == ["r1", "r2"]


def test_a_new_run_over_the_same_program_and_input_versions_writes_nothing(spark, tmp_path, monkeypatch):
    from deltalake import write_deltalake
    import pyarrow as pa

    source = str(tmp_path / "arcs")
    write_deltalake(source, pa.table({"x": [1, 2], "y": [2, 3]}))
    program = sd.Program.parse(TC)
    wh = Warehouse(spark, str(tmp_path / "wh"))
    program.materialize(spark, inputs={"arc": (source, "delta")}, warehouse=wh, run_id="a")
    before = versions(wh)
    with monkeypatch.context() as patch:
        no_evaluation(patch)
        same = program.materialize(spark, inputs={"arc": (source, "delta")}, warehouse=wh, run_id="b")
    assert same.skipped == "unchanged" and same.warehouse_versions == before
    assert versions(wh) == before  # no new Delta version anywhere
    last = wh.runs()[-1]
    assert (last["run_id"], last["status"]) == ("b", "committed")
    assert last["details"]["unchanged_since"] == "a" and last["consumed"]["arc"] == 0
    assert rows(same["tc"]) == sd.reference.evaluate(program, {"arc": {(1, 2), (2, 3)}})["tc"]

    write_deltalake(source, pa.table({"x": [3], "y": [4]}), mode="append")  # a new input version
    changed = program.materialize(spark, inputs={"arc": (source, "delta")}, warehouse=wh, run_id="c")
    assert changed.skipped is None and versions(wh)["tc"] == before["tc"] + 1
    expected = sd.reference.evaluate(program, {"arc": {(1, 2), (2, 3), (3, 4)}})["tc"]
    assert rows(wh.read("tc")) == expected


def test_the_cli_says_a_committed_run_is_committed_and_shows_its_versions(spark, tmp_path, capsys):
    from spark_datalog.cli import main

    program = tmp_path / "tc.dl"
    program.write_text(TC)
    (tmp_path / "arcs.csv").write_text("x,y\n1,2\n2,3\n")
    argv = ["materialize", "--program", str(program), "--input", f"arc={tmp_path / 'arcs.csv'}"]
    argv += ["--warehouse", str(tmp_path / "wh"), "--run-id", "nightly-1", "--show", "0"]
    assert main(argv) == 0
    first = capsys.readouterr().out
    wh = Warehouse(spark, str(tmp_path / "wh"))
    before = versions(wh)
    (tmp_path / "arcs.csv").write_text("x,y\n9,9\n")  # not even read again
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "run nightly-1 is already committed" in out
    table = [line for line in out.splitlines() if line.startswith(("arc ", "tc "))]
    assert table == [line for line in first.splitlines() if line.startswith(("arc ", "tc "))]
    assert versions(wh) == before and len(wh.runs()) == 1


# ------------------------------------------------------------------- item 14: replaced programs

WITH_SG = TC + "sg(X, Y) :- arc(P, X), arc(P, Y), X != Y.\n"


def test_tables_of_a_replaced_program_are_retired_not_offered(spark, tmp_path):
    from deltalake import DeltaTable

    wh = Warehouse(spark, str(tmp_path / "wh"))
    data = {"arc": arcs(spark, [(1, 2), (1, 3), (2, 4)])}
    bigger = sd.Program.parse(WITH_SG)
    bigger.materialize(spark, inputs=data, warehouse=wh, run_id="p1")
    assert wh.relations() == ["arc", "sg", "tc"]
    sg_version = wh.version("sg")

    sd.Program.parse(TC).materialize(spark, inputs=data, warehouse=wh, run_id="p2", replace=True)
    assert wh.relations() == ["arc", "tc"] and not wh.exists("sg")
    assert wh.retired() == {"sg": "p2"}
    with pytest.raises(WarehouseError, match=r"relation sg is retired: run p2 replaced the program"):
        wh.read("sg")
    with pytest.raises(WarehouseError, match="retired"):
        Warehouse(spark, str(tmp_path / "wh")).read("sg")  # a new object reads the run log
    kept = DeltaTable(str(tmp_path / "wh" / "sg"))  # reversible: the table and its history are kept
    assert kept.version() == sg_version

    bigger.materialize(spark, inputs=data, warehouse=wh, run_id="p3", replace=True)
    expected = sd.reference.evaluate(bigger, {"arc": {(1, 2), (1, 3), (2, 4)}})
    assert rows(wh.read("sg")) == expected["sg"]  # the same object knows sg is current again
    assert wh.relations() == ["arc", "sg", "tc"] and wh.retired() == {}
