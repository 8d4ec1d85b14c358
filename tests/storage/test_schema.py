"""Type names, reserved column and Delta/Arrow spellings (no Spark)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from spark_datalog.analysis.checked import Column
from spark_datalog.errors import SchemaError
from spark_datalog.storage.schema import (
    COUNT_COLUMN,
    arrow_schema,
    check_same_columns,
    columns_from_delta,
    delta_schema,
    normalise_columns,
)

ALL = (("a", "int"), ("b", "long"), ("c", "double"), ("d", "string"), ("e", "bool"))


def test_normalise_accepts_pairs_and_analysis_columns():
    assert normalise_columns([("x", "long"), ["y", "string"]], "r") == (("x", "long"), ("y", "string"))
    assert normalise_columns([Column("x", "int")], "r") == (("x", "int"),)


@pytest.mark.parametrize(
    "columns, message",
    [
        ([("x", "integer")], "unknown type 'integer'"),
        ([("x", "long"), ("x", "long")], "column x appears twice"),
        ([(COUNT_COLUMN, "long")], "reserved"),
    ],
)
def test_normalise_rejects(columns, message):
    with pytest.raises(SchemaError, match=message) as info:
        normalise_columns(columns, "tc")
    assert "relation tc" in str(info.value)


def test_a_relation_without_columns_is_stored_by_its_count():
    assert normalise_columns([], "m") == ()
    assert arrow_schema(()).names == [COUNT_COLUMN]


def test_arrow_widths_are_exact_and_nullable():
    schema = arrow_schema(ALL)
    assert [f.type for f in schema] == [
        pa.int32(),
        pa.int64(),
        pa.float64(),
        pa.string(),
        pa.bool_(),
        pa.int64(),
    ]
    assert schema.names[-1] == COUNT_COLUMN
    assert all(f.nullable for f in schema)


def test_delta_schema_round_trip():
    delta = delta_schema(ALL)
    assert [f.type.type for f in delta.fields] == ["integer", "long", "double", "string", "boolean", "long"]
    assert columns_from_delta(delta, "r") == (ALL, True)


def test_delta_table_without_count_is_not_ours():
    delta = delta_schema((("x", "long"),), with_counts=False)
    with pytest.raises(SchemaError, match="no _count column"):
        columns_from_delta(delta, "r")
    assert columns_from_delta(delta, "r", allow_missing_count=True) == ((("x", "long"),), False)


def test_unsupported_delta_type_is_named():
    from deltalake import Schema

    delta = Schema.from_arrow(pa.schema([("when", pa.timestamp("us", tz="UTC")), (COUNT_COLUMN, pa.int64())]))
    with pytest.raises(SchemaError, match="column when has Delta type timestamp"):
        columns_from_delta(delta, "r")


def test_check_same_columns_names_both_sides():
    with pytest.raises(SchemaError) as info:
        check_same_columns(
            "tc", (("x", "long"), ("y", "long")), (("x", "long"), ("y", "string")), "the frame"
        )
    text = str(info.value)
    assert "relation tc" in text and "y: string" in text and "y: long" in text
