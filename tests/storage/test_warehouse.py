"""The warehouse on both commit paths: embedded (Spark writes Parquet, delta-rs commits) and
native (delta-spark writes and merges). Tests of the embedded path's own file layout take the
``embedded`` fixture."""

from __future__ import annotations

import pyarrow as pa
import pytest
from deltalake import DeltaTable

from spark_datalog.errors import SchemaError, WarehouseError
from spark_datalog.storage import APP_ID, COUNT_COLUMN, FAIL_AFTER_COMMITS_ENV, InjectedFailure, Warehouse
from spark_datalog.storage.schema import arrow_schema

from .helpers import ARC, BACKENDS, FP, FP2, counts, facts, frame, warehouse_on

TC = (("x", "long"), ("y", "long"))


@pytest.fixture(params=BACKENDS)
def wh(spark, tmp_path, request):
    return warehouse_on(spark, tmp_path / "wh", request.param)


@pytest.fixture
def embedded(spark, tmp_path):
    return Warehouse(spark, str(tmp_path / "wh"), backend="embedded")


def _write(wh, name, columns, df, fingerprint=FP, run_id=None, **kwargs):
    with wh.run(fingerprint, run_id=run_id, **kwargs) as run:
        result = wh.replace(name, columns, df, run)
    return result


# ------------------------------------------------------------------------------ round trips


def test_round_trip_with_and_without_counts(spark, wh):
    rows = [(1, "a", 1), (2, "b", 2), (3, "c", -1), (4, None, 1)]
    result = _write(wh, "arc", ARC, frame(spark, rows))
    assert result.committed and result.version == 0 and result.rows_added == 4
    assert wh.relations() == ["arc"] and wh.exists("arc") and not wh.exists("tc")
    assert wh.version("arc") == 0 and wh.version("tc") is None
    assert wh.schema("arc") == ARC
    present = wh.read("arc")
    assert present.columns == ["x", "y"]
    assert facts(present) == {(1, "a"), (2, "b"), (4, None)}  # count -1 is not present
    with_counts = wh.read("arc", with_counts=True)
    assert with_counts.columns == ["x", "y", COUNT_COLUMN]
    assert counts(with_counts) == {(1, "a"): 1, (2, "b"): 2, (3, "c"): -1, (4, None): 1}


def test_read_facts_without_spark_at_a_version_and_within_a_row_limit(spark, wh):
    _write(wh, "arc", ARC, frame(spark, [(1, "a", 1), (2, "b", 2), (3, "c", -1)]))
    _write(wh, "arc", ARC, frame(spark, [(5, "e", 1)]))
    latest = wh.read_facts("arc")
    assert latest.column_names == ["x", "y"]
    assert set(zip(*[c.to_pylist() for c in latest.columns], strict=True)) == {(5, "e")}
    first = wh.read_facts("arc", version=0)
    assert set(zip(*[c.to_pylist() for c in first.columns], strict=True)) == {(1, "a"), (2, "b")}
    assert wh.read_facts("arc", version=0, max_rows=3) is not None  # 3 stored rows
    assert wh.read_facts("arc", version=0, max_rows=2) is None
    with pytest.raises(WarehouseError):
        wh.read_facts("tc")


def _rows(table) -> set:
    return set(zip(*[c.to_pylist() for c in table.columns], strict=True))


def test_read_facts_meeting_a_change_holds_every_stored_fact_of_it(spark, wh):
    rows = [(i, f"v{i:02d}", 1 + i % 2) for i in range(40)] + [(40, "gone", -1)]
    _write(wh, "arc", ARC, frame(spark, rows, slices=4))
    change = pa.table({"x": [7, 40, 99, 8], "y": ["v07", "gone", "v99", None]})
    met = wh.read_facts("arc", with_counts=True, meeting=change)
    assert met.column_names == ["x", "y", COUNT_COLUMN]
    found = _rows(met)
    assert (7, "v07", 2) in found  # stored; 40 is stored with a count of -1: not a fact
    assert found <= {row for row in rows if row[2] > 0}
    assert _rows(wh.read_facts("arc", meeting=change.slice(2, 1))) <= {r[:2] for r in rows}


