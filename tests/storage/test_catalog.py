"""A warehouse whose relations are tables of a Spark catalog database (native path)."""

from __future__ import annotations

import pytest

import spark_datalog as sd
from spark_datalog.errors import WarehouseError
from spark_datalog.reference import evaluate as reference
from spark_datalog.storage import Warehouse

from .helpers import warehouse_on

pytestmark = pytest.mark.spark

TC = """
.decl arc(x: long, y: long)
.decl tc(x: long, y: long)
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), arc(Y, Z).
"""


def _catalog_facts(spark, name):
    return {(r.x, r.y) for r in spark.table(name).where("_count > 0").collect()}


def test_relations_are_tables_of_the_database(spark, tmp_path):
    wh = warehouse_on(spark, tmp_path / "wh", "native", database="reasoning_test")
    program = sd.Program.parse(TC)
    arcs = {(1, 2), (2, 3)}
    program.materialize(
        spark, inputs={"arc": spark.createDataFrame(sorted(arcs), "x long, y long")}, warehouse=wh
    )
    assert {t.name for t in spark.catalog.listTables("reasoning_test")} == {"arc", "tc"}
    assert _catalog_facts(spark, "reasoning_test.tc") == reference(program.checked, {"arc": arcs})["tc"]

    change = spark.createDataFrame([(3, 4, 1), (1, 2, -1)], "x long, y long, _count long")
    program.update(spark, warehouse=wh, changes={"arc": change})
    arcs = {(2, 3), (3, 4)}
    assert _catalog_facts(spark, "reasoning_test.tc") == reference(program.checked, {"arc": arcs})["tc"]
    counted = spark.sql("SELECT count(*) AS n FROM reasoning_test.tc WHERE _count > 0").first().n
    assert counted == len(reference(program.checked, {"arc": arcs})["tc"])


def test_catalog_tables_need_the_native_path(spark, tmp_path):
    with pytest.raises(WarehouseError, match="need the native Delta path"):
        Warehouse(spark, str(tmp_path / "wh"), backend="embedded", database="reasoning_test")


@pytest.mark.parametrize("name", ["x; DROP", "1abc", "a.b", ""])
def test_a_database_name_must_be_an_identifier(spark, tmp_path, name):
    with pytest.raises(WarehouseError, match="not a plain identifier"):
        Warehouse(spark, database=name)


def test_a_warehouse_needs_a_location_or_a_database(spark):
    with pytest.raises(WarehouseError, match="needs a location"):
        Warehouse(spark)


@pytest.mark.parametrize("backend", ["native", "embedded"])
def test_a_component_instances_relations_are_stored_and_registered(spark, tmp_path, backend):
    database = "reasoning_test" if backend == "native" else None
    wh = warehouse_on(spark, tmp_path / "wh", backend, **({"database": database} if database else {}))
    program = sd.Program.parse(".comp C { .decl r(x: long) r(1). } .init a = C\n.output a.r")
    result = program.materialize(spark, warehouse=wh)
    assert {tuple(row) for row in result["a.r"].collect()} == {(1,)}
    assert {tuple(row) for row in wh.read("a.r").collect()} == {(1,)}
    if database:
        assert "a__r" in {t.name for t in spark.catalog.listTables(database)}
        assert spark.table(f"{database}.a__r").where("_count > 0").count() == 1
