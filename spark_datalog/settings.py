"""The engine's limits, read from the session's ``spark.datalog.*`` settings.

How much a Spark task (or the driver) may hold is a memory budget, not a row count: the number
of facts a task may hold is ``spark.datalog.taskMemory`` divided by what one fact costs in the
evaluator that holds it (:data:`KERNEL_VALUE_BYTES` per value in the Polars kernel,
:data:`TUPLE_VALUE_BYTES` in the tuple evaluator still used by driver-side maintenance).

===================================  ==========================================================
setting                              meaning (default)
===================================  ==========================================================
``spark.datalog.taskMemory``         bytes one task may spend on a stratum's facts (the
                                     session's ``spark.executor.pyspark.memory`` when set,
                                     else ``2g``); Spark's size suffixes (``k``, ``m``, ``g``)
``spark.datalog.maxLocalFacts``      facts a task may hold, overriding the estimate from
                                     ``taskMemory`` (unset)
``spark.datalog.maxBroadcastRows``   rows a relation read by a partition-local fixpoint may
                                     have to be broadcast to every task (1,000,000)
``spark.datalog.bspMinRows``         rows the relations read by a recursive stratum without a
                                     decomposition key must exceed together for it to run in
                                     BSP rounds across all partitions (``eval.bsp``) rather than
                                     in one task (unset: never; 0: whenever BSP applies). Unset
                                     by default: on 2 cores at 1M edges BSP rounds measured
                                     slower than one task and than rounds of Spark joins
===================================  ==========================================================
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

DEFAULT_TASK_MEMORY = "2g"
DEFAULT_BROADCAST_ROWS = 1_000_000
# Peak bytes per value of a fact while a fixpoint runs. Kernel: 74-90 bytes per two-column fact
# measured on tc over 3-ary trees (2.8M and 9.2M facts: stable frames, the round's candidates
# and the anti-join's hash table), rounded up. Tuples: 170 bytes per two-column fact were measured
# for a set and a list of them; the maintenance paths hold more copies, and 200 per value keeps
# the 5M two-column facts at 2g that they were tested with.
KERNEL_VALUE_BYTES = 48
TUPLE_VALUE_BYTES = 200

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
    max_broadcast_rows: int
    bsp_min_rows: Optional[int] = None

    def local_facts(self, width: int, value_bytes: int) -> int:
        """Facts of ``width`` values a task may hold in an evaluator spending ``value_bytes``
        per value."""
        if self.max_local_facts is not None:
            return self.max_local_facts
        return max(1, self.task_memory // (value_bytes * max(width, 1)))


def settings_of(spark) -> Settings:
    """The session's :class:`Settings`."""
    get = spark.conf.get
    python_memory = spark.sparkContext.getConf().get("spark.executor.pyspark.memory", DEFAULT_TASK_MEMORY)
    facts = get(LOCAL_FACTS_SETTING, None)
    bsp = get(BSP_ROWS_SETTING, None)
    return Settings(
        task_memory=byte_size(get(TASK_MEMORY_SETTING, python_memory), TASK_MEMORY_SETTING),
        max_local_facts=_count(facts, LOCAL_FACTS_SETTING) if facts else None,
        max_broadcast_rows=_count(
            get(BROADCAST_ROWS_SETTING, str(DEFAULT_BROADCAST_ROWS)), BROADCAST_ROWS_SETTING
        ),
        bsp_min_rows=_count(bsp, BSP_ROWS_SETTING) if bsp else None,
    )


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
