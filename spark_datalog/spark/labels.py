"""Labels on the Spark jobs the engine starts: a job group and a description.

Every place that starts Spark jobs (input checks, stratum evaluation, commits, updates,
queries, the job's summary) runs them inside :func:`labelled`, so Spark's UI, its status
tracker and listeners tell what each job is for (``stratum 2 · tc · iteration 7``,
``commit · tc``) and ``SparkContext.cancelJobGroup`` can stop one part of the work.

A job group the caller set (one not starting with ``spark_datalog``: a notebook's, a
scheduler's, used to cancel its work) is kept; only the description changes. Both are
restored when the block ends. They are thread-local properties of the SparkContext.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Optional

PREFIX = "spark_datalog"
GROUP = "spark.jobGroup.id"
DESCRIPTION = "spark.job.description"


def group_id(*parts: object) -> str:
    """The engine's job group for a part of the work.

    Example::

        >>> group_id("stratum", 2)
        'spark_datalog:stratum:2'
    """
    return ":".join([PREFIX, *(str(part) for part in parts)])


@contextmanager
def labelled(spark, description: str, group: Optional[str] = None) -> Iterator[None]:
    """Run the block's Spark jobs with ``description`` and job group ``group`` (unless the
    caller set a group of its own), then restore both.

    Example::

        with labelled(spark, "commit · tc", group_id("commit")):
            frame.write.parquet(path)
    """
    context = spark.sparkContext
    before_group = context.getLocalProperty(GROUP)
    before_description = context.getLocalProperty(DESCRIPTION)
    if group is not None and (not before_group or before_group.startswith(PREFIX)):
        context.setLocalProperty(GROUP, group)
    context.setLocalProperty(DESCRIPTION, description)
    try:
        yield
    finally:
        context.setLocalProperty(GROUP, before_group)  # type: ignore[arg-type]  # None removes it
        context.setLocalProperty(DESCRIPTION, before_description)  # type: ignore[arg-type]


def describe(spark, description: str) -> None:
    """Set the description of the next jobs, inside a :func:`labelled` block that restores it
    (a stratum's rounds: ``stratum 0 · tc · iteration 3``)."""
    spark.sparkContext.setLocalProperty(DESCRIPTION, description)
