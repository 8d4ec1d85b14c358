"""``apply_changes`` on the embedded path costs what the change costs: clustered files with
statistics, pruning from the log, rewriting only the files that hold touched facts.

Tables are written with a small ``rows_per_file`` so that a few hundred facts make many files.
Most tests run the driver path (small changes: netted, merged and written with pyarrow) and the
Spark path (forced by ``spark.datalog.driverRows=0``); what they check is read back from the Delta
log (added and removed files, their statistics) and from the files themselves.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import uuid
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable
from deltalake.transaction import AddAction, create_table_with_add_actions
from hypothesis import given
from hypothesis import strategies as st

from spark_datalog.errors import WarehouseError
from spark_datalog.storage import COUNT_COLUMN, InjectedFailure, Warehouse, datafiles
from spark_datalog.storage.embedded import EmbeddedBackend, net_changes, snapshot_changes, table_changes
from spark_datalog.storage.schema import arrow_schema, delta_schema

from .helpers import FP, counts, facts, frame

TC = (("x", "long"), ("y", "long"))
# 200 facts: x in 0..39, y even in 0..8. With 20 rows per file, file k holds x in 4k..4k+3.
GRID = [(x, y, 1) for x in range(40) for y in range(0, 10, 2)]
PER_FILE = 20


@pytest.fixture(params=["driver", "spark"])
def path(request, datalog_settings):
    """Which way a change goes: on the driver (small) or with Spark (forced)."""
    if request.param == "spark":
        datalog_settings(driverRows=0)
    return request.param


def clustered(spark, tmp_path, rows=GRID, columns=TC, per_file=PER_FILE, name="tc"):
    """A warehouse with ``name`` written from shuffled ``rows`` (the writer must sort them)."""
    shuffled = list(rows)
    random.Random(5).shuffle(shuffled)
    wh = Warehouse(spark, str(tmp_path / "wh"), backend="embedded", rows_per_file=per_file)
    with wh.run(FP, run_id="full") as run:
        wh.replace(name, columns, frame(spark, shuffled, columns), run)
    return wh


def apply(wh, changes, run_id="inc", name="tc", columns=TC, **kwargs):
    with wh.run(FP, run_id=run_id, mode="incremental") as run:
        return wh.apply_changes(name, columns, changes, run, **kwargs)


def commit(wh, version, name="tc"):
    """``{"add": [...], "remove": [...]}`` of one commit of the table's log."""
    found = {"add": [], "remove": []}
    with open(os.path.join(wh.root, name, "_delta_log", f"{version:020d}.json")) as handle:
        for line in handle:
            action = json.loads(line)
            for kind in found:
                if kind in action:
                    found[kind].append(action[kind])
    return found


def rows_of(wh, add, name="tc"):
    return pq.read_table(os.path.join(wh.root, name, unquote(add["path"])))


def stats_of(add):
    return json.loads(add["stats"])


def assert_stats(wh, add, columns, name="tc"):
    """The add's statistics are those of its file: bounds of every non-double column."""
    table = rows_of(wh, add, name)
    stats = stats_of(add)
    assert stats["numRecords"] == table.num_rows > 0
    for column, type_ in tuple(columns) + ((COUNT_COLUMN, "long"),):
        values = table.column(column)
        assert stats["nullCount"][column] == values.null_count
        if type_ == "double":
            assert column not in stats["minValues"] and column not in stats["maxValues"]
            continue
        extremes = pc.min_max(values).as_py()
        if type_ == "string" and extremes["max"] is not None and len(extremes["max"]) > 32:
            assert column not in stats["maxValues"]
            assert stats["minValues"][column] == extremes["min"][:32]
            continue
        assert stats["minValues"].get(column) == extremes["min"]
        assert stats["maxValues"].get(column) == extremes["max"]


def keys(table, columns=TC):
    return list(zip(*[table.column(c).to_pylist() for c, _ in columns], strict=True))


def expected_counts(changes, rows=GRID):
    result = {tuple(r[:-1]): r[-1] for r in rows}
    for *fact, count in changes:
        result[tuple(fact)] = result.get(tuple(fact), 0) + count
    return {f: c for f, c in result.items() if c != 0}