def test_read_facts_meeting_a_change_reads_only_the_files_that_may_hold_it(spark, tmp_path):
    """100 stored rows in files of 10, sorted: the row limit applies to the files read."""
    wh = Warehouse(spark, str(tmp_path / "wh"), backend="embedded", rows_per_file=10)
    _write(wh, "arc", ARC, frame(spark, [(i, f"v{i:03d}", 1) for i in range(100)]))
    assert wh.read_facts("arc", max_rows=50) is None
    met = wh.read_facts("arc", max_rows=50, meeting=pa.table({"x": [42], "y": ["v042"]}))
    assert met is not None and (42, "v042") in _rows(met) and met.num_rows <= 20, met.num_rows
    empty = wh.read_facts("arc", meeting=pa.table({"x": [1000], "y": ["z"]}))
    assert empty.num_rows == 0 and empty.column_names == ["x", "y"]


def test_empty_relation_reads_as_empty_frame_with_its_schema(spark, wh):
    result = _write(wh, "tc", TC, frame(spark, [], TC))
    assert result.committed and result.files_added == 0
    df = wh.read("tc", with_counts=True)
    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == [
        ("x", "bigint"),
        ("y", "bigint"),
        (COUNT_COLUMN, "bigint"),
    ]
    assert df.count() == 0
    table = DeltaTable(wh.root + "/tc")
    assert table.version() == 0 and table.file_uris() == []
    assert table.to_pyarrow_table().num_rows == 0


def test_versions_history_and_delta_compatibility(spark, wh):
    columns = (("n", "int"), ("w", "double"), ("ok", "bool"), ("s", "string"))
    first = [(1, 0.5, True, "a", 1)]
    second = [(2, 1.5, False, "b", 1), (3, 2.5, True, "c", 2)]
    _write(wh, "r", columns, frame(spark, first, columns), run_id="day-1")
    _write(wh, "r", columns, frame(spark, second, columns), run_id="day-2")
    assert wh.version("r") == 1
    assert facts(wh.read("r")) == {(2, 1.5, False, "b"), (3, 2.5, True, "c")}
    assert facts(wh.read_version("r", 0)) == {(1, 0.5, True, "a")}

    history = wh.history("r")
    assert [h["version"] for h in history] == [1, 0]
    assert [h["run_id"] for h in history] == ["day-2", "day-1"]
    assert [h["run_sequence"] for h in history] == [2, 1]
    assert {h["fingerprint"] for h in history} == {FP} and history[0]["mode"] == "full"
    first_write = {"embedded": "CREATE TABLE", "native": "WRITE"}[wh.backend_name]  # each writer's word
    assert history[1]["operation"] == first_write and history[0]["timestamp"] is not None

    # The table is a plain Delta table: delta-rs reads it with the exact declared types.
    table = DeltaTable(wh.root + "/r")
    assert table.version() == 1 and table.transaction_version(APP_ID) == 2
    arrow = table.to_pyarrow_table()
    assert arrow.schema == arrow_schema(columns)
    assert sorted(arrow.to_pylist(), key=lambda r: r["n"]) == [
        {"n": 2, "w": 1.5, "ok": False, "s": "b", COUNT_COLUMN: 1},
        {"n": 3, "w": 2.5, "ok": True, "s": "c", COUNT_COLUMN: 2},
    ]
    assert DeltaTable(wh.root + "/r", version=0).to_pyarrow_table().num_rows == 1
    if wh.backend_name == "embedded":  # the embedded path names its files after the run
        assert all("/run-000002-" in uri for uri in table.file_uris())

    runs = wh.runs()
    assert [(r["run_id"], r["sequence"], r["status"]) for r in runs] == [
        ("day-1", 1, "committed"),
        ("day-2", 2, "committed"),
    ]
    assert runs[1]["base_versions"] == {"r": 0} and runs[1]["produced"] == {"r": 1}
    assert wh.last_run()["run_id"] == "day-2" and wh.pending_run() is None


