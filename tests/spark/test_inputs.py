"""Input checking: positional matching, types, nulls, program facts."""

from __future__ import annotations

import pytest
from pyspark.sql import types as T

from spark_datalog.analysis import analyse
from spark_datalog.errors import InputError, SchemaError
from spark_datalog.spark.inputs import check_no_nulls, input_types, prepare_inputs
from spark_datalog.syntax.parser import parse

pytestmark = pytest.mark.spark

PROGRAM = """
.decl arc(src: long, dst: long)
.decl name(id: long, label: string)
arc(9, 10).
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), arc(Y, Z).
named(L) :- tc(X, _), name(X, L).
"""


@pytest.fixture(scope="module")
def checked():
    return analyse(parse(PROGRAM))


def rows(frame):
    return sorted(tuple(r) for r in frame.collect())


def test_frames_are_renamed_and_program_facts_added(spark, checked):
    arcs = spark.createDataFrame([(1, 2)], "a long, b long")
    names = spark.createDataFrame([(1, "one")], "x long, y string")
    frames = prepare_inputs(spark, checked, {"arc": arcs, "name": names})
    assert set(frames) == {"arc", "name"}
    assert frames["arc"].columns == ["src", "dst"]
    assert rows(frames["arc"]) == [(1, 2), (9, 10)]
    assert frames["name"].columns == ["id", "label"]


def test_a_frame_already_in_the_relation_s_shape_is_taken_as_it_is(spark):
    """No projection over it, so a frame the caller cached is read from that cache; doubles
    are always projected (-0.0 becomes 0.0)."""
    checked = analyse(
        parse(".decl p(x: long, s: string)\n.decl q(x: long, d: double)\nr(X) :- p(X, _), q(X, _).")
    )
    p = spark.createDataFrame([(1, "a")], "x long, s string")
    q = spark.createDataFrame([(1, -0.0)], "x long, d double")
    frames = prepare_inputs(spark, checked, {"p": p, "q": q})
    assert frames["p"] is p
    assert frames["q"] is not q and rows(frames["q"]) == [(1, 0.0)]
    renamed = prepare_inputs(spark, checked, {"p": p.withColumnRenamed("s", "t"), "q": q})
    assert renamed["p"].columns == ["x", "s"]


def test_integral_widening_is_accepted_and_cast(spark, checked):
    arcs = spark.createDataFrame([(1, 2)], "a int, b short")
    names = spark.createDataFrame([(1, "one")], "x int, y string")
    frames = prepare_inputs(spark, checked, {"arc": arcs, "name": names})
    assert [f.dataType for f in frames["arc"].schema.fields] == [T.LongType(), T.LongType()]


def test_type_mismatch_names_relation_and_column(spark, checked):
    arcs = spark.createDataFrame([(1, "2")], "a long, b string")
    names = spark.createDataFrame([(1, "one")], "x long, y string")
    with pytest.raises(SchemaError) as error:
        prepare_inputs(spark, checked, {"arc": arcs, "name": names})
    message = str(error.value)
    assert "arc" in message and "dst" in message and "string" in message and "long" in message


def test_narrowing_is_refused(spark, checked):
    arcs = spark.createDataFrame([(1.5, 2.0)], "a double, b double")
    names = spark.createDataFrame([(1, "one")], "x long, y string")
    with pytest.raises(SchemaError, match="src"):
        prepare_inputs(spark, checked, {"arc": arcs, "name": names})


def test_arity_mismatch(spark, checked):
    arcs = spark.createDataFrame([(1, 2, 3)], "a long, b long, c long")
    names = spark.createDataFrame([(1, "one")], "x long, y string")
    with pytest.raises(SchemaError, match=r"arc has 3 columns"):
        prepare_inputs(spark, checked, {"arc": arcs, "name": names})


def test_nulls_are_refused_naming_relation_column_and_count(spark, checked):
    arcs = spark.createDataFrame([(1, None), (2, None), (None, 3), (4, 5)], "a long, b long")
    names = spark.createDataFrame([(1, None)], "x long, y string")
    with pytest.raises(InputError) as error:
        prepare_inputs(spark, checked, {"arc": arcs, "name": names})
    message = str(error.value)
    assert "arc.dst: 2 rows" in message
    assert "arc.src: 1 row" in message
    assert "name.label: 1 row" in message
    assert 'on_null="drop"' in message


def test_null_check_is_one_scan_of_all_inputs_without_counting(spark):
    frames = {
        "a": spark.createDataFrame([(1, 2)], "x long, y long"),
        "b": spark.createDataFrame([("u",)], "s string"),
        "c": spark.createDataFrame([(1.0, True)], "x double, y boolean"),
    }
    partitions = sum(frame.rdd.getNumPartitions() for frame in frames.values())
    tracker = spark.sparkContext.statusTracker()
    spark.sparkContext.setJobGroup("null-check", "null check")
    try:
        check_no_nulls(frames)
    finally:
        spark.sparkContext.setJobGroup("", "")
    # one action: Spark scans for the first null row in jobs over 1, then 4x more, partitions
    jobs, scanned = 1, 1
    while scanned < partitions:
        jobs, scanned = jobs + 1, scanned * 5
    assert 1 <= len(tracker.getJobIdsForGroup("null-check")) <= jobs


def test_on_null_drop_drops_such_rows(spark, checked):
    arcs = spark.createDataFrame([(1, None), (None, 3), (4, 5)], "a long, b long")
    names = spark.createDataFrame([(1, "one")], "x long, y string")
    frames = prepare_inputs(spark, checked, {"arc": arcs, "name": names}, on_null="drop")
    assert rows(frames["arc"]) == [(4, 5), (9, 10)]


def test_a_relation_with_facts_needs_no_input(spark, checked):
    names = spark.createDataFrame([(1, "one")], "x long, y string")
    frames = prepare_inputs(spark, checked, {"name": names})
    assert rows(frames["arc"]) == [(9, 10)]


def test_missing_inputs_are_listed(spark, checked):
    with pytest.raises(InputError, match="missing inputs: name"):
        prepare_inputs(spark, checked, {})


def test_inputs_for_unknown_or_derived_relations_are_refused(spark, checked):
    names = spark.createDataFrame([(1, "one")], "x long, y string")
    tc = spark.createDataFrame([(1, 2)], "a long, b long")
    with pytest.raises(InputError, match="unknown relations: nmae"):
        prepare_inputs(spark, checked, {"name": names, "nmae": names})
    with pytest.raises(InputError, match="derived"):
        prepare_inputs(spark, checked, {"name": names, "tc": tc})


def test_input_types_for_analysis(spark, checked):
    frame = spark.createDataFrame([(1, 2.5, "s", True, 3)], "a int, b double, c string, d boolean, e long")
    assert input_types(checked, {"arc": frame}) == {"arc": ("int", "double", "string", "bool", "long")}
    odd = spark.createDataFrame([], "a date")
    with pytest.raises(SchemaError, match="date"):
        input_types(checked, {"arc": odd})


def test_undeclared_relation_takes_input_types(spark):
    checked = analyse(parse("p(X) :- q(X, Y), Y > 1. .input q"), input_types={"q": ("long", "double")})
    frame = spark.createDataFrame([(1, 2.5)], "a long, b double")
    frames = prepare_inputs(spark, checked, {"q": frame})
    assert frames["q"].columns == list(checked.relations["q"].column_names)
    assert rows(frames["q"]) == [(1, 2.5)]
