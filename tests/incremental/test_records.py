"""Record columns (Soufflé's records) in the warehouse: materialized into Delta struct columns
and read back; an update of such relations is refused (not supported yet)."""

from __future__ import annotations

import pytest

import spark_datalog as sd
from dialect_programs import ADTS, RECORDS
from spark_datalog.errors import SchemaError
from spark_datalog.spark.types import schema
from spark_datalog.storage.warehouse import Warehouse

pytestmark = pytest.mark.spark


def _frame(spark, program, rows, counts=None):
    relation = program.relations["seg"]
    if counts is None:
        return spark.createDataFrame(sorted(rows), schema(relation.column_names, relation.types))
    struct = schema([*relation.column_names, "_count"], [*relation.types, "long"])
    return spark.createDataFrame([(*row, count) for row, count in zip(rows, counts, strict=True)], struct)


def _stored(wh, name) -> set:
    return {tuple(row) for row in wh.read(name).collect()}


def test_records_in_the_warehouse(spark, tmp_path):
    program = sd.Program.parse(RECORDS.text)
    segments = set(RECORDS.edb["seg"])
    wh = Warehouse(spark, str(tmp_path / "wh"))
    result = program.materialize(spark, inputs={"seg": _frame(spark, program, segments)}, warehouse=wh)
    assert result["reach"].schema["a"].dataType.simpleString() == "struct<x:bigint,y:bigint>"
    assert {tuple(row) for row in result["far"].collect()} == RECORDS.expected["far"]
    for name, rows in RECORDS.expected.items():
        assert _stored(wh, name) == rows, name
    changes = _frame(spark, program, [(((2, 0), (5, 5)),)], [1])
    with pytest.raises(
        SchemaError, match="incremental updates of relations with records are not supported yet"
    ):
        program.update(spark, warehouse=wh, changes={"seg": changes})


def test_adts_in_the_warehouse(spark, tmp_path):
    """An ADT column is a record column: a Delta struct of its tag and branches, equal values
    one representation, so stored relations are the expected sets; update is refused alike."""
    program = sd.Program.parse(ADTS.text)
    relation = program.relations["raw"]
    raw = spark.createDataFrame(sorted(ADTS.edb["raw"]), schema(relation.column_names, relation.types))
    wh = Warehouse(spark, str(tmp_path / "wh"))
    program.materialize(spark, inputs={"raw": raw}, warehouse=wh)
    for name, rows in ADTS.expected.items():
        assert _stored(wh, name) == rows, name
    assert (
        Warehouse(spark, str(tmp_path / "wh"))
        .read("same")
        .schema["s"]
        .dataType.simpleString()
        .startswith("struct<$Shape|Circle|Empty|Label|Rect:bigint,")
    )
    changes = spark.createDataFrame(
        [("rect", 1, 1, 1)], schema([*relation.column_names, "_count"], [*relation.types, "long"])
    )
    with pytest.raises(
        SchemaError, match="incremental updates of relations with records are not supported yet"
    ):
        program.update(spark, warehouse=wh, changes={"raw": changes})