def test_run_records_consumed_versions_and_details(spark, wh):
    with wh.run(FP, run_id="r1") as run:
        run.consume("arc", 7, source="/lake/arc")
        wh.replace("tc", TC, frame(spark, [(1, 2, 1)], TC), run)
        run.details["method"] = "dred"
    last = wh.last_run()
    assert last["consumed"] == {"arc": 7} and last["sources"] == {"arc": "/lake/arc"}
    assert last["produced"] == {"tc": 0} and last["details"] == {"method": "dred"}
    assert last["fingerprint"] == FP and last["mode"] == "full"


# ------------------------------------------------------------------------------ idempotence


def test_rerun_of_a_committed_run_changes_nothing(spark, wh):
    df = frame(spark, [(1, "a", 1)])
    _write(wh, "arc", ARC, df, run_id="r1")
    with wh.run(FP, run_id="r1") as run:
        assert run.already_committed and run.sequence == 1
        result = wh.replace("arc", ARC, frame(spark, [(9, "z", 1)]), run)
    assert result.skipped == "already committed" and result.version == 0
    assert wh.version("arc") == 0 and facts(wh.read("arc")) == {(1, "a")}
    assert [r["run_id"] for r in wh.runs()] == ["r1"]


def test_crash_between_table_commits_then_rerun_completes(spark, wh, tmp_path):
    def crash_after_first(name, version):
        raise InjectedFailure(f"crash after {name}")

    wh.after_commit = crash_after_first
    arc = frame(spark, [(1, "a", 1), (2, "b", 1)])
    tc = frame(spark, [(1, 2, 1)], TC)
    with pytest.raises(InjectedFailure), wh.run(FP, run_id="r1") as run:
        wh.write_relations({"arc": (ARC, arc), "tc": (TC, tc)}, run)
    assert wh.version("arc") == 0 and not wh.exists("tc")
    assert wh.pending_run()["run_id"] == "r1" and wh.last_run() is None

    again = Warehouse(spark, str(tmp_path / "wh"), backend=wh.backend_name)  # a new process
    with pytest.raises(WarehouseError, match="did not finish"):
        again.start_run(FP, run_id="other", mode="incremental")
    with again.run(FP, run_id="r1") as run:
        assert run.resumed and run.sequence == 1
        results = again.write_relations({"arc": (ARC, arc), "tc": (TC, tc)}, run)
    assert results["arc"].skipped == "already committed" and results["tc"].committed
    assert again.version("arc") == 0 and again.version("tc") == 0
    assert counts(again.read("arc", with_counts=True)) == {(1, "a"): 1, (2, "b"): 1}
    assert again.last_run()["produced"] == {"arc": 0, "tc": 0}
    assert again.pending_run() is None


def test_crash_injected_by_environment_during_changes_is_not_double_counted(spark, wh, monkeypatch):
    _write(wh, "arc", ARC, frame(spark, [(1, "a", 1)]), run_id="full")
    _write(wh, "tc", TC, frame(spark, [(1, 1, 1)], TC), run_id="full-2")
    arc_change = frame(spark, [(1, "a", 1), (2, "b", 1)])
    tc_change = frame(spark, [(1, 1, -1)], TC)

    monkeypatch.setenv(FAIL_AFTER_COMMITS_ENV, "1")
    crashing = Warehouse(wh.spark, wh.root, backend=wh.backend_name)
    with pytest.raises(InjectedFailure), crashing.run(FP, run_id="inc-1", mode="incremental") as run:
        crashing.apply_changes("arc", ARC, arc_change, run)
        crashing.apply_changes("tc", TC, tc_change, run)
    monkeypatch.delenv(FAIL_AFTER_COMMITS_ENV)

    with wh.run(FP, run_id="inc-1", mode="incremental") as run:
        assert run.base_versions == {"arc": 0, "tc": 0}  # the state the failed attempt started from
        assert wh.apply_changes("arc", ARC, arc_change, run).skipped == "already committed"
        assert wh.apply_changes("tc", TC, tc_change, run).committed
    assert counts(wh.read("arc", with_counts=True)) == {(1, "a"): 2, (2, "b"): 1}
    assert counts(wh.read("tc", with_counts=True)) == {}
    assert wh.last_run()["produced"] == {"arc": 1, "tc": 1}