@contextlib.contextmanager
def spark_jobs(spark):
    """Counts the Spark jobs started inside the block: ``found[0]`` after it."""
    context = spark.sparkContext
    group = f"test-{uuid.uuid4().hex}"
    context.setJobGroup(group, group)
    found: list = []
    try:
        yield found
    finally:
        for key in ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel"):
            context.setLocalProperty(key, None)
        found.append(len(context.statusTracker().getJobIdsForGroup(group)))


def comparable(rows):
    """Rows as sortable tuples with NaN spelled out (NaN != NaN)."""
    return sorted(
        (tuple("NaN" if isinstance(v, float) and math.isnan(v) else v for v in row) for row in rows), key=repr
    )


def refuse(*args, **kwargs):
    raise AssertionError("the table's files were read")


# ------------------------------------------------------------------------------ writing


def test_full_write_is_sorted_in_bounded_files_with_statistics(spark, tmp_path, path):
    wh = clustered(spark, tmp_path)
    adds = sorted(commit(wh, 0)["add"], key=lambda a: a["path"])
    sizes = [stats_of(a)["numRecords"] for a in adds]
    assert sum(sizes) == len(GRID) and max(sizes) <= PER_FILE
    if path == "driver":
        assert sizes == [PER_FILE] * 10
    written = [k for add in adds for k in keys(rows_of(wh, add))]
    assert written == sorted(f[:2] for f in GRID)  # sorted within and across files
    for add in adds:
        assert_stats(wh, add, TC)
    assert counts(wh.read("tc", with_counts=True)) == expected_counts([])


def test_files_are_as_large_as_the_session_setting_unless_the_warehouse_says(
    spark, tmp_path, datalog_settings
):
    datalog_settings(rowsPerFile=40)
    wh = Warehouse(spark, str(tmp_path / "wh"), backend="embedded")
    with wh.run(FP, run_id="full") as run:
        wh.replace("tc", TC, frame(spark, GRID, TC), run)
    assert [stats_of(a)["numRecords"] for a in commit(wh, 0)["add"]] == [40] * 5
    own = clustered(spark, tmp_path / "own")  # rows_per_file=PER_FILE (20) wins
    assert [stats_of(a)["numRecords"] for a in commit(own, 0)["add"]] == [PER_FILE] * 10


def test_both_writers_write_the_same_file_schema_and_statistics(spark, tmp_path, datalog_settings):
    columns = (("n", "int"), ("w", "double"), ("ok", "bool"), ("s", "string"))
    long = "z" * 40
    rows = [
        (1, 0.5, True, "b", 1),
        (2, -0.0, False, None, 2),
        (None, float("nan"), None, long, -1),
        (4, 1.5, True, "a", 1),
    ]
    files = {}
    for way in ("driver", "spark"):
        if way == "spark":
            datalog_settings(driverRows=0)
        wh = clustered(spark, tmp_path / way, rows=rows, columns=columns, per_file=10, name="r")
        (add,) = commit(wh, 0, "r")["add"]
        assert_stats(wh, add, columns, "r")
        assert stats_of(add)["minValues"]["s"] == "a" and stats_of(add)["nullCount"]["n"] == 1
        files[way] = pq.ParquetFile(os.path.join(wh.root, "r", unquote(add["path"])))
        assert comparable(wh.read("r", with_counts=True).collect()) == comparable(rows)
    driver, spark_file = files["driver"], files["spark"]
    assert (
        driver.schema_arrow.remove_metadata()
        == spark_file.schema_arrow.remove_metadata()
        == arrow_schema(columns)
    )
    for i in range(len(columns) + 1):
        a, b = driver.schema.column(i), spark_file.schema.column(i)
        assert (a.name, a.physical_type, a.logical_type.type, a.max_definition_level) == (
            b.name,
            b.physical_type,
            b.logical_type.type,
            b.max_definition_level,
        )


def test_rows_per_file_must_be_positive(spark, tmp_path):
    for wrong in (0, -3, 1.5, True):
        with pytest.raises(ValueError, match="rows_per_file"):
            Warehouse(spark, str(tmp_path / "wh"), backend="embedded", rows_per_file=wrong)


# ------------------------------------------------------------------------------ changes


