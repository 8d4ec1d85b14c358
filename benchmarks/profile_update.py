"""Where the time of one ``update`` goes: Spark jobs, stages, Py4J calls and wall time per phase.

Materializes a program into a temporary warehouse, then runs one insertion batch and one
deletion batch with each method, every update from a fresh copy of the warehouse, and reports
per phase of ``update`` (its functions, wrapped here for the run: nothing in the engine changes)
the number of calls, Spark jobs, stages and tasks, Py4J round trips and wall-clock seconds.
Jobs are attributed through job groups: every phase sets the group of the jobs it starts to its
path (``update/_Update.run/_Update._commit/...``), and the status tracker lists them at the end.

    PYTHONPATH=. .venv/bin/python -m benchmarks.profile_update    # tc, 2,046 tree edges, 1%
    PYTHONPATH=. .venv/bin/python -m benchmarks.profile_update --cprofile 25 --out F.md
    PYTHONPATH=. .venv/bin/python -m benchmarks.profile_update \
        --conf spark.sql.adaptive.enabled=false --methods auto --depth 12

Counts of jobs and Py4J calls do not depend on the machine's load; seconds do.
"""

from __future__ import annotations

import argparse
import dataclasses
import cProfile
import functools
import importlib
import io
import pstats
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path


class Tracker:
    """Wraps functions so that each call is a phase: its jobs get a job group named by the
    phase's path, its Py4J calls and seconds are added to that path."""

    def __init__(self, spark):
        self.sc = spark.sparkContext
        self.stack: list = []
        self.stats: dict = defaultdict(lambda: {"calls": 0, "seconds": 0.0, "py4j": 0})
        self.patches: list = []
        self.missing: list = []  # phases not found (the engine changed): left out
        self.active = False
        self._internal = False
        self.prefix = ""

    def path(self) -> str:
        return "/".join(self.stack)

    def _group(self, path: str) -> None:
        self._internal = True
        try:
            self.sc.setJobGroup(self.prefix + (path or "(none)"), path or "(none)")
        finally:
            self._internal = False

    def wrap(self, owner, attribute: str, label: str | None = None) -> None:
        present = attribute in owner.__dict__ if isinstance(owner, type) else hasattr(owner, attribute)
        if not present:
            self.missing.append(f"{getattr(owner, '__name__', owner)}.{attribute}")
            return
        original = owner.__dict__[attribute] if isinstance(owner, type) else getattr(owner, attribute)
        if isinstance(original, (staticmethod, classmethod)):
            raise TypeError(f"{owner}.{attribute}: static and class methods are not wrapped")
        label = label or getattr(original, "__qualname__", attribute)
        tracker = self

        @functools.wraps(original)
        def phase(*args, **kwargs):
            if not tracker.active:
                return original(*args, **kwargs)
            tracker.stack.append(label)
            path = tracker.path()
            tracker._group(path)
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                entry = tracker.stats[path]
                entry["calls"] += 1
                entry["seconds"] += time.perf_counter() - started
                tracker.stack.pop()
                tracker._group(tracker.path())

        setattr(owner, attribute, phase)
        self.patches.append((owner, attribute, original))

    def count_py4j(self) -> None:
        from py4j import clientserver, java_gateway

        tracker = self
        for cls in (clientserver.ClientServerConnection, java_gateway.GatewayConnection):
            original = cls.__dict__["send_command"]

            def send_command(conn, command, *args, _original=original, **kwargs):
                if tracker.active and not tracker._internal:
                    tracker.stats[tracker.path()]["py4j"] += 1
                return _original(conn, command, *args, **kwargs)

            cls.send_command = send_command
            self.patches.append((cls, "send_command", original))

    def restore(self) -> None:
        for owner, attribute, original in reversed(self.patches):
            setattr(owner, attribute, original)
        self.patches = []

    def jobs(self) -> dict:
        """Phase path -> (jobs, stages run, tasks run) started while it was the innermost
        phase (stages skipped because their shuffle output existed are not counted)."""
        status = self.sc.statusTracker()
        found = {}
        for path in self.stats:
            jobs = stages = tasks = 0
            for job in status.getJobIdsForGroup(self.prefix + path):
                info = status.getJobInfo(job)
                jobs += 1
                if info is None:
                    continue
                for stage in info.stageIds:
                    stage_info = status.getStageInfo(stage)
                    if stage_info is not None and stage_info.numCompletedTasks:
                        stages += 1
                        tasks += stage_info.numCompletedTasks
            found[path] = (jobs, stages, tasks)
        return found


