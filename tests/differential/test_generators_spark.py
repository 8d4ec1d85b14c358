"""range and frange on Spark on random arguments (a few examples: each is Spark jobs): the
reference's rows, with extreme bounds, empty, descending and zero-step ranges."""

from __future__ import annotations

from hypothesis import given

from generator_cases import FLOAT_PROGRAM, INTEGER_PROGRAM, float_rows, integer_rows
from programs import settings

from .test_spark_vs_reference import assert_same


@settings(default=2)
@given(rows=integer_rows())
def test_integer_ranges_on_spark_equal_the_reference(spark, rows):
    a, b = rows
    assert_same(spark, INTEGER_PROGRAM, {"a": a, "b": b})


@settings(default=2)
@given(rows=float_rows())
def test_float_ranges_on_spark_equal_the_reference(spark, rows):
    assert_same(spark, FLOAT_PROGRAM, {"a": rows})


def test_query_through_range_on_spark(spark):
    import spark_datalog as sd
    from generator_cases import QUERY_ANSWER, QUERY_EDB, QUERY_PROGRAM

    from .test_spark_vs_reference import input_frames

    program = sd.Program.parse(QUERY_PROGRAM)
    rows = program.query(spark, "reach(1, X)", inputs=input_frames(spark, program, QUERY_EDB), magic=True)
    assert {tuple(r) for r in rows.collect()} == QUERY_ANSWER
