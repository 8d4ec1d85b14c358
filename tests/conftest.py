"""Shared test fixtures.

One SparkSession serves the whole test session. It is started only when a test asks for the
``spark`` fixture, so tests of the parser, analysis and planner never start a JVM. Tests that use
the fixture are marked ``spark`` automatically (select or skip them with ``-m spark`` /
``-m "not spark"``).

Hypothesis profiles: ``ci`` (used when CI is set) and ``dev``; the number of examples per property
comes from ``SD_HYPOTHESIS_EXAMPLES`` (default 25), so a longer run is one variable away.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings

_EXAMPLES = int(os.environ.get("SD_HYPOTHESIS_EXAMPLES", "25"))
settings.register_profile(
    "ci",
    max_examples=_EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile(
    "dev", max_examples=_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("SD_HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

SPARK_TEST_CONF = {
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    "spark.sql.adaptive.enabled": "true",
    "spark.cleaner.referenceTracking.cleanCheckpoints": "true",
    # Keep the driver small: the suite's data is tiny and CI shares the machine.
    "spark.driver.memory": "2g",
}


@pytest.fixture(scope="session")
def spark():
    """A local[2] SparkSession shared by every test that needs Spark, stopped at session end."""
    from pyspark.sql import SparkSession

    from spark_datalog.spark.session import workers_use_this_python

    workers_use_this_python()
    checkpoint_dir = tempfile.mkdtemp(prefix="spark_datalog_test_ckpt_")
    builder = SparkSession.builder.master("local[2]").appName("spark_datalog-tests")
    for key, value in SPARK_TEST_CONF.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    session.sparkContext.setCheckpointDir(checkpoint_dir)
    try:
        yield session
    finally:
        session.stop()
        shutil.rmtree(checkpoint_dir, ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