def test_small_delete_rewrites_only_the_files_holding_touched_facts(spark, tmp_path, path):
    wh = clustered(spark, tmp_path)
    holders = {stats_of(a)["minValues"]["x"]: a["path"] for a in commit(wh, 0)["add"]}
    change = [(5, 2, -1), (33, 8, -1), (34, 0, -1)]
    with spark_jobs(spark) as jobs:
        result = apply(wh, frame(spark, change, TC))
    if path == "driver":
        assert jobs[0] <= 1  # collecting the change; files are merged and written on the driver
    assert result.committed and result.version == 1
    assert (result.files_removed, result.rows_removed, result.rows_added) == (2, 40, 37)
    log = commit(wh, 1)
    assert {r["path"] for r in log["remove"]} == {holders[4], holders[32]}
    assert all(r["dataChange"] for r in log["remove"] + log["add"])
    assert sum(stats_of(a)["numRecords"] for a in log["add"]) == 37
    for add in log["add"]:
        assert_stats(wh, add, TC)
    if path == "driver":  # each rewritten file keeps the narrow range of the file it replaces
        ranges = sorted((stats_of(a)["minValues"]["x"], stats_of(a)["maxValues"]["x"]) for a in log["add"])
        assert ranges == [(4, 7), (32, 35)]
    assert counts(wh.read("tc", with_counts=True)) == expected_counts(change)
    assert counts(wh.changes("tc", 0)) == {(5, 2): -1, (33, 8): -1, (34, 0): -1}


def test_change_merged_with_spark_when_candidates_are_too_many_for_the_driver(
    spark, tmp_path, datalog_settings
):
    wh = clustered(spark, tmp_path)
    datalog_settings(driverMergeRows=10)  # the lookup joins the broadcast change
    change = [(5, 2, -1), (6, 3, 1), (39, 8, 2)]
    result = apply(wh, frame(spark, change, TC))
    assert (result.files_removed, result.rows_removed) == (2, 40)
    assert counts(wh.read("tc", with_counts=True)) == expected_counts(change)


def test_a_change_computed_in_the_driver_is_merged_there_in_batches_of_files(
    spark, tmp_path, datalog_settings
):
    wh = clustered(spark, tmp_path)
    datalog_settings(driverMergeRows=30)  # files of 20 rows: one file per batch
    change = [(x, y, -1) for x in range(0, 40, 3) for y in (0, 8)] + [(5, 3, 1), (100, 0, 2), (7, 4, 2)]
    table = pa.table(
        {"x": [c[0] for c in change], "y": [c[1] for c in change], COUNT_COLUMN: [c[2] for c in change]}
    )
    with spark_jobs(spark) as jobs:
        result = apply(wh, table)
    assert jobs[0] == 0  # no Spark job: read, merged and written with pyarrow
    assert (result.files_removed, result.rows_removed) == (10, 200)
    assert counts(wh.read("tc", with_counts=True)) == expected_counts(change)
    log = commit(wh, 1)
    for add in log["add"]:
        assert_stats(wh, add, TC)
    assert sum(stats_of(a)["numRecords"] for a in log["add"]) == len(expected_counts(change))


def test_inserting_new_facts_adds_files_and_removes_none(spark, tmp_path, path, monkeypatch):
    wh = clustered(spark, tmp_path)
    change = [(5, 3, 1), (21, 7, 1), (100, 0, 2)]  # (5, 3), (21, 7) lie inside files' bounds
    result = apply(wh, frame(spark, change, TC), run_id="plain")
    assert (result.files_removed, result.rows_added) == (0, 3)
    assert commit(wh, 1)["remove"] == []
    # promised new: the table's files are not even read
    monkeypatch.setattr(datafiles, "read_rows", refuse)
    monkeypatch.setattr(EmbeddedBackend, "_read_files", refuse)
    more = [(6, 5, 1), (200, 1, 1)]
    with spark_jobs(spark) as jobs:
        result = apply(wh, frame(spark, more, TC), run_id="promised", new_facts_only=True)
    if path == "driver":
        assert jobs[0] <= 1
    assert (result.files_added, result.files_removed, result.rows_added) == (1, 0, 2)
    assert_stats(wh, commit(wh, 2)["add"][0], TC)
    assert counts(wh.read("tc", with_counts=True)) == expected_counts(change + more)


