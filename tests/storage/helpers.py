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
