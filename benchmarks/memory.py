"""Peak resident memory of the processes doing the work, sampled while a case runs.

What is measurable here: the resident set size (RSS) of the Python process that runs the case
and, for Spark systems, of the local-mode JVM (the driver, which in local mode also runs the
executors), plus the JVM's peak heap use during the case from its memory-pool MXBeans (reset at
the start of the case; the sum of the per-pool peaks, so an upper bound of the heap in use at any
one moment). JVM RSS is a high-water mark of what the JVM took from the OS, not of live objects:
the heap grows and is rarely returned, so later cases inherit what earlier ones grew; the heap
peak is the per-case number. Sampling RSS every 50 ms can miss a shorter peak.

The engine's partition-local fixpoints (the Polars kernel) run in Spark's Python worker
processes, children of the JVM; for Spark systems the sum of their RSS at each sample is
recorded too, and its peak over the case (``spark_workers_rss_peak_mb``). The workers are forks
of one daemon, so pages they still share are counted once per worker: an upper bound.
"""

from __future__ import annotations

import os
import threading
from typing import Optional

import psutil

MB = 1024 * 1024


def jvm_process() -> Optional[psutil.Process]:
    """The local Spark JVM, a child of this Python process (None when Spark is not started)."""
    for child in psutil.Process(os.getpid()).children(recursive=True):
        try:
            if "java" in child.name().lower():
                return child
        except psutil.Error:
            continue
    return None


class PeakMemory:
    """Context manager sampling the RSS of this process (and of ``jvm`` if given) in a thread.

    After the block, ``result()`` gives ``{"python_rss_peak_mb", "python_rss_start_mb",
    "jvm_rss_peak_mb", "jvm_rss_start_mb", "jvm_heap_peak_mb"}`` (JVM keys only when a JVM was
    watched, the heap only when ``spark`` was given)."""

    def __init__(self, jvm: Optional[psutil.Process] = None, spark=None, interval: float = 0.05):
        self._processes = {"python": psutil.Process(os.getpid())}
        self._heap_pools = _heap_pools(spark) if spark is not None else []
        if jvm is not None:
            self._processes["jvm"] = jvm
        self._interval = interval
        self._start: dict = {}
        self._peak: dict = {}
        self._heap_peak: Optional[int] = None
        self._jvm = jvm
        self._workers_peak: Optional[int] = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample_forever, daemon=True)

    def _sample(self) -> None:
        for name, process in self._processes.items():
            try:
                rss = process.memory_info().rss
            except psutil.Error:
                continue
            self._start.setdefault(name, rss)
            self._peak[name] = max(self._peak.get(name, 0), rss)
        if self._jvm is not None:
            total = 0
            try:
                workers = self._jvm.children(recursive=True)
            except psutil.Error:
                workers = []
            for worker in workers:
                try:
                    total += worker.memory_info().rss
                except psutil.Error:
                    continue
            self._workers_peak = max(self._workers_peak or 0, total)

    def _sample_forever(self) -> None:
        while not self._stop.wait(self._interval):
            self._sample()

    def __enter__(self) -> "PeakMemory":
        for pool in self._heap_pools:
            pool.resetPeakUsage()
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
        if self._heap_pools:
            self._heap_peak = sum(pool.getPeakUsage().getUsed() for pool in self._heap_pools)

    def result(self) -> dict:
        out = {}
        for name in self._processes:
            if name in self._peak:
                out[f"{name}_rss_peak_mb"] = round(self._peak[name] / MB, 1)
                out[f"{name}_rss_start_mb"] = round(self._start[name] / MB, 1)
        if self._heap_peak is not None:
            out["jvm_heap_peak_mb"] = round(self._heap_peak / MB, 1)
        if self._workers_peak is not None:
            out["spark_workers_rss_peak_mb"] = round(self._workers_peak / MB, 1)
        return out


def _heap_pools(spark) -> list:
    """The JVM's heap memory pools (G1 Eden, Survivor, Old Gen), reached through py4j."""
    try:
        factory = spark.sparkContext._jvm.java.lang.management.ManagementFactory
        return [pool for pool in factory.getMemoryPoolMXBeans() if pool.getType().toString() == "Heap memory"]
    except Exception:  # noqa: BLE001 - Spark Connect or a JVM without MXBeans: RSS only
        return []
