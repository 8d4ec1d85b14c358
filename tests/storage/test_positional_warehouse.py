"""A warehouse written when relations without .decl had columns c0, c1, ... (before issue 22 item
7 named them after head variables): refused with what to do, and usable in either way it says."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest

import spark_datalog as sd
from spark_datalog.errors import WarehouseError
from spark_datalog.storage import Warehouse

DATA = Path(__file__).parent / "data"
PROGRAM = (DATA / "positional_v0.dl").read_text()
OLD_NAMES = ".decl tc(c0: long, c1: long)\n"


@pytest.fixture
def v0(tmp_path) -> str:
    root = tmp_path / "wh"
    shutil.copytree(DATA / "positional_v0", root)
    return str(root)


def new_arc():
    return {"arc": pa.table({"src": [3], "dst": [4], "_count": [1]})}


def test_update_of_an_old_warehouse_says_what_to_do_and_writes_nothing(spark, v0):
    wh = Warehouse(spark, v0)
    versions = {name: wh.version(name) for name in ("arc", "tc")}
    with pytest.raises(WarehouseError) as caught:
        sd.Program.parse(PROGRAM).update(spark, warehouse=wh, changes=new_arc())
    message = caught.value.message
    assert "columns c0, c1, ... for relations without .decl" in message and "tc(X, Y)" in message
    assert "replace=True (--replace)" in message and ".decl tc(c0: long, c1: long)" in message
    assert {name: wh.version(name) for name in ("arc", "tc")} == versions
    assert [r["run_id"] for r in wh.runs()] == ["v0-run"]


def test_materialize_over_an_old_warehouse_is_refused_the_same_way(spark, v0):
    arcs = spark.createDataFrame([(1, 2)], "src long, dst long")
    with pytest.raises(WarehouseError, match=r"\.decl tc\(c0: long, c1: long\)"):
        sd.Program.parse(PROGRAM).materialize(spark, inputs={"arc": arcs}, warehouse=Warehouse(spark, v0))


def test_declaring_the_old_names_keeps_the_warehouse_updatable(spark, v0):
    wh = Warehouse(spark, v0)
    declared = PROGRAM.replace(".input arc\n", ".input arc\n" + OLD_NAMES)  # before tc's first rule
    assert declared != PROGRAM
    report = sd.Program.parse(declared).update(spark, warehouse=wh, changes=new_arc())
    assert not report.already_committed
    assert wh.read("tc").columns == ["c0", "c1"]
    assert sorted(map(tuple, wh.read("tc").collect())) == [(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]
    assert [(r["run_id"], r["mode"]) for r in wh.runs()][0] == ("v0-run", "full")


def test_replace_rewrites_an_old_warehouse_with_the_new_names(spark, v0):
    wh = Warehouse(spark, v0)
    arcs = spark.createDataFrame([(1, 2), (2, 3)], "src long, dst long")
    program = sd.Program.parse(PROGRAM)
    program.materialize(spark, inputs={"arc": arcs}, warehouse=wh, replace=True)
    assert wh.read("tc").columns == ["X", "Y"]
    program.update(spark, warehouse=wh, changes=new_arc())
    assert sorted(map(tuple, wh.read("tc").collect())) == [(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]