def install(tracker: Tracker) -> None:
    """The phases of ``update`` (and of what it calls) that the profile separates."""
    from deltalake import DeltaTable

    from spark_datalog.eval import driver
    from spark_datalog.incremental import dred
    from spark_datalog.storage import embedded, runs, warehouse

    upd = importlib.import_module("spark_datalog.incremental.update")
    tracker.wrap(upd, "update", "update")
    for name in (
        "_typed",
        "_check_changes",
        "conform_changes",
        "assess",
        "signed",
        "store_assessed",
        "check_assessed",
        "dred_changes",
        "local_dred_changes",
        "linear_dred_changes",
        "counting_changes",
    ):
        tracker.wrap(upd, name)
    linear = importlib.import_module("spark_datalog.incremental.dred_linear")
    for name in ("_collect", "_rows", "seed_rows", "fixpoint", "_frame"):
        tracker.wrap(linear, name, f"dred_linear.{name}")
    for name in (
        "run",
        "_state",
        "_edb_changes",
        "_absorb",
        "_stratum",
        "_dred",
        "_counting",
        "_recompute",
        "_commit",
        "new_state",
        "new_facts",
    ):
        tracker.wrap(upd._Update, name)
    for name in ("_propagate", "seed_candidates", "materialise"):
        tracker.wrap(dred, name, f"dred.{name}")
    tracker.wrap(driver, "evaluate", "driver.evaluate")
    tracker.wrap(driver._Run, "_iterate")
    tracker.wrap(driver, "evaluate_partitioned", "driver.evaluate_partitioned")
    tracker.wrap(driver._Run, "non_recursive")
    for name in (
        "start_run",
        "commit_run",
        "runs",
        "pending_run",
        "apply_changes",
        "read",
        "version",
        "exists",
        "schema",
    ):
        tracker.wrap(warehouse.Warehouse, name)
    for name in ("apply_changes", "_write_files", "replace", "read"):
        tracker.wrap(embedded.EmbeddedBackend, name)
    for name in ("open_table", "is_delta_table", "_add_actions"):
        tracker.wrap(embedded, name, f"delta-rs.{name}")
    tracker.wrap(DeltaTable, "create_write_transaction", "delta-rs.commit")
    tracker.wrap(runs.RunLog, "append")
    tracker.wrap(runs.RunLog, "records")
    tracker.wrap(runs.WarehouseLock, "acquire")


def batches(graph: str, edges: list, fraction: float, seed: int = 7):
    from .incremental import deletions, insertions

    return {
        "insert": insertions(graph, edges, fraction, seed),
        "delete": deletions(graph, edges, fraction, seed),
    }


