"""A change set may not delete a fact the program text states (issue 19, item 15): program facts
are part of the program, not of its inputs."""

from __future__ import annotations

import pytest

import spark_datalog as sd
from spark_datalog.errors import InputError
from spark_datalog.storage import Warehouse

PROGRAM = """\
.decl arc(x: long, y: long)
.input arc
arc(1, 2).
arc(7, 8).
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), arc(Y, Z).
"""


def changes(spark, rows):
    return spark.createDataFrame(rows, "x long, y long, _count long")


@pytest.fixture
def warehouse(spark, tmp_path):
    program = sd.Program.parse(PROGRAM, filename="tc.dl")
    wh = Warehouse(spark, str(tmp_path / "wh"))
    program.materialize(
        spark, inputs={"arc": spark.createDataFrame([(2, 3)], "x long, y long")}, warehouse=wh
    )
    return program, wh


def test_deleting_a_program_fact_is_refused_at_the_fact(spark, warehouse):
    program, wh = warehouse
    before = {n: wh.version(n) for n in wh.relations()}
    for method in ("auto", "recompute"):
        with pytest.raises(InputError) as info:
            program.update(
                spark, wh, changes={"arc": changes(spark, [(2, 3, -1), (7, 8, -1)])}, method=method
            )
        err = info.value
        assert "arc(7, 8)" in err.message and "stated in the program" in err.message
        assert (err.filename, err.line, err.column) == ("tc.dl", 4, 1) and "^" in str(err)
    assert {n: wh.version(n) for n in wh.relations()} == before  # nothing applied
    assert len(wh.runs()) == 1


def test_other_changes_of_a_relation_with_program_facts_are_applied(spark, warehouse):
    program, wh = warehouse
    # inserting a program fact again and deleting it again nets to nothing: allowed
    program.update(spark, wh, changes={"arc": changes(spark, [(2, 3, -1), (3, 4, 1), (1, 2, 1), (1, 2, -1)])})
    tc = {tuple(r) for r in wh.read("tc").collect()}
    assert tc == sd.reference.evaluate(program, {"arc": {(3, 4)}})["tc"]
