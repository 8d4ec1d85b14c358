"""The SparkSession every Spark-based system of a benchmark run shares.

Built like the test suite's session (tests/conftest.py): local mode, UI and progress bars off,
few shuffle partitions, AQE on, a temporary checkpoint directory. One session serves the whole
run so that no system pays the JVM start-up, and :func:`warm_up` runs a few small jobs first so
that no system pays for class loading and code generation either.
"""

from __future__ import annotations

import tempfile

BENCH_CONF = {
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    "spark.sql.adaptive.enabled": "true",
    "spark.cleaner.referenceTracking.cleanCheckpoints": "true",
    "spark.driver.memory": "4g",
    "spark.executorEnv.POLARS_MAX_THREADS": "1",  # as local_session: one kernel thread per task
}


def bench_session(master: str = "local[2]", conf: dict | None = None):
    """Create (or reuse) the benchmark SparkSession with a fresh checkpoint directory."""
    from pyspark.sql import SparkSession

    from spark_datalog.spark.session import workers_use_this_python

    workers_use_this_python()
    builder = SparkSession.builder.master(master).appName("spark_datalog-bench")
    for key, value in {**BENCH_CONF, **(conf or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    spark.sparkContext.setCheckpointDir(tempfile.mkdtemp(prefix="spark_datalog_bench_ckpt_"))
    return spark


def session_settings(spark) -> dict:
    """The settings a result should record (master, partitions, AQE, driver memory)."""
    get = spark.conf.get
    return {
        "master": spark.sparkContext.master,
        "spark.sql.shuffle.partitions": get("spark.sql.shuffle.partitions"),
        "spark.sql.adaptive.enabled": get("spark.sql.adaptive.enabled"),
        "spark.driver.memory": spark.sparkContext.getConf().get("spark.driver.memory", "default"),
    }


_SPARK_TYPES = {"long": "bigint", "int": "int", "double": "double", "string": "string", "bool": "boolean"}


def input_frames(spark, task) -> dict:
    """The task's input relations as cached, materialised DataFrames with the program's column
    names and types (built before timing and shared by every Spark system of the case)."""
    frames = {}
    for name, rows in task.inputs.items():
        schema = ", ".join(f"`{col}` {_SPARK_TYPES[typ]}" for col, typ in task.schemas[name])
        frame = spark.createDataFrame(rows, schema).cache()
        frame.count()
        frames[name] = frame
    return frames


def release_frames(spark, frames: dict) -> None:
    """Drop the inputs and whatever a failed or stopped run left cached."""
    for frame in frames.values():
        frame.unpersist(blocking=False)
    spark.catalog.clearCache()
