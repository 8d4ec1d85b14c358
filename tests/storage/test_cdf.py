"""Changes of Delta tables from their change data feed (CDF), and its agreement with snapshots.

Tables are written and changed with delta-rs, which writes change data files (``_change_data``)
for deletes, updates and merges on tables with ``delta.enableChangeDataFeed = true``. The oracle
for every range is the multiset difference of the table's rows at the two versions, read by
delta-rs itself.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable, write_deltalake

import spark_datalog as sd
from spark_datalog.storage import COUNT_COLUMN, Warehouse, load_input_changes
from spark_datalog.storage.embedded import net_changes, snapshot_changes, table_changes

from .helpers import counts, frame, warehouse_on

EDGE = (("x", "long"), ("y", "string"))
CDF = {"delta.enableChangeDataFeed": "true"}


def edges(rows):
    return pa.table(
        {"x": pa.array([r[0] for r in rows], pa.int64()), "y": pa.array([r[1] for r in rows], pa.string())}
    )


def oracle(uri, old, new):
    """New multiset minus old multiset of the table's rows, without zero entries."""

    def rows(version):
        table = DeltaTable(uri, version=version).to_pyarrow_table()
        return Counter(zip(*[table.column(c).to_pylist() for c, _ in EDGE], strict=True))

    before, after = rows(old), rows(new)
    return {f: after[f] - before[f] for f in set(before) | set(after) if after[f] != before[f]}


def log_actions(uri, version):
    with open(os.path.join(uri, "_delta_log", f"{version:020d}.json")) as handle:
        return [json.loads(line) for line in handle if line.strip()]


def has_change_data(uri, version):
    return any("cdc" in a for a in log_actions(uri, version))


def netted(spark, found):
    return counts(net_changes(found, EDGE))


def check_ranges(spark, uri, ranges):
    """``ranges`` maps ``(old, new)`` to the method expected for it; returns the netted changes.

    Every range's changes, by the chosen method and by the snapshot difference, must equal the
    oracle. All ranges are computed in one Spark job (the suite shares a small machine).
    """
    from functools import reduce

    from pyspark.sql import functions as F

    frames = []
    for index, ((old, new), method) in enumerate(ranges.items()):
        found = table_changes(spark, uri, old, new)
        assert (found.method, found.version) == (method, new), (old, new)
        snapshot = snapshot_changes(spark, uri, old, new)
        for by, rows in (("chosen", found.df), ("snapshot", snapshot)):
            frames.append(rows.select(F.lit(index).alias("range"), F.lit(by).alias("by"), "*"))
    summed = (
        reduce(lambda a, b: a.unionByName(b), frames)
        .groupBy("range", "by", "x", "y")
        .agg(F.sum(COUNT_COLUMN).alias("n"))
        .where(F.col("n") != 0)
        .collect()
    )
    result = {}
    for index, (old, new) in enumerate(ranges):
        expected = oracle(uri, old, new)
        for by in ("chosen", "snapshot"):
            got = {(r["x"], r["y"]): r["n"] for r in summed if (r["range"], r["by"]) == (index, by)}
            assert got == expected, (old, new, by)
        result[(old, new)] = expected
    return result


def merge_upsert(uri, rows):
    (
        DeltaTable(uri)
        .merge(edges(rows), "t.x = s.x", source_alias="s", target_alias="t")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute()
    )


