"""The run log's columns (issue 22 item 7): typed maps and a struct, one row per run; a log
written before them (JSON strings, a row per run event) is read and upgraded by the next run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable

from spark_datalog.storage.runs import RunInfo, RunLog
from spark_datalog.storage.warehouse import Warehouse

V0 = Path(__file__).parent / "data" / "positional_v0"


def stored(root) -> pa.Table:
    return DeltaTable(str(Path(root) / "_spark_datalog" / "runs")).to_pyarrow_table()


def test_a_run_is_one_row_with_typed_columns(tmp_path):
    wh = Warehouse(None, str(tmp_path), backend="embedded")
    run = wh.start_run("fp", run_id="r1")
    run.consume("arc", 3, "/data/arc")
    run.produced["tc"] = 4
    run.details["retired"] = ["old"]
    wh.commit_run(run, details={"method": "auto"})
    wh.commit_run(wh.start_run("fp", run_id="r2"))
    table = stored(tmp_path)
    assert table.num_rows == 2 and table.column("status").to_pylist() == ["committed"] * 2
    schema = table.schema
    assert schema.field("produced").type == pa.map_(pa.string(), pa.int64())
    assert schema.field("sources").type == pa.map_(pa.string(), pa.string())
    assert pa.types.is_struct(schema.field("details").type)
    first = table.sort_by("sequence").to_pylist()[0]
    assert first["consumed"] == [("arc", 3)] and first["sources"] == [("arc", "/data/arc")]
    assert first["details"] == {"method": "auto", "retired": ["old"], "unchanged_since": None}
    assert wh.runs()[0]["details"] == {"method": "auto", "retired": ["old"]}


def test_details_without_a_column_are_refused(tmp_path):
    run = RunInfo("r1", 1, "fp", details={"colour": "red"})
    with pytest.raises(ValueError, match="colour"):
        RunLog(str(tmp_path)).append(run, "started")


@pytest.fixture
def v0(tmp_path) -> str:
    root = tmp_path / "wh"
    shutil.copytree(V0, root)
    return str(root)


def test_a_log_of_json_strings_is_read(v0):
    [run] = Warehouse(None, v0, backend="embedded").runs()
    assert run["run_id"] == "v0-run" and run["status"] == "committed"
    assert run["produced"] == {"arc": 0, "tc": 0} and run["consumed"] == {"arc": 0}
    assert run["details"] == {} and run["finished_at"] is not None
    assert pa.types.is_string(stored(v0).schema.field("produced").type)


def test_the_next_run_rewrites_a_log_of_json_strings_typed(v0):
    wh = Warehouse(None, v0, backend="embedded")
    before = wh.runs()
    wh.commit_run(wh.start_run("fp", run_id="next", replace=True))
    table = stored(v0)
    assert table.num_rows == 2 and pa.types.is_map(table.schema.field("produced").type)
    after = wh.runs()
    assert after[0] == before[0]
    assert [(r["run_id"], r["sequence"], r["status"]) for r in after] == [
        ("v0-run", 1, "committed"),
        ("next", 2, "committed"),
    ]
