"""Choosing the commit path, and the native delta-spark path when its jar is loadable."""

from __future__ import annotations

import pytest

from spark_datalog.errors import WarehouseError
from spark_datalog.storage import Warehouse, choose_backend, delta_jar_available
from spark_datalog.storage.detect import DELTA_TABLE_CLASS, delta_python_available

from .helpers import ARC, FP, counts, facts, frame, warehouse_on


class _ConnectLike:
    """A session without ``_jvm``, like Spark Connect."""


def test_detection_uses_class_loadability(spark):
    loadable = spark._jvm.org.apache.spark.util.Utils.classIsLoadable(DELTA_TABLE_CLASS)
    assert delta_jar_available(spark) is bool(loadable)
    assert delta_jar_available(_ConnectLike()) is False
    # A py4j attribute lookup "finds" even a class that does not exist: not a valid probe.
    assert spark._jvm.io.delta.tables.NoSuchClass is not None
    assert not spark._jvm.org.apache.spark.util.Utils.classIsLoadable("io.delta.tables.NoSuchClass")


def test_backend_choice(spark):
    assert choose_backend(spark, "embedded") == "embedded"
    assert choose_backend(_ConnectLike(), "auto") == "embedded"
    expected = "native" if delta_jar_available(spark) and delta_python_available() else "embedded"
    assert choose_backend(spark, "auto") == expected
    with pytest.raises(WarehouseError, match="unknown warehouse backend"):
        choose_backend(spark, "hive")


def test_native_without_the_jar_is_refused(spark, tmp_path):
    if delta_jar_available(spark):
        pytest.skip("the delta-spark jar is on the classpath")
    with pytest.raises(WarehouseError, match="needs the delta-spark jar"):
        Warehouse(spark, str(tmp_path), backend="native")


@pytest.fixture
def native(spark, tmp_path):
    return warehouse_on(spark, tmp_path / "wh", "native")


def test_native_round_trip_changes_and_idempotence(spark, native):
    with native.run(FP, run_id="r1") as run:
        native.replace("arc", ARC, frame(spark, [(1, "a", 1), (2, "b", 1)]), run)
    with native.run(FP, run_id="r2", mode="incremental") as run:
        result = native.apply_changes("arc", ARC, frame(spark, [(1, "a", -1), (3, "c", 2)]), run)
        assert result.committed
    with native.run(FP, run_id="r2", mode="incremental") as run:
        assert run.already_committed
    assert facts(native.read("arc")) == {(2, "b"), (3, "c")}
    assert counts(native.read("arc", with_counts=True)) == {(2, "b"): 1, (3, "c"): 2}
    assert [h["run_id"] for h in native.history("arc")] == ["r2", "r1"]
    assert native.version("arc") == 1
