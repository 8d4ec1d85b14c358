"""Time limits for one case.

Spark systems run in the benchmark's shared SparkSession, in a thread whose Spark jobs carry a
job tag; when the limit passes, every job with that tag is cancelled (repeatedly, since a loop
submits new jobs) until the thread gives up with an error. Python systems (DuckDB, networkx, the
reference interpreter) run in a separate worker process, which is killed and replaced when the
limit passes; that also keeps their memory apart from the Spark driver's.
"""

from __future__ import annotations

import multiprocessing
import re
import statistics
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable, Optional

GRACE_SECONDS = 60.0


class CaseTimeout(Exception):
    """A case ran past its time limit. ``stopped`` is False when a Spark thread could not be
    stopped within the grace period (it may still be using the machine)."""

    def __init__(self, limit: float, stopped: bool = True):
        super().__init__(
            f"ran past its time limit of {limit:.0f} s" + ("" if stopped else " and could not be stopped")
        )
        self.limit = limit
        self.stopped = stopped


@dataclass
class Run:
    """One timed run: seconds, and either the outcome's numbers or the error that ended it."""

    seconds: float
    facts: Optional[int] = None
    iterations: Optional[int] = None
    error_class: Optional[str] = None
    error: Optional[str] = None
    memory: dict = field(default_factory=dict)
    rows: Optional[set] = None


@dataclass(frozen=True)
class Repeats:
    """Median discipline: a run shorter than ``short_seconds`` is repeated up to ``count`` runs."""

    count: int = 3
    short_seconds: float = 10.0

    def more(self, runs: list) -> bool:
        last = runs[-1]
        return last.error_class is None and len(runs) < self.count and last.seconds < self.short_seconds


def median_seconds(runs: list) -> float:
    return statistics.median(r.seconds for r in runs)


def timed(call: Callable, memory_probe, collect: bool) -> Run:
    """Run ``call()`` (returning an anchors.Outcome) under a memory probe and a clock; fetch the
    facts after the clock stopped when ``collect``; record an exception as the run's error."""
    started = time.perf_counter()
    try:
        with memory_probe() as probe:
            outcome = call()
            seconds = time.perf_counter() - started
    except BaseException as error:  # noqa: BLE001 - every failure is a result
        if isinstance(error, KeyboardInterrupt):
            raise
        return Run(
            seconds=time.perf_counter() - started, error_class=error_class(error), error=_describe(error)
        )
    try:
        rows = outcome.fetch() if collect and outcome.fetch else None
    finally:
        outcome.release()
    return Run(
        seconds=seconds, facts=outcome.facts, iterations=outcome.iterations, memory=probe.result(), rows=rows
    )


def error_class(error: BaseException) -> str:
    """The error's class; for a Java error coming through py4j, the Java exception's class and
    Spark's error condition (``SparkException [RECURSION_ROW_LIMIT_EXCEEDED]``)."""
    name = type(error).__name__
    text = str(error)
    if name == "Py4JJavaError":
        java = re.search(r"((?:[a-z]\w*\.)+(\w*(?:Exception|Error)))", text)
        name = java.group(2) if java else name
    condition = re.search(r"\[([A-Z][A-Z0-9_]+(?:\.[A-Z0-9_]+)*)\]", text)
    return f"{name} [{condition.group(1)}]" if condition else name


def _describe(error: BaseException, limit: int = 600) -> str:
    text = re.sub(r"An error occurred while calling o\d+\.\w+\.\s*:\s*", "", str(error)).strip()
    lines = text.splitlines()
    first = " ".join(line.strip() for line in lines[:3]) if lines else repr(error)
    return first[:limit]


# -- Spark: a cancellable thread -----------------------------------------------------------------


def call_spark_with_limit(spark, call: Callable, limit: float):
    """Run ``call()`` in a thread whose Spark jobs are cancelled after ``limit`` seconds
    (then raise CaseTimeout). Exceptions of ``call`` are re-raised in the caller."""
    from pyspark import InheritableThread

    sc = spark.sparkContext
    tag = f"bench-{uuid.uuid4().hex[:12]}"
    box: dict = {}

    def target():
        sc.addJobTag(tag)
        sc.setInterruptOnCancel(True)
        try:
            box["value"] = call()
        except BaseException as error:  # noqa: BLE001 - handed to the caller
            box["error"] = error
        finally:
            sc.removeJobTag(tag)

    thread = InheritableThread(target=target, daemon=True)
    thread.start()
    thread.join(limit)
    if thread.is_alive():
        deadline = time.monotonic() + GRACE_SECONDS
        while thread.is_alive() and time.monotonic() < deadline:
            sc.cancelJobsWithTag(tag)
            thread.join(0.5)
        raise CaseTimeout(limit, stopped=not thread.is_alive())
    if "error" in box:
        raise box["error"]
    return box["value"]


# -- Python systems: a worker process ------------------------------------------------------------


def _serve(conn) -> None:
    """Worker loop: receive (module name, task, repeats), load once, run and send each Run."""
    import importlib

    from .memory import PeakMemory

    while True:
        message = conn.recv()
        if message is None:
            return
        module_name, task, repeats = message
        try:
            module = importlib.import_module(module_name)
            loaded = module.load(task)
        except BaseException as error:  # noqa: BLE001
            conn.send(
                (
                    "error",
                    Run(
                        seconds=0.0,
                        error_class=error_class(error),
                        error=_describe(error) + " (while loading)",
                    ),
                )
            )
            continue
        runs: list = []
        while True:
            run = timed(
                lambda m=module, d=loaded, t=task: m.run(d, t), PeakMemory, collect=task.collect and not runs
            )
            runs.append(run)
            conn.send(("run", run))
            if not repeats.more(runs):
                break
        del loaded
        conn.send(("done", None))


class PythonWorker:
    """A spawned process that runs Python systems; replaced when a case runs past its limit."""

    def __init__(self):
        self._context = multiprocessing.get_context("spawn")
        self._start()

    def _start(self) -> None:
        self._conn, child = self._context.Pipe()
        self._process = self._context.Process(
            target=_serve, args=(child,), daemon=True, name="bench-python-worker"
        )
        self._process.start()
        child.close()

    def measure(self, module_name: str, task, repeats: Repeats, limit: float) -> list:
        """Runs of ``module_name`` on ``task``; each run may take up to ``limit`` seconds (loading
        the inputs too). A run past the limit ends the list with a timeout Run."""
        self._conn.send((module_name, task, repeats))
        runs: list = []
        while True:
            waited = time.perf_counter()
            if not self._conn.poll(limit):
                self._restart()
                runs.append(
                    Run(
                        seconds=time.perf_counter() - waited,
                        error_class="CaseTimeout",
                        error=str(CaseTimeout(limit)),
                    )
                )
                return runs
            kind, run = self._conn.recv()
            if kind == "done":
                return runs
            runs.append(run)
            if kind == "error":
                return runs

    def _restart(self) -> None:
        self._process.kill()
        self._process.join()
        self._conn.close()
        self._start()

    def close(self) -> None:
        try:
            self._conn.send(None)
            self._process.join(5)
        except (OSError, EOFError):
            pass
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