def test_deletes_updates_merges_with_duplicates(spark, tmp_path):
    uri = str(tmp_path / "edges")
    write_deltalake(uri, edges([(1, "a"), (2, "b"), (3, "c"), (3, "c")]), configuration=CDF)  # 0
    write_deltalake(uri, edges([(4, "d"), (1, "a")]), mode="append")  # 1
    DeltaTable(uri).delete("x = 1")  # 2
    DeltaTable(uri).update(updates={"y": "'B'"}, predicate="x = 2")  # 3
    merge_upsert(uri, [(3, "C"), (5, "e")])  # 4
    write_deltalake(uri, edges([(6, "f")]), mode="append")  # 5
    DeltaTable(uri).optimize.compact()  # 6
    assert not has_change_data(uri, 1)  # appends are plain adds
    assert all(has_change_data(uri, v) for v in (2, 3, 4))
    compaction = [a[k] for a in log_actions(uri, 6) for k in ("add", "remove") if k in a]
    assert compaction and not any(a["dataChange"] for a in compaction)

    found = check_ranges(
        spark, uri, {(0, 1): "cdf", (1, 2): "cdf", (2, 3): "cdf", (3, 4): "cdf", (5, 6): "cdf", (0, 6): "cdf"}
    )
    assert found[(0, 1)] == {(4, "d"): 1, (1, "a"): 1}
    assert found[(1, 2)] == {(1, "a"): -2}  # both copies deleted
    assert found[(2, 3)] == {(2, "b"): -1, (2, "B"): 1}
    assert found[(3, 4)] == {(3, "c"): -2, (3, "C"): 2, (5, "e"): 1}
    assert found[(5, 6)] == {}  # compaction changes no data
    assert found[(0, 6)] == {
        (1, "a"): -1,
        (2, "b"): -1,
        (2, "B"): 1,
        (3, "c"): -2,
        (3, "C"): 2,
        (4, "d"): 1,
        (5, "e"): 1,
        (6, "f"): 1,
    }


def test_cdf_rows_come_from_change_data_files(spark, tmp_path):
    """Emptying a rewritten data file proves the cdc file, not the add/remove pair, is read."""
    uri = str(tmp_path / "edges")
    write_deltalake(uri, edges([(1, "a"), (2, "b")]), configuration=CDF)
    DeltaTable(uri).delete("x = 1")
    added = [a["add"]["path"] for a in log_actions(uri, 1) if "add" in a]
    for path in added:  # (2, b) was rewritten: the snapshot difference would miss it now
        pq.write_table(edges([]), os.path.join(uri, path))
    found = table_changes(spark, uri, 0, 1)
    assert found.method == "cdf" and netted(spark, found.df) == {(1, "a"): -1}
    assert netted(spark, snapshot_changes(spark, uri, 0, 1)) == {(1, "a"): -1, (2, "b"): -1}


def test_range_from_before_the_feed_was_enabled_uses_snapshots(spark, tmp_path):
    uri = str(tmp_path / "edges")
    write_deltalake(uri, edges([(1, "a"), (2, "b")]))  # 0
    write_deltalake(uri, edges([(3, "c")]), mode="append")  # 1
    DeltaTable(uri).alter.set_table_properties(CDF)  # 2
    DeltaTable(uri).delete("x = 2")  # 3
    DeltaTable(uri).update(updates={"y": "'C'"}, predicate="x = 3")  # 4
    assert not has_change_data(uri, 1) and has_change_data(uri, 3)
    assert table_changes(spark, uri, 4, 4).method == "snapshot"  # nothing to read
    # disabling the feed again: ranges with that commit go back to snapshots
    DeltaTable(uri).alter.set_table_properties({"delta.enableChangeDataFeed": "false"})  # 5
    DeltaTable(uri).delete("x = 1")  # 6
    # the commit that enables the feed is covered by it (the feed is on after it)
    found = check_ranges(
        spark, uri, {(0, 1): "snapshot", (0, 4): "snapshot", (1, 4): "cdf", (3, 4): "cdf", (3, 6): "snapshot"}
    )
    assert found[(0, 4)] == {(2, "b"): -1, (3, "C"): 1}
    assert found[(3, 4)] == {(3, "c"): -1, (3, "C"): 1}


def test_partitioned_table(spark, tmp_path):
    uri = str(tmp_path / "edges")
    write_deltalake(
        uri, edges([(1, "a"), (2, "b"), (3, "a"), (4, "c")]), partition_by=["y"], configuration=CDF
    )  # 0
    DeltaTable(uri).delete("x = 1")  # 1
    DeltaTable(uri).update(updates={"x": "x + 10"}, predicate="y = 'b'")  # 2
    DeltaTable(uri).delete("y = 'a'")  # 3: a whole partition
    write_deltalake(uri, edges([(5, "d")]), mode="append")  # 4
    assert has_change_data(uri, 2) and not has_change_data(uri, 3)
    found = check_ranges(spark, uri, {(1, 2): "cdf", (0, 4): "cdf"})
    assert found[(0, 4)] == {(1, "a"): -1, (3, "a"): -1, (2, "b"): -1, (12, "b"): 1, (5, "d"): 1}


