"""Collecting a frame to the driver when it is small (``datafiles.collect_small``): the three
ways it learns the row count (Spark's statistics, a count, a ``limit``) give the same answer,
and a frame Spark knows to be too large is not read at all."""

from __future__ import annotations

import pytest

from spark_datalog.storage.datafiles import collect_small, plan_statistics

pytestmark = pytest.mark.spark


def _jobs(spark, action) -> int:
    """Spark jobs ``action()`` ran."""
    context = spark.sparkContext
    context.setJobGroup("collect-small", "collect_small")
    try:
        action()
    finally:
        context.setJobGroup("", "")
    return len(context.statusTracker().getJobIdsForGroup("collect-small"))


def _rows(table) -> set:
    return set(zip(*[table.column(i).to_pylist() for i in range(table.num_columns)], strict=True))


def test_a_cached_frame_knows_its_rows_once_computed_even_if_asked_before(spark):
    frame = spark.range(50).selectExpr("id as x", "id % 3 as y").cache()
    try:
        assert plan_statistics(frame)[0] is None  # not computed yet: Spark does not know
        frame.count()
        assert plan_statistics(frame)[0] == 50
        assert plan_statistics(frame.withColumnRenamed("x", "z"))[0] == 50  # through a rename
        assert plan_statistics(frame.where("x > 3"))[0] is None  # a filter's rows are unknown
    finally:
        frame.unpersist()


def test_a_frame_known_too_large_is_not_read(spark):
    frame = spark.range(50).cache()
    try:
        frame.count()
        assert _jobs(spark, lambda: collect_small(frame, 49)) == 0
        assert collect_small(frame, 49) is None
        table = collect_small(frame, 50)
        assert table is not None and _rows(table) == {(i,) for i in range(50)}
    finally:
        frame.unpersist()


@pytest.mark.parametrize("count_first_bytes", [0, 1 << 40], ids=["counted first", "limit"])
def test_counting_first_and_limiting_agree(spark, count_first_bytes):
    frame = spark.range(40).selectExpr("id % 10 as x", "id as y").where("y % 2 = 0")
    assert plan_statistics(frame)[0] is None and plan_statistics(frame)[1] > 0
    expected = {(y % 10, y) for y in range(0, 40, 2)}
    table = collect_small(frame, 20, count_first_bytes=count_first_bytes)
    assert table is not None and _rows(table) == expected
    assert collect_small(frame, 19, count_first_bytes=count_first_bytes) is None
    assert collect_small(frame, 0, count_first_bytes=count_first_bytes) is None
