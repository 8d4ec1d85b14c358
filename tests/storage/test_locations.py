"""Inputs named by location: Delta, Parquet and CSV, and their errors."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import write_deltalake

from spark_datalog.errors import InputError
from deltalake import DeltaTable

from spark_datalog.storage import COUNT_COLUMN, load_input, load_input_changes, read_input

from .helpers import counts, facts

EDGE = (("x", "long"), ("y", "string"))


def test_delta_input_by_name_with_version(spark, tmp_path):
    uri = str(tmp_path / "edges")
    first = pa.table({"extra": [0.5], "y": ["a"], "x": pa.array([1], pa.int32())})
    write_deltalake(uri, first)
    write_deltalake(
        uri, pa.table({"extra": [1.5], "y": ["b"], "x": pa.array([2], pa.int32())}), mode="append"
    )
    loaded = load_input(spark, uri, "delta", EDGE, "edge")
    assert loaded.version == 1 and loaded.format == "delta"
    assert loaded.df.columns == ["x", "y"]
    assert loaded.df.schema["x"].dataType.simpleString() == "bigint"  # int widened to long
    assert facts(loaded.df) == {(1, "a"), (2, "b")}
    assert facts(read_input(spark, uri, None, EDGE, "edge", version=0)) == {(1, "a")}


def test_delta_input_written_by_spark_datalog_gives_present_facts(spark, tmp_path):
    uri = str(tmp_path / "arc")
    write_deltalake(uri, pa.table({"x": [1, 2, 3], "y": ["a", "b", "c"], COUNT_COLUMN: [1, 0, -2]}))
    assert facts(read_input(spark, uri, "delta", EDGE, "arc")) == {(1, "a")}


def test_changes_of_a_delta_input_between_versions(spark, tmp_path):
    uri = str(tmp_path / "edges")
    write_deltalake(uri, pa.table({"x": [1, 2], "y": ["a", "b"]}))  # version 0
    write_deltalake(uri, pa.table({"x": [3], "y": ["c"]}), mode="append")  # version 1
    DeltaTable(uri).delete("x = 1")  # version 2
    changes = load_input_changes(spark, uri, EDGE, "edge", from_version=0)
    assert changes.version == 2 and changes.df.columns == ["x", "y", COUNT_COLUMN]
    assert counts(changes.df) == {(3, "c"): 1, (1, "a"): -1}  # (2, b) rewritten: no change
    assert counts(load_input_changes(spark, uri, EDGE, "edge", 0, 1).df) == {(3, "c"): 1}


def test_partitioned_delta_input(spark, tmp_path):
    uri = str(tmp_path / "parts")
    write_deltalake(uri, pa.table({"x": [1, 2, 3], "y": ["a", "a", "b"]}), partition_by=["y"])
    assert facts(read_input(spark, uri, "delta", EDGE, "edge")) == {(1, "a"), (2, "a"), (3, "b")}


def test_parquet_input_by_position(spark, tmp_path):
    path = str(tmp_path / "edges.parquet")
    pq.write_table(pa.table({"src": [1, 2], "dst": ["a", "b"]}), path)
    df = read_input(spark, path, None, EDGE, "edge")
    assert df.columns == ["x", "y"] and facts(df) == {(1, "a"), (2, "b")}


def test_csv_input_with_header_and_types(spark, tmp_path):
    path = tmp_path / "people.csv"
    path.write_text("name,age,score,member\nann,31,1.5,true\nbob,,2,FALSE\n")
    columns = (("name", "string"), ("age", "long"), ("score", "double"), ("member", "bool"))
    df = read_input(spark, str(path), "csv", columns, "person")
    assert [f.dataType.simpleString() for f in df.schema.fields] == ["string", "bigint", "double", "boolean"]
    assert facts(df) == {("ann", 31, 1.5, True), ("bob", None, 2.0, False)}


def test_csv_value_of_the_wrong_type_is_named(spark, tmp_path):
    path = tmp_path / "arc.csv"
    path.write_text("x,y\n1,a\ntwo,b\n")
    with pytest.raises(
        InputError,
        match=r"input arc: column x of .*arc.csv has the value 'two', "
        r"which is not a long",
    ):
        read_input(spark, str(path), "csv", EDGE, "arc")


@pytest.mark.parametrize("fmt", ["delta", "parquet", "csv"])
def test_missing_input(spark, tmp_path, fmt):
    with pytest.raises(InputError, match="input arc: .*(does not exist|no Delta table)"):
        read_input(spark, str(tmp_path / "nothing"), fmt, EDGE, "arc")


def test_wrong_shape_and_type(spark, tmp_path):
    path = str(tmp_path / "three.parquet")
    pq.write_table(pa.table({"a": [1], "b": ["x"], "c": [2]}), path)
    with pytest.raises(InputError, match=r"has columns \(a, b, c\) but \(x: long, y: string\)"):
        read_input(spark, path, "parquet", EDGE, "arc")
    typed = str(tmp_path / "typed.parquet")
    pq.write_table(pa.table({"x": ["1"], "y": ["a"]}), typed)
    with pytest.raises(InputError, match="column x of .* has type string but x is declared long"):
        read_input(spark, typed, "parquet", EDGE, "arc")
    with pytest.raises(InputError, match="unknown format 'orc'"):
        read_input(spark, typed, "orc", EDGE, "arc")
    with pytest.raises(InputError, match="version can only be given for a Delta table"):
        read_input(spark, typed, "parquet", EDGE, "arc", version=1)


# ---------------------------------------------------------------------------------------------
# CSV text: multi-line quoted fields, bytes that are not UTF-8 (issue 19, items 10 and 17)


def test_csv_quoted_field_may_span_lines(spark, tmp_path):
    path = tmp_path / "edges.csv"
    path.write_text('x,y\n1,"two\nlines"\n2,plain\n3,"with ""quotes"", and a comma"\n')
    assert facts(read_input(spark, str(path), "csv", EDGE, "edge")) == {
        (1, "two\nlines"),
        (2, "plain"),
        (3, 'with "quotes", and a comma'),
    }


def test_csv_string_that_is_not_utf8_is_refused_at_its_line(spark, tmp_path):
    path = tmp_path / "edges.csv"
    path.write_bytes(b"x,y\n1,fine\n2,caf\xe9\n")  # Latin-1, not UTF-8: Spark would store U+FFFD
    with pytest.raises(InputError) as info:
        read_input(spark, str(path), "csv", EDGE, "edge")
    err = info.value
    assert err.line == 3 and err.column == 6
    assert "edges.csv" in str(err) and "0xe9" in str(err) and "UTF-8" in str(err)


def test_csv_holding_a_real_replacement_character_is_accepted(spark, tmp_path):
    path = tmp_path / "edges.csv"
    path.write_text("x,y\n1,\ufffd\n2,b\n", encoding="utf-8")
    assert facts(read_input(spark, str(path), "csv", EDGE, "edge")) == {(1, "\ufffd"), (2, "b")}
    path.write_text("x,y\n1,\ufffd\n2,b\nthree,c\n", encoding="utf-8")  # and later rows still checked
    with pytest.raises(InputError, match="'three', which is not a long"):
        read_input(spark, str(path), "csv", EDGE, "edge")