def test_a_promise_of_new_facts_with_a_negative_count_is_merged(spark, tmp_path, path):
    wh = clustered(spark, tmp_path)
    change = [(5, 3, 1), (5, 2, -1)]  # not all positive: looked up as usual
    result = apply(wh, frame(spark, change, TC), new_facts_only=True)
    assert result.files_removed == 1
    assert counts(wh.read("tc", with_counts=True)) == expected_counts(change)


def test_count_changes_of_existing_facts(spark, tmp_path, path):
    wh = clustered(spark, tmp_path)
    change = [
        (5, 2, 1),
        (5, 4, -1),
        (6, 0, 2),
        (7, 0, -3),  # file x 4..7
        (33, 8, 1),
        (33, 8, -1),  # nets to 0: file x 32..35 untouched
        (100, 0, 1),
    ]  # new
    result = apply(wh, frame(spark, change, TC))
    assert (result.files_removed, result.rows_removed, result.rows_added) == (1, 20, 20)
    stored = counts(wh.read("tc", with_counts=True))
    assert stored == expected_counts(change)
    assert stored[(5, 2)] == 2 and stored[(6, 0)] == 3 and stored[(7, 0)] == -2
    assert (7, 0) not in facts(wh.read("tc")) and (5, 4) not in stored


def test_changes_touching_no_file(spark, tmp_path, path, monkeypatch):
    wh = clustered(spark, tmp_path)
    monkeypatch.setattr(datafiles, "read_rows", refuse)  # pruned from the log's statistics
    if path == "driver":
        monkeypatch.setattr(EmbeddedBackend, "_read_files", refuse)
    outside = [(5, 9, 1), (1000, 0, 1), (-1, 4, 1)]  # beyond every file's bounds
    result = apply(wh, frame(spark, outside, TC), run_id="outside")
    assert (result.files_added, result.files_removed, result.rows_added) == (1, 0, 3)
    cancelled = apply(wh, frame(spark, [(5, 2, 1), (5, 2, -1)], TC), run_id="cancelled")
    empty = apply(wh, frame(spark, [], TC), run_id="empty")
    assert cancelled.skipped == empty.skipped == "no change"
    assert wh.version("tc") == cancelled.version == empty.version == 1
    assert counts(wh.read("tc", with_counts=True)) == expected_counts(outside)


def test_large_change_is_netted_and_pruned_by_its_bounds(spark, tmp_path, datalog_settings):
    wh = clustered(spark, tmp_path)
    datalog_settings(driverRows=3)
    holders = {stats_of(a)["minValues"]["x"]: a["path"] for a in commit(wh, 0)["add"]}
    change = [(9, 2, -1), (9, 2, -1), (9, 2, 1), (10, 1, 1), (10, 1, 1), (11, 8, 1), (11, 8, -1)]
    result = apply(wh, frame(spark, change, TC, slices=2))
    assert {r["path"] for r in commit(wh, 1)["remove"]} == {holders[8]}
    assert (result.rows_removed, result.rows_added) == (20, 20)
    assert counts(wh.read("tc", with_counts=True)) == expected_counts(change)
    # already net: the caller's promise skips the netting
    result = apply(
        wh, frame(spark, [(36, 0, -1), (37, 1, 1), (38, 3, 4), (39, 9, 1)], TC), run_id="netted", netted=True
    )
    assert result.files_removed == 1
    assert counts(wh.read("tc", with_counts=True)) == expected_counts(
        change + [(36, 0, -1), (37, 1, 1), (38, 3, 4), (39, 9, 1)]
    )


def test_files_without_statistics_are_candidates(spark, tmp_path):
    """A table written before statistics were recorded: every file is looked at, only the one
    holding the touched fact is rewritten."""
    root = tmp_path / "wh"
    uri = str(root / "tc")
    os.makedirs(os.path.join(uri, "old"))
    adds = []
    for i in range(3):
        part = pa.table(
            {"x": [3 * i, 3 * i + 1, 3 * i + 2], "y": [0, 0, 0], COUNT_COLUMN: [1] * 3},
            schema=arrow_schema(TC),
        )
        where = os.path.join(uri, "old", f"part-{i}.parquet")
        pq.write_table(part, where)
        adds.append(
            AddAction(
                path=f"old/part-{i}.parquet",
                size=os.path.getsize(where),
                partition_values={},
                modification_time=0,
                data_change=True,
                stats=json.dumps({"numRecords": 3}),
            )
        )
    create_table_with_add_actions(uri, delta_schema(TC), adds, mode="error")
    wh = Warehouse(spark, str(root), backend="embedded")
    result = apply(wh, frame(spark, [(4, 0, -1), (20, 0, 1)], TC))
    assert (result.files_removed, result.rows_removed, result.rows_added) == (1, 3, 3)
    assert [r["path"] for r in commit(wh, 1)["remove"]] == ["old/part-1.parquet"]
    assert facts(wh.read("tc")) == {(x, 0) for x in range(9) if x != 4} | {(20, 0)}


