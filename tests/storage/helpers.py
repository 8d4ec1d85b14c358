"""Small builders shared by the storage tests."""

from __future__ import annotations

ARC = (("x", "long"), ("y", "string"))
FP = "fingerprint-of-program-one"
FP2 = "fingerprint-of-program-two"


def frame(spark, rows, columns=ARC, counts=True, slices=None):
    """A DataFrame of ``rows`` with the relation's columns (and ``_count`` when ``counts``).

    ``slices`` spreads the rows over that many partitions (so over that many written files).
    """
    from spark_datalog.storage.schema import spark_schema

    schema = spark_schema(columns, with_counts=counts)
    if slices:
        return spark.createDataFrame(spark.sparkContext.parallelize(rows, slices), schema)
    return spark.createDataFrame(rows, schema)


def counts(df):
    """``{fact: count}`` of a frame with ``_count``."""
    return {tuple(r[:-1]): r[-1] for r in df.collect()}


def facts(df):
    return {tuple(r) for r in df.collect()}


# The two commit paths every warehouse behaviour is tested on (see tests/storage/test_backends.py).
BACKENDS = ["embedded", "native"]


def warehouse_on(spark, root, backend: str, **options):
    """A warehouse at ``root`` on ``backend``. The native path needs the delta-spark jar, which
    the test session loads (``spark.jars``): where it could not be resolved the test is skipped,
    except under CI, where the native path must be tested."""
    import os

    import pytest

    from spark_datalog.storage import Warehouse, delta_jar_available

    if backend == "native" and not delta_jar_available(spark):
        message = "the delta-spark jar is not on the classpath (not resolvable from Maven Central here)"
        if os.environ.get("CI"):
            pytest.fail(message + ": CI must test the native path")
        pytest.skip(message)
    return Warehouse(spark, str(root), backend=backend, **options)
