"""spark_datalog.settings: the limits a session's spark.datalog.* settings give, and bad values."""

from __future__ import annotations

import pytest

import spark_datalog as sd
from spark_datalog.settings import (
    DRIVER_ROW_BYTES,
    KERNEL_VALUE_BYTES,
    Settings,
    byte_size,
    settings_of,
)

COSTLIER_VALUE_BYTES = 4 * KERNEL_VALUE_BYTES  # an evaluator spending more per value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("100", 100),
        ("1k", 1024),
        ("512m", 512 * 2**20),
        ("2g", 2 * 2**30),
        ("3GB", 3 * 2**30),
        (" 1t ", 2**40),
    ],
)
def test_sizes_are_read_as_spark_writes_them(text, expected):
    assert byte_size(text) == expected


@pytest.mark.parametrize("text", ["", "two", "1.5g", "-1g", "1x"])
def test_a_bad_size_is_a_settings_error_naming_the_setting(text):
    with pytest.raises(sd.SettingsError, match="spark.datalog.taskMemory"):
        byte_size(text, "spark.datalog.taskMemory")


def test_facts_a_task_holds_follow_its_memory_and_the_facts_width():
    settings = Settings(task_memory=2**30, max_local_facts=None, max_broadcast_rows=10)
    two, four = settings.local_facts(2, KERNEL_VALUE_BYTES), settings.local_facts(4, KERNEL_VALUE_BYTES)
    assert two == 2**30 // (2 * KERNEL_VALUE_BYTES) and four == two // 2
    assert settings.local_facts(2, COSTLIER_VALUE_BYTES) < two  # costlier values, fewer facts
    assert settings.local_facts(0, KERNEL_VALUE_BYTES) == 2**30 // KERNEL_VALUE_BYTES
    explicit = Settings(task_memory=2**30, max_local_facts=7, max_broadcast_rows=10)
    assert explicit.local_facts(2, KERNEL_VALUE_BYTES) == 7


def test_broadcast_rows_follow_the_task_memory_unless_set():
    derived = Settings(task_memory=2**31, max_local_facts=None, max_broadcast_rows=None)
    assert derived.broadcast_rows(KERNEL_VALUE_BYTES) == 2**31 // (8 * KERNEL_VALUE_BYTES)
    assert derived.broadcast_rows(COSTLIER_VALUE_BYTES) < derived.broadcast_rows(KERNEL_VALUE_BYTES)
    explicit = Settings(task_memory=2**31, max_local_facts=None, max_broadcast_rows=12)
    assert explicit.broadcast_rows(KERNEL_VALUE_BYTES) == explicit.broadcast_rows(COSTLIER_VALUE_BYTES) == 12


def test_the_driver_holds_what_a_task_does_unless_set():
    derived = Settings(task_memory=2**31, max_local_facts=3, max_broadcast_rows=4)
    assert derived.driver_budget() == 2**31
    # the task's estimates, not its explicit counts (those limit tasks only)
    assert derived.driver_read_rows(KERNEL_VALUE_BYTES) == 2**31 // (8 * KERNEL_VALUE_BYTES) == 5_592_405
    assert derived.driver_facts(2, KERNEL_VALUE_BYTES) == 2**31 // (2 * KERNEL_VALUE_BYTES)
    assert derived.driver_facts(4, KERNEL_VALUE_BYTES) == derived.driver_facts(2, KERNEL_VALUE_BYTES) // 2
    explicit = Settings(task_memory=2**31, max_local_facts=None, max_broadcast_rows=None, driver_memory=2**20)
    assert explicit.driver_read_rows(KERNEL_VALUE_BYTES) == 2**20 // (8 * KERNEL_VALUE_BYTES)
    assert explicit.driver_facts(2, KERNEL_VALUE_BYTES) == 2**20 // (2 * KERNEL_VALUE_BYTES)
    assert explicit.broadcast_rows(KERNEL_VALUE_BYTES) == derived.driver_read_rows(KERNEL_VALUE_BYTES)
    tiny = Settings(task_memory=2**31, max_local_facts=None, max_broadcast_rows=None, driver_memory=1)
    assert (tiny.driver_read_rows(KERNEL_VALUE_BYTES), tiny.driver_facts(2, KERNEL_VALUE_BYTES)) == (1, 1)
    none = Settings(task_memory=2**31, max_local_facts=None, max_broadcast_rows=None, driver_memory=0)
    assert none.driver_budget() == 0
    assert (none.driver_read_rows(KERNEL_VALUE_BYTES), none.driver_facts(2, KERNEL_VALUE_BYTES)) == (0, 0)


