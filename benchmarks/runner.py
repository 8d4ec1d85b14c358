"""Run a suite: every benchmark, every size in increasing order, every system, with time limits,
the median discipline, extrapolation-based skips and the cross-system correctness check.

Timing discipline: one SparkSession for the whole run, warmed up first by running every Spark
system, in turn, on a chain of ``WARM_UP_CHAIN`` edges, ``WARM_UP_ROUNDS`` times (the JVM's JIT
needs about a minute of work: with a tiny warm-up, the first long case measured 2x slower than
the same case run again, whichever system ran it first); inputs are generated, loaded and cached
before the clock starts
(for every system alike); the clock covers the evaluation up to the one action that forces the
result (a count); a run shorter than ``Repeats.short_seconds`` is repeated and the median is
reported. Errors are results (error class, message, time to failure). A size is skipped -- and
reported as skipped, with the reason -- when the system's time at smaller sizes extrapolates past
the case's time limit, when the system already failed or timed out at a smaller size, or when
the suite's overall budget is used up.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from typing import Optional

from . import cases, checks
from .anchors import Task
from .guard import CaseTimeout, PythonWorker, Repeats, Run, call_spark_with_limit, median_seconds, timed
from .session import bench_session, input_frames, release_frames
from .systems import SYSTEMS


@dataclass(frozen=True)
class Settings:
    suite: str
    case_budget: float  # seconds: per-run time limit and extrapolation threshold
    engine_budget: float  # the same for engine-seminaive (issue 3: chain 1000 must finish)
    suite_budget: float  # seconds of wall-clock for all cases; later ones are skipped
    repeats: Repeats
    # Systems never skipped on a prediction, only stopped by their time limit: the system under
    # test is always tried (issue 3: "the chain of 1,000 finishes" must be run, not predicted).
    always_run: tuple = ("engine-seminaive",)


# The warm-up: every Spark system on a chain of this many edges, this many times in turn (about
# a minute in all on 2 cores).
WARM_UP_CHAIN = 30
WARM_UP_ROUNDS = 2

SUITES = {
    # Under 15 minutes on 2 cores: 780 s of cases plus start-up, warm-up, input generation, report.
    "quick": Settings(
        "quick",
        case_budget=150.0,
        engine_budget=480.0,
        suite_budget=780.0,
        repeats=Repeats(count=3, short_seconds=5.0),
    ),
    # Tiny sizes of every benchmark with every system: checks the whole pipeline in minutes.
    "smoke": Settings(
        "smoke", case_budget=120.0, engine_budget=120.0, suite_budget=math.inf, repeats=Repeats(count=1)
    ),
    # Issue 21, item 5: the engine at millions of facts. Only engine-seminaive among the engine's
    # strategies; generous but bounded limits (run one benchmark and size at a time with
    # --only/--size on a shared machine: each command stays under about 15 minutes).
    # case_budget 420 s, engine_budget 600 s, no suite budget, runs under 10 s repeated (3 in all).
    "scale": Settings("scale", 420.0, 600.0, math.inf, Repeats(count=3, short_seconds=10.0)),
    "full": Settings(
        "full",
        case_budget=1800.0,
        engine_budget=3600.0,
        suite_budget=math.inf,
        repeats=Repeats(count=3, short_seconds=30.0),
    ),
}


def extrapolate(history: list, x: float) -> Optional[tuple]:
    """Predict the seconds at size ``x`` from (size, seconds) points measured at smaller sizes:
    a power law through the last point, with the exponent fitted to the last two points
    (clamped to 1..3) or 1 (linear) when there is only one. Returns (seconds, explanation)."""
    points = [(px, s) for px, s in history if px < x and s > 0]
    if not points:
        return None
    x1, t1 = points[-1]
    exponent = 1.0
    if len(points) >= 2:
        x0, t0 = points[-2]
        if x1 > x0 and t1 > 0 and t0 > 0:
            exponent = min(3.0, max(1.0, math.log(t1 / t0) / math.log(x1 / x0)))
    predicted = t1 * (x / x1) ** exponent
    return predicted, f"{t1:.1f} s at size {x1:g} x ({x:g}/{x1:g})^{exponent:.2f}"


def size_matches(size, wanted) -> bool:
    """Whether ``size`` is one of ``wanted``: its label (``"3-ary tree depth 12"``) or one of its
    parameters as ``name=value`` (``depth=12``, ``m=1048576``)."""
    for text in wanted:
        name, equals, value = text.partition("=")
        if text == size.label or (equals and str(size.p.get(name.strip())) == value.strip()):
            return True
    return False


def schedule(benchmarks, suite: str, sizes=()) -> list:
    """(benchmark, size) pairs in running order: each benchmark's sizes in increasing order,
    the sizes a benchmark marks ``late`` for this suite after all the others; only the sizes
    matching ``sizes`` (see size_matches) when it is not empty."""
    early, late = [], []
    for bench in benchmarks:
        for size in sorted(bench.sizes_for(suite), key=lambda s: s.x):
            if sizes and not size_matches(size, sizes):
                continue
            (late if size.x in bench.late.get(suite, ()) else early).append((bench, size))
    return early + late


@dataclass
class Runner:
    settings: Settings
    spark: object = None
    worker: Optional[PythonWorker] = None
    records: list = field(default_factory=list)
    checks: list = field(default_factory=list)
    log: callable = print
    started: float = field(default_factory=time.monotonic)
    disturbed: Optional[str] = None  # set when a Spark thread could not be stopped
    history: dict = field(default_factory=dict)  # (benchmark, system) -> [(x, seconds)] that succeeded
    failed: dict = field(default_factory=dict)  # (benchmark, system) -> why larger sizes are skipped

    # -- the whole suite ------------------------------------------------------------------

    def run(self, benchmarks, sizes=()) -> None:
        self.log(f"suite {self.settings.suite}: {', '.join(b.name for b in benchmarks)}")
        planned = schedule(benchmarks, self.settings.suite, sizes)
        if not planned:
            raise SystemExit(f"nothing to run: no size of the {self.settings.suite} suite matches {sizes}")
        self.spark = bench_session()
        self.worker = PythonWorker()
        try:
            self.warm_up()
            self.started = time.monotonic()
            for bench, size in planned:
                self.run_size(bench, size)
        finally:
            self.worker.close()

    def warm_up(self) -> None:
        """Run every Spark system on a chain, in turn, ``WARM_UP_ROUNDS`` times (class loading,
        code generation, JIT) and start the Python worker's imports; nothing of this is
        recorded."""
        bench = cases.by_name("tc-chain")
        task = self.task(bench, bench.make_inputs({"n": WARM_UP_CHAIN}), collect=False)
        frames = input_frames(self.spark, task)
        for round_ in range(WARM_UP_ROUNDS):
            for name, system in SYSTEMS.items():
                if system.unsupported(task.problem):
                    continue
                if system.kind != "spark" and round_:
                    continue
                started = time.perf_counter()
                if system.kind == "spark":
                    run = timed(
                        lambda system=system: system.run_spark(
                            self.spark, frames, task, system.prepare(task)
                        ),
                        _NoMemory,
                        collect=False,
                    )
                else:
                    run = self.worker.measure(system.module_name, task, Repeats(1), 120.0)[-1]
                status = run.error_class or "ok"
                self.log(
                    f"  warm-up {name}: {status} {time.perf_counter() - started:.1f} s"
                    + (f" ({run.error})" if run.error else "")
                )
        release_frames(self.spark, frames)

    def run_size(self, bench, size) -> None:
        """Every system of the benchmark on one size, then the cross-system check."""
        suite = self.settings.suite
        self.log(f"{bench.name} · {size.label}")
        small = size.x <= bench.reference_max
        task = self.task(bench, bench.make_inputs(size.p), collect=small)
        frames = None
        size_records = []
        try:
            for name in cases.RUN_ORDER:
                if name not in bench.systems_for(suite):
                    continue
                if SYSTEMS[name].kind == "spark" and frames is None:
                    frames = input_frames(self.spark, task)
                record = self.run_case(bench, size, name, task, frames)
                size_records.append(record)
                self.records.append(record)
        finally:
            if frames is not None:
                release_frames(self.spark, frames)
        check = checks.check_size(bench.name, size.label, size_records, compared_rows=small)
        self.checks.append(check)
        self.log(f"  check: {check['verdict']}" + (f" -- {check['detail']}" if check["detail"] else ""))
        for record in size_records:
            record.pop("rows", None)

    # -- one case -------------------------------------------------------------------------

    def run_case(self, bench, size, name, task, frames) -> dict:
        system = SYSTEMS[name]
        record = {
            "benchmark": bench.name,
            "problem": bench.problem,
            "program": f"programs/{bench.program}.dl",
            "workload": bench.family,
            "size": size.label,
            "x": size.x,
            "params": size.p,
            "input_rows": task.input_rows,
            "system": name,
            "status": None,
            "seconds": None,
            "runs": [],
            "facts": None,
            "iterations": None,
            "memory": {},
            "note": None,
            "load_1min": _load(),
        }
        limit = self.settings.engine_budget if name == "engine-seminaive" else self.settings.case_budget
        remaining = self.settings.suite_budget - (time.monotonic() - self.started)
        skip = self.skip_reason(bench, size, name, min(limit, remaining), remaining)
        if skip:
            status, note = skip
            record.update(status=status, note=note)
            self.log(f"  {name:17} {status}: {note}")
            return record
        squeezed = remaining < limit
        limit = min(limit, remaining)
        if system.kind == "spark":
            runs = self.measure_spark(system, task, frames, limit)
        else:
            runs = self.worker.measure(system.module_name, task, self.settings.repeats, limit)
        self.summarise(record, runs, limit)
        if record["status"] == "timeout" and squeezed:
            record["note"] += f" (what was left of the suite's {self.settings.suite_budget:.0f} s budget)"
        if record["status"] == "ok":
            self.history.setdefault((bench.name, name), []).append((size.x, record["seconds"]))
        else:
            self.failed[(bench.name, name)] = (
                f"{record['status']} at {size.label} ({record.get('error_class')})"
            )
        if self.disturbed:
            record["note"] = ((record["note"] + "; ") if record["note"] else "") + self.disturbed
        self.log(f"  {name:17} {_line(record)}")
        return record

    def skip_reason(self, bench, size, name, limit, remaining) -> Optional[tuple]:
        reason = SYSTEMS[name].unsupported(bench.problem)
        if reason:
            return "unsupported", reason
        if name == "reference" and size.x > bench.reference_max:
            return "skipped", "the reference interpreter runs on the small sizes only"
        cap = bench.limits.get(name)
        if cap is not None and size.x > cap:
            note = f"size above this system's cap ({cap:g}) for this benchmark"
            return "skipped", note + (f": {bench.limit_note}" if bench.limit_note else "")
        if (bench.name, name) in self.failed:
            return "skipped", f"not run: {self.failed[(bench.name, name)]}"
        if remaining <= 5:
            return "skipped", f"budget: the suite's {self.settings.suite_budget:.0f} s were used up"
        predicted = extrapolate(self.history.get((bench.name, name), []), size.x)
        if predicted and predicted[0] > limit and name not in self.settings.always_run:
            seconds, how = predicted
            return "skipped", (f"budget: predicted {seconds:.0f} s ({how}) exceeds the {limit:.0f} s limit")
        return None

    def measure_spark(self, system, task, frames, limit) -> list:
        from .memory import PeakMemory, jvm_process

        jvm = jvm_process()
        try:
            prepared = system.prepare(task)
        except Exception as error:  # noqa: BLE001 - a failure to load is a result too
            return [Run(seconds=0.0, error_class=type(error).__name__, error=f"{error} (while loading)")]
        runs: list = []
        while True:
            run = timed(
                lambda: call_spark_with_limit(
                    self.spark, lambda: system.run_spark(self.spark, frames, task, prepared), limit
                ),
                lambda: PeakMemory(jvm, self.spark),
                collect=task.collect and not runs,
            )
            runs.append(run)
            if run.error_class == "CaseTimeout" and "could not be stopped" in (run.error or ""):
                self.disturbed = (
                    f"a {system.name} run could not be stopped after its time limit; "
                    "later measurements may be disturbed"
                )
            if not self.settings.repeats.more(runs):
                return runs

    @staticmethod
    def summarise(record: dict, runs: list, limit: float) -> None:
        ok = [r for r in runs if r.error_class is None]
        record["runs"] = [round(r.seconds, 4) for r in runs]
        last = runs[-1]
        if last.error_class is None:
            record["status"] = "ok"
            record["seconds"] = round(median_seconds(ok), 4)
            record["facts"] = ok[0].facts
            record["iterations"] = ok[0].iterations
            if len({r.facts for r in ok}) > 1:
                record["status"] = "error"
                record["error_class"] = "InconsistentRuns"
                record["error"] = f"fact counts differ between runs: {[r.facts for r in ok]}"
        else:
            record["status"] = "timeout" if last.error_class == CaseTimeout.__name__ else "error"
            record["error_class"] = last.error_class
            record["error"] = last.error
            record["seconds_to_failure"] = round(last.seconds, 3)
            if record["status"] == "timeout":
                record["note"] = f"stopped at the {limit:.0f} s limit"
        memories = [r.memory for r in runs if r.memory]
        if memories:
            record["memory"] = {key: max(m.get(key, 0) for m in memories) for key in memories[0]}
            record["memory"]["process"] = "worker" if "jvm_rss_peak_mb" not in memories[0] else "driver"
        record["rows"] = next((r.rows for r in runs if r.rows is not None), None)

    @staticmethod
    def task(bench, inputs: dict, collect: bool) -> Task:
        import spark_datalog as sd

        program = sd.Program.from_file(bench.program_path)
        schemas = {
            name: tuple(zip(program.relations[name].column_names, program.relations[name].types, strict=True))
            for name in inputs
        }
        return Task(
            problem=bench.problem,
            inputs=inputs,
            schemas=schemas,
            program_path=str(bench.program_path),
            output=bench.output,
            collect=collect,
        )


def _load() -> Optional[float]:
    """The machine's 1-minute load average when the case starts (other processes share it)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


class _NoMemory:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def result(self) -> dict:
        return {}


def _line(record: dict) -> str:
    if record["status"] == "ok":
        runs = record["runs"]
        extra = f" (median of {len(runs)})" if len(runs) > 1 else ""
        return f"{record['seconds']:.3g} s{extra}, {record['facts']} facts" + (
            f", {record['iterations']} iterations" if record["iterations"] else ""
        )
    return (
        f"{record['status']} after {record.get('seconds_to_failure', 0):.1f} s: "
        f"{record.get('error_class')}: {(record.get('error') or '')[:160]}"
    )