def test_load_input_changes_reports_the_method(spark, tmp_path):
    uri = str(tmp_path / "edges")
    write_deltalake(uri, edges([(1, "a"), (2, "b")]), configuration=CDF)
    merge_upsert(uri, [(2, "B"), (3, "c")])
    found = load_input_changes(spark, uri, EDGE, "edge", from_version=0)
    assert (found.method, found.version) == ("cdf", 1)
    assert found.df.columns == ["x", "y", COUNT_COLUMN]
    assert counts(found.df) == {(2, "b"): -1, (2, "B"): 1, (3, "c"): 1}


def test_warehouse_table_with_the_feed_weighs_counts(spark, tmp_path, caplog):
    wh = Warehouse(spark, str(tmp_path / "wh"), backend="embedded")
    with wh.run("fp") as run:
        wh.replace("arc", EDGE, frame(spark, [(1, "a", 2), (2, "b", 1)]), run)
    DeltaTable(wh._backend.table_uri("arc")).alter.set_table_properties(CDF)
    with wh.run("fp") as run:
        wh.apply_changes("arc", EDGE, frame(spark, [(1, "a", -1), (3, "c", 3)]), run)
    caplog.set_level(logging.INFO, logger="spark_datalog")
    assert counts(wh.changes("arc", 0)) == {(1, "a"): -1, (3, "c"): 3}
    assert "change data feed" in caplog.text


TC = """
.decl arc(x: long, y: long)
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), arc(Y, Z).
"""


def test_update_from_an_input_with_the_feed_equals_recomputation(spark, tmp_path, caplog):
    """No change set given: the input's changes since the consumed version come from its feed."""

    def arcs(rows):
        return pa.table(
            {"x": pa.array([r[0] for r in rows], pa.int64()), "y": pa.array([r[1] for r in rows], pa.int64())}
        )

    def stored(warehouse, name):
        return {tuple(r) for r in warehouse.read(name).collect()}

    source = str(tmp_path / "arcs")
    write_deltalake(source, arcs([(1, 2), (1, 2), (2, 3), (3, 4), (4, 5)]), configuration=CDF)
    program = sd.Program.parse(TC)
    wh = Warehouse(spark, str(tmp_path / "wh"))
    program.materialize(spark, inputs={"arc": (source, "delta")}, warehouse=wh)
    caplog.set_level(logging.INFO, logger="spark_datalog")

    DeltaTable(source).delete("x = 2")  # cdc: delete
    DeltaTable(source).update(updates={"y": "1"}, predicate="x = 4")  # cdc: update
    (
        DeltaTable(source)
        .merge(
            arcs([(1, 3), (6, 1)]),
            "t.x = s.x AND t.y = s.y",  # cdc: insert
            source_alias="s",
            target_alias="t",
        )
        .when_not_matched_insert_all()
        .execute()
    )
    assert all(has_change_data(source, v) for v in (1, 2, 3))
    caplog.clear()
    program.update(spark, warehouse=wh)
    assert "change data feed" in caplog.text and "snapshot difference" not in caplog.text

    # a full recomputation over the table as it is now (the reference interpreter), and the
    # stored input's counts are the numbers of copies in the table
    now = DeltaTable(source).to_pyarrow_table()
    rows = Counter(zip(now.column("x").to_pylist(), now.column("y").to_pylist(), strict=True))
    expected = sd.reference.evaluate(program, {"arc": set(rows)})
    assert stored(wh, "tc") == expected["tc"]
    assert counts(wh.read("arc", with_counts=True)) == dict(rows)
    assert rows[(1, 2)] == 2 and (2, 3) not in rows and (4, 1) in rows and (6, 1) in rows


def test_native_path_reads_the_feed_with_delta_spark(spark, tmp_path, caplog):
    wh = warehouse_on(spark, tmp_path / "wh", "native")
    with wh.run("fp") as run:
        wh.replace("arc", EDGE, frame(spark, [(1, "a", 2), (2, "b", 1)]), run)
    DeltaTable(wh._backend.table_uri("arc")).alter.set_table_properties(CDF)
    with wh.run("fp") as run:
        wh.apply_changes("arc", EDGE, frame(spark, [(1, "a", -1), (2, "b", -1), (3, "c", 3)]), run)
    caplog.set_level(logging.INFO, logger="spark_datalog")
    assert counts(wh.changes("arc", 1)) == {(1, "a"): -1, (2, "b"): -1, (3, "c"): 3}
    assert "change data feed" in caplog.text