def test_partitioned_tables_are_refused(spark, tmp_path):
    from deltalake import write_deltalake

    root = tmp_path / "wh"
    write_deltalake(
        str(root / "tc"),
        pa.table({"x": [1], "y": [2], COUNT_COLUMN: [1]}, schema=arrow_schema(TC)),
        partition_by=["y"],
    )
    wh = Warehouse(spark, str(root), backend="embedded")
    with pytest.raises(WarehouseError, match="partitioned"):
        apply(wh, frame(spark, [(1, 2, 1)], TC))


# ------------------------------------------------------------------------------ guarantees


def test_retried_run_applies_nothing_twice(spark, tmp_path, path):
    wh = clustered(spark, tmp_path)
    with wh.run(FP, run_id="arc") as run:
        wh.replace("arc", TC, frame(spark, [(1, 2, 1)], TC), run)

    def crash(name, version):
        raise InjectedFailure(f"crash after {name}")

    change = [(5, 2, -1), (7, 3, 1)]
    wh.after_commit = crash
    with pytest.raises(InjectedFailure), wh.run(FP, run_id="inc", mode="incremental") as run:
        wh.apply_changes("tc", TC, frame(spark, change, TC), run)
        wh.apply_changes("arc", TC, frame(spark, [(1, 2, -1)], TC), run)
    wh.after_commit = None
    assert wh.version("tc") == 1 and wh.version("arc") == 0
    with wh.run(FP, run_id="inc", mode="incremental") as run:
        again = wh.apply_changes("tc", TC, frame(spark, change, TC), run)
        arc = wh.apply_changes("arc", TC, frame(spark, [(1, 2, -1)], TC), run)
    assert again.skipped == "already committed" and arc.committed
    with wh.run(FP, run_id="inc", mode="incremental") as run:  # a committed run: nothing at all
        assert wh.apply_changes("tc", TC, frame(spark, change, TC), run).skipped
    assert wh.version("tc") == 1
    assert counts(wh.read("tc", with_counts=True)) == expected_counts(change)
    assert counts(wh.read("arc", with_counts=True)) == {}


def test_failure_between_writing_and_committing_leaves_the_old_version(spark, tmp_path, path, monkeypatch):
    wh = clustered(spark, tmp_path)
    change = [(5, 2, -1), (100, 1, 1)]

    def fail(*args, **kwargs):
        raise OSError("the store went away")

    with monkeypatch.context() as patched:
        patched.setattr(DeltaTable, "create_write_transaction", fail)
        with pytest.raises(OSError):
            apply(wh, frame(spark, change, TC))
    assert wh.version("tc") == 0 and counts(wh.read("tc", with_counts=True)) == expected_counts([])
    apply(wh, frame(spark, change, TC))  # the same run id, resumed
    assert counts(wh.read("tc", with_counts=True)) == expected_counts(change)


def test_change_readers_see_the_rewrites(spark, tmp_path, path):
    wh = clustered(spark, tmp_path)
    uri = os.path.join(wh.root, "tc")
    DeltaTable(uri).alter.set_table_properties({"delta.enableChangeDataFeed": "true"})  # v1
    change = [(5, 2, -1), (6, 2, 2), (100, 0, 1)]
    apply(wh, frame(spark, change, TC))
    wanted = {(5, 2): -1, (6, 2): 2, (100, 0): 1}
    feed = table_changes(spark, uri, 1, 2)
    assert feed.method == "cdf"
    assert counts(wh.changes("tc", 0)) == wanted
    assert counts(net_changes(feed.df, TC)) == wanted
    assert counts(net_changes(snapshot_changes(spark, uri, 0), TC)) == wanted


