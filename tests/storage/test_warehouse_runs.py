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