def test_a_run_writes_each_table_once_and_only_inside_the_run(spark, wh):
    df = frame(spark, [(1, "a", 1)])
    with wh.run(FP) as run:
        wh.replace("arc", ARC, df, run)
        with pytest.raises(WarehouseError, match="already written by run"):
            wh.replace("arc", ARC, df, run)
    with pytest.raises(WarehouseError, match="not the open run"):
        wh.replace("arc", ARC, df, run)


# ------------------------------------------------------------------------------ refusals


def test_concurrent_writer_is_refused_while_a_run_is_open(spark, wh):
    first = wh.start_run(FP, run_id="r1")
    other = Warehouse(spark, wh.root, backend=wh.backend_name)
    with pytest.raises(WarehouseError, match="being written by run r1 since"):
        other.start_run(FP, run_id="r2")
    wh.commit_run(first)
    second = other.start_run(FP, run_id="r2")
    assert second.sequence == 2
    other.abort_run(second)


def test_schema_mismatch_with_the_stored_table(spark, wh):
    _write(wh, "arc", ARC, frame(spark, [(1, "a", 1)]))
    with wh.run(FP) as run:
        with pytest.raises(SchemaError, match=r"relation arc: .*y: string.*y: long"):
            wh.replace("arc", TC, frame(spark, [(1, 2, 1)], TC), run)
        with pytest.raises(SchemaError, match=r"relation tc: the frame lacks column\(s\) _count"):
            wh.replace("tc", TC, frame(spark, [(1, 2)], TC, counts=False), run)
        with pytest.raises(SchemaError, match="column y has type string but long is declared"):
            wh.replace("tc", TC, frame(spark, [(1, "a", 1)]), run)
        with pytest.raises(SchemaError, match="reserved"):
            wh.replace("tc", [("_count", "long")], frame(spark, [(1, "a", 1)]), run)
    assert wh.version("arc") == 0 and not wh.exists("tc")


def test_foreign_program_is_refused_unless_replaced(spark, wh):
    _write(wh, "arc", ARC, frame(spark, [(1, "a", 1)]), fingerprint=FP)
    wh.check_program(FP)
    with pytest.raises(WarehouseError, match="another program .*replace=True"):
        wh.check_program(FP2)
    with pytest.raises(WarehouseError, match="another program"):
        wh.start_run(FP2)
    wh.check_program(FP2, replace=True)
    # The new program may give a relation other columns: the table is replaced, history kept.
    with wh.run(FP2, replace=True) as run:
        assert run.replaces_program
        with pytest.raises(SchemaError, match="relation arc"):
            wh.apply_changes("arc", TC, frame(spark, [(2, 3, 1)], TC), run)
        wh.replace("arc", TC, frame(spark, [(2, 3, 1)], TC), run)
    assert wh.schema("arc") == TC and facts(wh.read("arc")) == {(2, 3)}
    assert wh.schema("arc", version=0) == ARC and facts(wh.read_version("arc", 0)) == {(1, "a")}
    assert wh.last_run()["replaces_program"] is True
    with pytest.raises(WarehouseError, match="another program"):
        wh.check_program(FP)
    with pytest.raises(WarehouseError, match="another program"):
        wh.start_run(FP, run_id="same-id-other-program")


def test_tables_needing_deletion_vectors_or_column_mapping_are_refused(embedded):
    wh = embedded
    schema = arrow_schema(ARC)
    DeltaTable.create(wh.root + "/dv", schema, configuration={"delta.enableDeletionVectors": "true"})
    DeltaTable.create(wh.root + "/cm", schema, configuration={"delta.columnMapping.mode": "name"})
    with pytest.raises(WarehouseError, match="uses deletionVectors"):
        wh.read("dv")
    with pytest.raises(WarehouseError, match="uses columnMapping"):
        wh.read("cm")