# ------------------------------------------------------------------------------ driver-side pieces


def test_net_and_merge_group_like_spark():
    columns = (("w", "double"), ("s", "string"))
    schema = arrow_schema(columns)
    stored = [
        pa.table(
            {"w": [0.0, float("nan"), 1.0], "s": [None, "a", "b"], COUNT_COLUMN: [1, 1, 1]}, schema=schema
        ),
        pa.table({"w": [2.0], "s": ["c"], COUNT_COLUMN: [1]}, schema=schema),
    ]
    change = datafiles.net_rows(
        pa.table(
            {"w": [-0.0, float("nan"), 5.0, 5.0], "s": [None, "a", "x", "x"], COUNT_COLUMN: [-1, 2, 1, -1]},
            schema=schema,
        ),
        columns,
    )
    assert change.num_rows == 2  # (5.0, x) nets to 0
    touched, parts = datafiles.merge_rows(stored, change, columns)
    assert touched == [0] and len(parts) == 2  # the first file's rows, then no new fact
    rows = parts[0].to_pylist()
    assert len(rows) == 2 and {r["s"] for r in rows} == {"a", "b"}
    assert [r[COUNT_COLUMN] for r in sorted(rows, key=lambda r: r["s"])] == [3, 1]
    assert parts[1].num_rows == 0


def test_candidates_from_statistics():
    columns = (("x", "long"), ("s", "string"), ("w", "double"))

    def entry(path, low, high, nulls, records=10):
        return {"path": path, "num_records": records, "min": low, "max": high, "null_count": nulls}

    files = [
        entry("a-m", {"x": 0, "s": "a"}, {"x": 9, "s": "m"}, {"x": 0, "s": 0}),
        entry("a-z", {"x": 10, "s": "a"}, {"x": 19, "s": "z"}, {"x": 0, "s": 2}),
        entry("unknown", {}, {}, {}),  # no statistics
        entry("null-s", {"x": 20}, {"x": 29}, {"x": 0, "s": 10}),
    ]  # s only nulls
    change = pa.table(
        {"x": [5, 15, 25], "s": ["q", None, "b"], "w": [1.0, 2.0, 3.0]},
        schema=arrow_schema(columns, with_counts=False),
    )
    found = [f["path"] for f in datafiles.candidates(files, change, columns)]
    # (5, q): s beyond file 0's max; (15, null): file 1 has nulls; (25, b): file 3 has no s
    assert found == ["a-z", "unknown"]
    assert [f["path"] for f in datafiles.overlapping(files, {"x": (30, 40, False)})] == ["unknown"]
    assert [f["path"] for f in datafiles.overlapping(files, {"s": (None, None, True)})] == [
        "a-z",
        "unknown",
        "null-s",
    ]


_MIXED = (("x", "long"), ("w", "double"), ("s", "string"))
_FACT = st.tuples(
    st.sampled_from([1, 2, None]),
    st.sampled_from([0.0, -0.0, math.nan, 1.5, None]),
    st.sampled_from(["a", "b", None]),
    st.sampled_from([-2, -1, 1, 2]),
)


def _key(row):
    x, w, s = row[:3]
    if isinstance(w, float):
        w = "NaN" if math.isnan(w) else w + 0.0  # -0.0 + 0.0 is 0.0
    return (x, w, s)


def _summed(tables):
    total: dict = {}
    for table in tables:
        for row in table.to_pylist():
            key = _key(tuple(row.values()))
            total[key] = total.get(key, 0) + row[COUNT_COLUMN]
    return {k: v for k, v in total.items() if v}


def _arrow(rows):
    return pa.table(
        {name: [r[i] for r in rows] for i, name in enumerate([c for c, _ in _MIXED] + [COUNT_COLUMN])},
        schema=arrow_schema(_MIXED),
    )


