"""Can Spark's executors run the engine's Python tasks? Asked once per session, before any.

The partition-local fixpoints (``eval.partitioned``) and DRed in one task
(``incremental.dred_local``) run ``spark_datalog`` inside Spark's Python workers. Where the
executors cannot import it, every task would fail, be retried and log its traceback: hundreds of
ERROR lines before the job gives up. On a cluster (any master but ``local[...]``) the engine
first runs one tiny job whose tasks try the import and report back instead of failing, and
raises an :class:`~spark_datalog.errors.ExecutorError` of one line saying how to ship the
package. On a ``local`` master the workers are processes of this machine: where they cannot
import it, ``eval.partitioned`` falls back to rounds of Spark joins with a warning.
"""

from __future__ import annotations

import logging
from typing import Optional

from ..errors import ExecutorError

log = logging.getLogger("spark_datalog")

_checked: dict = {}  # application id -> None (the executors import it) or the problem
MAX_PROBES = 32  # tasks of the probing job: on as many executors as Spark spreads them over

HOW_TO_SHIP = (
    "install spark-datalog on the executors, or ship it with the job: spark-submit --py-files "
    "spark_datalog.zip (or the wheel), or the setting spark.submit.pyFiles; or evaluate without "
    "Python tasks: --no-decompose (decompose=False)"
)


def is_local(master: str) -> bool:
    """Whether ``master`` runs the executors in this process (``local``, ``local[4]``).

    Example::

        >>> is_local("local[2]"), is_local("yarn"), is_local("local-cluster[2,1,1024]")
        (True, False, False)
    """
    return master == "local" or master.startswith("local[")


def require_executor_package(spark) -> None:
    """Raise ``ExecutorError`` when the executors of ``spark``'s cluster cannot import the
    engine; nothing on a local master. Asked by one job, once per Spark application."""
    context = spark.sparkContext
    if is_local(context.master):
        return
    key = context.applicationId
    if key not in _checked:
        with _labelled(spark):
            _checked[key] = problem(probe(context))
    if _checked[key] is not None:
        raise ExecutorError(_checked[key])


def probe(context) -> list:
    """``(imported, version or error, host, python)`` from each task of one small job."""
    tasks = max(1, min(context.defaultParallelism, MAX_PROBES))
    return context.parallelize(range(tasks), tasks).mapPartitions(_probe_function()).collect()


def problem(answers: list, version: Optional[str] = None) -> Optional[str]:
    """The one-line message for the probe's ``answers``, or None when every task imported the
    package (a version other than the driver's ``version`` is only logged)."""
    if version is None:
        from .. import __version__ as version
    failed = [answer for answer in answers if not answer[0]]
    if failed:
        _, error, host, python = failed[0]
        return (
            f"Spark's Python workers cannot import spark_datalog ({error}; executor {host}, {python}), "
            f"which the partition-local evaluation runs there: {HOW_TO_SHIP}"
        )
    others = sorted({answer[1] for answer in answers} - {version})
    if others:
        log.warning("the executors run spark_datalog %s, the driver %s", ", ".join(others), version)
    return None


def _probe_function():
    """A function that Spark ships by value (nested, so cloudpickle does not refer to this
    module, which the executor may lack): it imports what the tasks need and says how it went."""

    def try_import(_rows):
        import socket
        import sys

        try:
            import spark_datalog
            import spark_datalog.kernel.partition  # noqa: F401 - with pyarrow and polars, as the tasks do

            yield (True, spark_datalog.__version__, socket.gethostname(), sys.executable)
        except Exception as error:  # noqa: BLE001 - reported, not raised: no task fails
            yield (False, f"{type(error).__name__}: {error}", socket.gethostname(), sys.executable)

    return try_import


def _labelled(spark):
    from .labels import group_id, labelled

    return labelled(spark, "check that the executors can import spark_datalog", group_id("executors"))
