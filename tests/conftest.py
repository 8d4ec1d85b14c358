"""Shared test fixtures.

One SparkSession serves the whole test session. It is started only when a test asks for the
``spark`` fixture, so tests of the parser, analysis and planner never start a JVM. Tests that use
the fixture are marked ``spark`` automatically (select or skip them with ``-m spark`` /
``-m "not spark"``).

Hypothesis profiles: ``ci`` (used when CI is set) and ``dev``; the number of examples per property
comes from ``SD_HYPOTHESIS_EXAMPLES`` (default 25), so a longer run is one variable away.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings

from spark_datalog.spark.jars import delta_settings

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
    # The suite's data is tiny, but one session runs ~1,900 tests: the driver keeps what the
    # context cleaner has not yet found unreferenced (plans, shuffles, broadcasts), which it
    # learns only at a JVM garbage collection. With 2g and the cleaner's default (a forced GC
    # every 30 min) the old generation filled around the suite's first third and the rest ran
    # several times slower (GC thrashing, measured with jstat): collect every minute. 3g was
    # enough for 2415 tests; with 2497 a clean-clone CI run (2026-12-02) ended one worker's
    # JVM in "Java heap space" while building a broadcast (a test timed out thrashing before),
    # where the same tests split otherwise had passed: 4g per worker (8g of the machine's 24).
    "spark.driver.memory": "4g",
    "spark.cleaner.periodicGC.interval": "1min",
}
# The delta-spark jar, resolved by Spark from Maven Central, as `local_session` does: the
# native warehouse path is tested, and the embedded path through `backend="embedded"`.
SPARK_TEST_CONF.update(delta_settings())
# As local_session: one kernel (Polars) thread per Python worker.
SPARK_TEST_CONF["spark.executorEnv.POLARS_MAX_THREADS"] = "1"
# delta-spark rebuilds a table's snapshot in 50 partitions by default (50 tasks per MERGE, read
# and write for a log of a few files): 2, as Delta's own test suites do. Measured on
# tests/storage/test_backends.py: 248 s -> 152 s. Only parallelism, not behaviour, changes.
# (tests/jobs/submit.py passes the same to the tests' spark-submit JVMs.)
SPARK_TEST_CONF["spark.databricks.delta.snapshotPartitions"] = "2"
# Warehouses that name no commit path take the embedded one here: delta-spark's MERGE costs
# seconds per table on this machine, too slow for the hundreds of updates of tests/incremental.
# tests/storage (test_backends.py, test_warehouse.py) runs every warehouse behaviour on both.
SPARK_TEST_CONF["spark.datalog.warehouse.backend"] = "embedded"
# Catalog databases (tests/storage/test_catalog.py) go to a temporary directory, not ./spark-warehouse.
SPARK_TEST_CONF["spark.sql.warehouse.dir"] = tempfile.mkdtemp(prefix="spark_datalog_test_catalog_")


@pytest.fixture(scope="session")
def spark():
    """A local[2] SparkSession shared by every test that needs Spark (one per pytest-xdist
    worker), stopped at session end."""
    from spark_datalog.spark.session import start_session, workers_use_this_python

    workers_use_this_python()
    checkpoint_dir = tempfile.mkdtemp(prefix="spark_datalog_test_ckpt_")
    # `make test` runs two pytest-xdist workers, each with its own session: one JVM starts at a
    # time, so that two do not resolve the delta-spark jar into a cold Ivy cache at once.
    with open(os.path.join(tempfile.gettempdir(), "spark_datalog_tests_session_start.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        session = start_session("local[2]", "spark_datalog-tests", SPARK_TEST_CONF)
    session.sparkContext.setLogLevel("ERROR")
    session.sparkContext.setCheckpointDir(checkpoint_dir)
    try:
        yield session
    finally:
        session.stop()
        shutil.rmtree(checkpoint_dir, ignore_errors=True)


@pytest.fixture
def datalog_settings(spark):
    """Sets ``spark.datalog.*`` settings of the shared session for one test, restored after:
    ``datalog_settings(maxLocalFacts=5)`` (how a test chooses an evaluation path);
    ``datalog_settings(driverMemory=None)`` unsets one (its default applies)."""
    previous: dict = {}

    def apply(**values) -> None:
        for key, value in values.items():
            name = f"spark.datalog.{key}"
            previous.setdefault(name, spark.conf.get(name, None))
            if value is None:
                spark.conf.unset(name)
            else:
                spark.conf.set(name, str(value))

    yield apply
    for name, value in previous.items():
        if value is None:
            spark.conf.unset(name)
        else:
            spark.conf.set(name, value)


def pytest_collection_modifyitems(config, items):
    """Marks the tests that use Spark; puts the ``slow`` ones (a minute or more each) first, so
    that pytest-xdist's workers do not end the run waiting on one that started last (longest
    first), the others in their order."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
