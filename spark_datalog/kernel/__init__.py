"""The local columnar kernel: the IR evaluated on Polars lazy frames (issue 21).

A backend of ``plan.ir`` like ``spark.compile``: :mod:`.compile` has one function per IR node
and produces ``polars.LazyFrame``s; :mod:`.relation` and :mod:`.fixpoint` run a stratum's plans
to their fixpoint with one semi-naive loop (stable / recent / to-add, the datafrog shape).
Values follow ``reference.terms``. Data enters and leaves as Arrow tables (:mod:`.frames`).

Threads: Polars sizes its thread pool once, from ``POLARS_MAX_THREADS``, when it is first
imported; a process cannot change it later. ``local_session()`` sets it for Spark's Python
workers (``spark.executorEnv.POLARS_MAX_THREADS=1``: one task per core); the kernel itself
never sets it. ``threads()`` says what the running process got.

:mod:`.partition` is the engine's partition-local fixpoint (a Spark task); :mod:`.dred` is DRed
of one stratum (in one task, or in the driver for a linear stratum: over-deletion, group repair
of min/max relations, or derivation levels removing the facts, ``incremental.levels``);
:mod:`.counted` weighs rule plans with derivation counts (the counting algorithm in the driver).
"""

from __future__ import annotations

import polars as pl


def threads() -> int:
    """The size of Polars' thread pool in this process (``POLARS_MAX_THREADS`` at import).

    >>> threads() >= 1
    True
    """
    return pl.thread_pool_size()
