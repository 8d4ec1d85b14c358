"""spark-submit flags shared by the tests that start the job in a fresh JVM."""

# Command-line settings win over a properties file: keep a test's JVM small and port-free, with
# the test session's few partitions (tests/conftest.py): 2 shuffle partitions, and delta-spark's
# snapshots in 2 partitions instead of 50 (the bundled example's native commit: 54 s -> 23 s).
SMALL_LOCAL_SPARK = [
    "--master",
    "local[1]",
    "--driver-memory",
    "1g",
    "--conf",
    "spark.ui.enabled=false",
    "--conf",
    "spark.sql.shuffle.partitions=2",
    "--conf",
    "spark.default.parallelism=2",
    "--conf",
    "spark.databricks.delta.snapshotPartitions=2",
]
