"""The engine's limits, read from the session's ``spark.datalog.*`` settings.

How much a Spark task (or the driver) may hold is a memory budget, not a row count: the number
of facts a task may hold is ``spark.datalog.taskMemory`` divided by what one fact costs in the
evaluator that holds it (:data:`KERNEL_VALUE_BYTES` per value in the Polars kernel); what the
driver may hold while it maintains a stratum is ``spark.datalog.driverMemory`` divided the same
way.

===================================  ==========================================================
setting                              meaning (default)
===================================  ==========================================================
``spark.datalog.taskMemory``         bytes one task may spend on a stratum's facts, and in
                                     one task on the relations Spark sends it (at
                                     :data:`INPUT_VALUE_BYTES` per value) (the session's
                                     ``spark.executor.pyspark.memory`` when set, else ``2g``);
                                     Spark's size suffixes (``k``, ``m``, ``g``)
``spark.datalog.maxLocalFacts``      facts a task may hold, overriding the estimate from
                                     ``taskMemory`` (unset)
``spark.datalog.maxBroadcastRows``   rows a relation read by a partition-local fixpoint may
                                     have to be broadcast to every task (a larger one is sent
                                     through Spark to a stratum in one task; a stratum with a
                                     key runs in rounds); by default what a quarter of
                                     ``taskMemory`` holds at the kernel's bytes per value over
                                     two columns (5,592,405 at ``2g``)
``spark.datalog.driverMemory``       bytes maintenance in the driver may spend (a linear DRed
                                     in the driver, counting in the driver, a small change
                                     assessed there, derivation levels computed there): the
                                     stratum's facts may take all of it at the kernel's bytes
                                     per value, each relation it reads whole a quarter (over
                                     two columns: 5,592,405 rows at ``2g``). ``0``: nothing is
                                     maintained in the driver (DRed runs in one task or in
                                     rounds, counting in Spark plans). By default
                                     ``taskMemory``: the driver holds what one task may
                                     (``maxLocalFacts`` and ``maxBroadcastRows`` are limits of
                                     tasks only); Spark's size suffixes
``spark.datalog.driverRows``         rows of a change (or a small frame to write) that are
                                     collected and handled in the driver, without a Spark job
                                     of their own (50,000)
``spark.datalog.driverMergeRows``    rows of stored files the driver merges a change into at a
                                     time (pyarrow); a change collected from Spark is merged
                                     there only when the files it touches hold at most this
                                     many rows (else by Spark). By default ``driverMemory`` /
                                     512 bytes (4,194,304 at ``2g``)
``spark.datalog.rowsPerFile``        rows of each data file the embedded warehouse writes (131,072):
                                     a change rewrites the files holding facts it touches, so
                                     smaller files make small changes cheaper and a table's
                                     log longer (a ``Warehouse(rows_per_file=...)`` overrides it)
``spark.datalog.lookupBroadcastRows`` rows of a change that Spark broadcasts to the scan of the
                                     files it touches (200,000)
``spark.datalog.overDeletionMin``    with ``method="auto"``, a linear DRed over-deleting more
                                     than this many facts plus ``overDeletionShare`` of the
                                     stratum is abandoned for a recomputation (200,000)
``spark.datalog.overDeletionShare``  see ``overDeletionMin`` (0.4)
``spark.datalog.floodMin``           over-deleted facts (at least half re-derived) beyond which
                                     a stratum stops keeping derivation levels (10,000)
``spark.datalog.bspMinRows``         rows the relations read by a recursive stratum without a
                                     decomposition key must exceed together for it to run in
                                     BSP rounds across all partitions (``eval.bsp``) rather than
                                     in one task (unset: never; 0: whenever BSP applies). Unset
                                     by default: on 2 cores at 1M edges BSP rounds measured
                                     slower than one task and than rounds of Spark joins
===================================  ==========================================================

The defaults of ``driverRows`` to ``floodMin`` were measured on a 2-core machine (``benchmarks/``); they are
settings so that a larger driver or cluster can move them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from .errors import SettingsError

TASK_MEMORY_SETTING = "spark.datalog.taskMemory"
LOCAL_FACTS_SETTING = "spark.datalog.maxLocalFacts"
BROADCAST_ROWS_SETTING = "spark.datalog.maxBroadcastRows"
BSP_ROWS_SETTING = "spark.datalog.bspMinRows"
DRIVER_MEMORY_SETTING = "spark.datalog.driverMemory"

DRIVER_ROWS_SETTING = "spark.datalog.driverRows"
DRIVER_MERGE_ROWS_SETTING = "spark.datalog.driverMergeRows"
LOOKUP_BROADCAST_ROWS_SETTING = "spark.datalog.lookupBroadcastRows"
ROWS_PER_FILE_SETTING = "spark.datalog.rowsPerFile"
OVER_DELETION_MIN_SETTING = "spark.datalog.overDeletionMin"
OVER_DELETION_SHARE_SETTING = "spark.datalog.overDeletionShare"
FLOOD_MIN_SETTING = "spark.datalog.floodMin"

DEFAULT_TASK_MEMORY = "2g"
# Bytes of driver memory per stored row a driver merge may read: reading, netting, merging
# and writing files of two long columns with pyarrow peaked near 200 bytes per row; 512 leaves
# room for wider rows and the rest of the driver.
DRIVER_ROW_BYTES = 512
# Peak bytes per value of a fact while a fixpoint runs. Kernel: 74-90 bytes per two-column fact
# measured on tc over 3-ary trees (2.8M and 9.2M facts: stable frames, the round's candidates
# and the anti-join's hash table), rounded up.
KERNEL_VALUE_BYTES = 48
# Peak bytes per value of a relation Spark sends into the partition of a stratum in one task:
# the Arrow batches as they arrive, the relation's block of them, and the set Polars makes of
# it (cc over R-MAT 4M edges: 8.4M rows of two longs took the task from 125 MB to 1.34 GB).
INPUT_VALUE_BYTES = 80

_UNITS = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40, "p": 2**50}
_SIZE = re.compile(r"^\s*(\d+)\s*([kmgtp]?)b?\s*$", re.I)


@dataclass(frozen=True)
class Settings:
    """The limits of one session (see the module docstring for each setting).

    >>> Settings(2**30, None, 10).local_facts(2, KERNEL_VALUE_BYTES)
    11184810
    >>> Settings(2**30, 5, 10).local_facts(2, KERNEL_VALUE_BYTES)
    5
    """

    task_memory: int
    max_local_facts: Optional[int]
    max_broadcast_rows: Optional[int]
    driver_rows: int = 50_000
    driver_merge_rows: int = 2**31 // DRIVER_ROW_BYTES
    lookup_broadcast_rows: int = 200_000
    rows_per_file: int = 1 << 17
    over_deletion_min: int = 200_000
    over_deletion_share: float = 0.4
    flood_min: int = 10_000
    bsp_min_rows: Optional[int] = None
    driver_memory: Optional[int] = None  # None: the task memory

    def broadcast_rows(self, value_bytes: int) -> int:
        """Rows of a relation broadcast to every task by an evaluator spending ``value_bytes``
        per value: ``maxBroadcastRows`` when set, else what a quarter of the task memory holds
        in two columns.

        >>> Settings(2**31, None, None).broadcast_rows(KERNEL_VALUE_BYTES)
        5592405
        """
        if self.max_broadcast_rows is not None:
            return self.max_broadcast_rows
        return _quarter_rows(self.task_memory, value_bytes)

    def local_facts(self, width: int, value_bytes: int) -> int:
        """Facts of ``width`` values a task may hold in an evaluator spending ``value_bytes``
        per value."""
        if self.max_local_facts is not None:
            return self.max_local_facts
        return _facts(self.task_memory, width, value_bytes)

    def driver_budget(self) -> int:
        """Bytes maintenance in the driver may spend (``driverMemory``; by default the task
        memory); 0: nothing is maintained in the driver.

        >>> Settings(2**31, None, None).driver_budget()
        2147483648
        >>> Settings(2**31, None, None, driver_memory=0).driver_budget()
        0
        """
        return self.task_memory if self.driver_memory is None else self.driver_memory

    def driver_read_rows(self, value_bytes: int) -> int:
        """Rows of a relation maintenance in the driver reads whole (a relation the stratum
        reads, or the stored state a change is assessed against), at ``value_bytes`` per
        value: what a quarter of the driver's budget holds in two columns (0 at 0).

        >>> Settings(2**31, None, 7).driver_read_rows(KERNEL_VALUE_BYTES)
        5592405
        """
        return _quarter_rows(self.driver_budget(), value_bytes)

    def driver_facts(self, width: int, value_bytes: int) -> int:
        """Facts of ``width`` values of the stratum maintenance in the driver may hold, at
        ``value_bytes`` per value (0 when the driver's budget is 0)."""
        return _facts(self.driver_budget(), width, value_bytes)


def _quarter_rows(memory: int, value_bytes: int) -> int:
    """Two-column rows a quarter of ``memory`` holds (at least 1; 0 when ``memory`` is 0)."""
    return max(1, memory // (4 * 2 * value_bytes)) if memory else 0


def _facts(memory: int, width: int, value_bytes: int) -> int:
    """Facts of ``width`` values ``memory`` holds (at least 1; 0 when ``memory`` is 0)."""
    return max(1, memory // (value_bytes * max(width, 1))) if memory else 0


def settings_of(spark) -> Settings:
    """The session's :class:`Settings`."""
    get = spark.conf.get
    # the session's conf holds the SparkConf's entries too (reading one there is one Py4J
    # call, against ~8 ms for a copy of the SparkConf)
    python_memory = get("spark.executor.pyspark.memory", DEFAULT_TASK_MEMORY)
    facts = get(LOCAL_FACTS_SETTING, None)
    defaults = Settings(0, None, 0)

    def count(setting: str, default: int) -> int:
        return _count(get(setting, str(default)), setting)

    bsp = get(BSP_ROWS_SETTING, None)
    broadcast = get(BROADCAST_ROWS_SETTING, None)
    task_memory = byte_size(get(TASK_MEMORY_SETTING, python_memory), TASK_MEMORY_SETTING)
    driver = get(DRIVER_MEMORY_SETTING, None)
    driver_memory = byte_size(driver, DRIVER_MEMORY_SETTING) if driver else task_memory
    return Settings(
        task_memory=task_memory,
        max_local_facts=_count(facts, LOCAL_FACTS_SETTING) if facts else None,
        max_broadcast_rows=_count(broadcast, BROADCAST_ROWS_SETTING) if broadcast else None,
        driver_rows=count(DRIVER_ROWS_SETTING, defaults.driver_rows),
        driver_merge_rows=count(DRIVER_MERGE_ROWS_SETTING, driver_memory // DRIVER_ROW_BYTES),
        lookup_broadcast_rows=count(LOOKUP_BROADCAST_ROWS_SETTING, defaults.lookup_broadcast_rows),
        rows_per_file=_positive(count(ROWS_PER_FILE_SETTING, defaults.rows_per_file), ROWS_PER_FILE_SETTING),
        over_deletion_min=count(OVER_DELETION_MIN_SETTING, defaults.over_deletion_min),
        over_deletion_share=_share(
            get(OVER_DELETION_SHARE_SETTING, str(defaults.over_deletion_share)), OVER_DELETION_SHARE_SETTING
        ),
        flood_min=count(FLOOD_MIN_SETTING, defaults.flood_min),
        bsp_min_rows=_count(bsp, BSP_ROWS_SETTING) if bsp else None,
        driver_memory=driver_memory,
    )


def _share(text: str, setting: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise SettingsError(f"{setting}: {text!r} is not a share (a number from 0 to 1)")
    return value


def _positive(value: int, setting: str) -> int:
    if value < 1:
        raise SettingsError(f"{setting}: {value} is not a positive count (1 or more)")
    return value


def _count(text: str, setting: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise SettingsError(f"{setting}: {text!r} is not a count (a whole number, 0 or more)")
    return value


def byte_size(text: str, setting: str = "size") -> int:
    """Bytes of a size written as Spark writes them (``512m``, ``2g``, ``1048576``).

    >>> byte_size("2g"), byte_size("512k"), byte_size("100")
    (2147483648, 524288, 100)
    """
    found = _SIZE.match(str(text))
    if found is None:
        raise SettingsError(f"{setting}: {text!r} is not a size (a number with k, m, g or t)")
    return int(found.group(1)) * _UNITS[found.group(2).lower()]