def test_names_and_missing_relations(wh):
    with pytest.raises(WarehouseError, match="cannot be a relation name"):
        wh.read("_spark_datalog")
    with pytest.raises(WarehouseError, match=r"no relation tc .*relations: none"):
        wh.read("tc")
    assert wh.relations() == [] and wh.runs() == [] and wh.last_run() is None


# ------------------------------------------------------------------------------ signed changes


@pytest.mark.parametrize("held", ["frame", "arrow"])
def test_apply_changes_rewrites_only_touched_files(spark, embedded, held):
    wh = Warehouse(spark, embedded.root, backend="embedded", rows_per_file=1)
    initial = [(1, "a", 1), (2, "b", 2), (3, "c", 1)]
    _write(wh, "arc", ARC, frame(spark, initial, slices=3))  # one row per file
    before = set(DeltaTable(wh.root + "/arc").file_uris())
    assert len(before) == 3
    changes = frame(
        spark,
        [
            (1, "a", -1),  # delete to zero
            (2, "b", 1),  # one more derivation
            (4, "d", 1),
            (4, "d", 1),  # insert, two rows summed
            (5, "e", 1),
            (5, "e", -1),  # nets to zero: not stored
        ],
    )
    if held == "arrow":  # computed in the driver: a pyarrow Table, committed without Spark
        changes = changes.toArrow()
    with wh.run(FP, run_id="inc", mode="incremental") as run:
        result = wh.apply_changes("arc", ARC, changes, run)
    assert result.committed and result.version == 1
    assert result.files_removed == 2 and result.rows_removed == 2 and result.rows_added == 2
    assert counts(wh.read("arc", with_counts=True)) == {(2, "b"): 3, (3, "c"): 1, (4, "d"): 2}
    after = set(DeltaTable(wh.root + "/arc").file_uris())
    assert len(before & after) == 1  # the file holding (3, c) is untouched
    history = wh.history("arc")[0]
    assert history["run_id"] == "inc" and history["mode"] == "incremental"
    assert counts(wh.read_version("arc", 0, with_counts=True)) == {(1, "a"): 1, (2, "b"): 2, (3, "c"): 1}
    # What changed between the versions, from the added and retired files only.
    assert counts(wh.changes("arc", 0)) == {(1, "a"): -1, (2, "b"): 1, (4, "d"): 2}
    assert counts(wh.changes("arc", 1, 1)) == {}


def test_apply_changes_that_cancel_out_make_no_version(spark, wh):
    _write(wh, "arc", ARC, frame(spark, [(1, "a", 1)]))
    _write(wh, "tc", TC, frame(spark, [], TC))
    with wh.run(FP, mode="incremental") as run:
        noop = wh.apply_changes("arc", ARC, frame(spark, [(1, "a", 1), (1, "a", -1)]), run)
        empty = wh.apply_changes("tc", TC, frame(spark, [], TC), run)
    assert noop.skipped == "no change" and noop.version == 0
    assert empty.skipped == "no change" and empty.version == 0
    assert wh.version("arc") == 0 and wh.version("tc") == 0
    assert wh.last_run()["produced"] == {"arc": 0, "tc": 0}


@pytest.mark.parametrize("held", ["frame", "arrow"])
def test_apply_changes_to_an_empty_or_missing_table(spark, wh, held):
    def rows(data, columns=ARC):
        changes = frame(spark, data, columns)
        return changes.toArrow() if held == "arrow" else changes

    _write(wh, "tc", TC, frame(spark, [], TC))
    with wh.run(FP, mode="incremental") as run:
        grown = wh.apply_changes("tc", TC, rows([(1, 2, 1), (2, 3, 1)], TC), run)
        created = wh.apply_changes("arc", ARC, rows([(1, "a", 2), (2, "b", 0)]), run)
    assert grown.version == 1 and created.version == 0
    assert counts(wh.read("tc", with_counts=True)) == {(1, 2): 1, (2, 3): 1}
    assert counts(wh.read("arc", with_counts=True)) == {(1, "a"): 2}
    assert pa.table(DeltaTable(wh.root + "/arc").to_pyarrow_table()).num_rows == 1