def report(stats: dict, jobs: dict, title: str) -> str:
    """A table of the phases (exclusive jobs and Py4J calls, inclusive seconds and totals)."""
    paths = sorted(stats)
    inclusive = {}
    for path in paths:
        under = [p for p in paths if p == path or p.startswith(path + "/")]
        inclusive[path] = tuple(sum(jobs.get(p, (0, 0, 0))[i] for p in under) for i in range(3)) + (
            sum(stats[p]["py4j"] for p in under),
        )
    total = inclusive.get("update", (0, 0, 0, 0))
    lines = [
        f"### {title}",
        "",
        f"Total: {total[0]} jobs, {total[1]} stages run, {total[2]} tasks, {total[3]} Py4J "
        f"calls, {stats['update']['seconds']:.2f} s"
        if "update" in stats
        else "",
        "",
        "| phase | calls | s (incl.) | jobs (own) | jobs (incl.) | stages (incl.) | "
        "tasks (incl.) | Py4J (own) | Py4J (incl.) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for path in paths:
        depth = path.count("/")
        label = "&nbsp;" * 2 * depth + path.rsplit("/", 1)[-1]
        own = jobs.get(path, (0, 0, 0))
        inc = inclusive[path]
        lines.append(
            f"| {label} | {stats[path]['calls']} | {stats[path]['seconds']:.2f} | "
            f"{own[0]} | {inc[0]} | {inc[1]} | {inc[2]} | {stats[path]['py4j']} | "
            f"{inc[3]} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.profile_update",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--program", default="tc", help="a program of benchmarks/programs over arc (tc, sg, ...); default tc"
    )
    parser.add_argument("--depth", type=int, default=10, help="depth of the binary tree (10: 2,046 edges)")
    parser.add_argument(
        "--workload",
        help="a workload of benchmarks.incremental (tc-tree, "
        "sg-tree, reach-gnm, cc-gnm) instead of --program and --depth",
    )
    parser.add_argument(
        "--size",
        help="with --workload: its size, as benchmarks.incremental "
        "reads it (15, or 200000x400000); default its largest",
    )
    parser.add_argument("--fraction", type=float, default=0.01)
    parser.add_argument("--methods", default="auto,recompute")
    parser.add_argument(
        "--cprofile",
        type=int,
        default=0,
        metavar="N",
        help="also profile each update with cProfile (a second, separate run) "
        "and print the top N functions by cumulative time",
    )
    parser.add_argument(
        "--sort",
        default="cumulative",
        choices=("cumulative", "tottime"),
        help="order of the cProfile listing (default cumulative)",
    )
    parser.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting for the session (repeatable), e.g. spark.sql.adaptive.enabled=false",
    )
    parser.add_argument("--out", type=Path, help="also write the report to this file")
    args = parser.parse_args(argv)

    from benchmarks.session import bench_session

    import spark_datalog as sd
    from spark_datalog.storage import Warehouse

    conf = {"spark.ui.retainedJobs": "100000", "spark.ui.retainedStages": "100000"}
    conf.update(dict(item.split("=", 1) for item in args.conf))
    spark = bench_session(conf=conf)
    upd = importlib.import_module("spark_datalog.incremental.update")
    from .incremental import WORKLOADS, parse_size

    if args.workload:
        workload = WORKLOADS[args.workload]
        size = parse_size(workload, args.size) if args.size else workload.sizes["large"][-1]
    else:
        workload = dataclasses.replace(WORKLOADS["tc-tree"], program=args.program)
        size = args.depth
    program = sd.Program.from_file(workload.program_path)
    edges = workload.edges(size)
    root = Path(tempfile.mkdtemp(prefix="sd_profile_update_"))
    out = [
        f"# update profile: {workload.program} on {workload.label(size)}, {len(edges)} edges, "
        f"batches of {args.fraction:.1%}",
        "",
        f"Spark settings: {', '.join(args.conf) or 'the benchmark session (AQE on)'}.",
        "",
    ]
    tracker = Tracker(spark)
    install(tracker)
    tracker.count_py4j()
    try:
        base = root / "base"
        inputs = {
            name: spark.createDataFrame(rows, program.checked.relations[name].column_names)
            for name, rows in workload.inputs(edges).items()
        }
        program.materialize(spark, inputs=inputs, warehouse=Warehouse(spark, str(base)))
        output = next(iter(program.checked.outputs), None) or program.checked.idb[-1]
        size = Warehouse(spark, str(base)).read(output).count()
        out.append(f"{output}: {size} facts before.")
        changes_of = batches(workload.graph, edges, args.fraction)

        from spark_datalog.storage import warehouse as warehouse_module

        commits: list = []
        apply_changes = warehouse_module.Warehouse.apply_changes

        def recorded(self, name, columns, changes, run, **promises):
            result = apply_changes(self, name, columns, changes, run, **promises)
            commits.append(result)
            return result

        warehouse_module.Warehouse.apply_changes = recorded
        tracker.patches.append((warehouse_module.Warehouse, "apply_changes", apply_changes))

        def one(method, direction, tag, profiler=None):
            commits.clear()
            copy = root / tag
            shutil.copytree(base, copy)
            wh = Warehouse(spark, str(copy))
            sign = 1 if direction == "insert" else -1
            frame = spark.createDataFrame(
                [e + (sign,) for e in changes_of[direction]], "x long, y long, _count long"
            )
            frame.count()  # built before the clock, like the benchmark's
            if profiler:
                profiler.enable()
            result = upd.update(program, spark, wh, changes={"arc": frame}, method=method)
            if profiler:
                profiler.disable()
            after = wh.read(output).count()
            shutil.rmtree(copy, ignore_errors=True)
            return result, after

        # warm-up: class loading and code generation are paid once per JVM, not per update
        for direction in ("insert", "delete"):
            one("auto", direction, f"warm-{direction}")
        for method in args.methods.split(","):
            for direction in ("insert", "delete"):
                tracker.stats = defaultdict(lambda: {"calls": 0, "seconds": 0.0, "py4j": 0})
                tracker.prefix = f"{method}-{direction}:"
                tracker.active = True
                try:
                    result, after = one(method, direction, f"{method}-{direction}")
                finally:
                    tracker.active = False
                    spark.sparkContext.setJobGroup("(none)", "(none)")
                methods = ", ".join(f"{s.index}:{s.method}" for s in result.strata)
                out.append(
                    report(
                        tracker.stats,
                        tracker.jobs(),
                        f"method={method}, {direction} {len(changes_of[direction])} "
                        f"edges (strata {methods}; {output} after: {after})",
                    )
                )
                out.append(
                    "Table writes: "
                    + "; ".join(
                        f"{c.relation}: {c.files_removed} files ({c.rows_removed} rows) rewritten as "
                        f"{c.files_added} files ({c.rows_added} rows)"
                        for c in commits
                    )
                    + "\n"
                )
                print(out[-2] + out[-1], flush=True)
                if args.cprofile:
                    profiler = cProfile.Profile()
                    one(method, direction, f"{method}-{direction}-cprofile", profiler)
                    text = io.StringIO()
                    pstats.Stats(profiler, stream=text).sort_stats(args.sort).print_stats(args.cprofile)
                    out.append(
                        f"cProfile, method={method}, {direction}:\n\n```\n"
                        + text.getvalue().strip()
                        + "\n```\n"
                    )
                    print(out[-1], flush=True)
    finally:
        tracker.restore()
        shutil.rmtree(root, ignore_errors=True)
    if tracker.missing:
        out.append("Not found (not profiled): " + ", ".join(tracker.missing))
    text = "\n".join(out) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