def test_driver_memory_is_read_and_defaults_to_the_task_memory(spark, datalog_settings):
    datalog_settings(driverMemory=None, taskMemory=None)
    found = settings_of(spark)
    assert found.driver_memory == found.task_memory
    datalog_settings(taskMemory="64m")
    assert settings_of(spark).driver_memory == 64 * 2**20
    datalog_settings(driverMemory="512m")
    found = settings_of(spark)
    assert (found.task_memory, found.driver_memory) == (64 * 2**20, 512 * 2**20)
    datalog_settings(driverMemory=0)
    assert settings_of(spark).driver_budget() == 0
    datalog_settings(driverMemory=4096)
    assert settings_of(spark).driver_memory == 4096


@pytest.mark.parametrize("value", ["lots", "-1g", "1.5g", "2 gigabytes"])
def test_a_bad_driver_memory_is_a_settings_error_naming_it(spark, datalog_settings, value):
    datalog_settings(driverMemory=value)
    with pytest.raises(sd.SettingsError, match=r"spark\.datalog\.driverMemory: .* is not a size"):
        settings_of(spark)


def test_the_session_settings_are_read(spark, datalog_settings):
    datalog_settings(taskMemory="64m", maxBroadcastRows=12)
    found = settings_of(spark)
    assert (found.task_memory, found.max_local_facts, found.max_broadcast_rows) == (64 * 2**20, None, 12)
    datalog_settings(maxLocalFacts=9)
    assert settings_of(spark).max_local_facts == 9


def test_the_maintenance_limits_are_read_and_the_merge_limit_follows_driver_memory(spark, datalog_settings):
    found = settings_of(spark)
    assert found.driver_merge_rows == found.driver_budget() // DRIVER_ROW_BYTES > 0
    datalog_settings(driverMemory="64m")
    assert settings_of(spark).driver_merge_rows == 64 * 2**20 // DRIVER_ROW_BYTES
    assert (found.driver_rows, found.over_deletion_share, found.flood_min) == (50_000, 0.4, 10_000)
    assert found.rows_per_file == 131_072
    datalog_settings(
        rowsPerFile=6,
        driverRows=7,
        driverMergeRows=8,
        lookupBroadcastRows=9,
        overDeletionMin=10,
        overDeletionShare=0.5,
        floodMin=11,
    )
    found = settings_of(spark)
    assert (found.driver_rows, found.driver_merge_rows, found.lookup_broadcast_rows) == (7, 8, 9)
    assert (found.over_deletion_min, found.over_deletion_share, found.flood_min) == (10, 0.5, 11)
    assert found.rows_per_file == 6


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("maxLocalFacts", "many"),
        ("maxBroadcastRows", "-3"),
        ("taskMemory", "lots"),
        ("driverMemory", "lots"),
        ("driverRows", "1e3"),
        ("rowsPerFile", "0"),
        ("overDeletionShare", "1.5"),
    ],
)
def test_a_bad_setting_stops_the_run_with_a_settings_error(spark, datalog_settings, key, value):
    datalog_settings(**{key: value})
    program = sd.Program.parse(
        ".decl e(a: long, b: long)\n.input e\ntc(X, Y) :- e(X, Y).\ntc(X, Z) :- tc(X, Y), e(Y, Z)."
    )
    edges = spark.createDataFrame([(1, 2), (2, 3)], "a long, b long")
    with pytest.raises(sd.SettingsError, match=f"spark.datalog.{key}"):
        program.materialize(spark, inputs={"e": edges})
