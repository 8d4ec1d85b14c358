"""One measurement = one fresh subprocess: load the cached Arrow inputs, build the system with
its thread count, run once to warm up, then ``repeats`` timed runs; the best time is reported.
Peak RSS is the child's ``VmHWM`` (its own high-water mark, imports and inputs included), read
just before it exits: on Linux ``ru_maxrss`` is not usable here, because exec carries the
parent's high-water mark into the child's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from types import SimpleNamespace

import psutil

from .inputs import BY_NAME, cached
from .loops import PROGRAMS, evaluate

ANCHOR = "duckdb-sql"
CANDIDATES = ("polars-lazy", "polars-eager", "duckdb", "acero")
LIBRARY = {"polars-lazy": "polars", "polars-eager": "polars", "duckdb": "duckdb", "acero": "arrow"}


def _kernel(system: str, threads: int):
    if system.startswith("polars"):
        from .kernel_polars import PolarsKernel

        return PolarsKernel(threads, lazy=system == "polars-lazy")
    if system == "duckdb":
        from .kernel_duckdb import DuckDBKernel

        return DuckDBKernel(threads)
    from .kernel_acero import AceroKernel

    return AceroKernel(threads)


def _anchor(problem: str, inputs: dict, threads: int):
    """DuckDB's WITH RECURSIVE (the fixed benchmark queries of ``anchors.duckdb_sql``), on tables
    created from the inputs before the clock starts."""
    import duckdb

    from ..anchors import duckdb_sql

    con = duckdb.connect(config={"threads": threads})
    for name, table in inputs.items():
        con.register("_input", table)
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM _input")
        con.unregister("_input")
    task = SimpleNamespace(problem=problem)
    return lambda: (duckdb_sql.run(con, task).facts, None)


def _runner(system: str, workload: str, threads: int):
    inputs = cached(workload)
    program = PROGRAMS[BY_NAME[workload].program]
    if system == ANCHOR:
        return _anchor(program.problem, inputs, threads)
    kernel = _kernel(system, threads)

    def run() -> tuple:
        table, rounds = evaluate(kernel, program, inputs)
        return table.num_rows, rounds

    return run


def child(spec: dict) -> dict:
    """Runs in the subprocess: warm-up, then the timed runs."""
    run = _runner(spec["system"], spec["workload"], spec["threads"])
    loaded_mb = psutil.Process().memory_info().rss / 2**20
    facts, rounds = run()
    times = []
    for _ in range(spec["repeats"]):
        start = time.perf_counter()
        got = run()
        times.append(time.perf_counter() - start)
        if got != (facts, rounds):
            raise RuntimeError(f"runs disagree: {got} after {(facts, rounds)}")
    return dict(spec, facts=facts, rounds=rounds, times=times, loaded_mb=loaded_mb, peak_rss_mb=_vmhwm_mb())


def _vmhwm_mb() -> float:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def measure(spec: dict, timeout: float) -> dict:
    """Run ``child(spec)`` in a fresh interpreter; the result, or ``error`` on failure/timeout."""
    env = dict(os.environ, POLARS_MAX_THREADS=str(spec["threads"]))
    cmd = [sys.executable, "-m", "benchmarks.kernel_spike", "--child", json.dumps(spec)]
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return dict(spec, error=f"timeout after {timeout:.0f} s", wall=timeout)
    wall = time.perf_counter() - start
    lines = proc.stdout.splitlines()
    if proc.returncode != 0 or not lines:
        return dict(spec, error=(proc.stderr.strip().splitlines() or ["?"])[-1], wall=wall)
    result = json.loads(lines[-1])
    return dict(result, wall=wall, best=min(result["times"]))
