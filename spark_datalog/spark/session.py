"""A local SparkSession configured for small, iterative Datalog jobs."""

from __future__ import annotations

import logging
import os
import sys
import tempfile
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Iterator, Mapping, Optional

from .jars import DELTA_CATALOG, DELTA_EXTENSION, delta_settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

# Settings that suit many short iterative jobs on one machine: no UI or progress bars, few
# shuffle partitions (tiny deltas would otherwise pay for 200 empty tasks per shuffle), and
# checkpoint files removed when their frames are garbage collected.
LOCAL_DEFAULTS = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    "spark.cleaner.referenceTracking.cleanCheckpoints": "true",
    "spark.sql.adaptive.enabled": "true",
    # One kernel (Polars) thread per Python worker: Spark runs one task per core, and Polars
    # sizes its pool once, at import, from this variable (kernel/__init__.py). Measured on tc
    # over a 3-ary tree of depth 12 (9.2M facts, local[2], two tasks): the slowest task's
    # fixpoint took 1.2 s with one thread each against 1.7 s with Polars' default (all cores).
    "spark.executorEnv.POLARS_MAX_THREADS": "1",
    # delta-spark rebuilds a table's snapshot in 50 partitions (50 tasks per MERGE or write) by
    # default, for logs of a few files on one machine: the bundled example's native commit of 8
    # tables took 54 s with 50 and 23 s with 2. Only parallelism changes.
    "spark.databricks.delta.snapshotPartitions": "2",
}

# Settings every evaluation runs with (``engine_settings``), also the defaults of
# ``local_session``. Subexpression elimination is off: it walks the branches of conditional
# expressions again at every level of nesting, so the checked integer arithmetic of
# ``spark.compile`` (one ``coalesce`` per operation) cost it 2^depth — a 30-term sum took
# minutes to plan — while the projections of Datalog rules have no common subexpressions worth
# sharing.
ENGINE_SETTINGS = {"spark.sql.subexpressionElimination.enabled": "false"}
LOCAL_DEFAULTS.update(ENGINE_SETTINGS)


@contextmanager
def session_settings(spark: "SparkSession", settings: Mapping[str, str]) -> Iterator[None]:
    """Run the block with ``settings`` set on ``spark``'s runtime configuration, then restore
    the previous values.

    Example::

        with session_settings(spark, {"spark.sql.adaptive.enabled": "false"}):
            frame.count()
    """
    previous = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, before in previous.items():
            if before is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, before)


def engine_settings(spark: "SparkSession") -> "AbstractContextManager[None]":
    """The context every evaluation runs in: ``ENGINE_SETTINGS`` on ``spark``, restored after."""
    return session_settings(spark, ENGINE_SETTINGS)


# Warnings and errors only, without the harmless warnings of every local start (shipped with the
# package; conf/log4j2.properties links to it). It takes effect when this session starts the JVM.
QUIET_LOG4J = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")


def workers_use_this_python() -> None:
    """Make Spark start its Python workers with this interpreter (unless ``PYSPARK_PYTHON`` says
    otherwise): PySpark defaults to ``python3`` on PATH, which outside an activated virtual
    environment cannot import ``spark_datalog`` for the partition-local fixpoints
    (``eval.partitioned``). Takes effect for SparkContexts created afterwards."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def start_session(master: str, app_name: str, settings: Mapping[str, str]) -> "SparkSession":
    """``SparkSession.builder...getOrCreate()`` with ``settings``; if the JVM cannot start because
    the packages of ``spark.jars.packages`` cannot be resolved, start again without them (and
    without Delta's extension and catalog, which need them) and warn.

    Example::

        spark = start_session("local[2]", "app", {"spark.ui.enabled": "false"})
    """
    from pyspark.errors import PySparkRuntimeError
    from pyspark.sql import SparkSession

    def build(chosen: Mapping[str, str]) -> "SparkSession":
        builder = SparkSession.builder.master(master).appName(app_name)
        for key, value in chosen.items():
            builder = builder.config(key, value)
        return builder.getOrCreate()

    try:
        return build(settings)
    except PySparkRuntimeError as error:
        if "spark.jars.packages" not in settings or "JAVA_GATEWAY_EXITED" not in str(error):
            raise
    package = settings["spark.jars.packages"]
    log.warning(
        "could not start Spark with %s (not resolvable from Maven Central or the Ivy cache); "
        "starting without it: warehouses take the embedded delta-rs path",
        package,
    )
    without_delta = {k: v for k, v in settings.items() if k not in delta_settings_keys(settings)}
    return build(without_delta)


def delta_settings_keys(settings: Mapping[str, str]) -> set[str]:
    """The keys of ``settings`` that need the packages: the packages and Delta's extension/catalog."""
    return {"spark.jars.packages"} | {
        key for key, value in settings.items() if value in (DELTA_EXTENSION, DELTA_CATALOG)
    }


def local_session(
    app_name: str = "spark_datalog",
    shuffle_partitions: int = 2,
    master: str = "local[2]",
    checkpoint_dir: Optional[str] = None,
    log_level: str = "WARN",
    conf: Optional[dict] = None,
    delta: bool = True,
) -> "SparkSession":
    """Create (or reuse) a local SparkSession for running Datalog programs.

    ``checkpoint_dir`` defaults to a fresh temporary directory, so the driver can cut lineage
    with reliable checkpoints. Logging is quiet (``QUIET_LOG4J``, when this call starts the
    JVM). Extra Spark settings go in ``conf`` (``spark.driver.extraJavaOptions`` there replaces
    the quiet logging). With ``delta`` (the default) the session loads the delta-spark jar that
    fits this Spark (``jars.delta_settings``, resolved by Spark from Maven Central), so
    warehouses take the native Delta path; when the jar cannot be resolved (no network, no
    cached copy) the session starts without it, says so in a warning, and warehouses take the
    embedded delta-rs path.

    Example::

        spark = local_session("tc-example")
        result = program.materialize(spark, inputs={"arc": arcs})
    """
    workers_use_this_python()
    settings = dict(LOCAL_DEFAULTS)
    settings["spark.sql.shuffle.partitions"] = str(shuffle_partitions)
    settings["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile=file:{QUIET_LOG4J}"
    if delta:
        settings.update(delta_settings())
    settings.update(conf or {})
    spark = start_session(master, app_name, settings)
    spark.sparkContext.setLogLevel(log_level)
    spark.sparkContext.setCheckpointDir(checkpoint_dir or tempfile.mkdtemp(prefix="spark_datalog_ckpt_"))
    return spark