@given(stored=st.lists(st.lists(_FACT, max_size=6), max_size=4), change=st.lists(_FACT, max_size=6))
def test_driver_merge_equals_summing_every_row(stored, change):
    """Against a model: the untouched files plus the merged parts hold, per fact, the sum of
    every stored row and the change; the touched files are exactly those holding a changed fact."""
    tables = [_arrow(rows) for rows in stored]
    net = datafiles.net_rows(_arrow(change), _MIXED)
    assert _summed([net]) == _summed([_arrow(change)]) and net.num_rows == len(_summed([net]))
    touched, parts = datafiles.merge_rows(tables, net, _MIXED)
    changed = {_key(tuple(r.values())) for r in net.to_pylist()}
    assert touched == [i for i, rows in enumerate(stored) if changed & {_key(r) for r in rows}]
    assert len(parts) == len(touched) + 1
    untouched = [t for i, t in enumerate(tables) if i not in touched]
    assert _summed(untouched + parts) == _summed(tables + [_arrow(change)])


# a struct column (a record of a record) with nulls at every level, -0.0 and NaN inside
_NESTED = (("r", "[x: long, y: [w: double, s: string]]"), ("n", "long"))
_RECORDS = [
    None,
    {"x": 1, "y": None},
    {"x": None, "y": {"w": None, "s": "a"}},
    *({"x": 1, "y": {"w": w, "s": s}} for w in (0.0, -0.0, math.nan) for s in ("a", None)),
]
_NESTED_FACT = st.tuples(st.sampled_from(_RECORDS), st.sampled_from([1, None]), st.sampled_from([-1, 1, 2]))


def _nested_key(row) -> tuple:
    """A fact of ``_NESTED`` as Spark groups it: field by field, -0.0 as 0.0, NaN equal to NaN."""
    record, n = row[:2]
    if record is None or record["y"] is None:
        return (None if record is None else (record["x"], None), n)
    w = record["y"]["w"]
    w = "NaN" if isinstance(w, float) and math.isnan(w) else (None if w is None else w + 0.0)
    return ((record["x"], (w, record["y"]["s"])), n)


def _nested(rows) -> pa.Table:
    return pa.table(
        {"r": [r[0] for r in rows], "n": [r[1] for r in rows], COUNT_COLUMN: [r[2] for r in rows]},
        schema=arrow_schema(_NESTED),
    )


def _nested_sums(tables) -> dict:
    total: dict = {}
    for table in tables:
        for row in table.to_pylist():
            key = _nested_key((row["r"], row["n"]))
            total[key] = total.get(key, 0) + row[COUNT_COLUMN]
    return {k: v for k, v in total.items() if v}


@given(
    stored=st.lists(st.lists(_NESTED_FACT, max_size=5), max_size=3), change=st.lists(_NESTED_FACT, max_size=6)
)
def test_driver_merge_of_struct_columns_equals_summing_every_row(stored, change):
    """Struct columns (Arrow joins and groups take no struct keys) are netted and merged by
    their fields, nulls and doubles as Spark groups them; the stored schema keeps the struct."""
    tables = [_nested(rows) for rows in stored]
    net = datafiles.net_rows(_nested(change), _NESTED)
    assert net.schema == arrow_schema(_NESTED)
    assert _nested_sums([net]) == _nested_sums([_nested(change)]) and net.num_rows == len(_nested_sums([net]))
    touched, parts = datafiles.merge_rows(tables, net, _NESTED)
    changed = {_nested_key(tuple(r.values())) for r in net.to_pylist()}
    assert touched == [i for i, rows in enumerate(stored) if changed & {_nested_key(r) for r in rows}]
    assert all(part.schema == arrow_schema(_NESTED) for part in parts)
    untouched = [t for i, t in enumerate(tables) if i not in touched]
    assert _nested_sums(untouched + parts) == _nested_sums(tables + [_nested(change)])


def test_net_and_merge_of_a_relation_without_columns():
    def counts(*values):
        return pa.table({COUNT_COLUMN: pa.array(values, pa.int64())})

    net = datafiles.net_rows(counts(1, 1, -1), ())
    assert net.to_pylist() == [{COUNT_COLUMN: 1}]
    assert datafiles.net_rows(counts(1, -1), ()).num_rows == 0
    touched, parts = datafiles.merge_rows([counts(2)], net, ())
    assert touched == [0] and [p.to_pylist() for p in parts] == [[{COUNT_COLUMN: 3}], []]
    touched, parts = datafiles.merge_rows([], net, ())
    assert touched == [] and [p.to_pylist() for p in parts] == [[{COUNT_COLUMN: 1}]]
