"""Incremental maintenance vs full recomputation (seed 004's question; issue 5).

Four workloads, each at one or more sizes: transitive closure (``programs/tc.dl``) and same
generation (``programs/sg.dl``) on a complete binary tree; reachability from node 0
(``programs/reach.dl``) and connected components by minimum label (``programs/cc.dl``, min in
recursion) on a uniform random graph. Each size is materialized once into a warehouse; then
batches of 0.1%, 1% and 10% of the edges are inserted and, separately, deleted, and ``update``
is timed with ``method="auto"`` (DRed for recursive strata, counting for non-recursive ones),
with ``method="counting"`` where the program has a non-recursive stratum it applies to, and
with ``method="recompute"`` (every stratum evaluated afresh from the new inputs and diffed with
its stored state). Every timed update starts from a fresh copy of the materialized warehouse
directory, and all methods must leave every derived relation with the same size and content
checksum (the run fails loudly otherwise).

    python -m benchmarks.incremental        # small + medium, < 25 min (from the repository root)
    python -m benchmarks.incremental --scale tiny --fractions 0.1  # smoke
    python -m benchmarks.incremental --scale large --workload tc-tree
    python -m benchmarks.incremental --size tc-tree=14 --size cc-gnm=5000x5000
    python -m benchmarks.incremental --render benchmarks/results/incremental.json

Outputs: ``benchmarks/INCREMENTAL.md`` (tables, targets, machine, load, command),
``benchmarks/results/incremental.json`` (every measurement) and
``benchmarks/results/plots/incremental.png`` (ratio recompute / incremental vs batch size).
``--render`` re-renders the Markdown and the plot from a JSON file without measuring.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import re
import shlex
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from spark_datalog.placement import WHERE

from . import workloads as w

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
FRACTIONS = (0.001, 0.01, 0.10)
DIRECTIONS = ("insert", "delete")
TARGETS = {"insert": 5.0, "delete": 3.0}  # issue 5: recompute / incremental at 1% changes
TARGET_FRACTION = 0.01
SCALES = ("tiny", "small", "medium", "large")
DEFAULT_SCALES = ("small", "medium")


@dataclass(frozen=True)
class Workload:
    """A program of ``programs/`` on a generated graph, with its sizes per scale.

    A tree size is the depth of a complete ``arity``-ary tree; a random-graph size is (nodes,
    edges); an R-MAT size is (scale, edges) on 2^scale vertices (the scale suite's graphs).
    """

    name: str
    program: str
    graph: str  # "tree", "gnm" or "rmat"
    description: str
    sizes: dict
    arity: int = 2  # of a tree

    @property
    def program_path(self) -> Path:
        return PROGRAMS / f"{self.program}.dl"

    def edges(self, size) -> list:
        if self.graph == "tree":
            return w.tree(self.arity, size)
        if self.graph == "rmat":
            scale, m = size
            return w.rmat(scale, m, seed=5)
        n, m = size
        return w.gnm(n, m, seed=5)

    def label(self, size) -> str:
        if self.graph == "tree":
            return f"{'binary' if self.arity == 2 else f'{self.arity}-ary'} tree depth {size}"
        if self.graph == "rmat":
            scale, m = size
            return f"R-MAT 2^{scale}, {m:,} edges"
        n, m = size
        return f"G({n:,}, {m:,})"

    def inputs(self, edges) -> dict:
        """EDB relation -> rows: the graph as ``arc``, and node 0 as ``source`` for reach."""
        inputs = {"arc": edges}
        if self.program == "reach":
            inputs["source"] = [(0,)]
        return inputs


WORKLOADS = {
    "tc-tree": Workload(
        "tc-tree",
        "tc",
        "tree",
        "transitive closure on a complete binary tree",
        {"tiny": (3,), "small": (10,), "medium": (13,), "large": (15,)},
    ),
    "sg-tree": Workload(
        "sg-tree",
        "sg",
        "tree",
        "same generation on a complete binary tree",
        {"tiny": (3,), "small": (7,), "medium": (8,), "large": (10,)},
    ),
    "reach-gnm": Workload(
        "reach-gnm",
        "reach",
        "gnm",
        "reachability from node 0 on a random graph (out-degree 2)",
        {
            "tiny": ((30, 60),),
            "small": ((2_000, 4_000),),
            "medium": ((20_000, 40_000),),
            "large": ((200_000, 400_000),),
        },
    ),
    "cc-gnm": Workload(
        "cc-gnm",
        "cc",
        "gnm",
        "connected components by min label on a random graph (degree 2)",
        {
            "tiny": ((30, 30),),
            "small": ((2_000, 2_000),),
            "medium": ((10_000, 10_000),),
            "large": ((100_000, 100_000),),
        },
    ),
    # The scale suite's incremental cases (issue 21, item 5): tc on the 3-ary tree of depth 12
    # (9.2M facts) and cc on the R-MAT graph of 4M edges, the same graphs as `--suite scale`.
    "tc-tree3": Workload(
        name="tc-tree3",
        program="tc",
        graph="tree",
        description="transitive closure on a complete 3-ary tree (the scale suite's tc-tree)",
        sizes={"tiny": (3,), "small": (8,), "medium": (10,), "large": (12,)},
        arity=3,
    ),
    "cc-rmat": Workload(
        name="cc-rmat",
        program="cc",
        graph="rmat",
        description="connected components by min label on an R-MAT graph (the scale suite's cc-rmat)",
        sizes=dict(tiny=((6, 200),), small=((12, 32_768),), medium=((16, 1 << 20),), large=((18, 1 << 22),)),
    ),
}


# -- change batches ---------------------------------------------------------------------------


def batch_size(edges: list, fraction: float) -> int:
    """Edges in a batch of ``fraction`` of the graph; at least one, so fraction 0 is one edge."""
    return max(1, round(fraction * len(edges)))


def insertions(graph: str, edges: list, fraction: float, seed: int = 7) -> list:
    """New edges, a ``fraction`` of the graph's (at least one). A tree grows new leaves under
    random nodes (it stays a tree); a random graph gets random edges between its nodes that are
    not there yet and are no self-loops."""
    rng = random.Random(seed)
    nodes = w.nodes_of(edges)
    present, new = set(edges), {}
    wanted = batch_size(edges, fraction)
    while len(new) < wanted:
        u = rng.choice(nodes)
        v = nodes[-1] + 1 + len(new) if graph == "tree" else rng.choice(nodes)
        if u != v and (u, v) not in present:
            new.setdefault((u, v), None)
    return sorted(new)


def deletions(graph: str, edges: list, fraction: float, seed: int = 7) -> list:
    """A random ``fraction`` of the edges (at least one)."""
    return sorted(random.Random(seed).sample(edges, batch_size(edges, fraction)))


def methods_for(program) -> tuple:
    """The methods measured: auto, counting when a non-recursive stratum without aggregates
    exists (counting applies there), and recompute."""
    counting = any(not plan.recursive and not plan.aggregates for plan in program.plans)
    return ("auto", "counting", "recompute") if counting else ("auto", "recompute")


# -- measuring --------------------------------------------------------------------------------


def _fingerprint(warehouse, relations) -> dict:
    """Relation -> [facts, checksum] of the stored relations (one Spark job each)."""
    from pyspark.sql import functions as F

    found = {}
    for name in relations:
        frame = warehouse.read(name)
        row = frame.agg(
            F.count(F.lit(1)).alias("n"), F.sum(F.hash(*frame.columns).cast("long")).alias("h")
        ).collect()[0]
        found[name] = [int(row["n"]), int(row["h"] or 0)]
    return found


def _jobs(spark, group: str) -> int:
    return len(spark.sparkContext.statusTracker().getJobIdsForGroup(group))


class OverBudget(Exception):
    """A size left out: measuring it would end the run past its budget (the message says why)."""


class Bench:
    """One run: a session, a scratch folder, the measurements so far."""

    def __init__(self, spark, repeats: int = 1, log=print):
        self.spark = spark
        self.repeats = repeats
        self.log = log
        self.root = Path(tempfile.mkdtemp(prefix="sd_incremental_bench_"))
        self.records: list = []
        self.sizes: list = []
        self.spent: dict = {}  # workload -> (materialize seconds, measuring seconds) of its last size
        self._group = 0

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def _timed(self, action):
        """(seconds, Spark jobs, result) of ``action()``; its jobs get a job group of their own."""
        self._group += 1
        group = f"sd-incremental-{self._group}"
        context = self.spark.sparkContext
        context.setJobGroup(group, group)
        try:
            started = time.perf_counter()
            result = action()
            seconds = time.perf_counter() - started
        finally:
            context.setJobGroup("sd-incremental-idle", "idle")
        return seconds, _jobs(self.spark, group), result

    def warm_up(self) -> None:
        """One small materialization and update of each direction (class loading, codegen)."""
        workload = WORKLOADS["tc-tree"]
        edges = workload.edges(3)
        base, _, _ = self.materialize(workload, edges, "warm-up")
        program = self._program(workload)
        for direction in DIRECTIONS:
            batch = (insertions if direction == "insert" else deletions)("tree", edges, 0.1)
            self._update(program, base, "warm-up-" + direction, batch, direction, "auto")

    def _program(self, workload):
        import spark_datalog as sd

        return sd.Program.from_file(workload.program_path)

    def materialize(self, workload, edges, tag):
        from spark_datalog.storage import Warehouse

        program = self._program(workload)
        frames = {}
        for name, rows in workload.inputs(edges).items():
            schema = program.relations[name]
            columns = ", ".join(
                f"`{c}` {'bigint' if t == 'long' else t}"
                for c, t in zip(schema.column_names, schema.types, strict=True)
            )
            frames[name] = self.spark.createDataFrame(rows, columns)
        base = self.root / tag
        seconds, jobs, _ = self._timed(
            lambda: program.materialize(self.spark, inputs=frames, warehouse=Warehouse(self.spark, str(base)))
        )
        self.spark.catalog.clearCache()
        return base, seconds, jobs

    def _update(self, program, base, tag, batch, direction, method):
        from spark_datalog.incremental import update
        from spark_datalog.storage import Warehouse

        copy = self.root / tag
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(base, copy)
        try:
            warehouse = Warehouse(self.spark, str(copy))
            sign = 1 if direction == "insert" else -1
            change = self.spark.createDataFrame(
                [edge + (sign,) for edge in batch], "x bigint, y bigint, _count bigint"
            )
            seconds, jobs, report = self._timed(
                lambda: update(program, self.spark, warehouse, changes={"arc": change}, method=method)
            )
            after = _fingerprint(warehouse, program.checked.idb)
        finally:
            shutil.rmtree(copy, ignore_errors=True)
            self.spark.catalog.clearCache()
            gc.collect()
        return seconds, jobs, report, after

    def measure(
        self, workload, size, fractions=FRACTIONS, directions=DIRECTIONS, deadline: float | None = None
    ) -> None:
        """Every direction x fraction x method for one workload size; ``OverBudget`` when
        ``deadline`` (a ``time.perf_counter()`` value) is passed or would be."""
        if deadline is not None and time.perf_counter() > deadline:
            raise OverBudget("the run's time budget is spent")
        began = time.perf_counter()
        program = self._program(workload)
        edges = workload.edges(size)
        label = workload.label(size)
        slug = re.sub(r"[^0-9A-Za-z]+", "-", str(size)).strip("-")  # a plain folder name
        base, materialize_s, materialize_jobs = self.materialize(workload, edges, f"{workload.name}-{slug}")
        try:
            previous = self.spent.get(workload.name)
            if deadline is not None and previous:
                estimate = previous[1] * materialize_s / max(previous[0], 1e-3)
                left = deadline - time.perf_counter()
                if estimate > left:
                    raise OverBudget(
                        f"estimated at {estimate:.0f} s (the previous size's {previous[1]:.0f} s x "
                        f"materialization {materialize_s:.1f} s / {previous[0]:.1f} s), "
                        f"{max(left, 0):.0f} s of the budget left"
                    )
            self._measure(
                workload, program, edges, label, base, materialize_s, materialize_jobs, fractions, directions
            )
        finally:
            shutil.rmtree(base, ignore_errors=True)
        seconds = time.perf_counter() - began
        self.spent[workload.name] = (materialize_s, seconds)
        self.sizes[-1]["seconds"] = round(seconds, 1)

    def _measure(
        self, workload, program, edges, label, base, materialize_s, materialize_jobs, fractions, directions
    ) -> None:
        from spark_datalog.storage import Warehouse

        before = _fingerprint(Warehouse(self.spark, str(base)), program.checked.idb)
        output = program.checked.outputs[0] if program.checked.outputs else program.checked.idb[-1]
        self.sizes.append(
            {
                "workload": workload.name,
                "size": label,
                "edges": len(edges),
                "facts": before,
                "output": output,
                "materialize_seconds": round(materialize_s, 3),
                "materialize_jobs": materialize_jobs,
            }
        )
        self.log(
            f"{workload.name} · {label}: {len(edges):,} edges, {output} "
            f"{before[output][0]:,} facts; materialized in {materialize_s:.1f} s "
            f"({materialize_jobs} jobs)"
        )
        methods = methods_for(program)
        for direction in directions:
            for fraction in fractions:
                make = insertions if direction == "insert" else deletions
                batch = make(workload.graph, edges, fraction)
                results = {}
                for method in methods:
                    runs, jobs, report, after = [], None, None, None
                    for i in range(self.repeats):
                        seconds, jobs, report, after = self._update(
                            program,
                            base,
                            f"{workload.name}-{direction}-{method}-{i}",
                            batch,
                            direction,
                            method,
                        )
                        runs.append(round(seconds, 3))
                    results[method] = after
                    record = {
                        "workload": workload.name,
                        "program": f"programs/{workload.program}.dl",
                        "size": label,
                        "edges": len(edges),
                        "facts_before": before[output][0],
                        "output": output,
                        "direction": direction,
                        "fraction": fraction,
                        "changed_edges": len(batch),
                        "method": method,
                        "seconds": min(runs),
                        "runs": runs,
                        "jobs": jobs,
                        "strata": [_stratum_record(s) for s in report.strata],
                        "facts_after": after[output][0],
                        "relations_after": after,
                    }
                    self.records.append(record)
                    used = ", ".join(f"{s[1][0]}:{s[2]}" for s in record["strata"])
                    self.log(
                        f"  {direction} {_pct(fraction)} ({len(batch)} edges) {method}: "
                        f"{record['seconds']:.2f} s, {jobs} jobs [{used}] -> {output} "
                        f"{record['facts_after']:,}"
                    )
                if any(after != results["auto"] for after in results.values()):
                    raise AssertionError(
                        f"{workload.name} · {label} · {direction} {fraction}: the methods leave "
                        f"different relations (relation -> [facts, checksum]): {results}"
                    )


def plan_sizes(workloads, scales=DEFAULT_SCALES, explicit=None) -> list:
    """(workload, size) pairs to measure: the ``explicit`` sizes, or the scales' sizes with the
    smaller scales of every workload first, so that a budget cut drops the largest sizes."""
    plan = []
    if explicit:
        for name in workloads:
            plan += [(WORKLOADS[name], size) for size in dict.fromkeys(explicit.get(name, ()))]
        return plan
    for scale in scales:
        for name in workloads:
            plan += [
                (WORKLOADS[name], size)
                for size in WORKLOADS[name].sizes[scale]
                if (WORKLOADS[name], size) not in plan
            ]
    return plan


def run(
    scales=DEFAULT_SCALES,
    workloads=tuple(WORKLOADS),
    explicit=None,
    fractions=FRACTIONS,
    repeats: int = 1,
    out_md: Path = HERE / "INCREMENTAL.md",
    out_json: Path = HERE / "results" / "incremental.json",
    out_plot: Path = HERE / "results" / "plots" / "incremental.png",
    spark=None,
    command: str | None = None,
    budget: float | None = None,
    warm_up: bool = True,
    directions=DIRECTIONS,
    log=print,
) -> dict:
    """Measure every workload at the sizes of ``scales`` (or the ``explicit`` workload -> sizes)
    and write the JSON, Markdown and plot; returns the JSON payload.

    ``budget`` (seconds): a size is skipped (and reported as skipped) when the run would end past
    it: when the budget is spent, or after its materialization, when the time spent so far plus
    its estimate exceeds it (the same workload's previous size's time, scaled by the ratio of
    the two materialization times: recomputation dominates, and materializing is recomputing).
    """
    from benchmarks import report
    from benchmarks.session import bench_session, session_settings

    started_at, started = report.now(), time.perf_counter()
    load_before = report.load_average()
    spark = spark or bench_session()
    bench = Bench(spark, repeats, log)
    skipped = []
    deadline = started + budget if budget else None
    try:
        if warm_up:
            bench.warm_up()
        for workload, size in plan_sizes(workloads, scales, explicit):
            try:
                bench.measure(workload, size, fractions, directions, deadline)
            except OverBudget as over:
                entry = {
                    "workload": workload.name,
                    "size": workload.label(size),
                    "edges": len(workload.edges(size)),
                    "reason": str(over),
                }
                skipped.append(entry)
                log(f"{workload.name} · {entry['size']}: skipped ({over})")
    finally:
        bench.close()
    payload = {
        "meta": {
            "command": command or _command(),
            "started": started_at,
            "finished": report.now(),
            "wall_seconds": round(time.perf_counter() - started, 1),
            "load_average": {"start": load_before, "end": report.load_average()},
            "machine": report.machine(),
            "versions": _versions(report),
            "spark": session_settings(spark),
            "git_commit": report.git_commit(),
            "scales": list(scales) if not explicit else None,
            "fractions": list(fractions),
            "directions": list(directions),
            "repeats": repeats,
            "budget_seconds": budget,
            "json": _relative(out_json),
            "plot": _relative(out_plot),
        },
        "sizes": bench.sizes,
        "skipped": skipped,
        "results": bench.records,
    }
    write(payload, out_md, out_json, out_plot)
    return payload


def _versions(report) -> dict:
    from importlib import metadata

    found = report.versions()
    for package in ("deltalake", "delta-spark"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = None
    return found


def _command() -> str:
    return "PYTHONPATH=. .venv/bin/python -m benchmarks.incremental " + " ".join(
        shlex.quote(a) for a in sys.argv[1:]
    )


def _relative(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(HERE.parent))
    except ValueError:
        return str(path)


def write(payload: dict, out_md: Path, out_json: Path | None, out_plot: Path) -> None:
    """The JSON (unless ``out_json`` is None), the plot, and the Markdown that links it."""
    if out_json is not None:
        out_json.parent.mkdir(parents=True, exist_ok=True)
        out_json.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    plotted = plot(payload["results"], out_plot)
    out_md.write_text(
        markdown(payload, _relative_to(out_plot, out_md.parent) if plotted else None), encoding="utf-8"
    )


def _relative_to(path: Path, folder: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path(folder).resolve()))
    except ValueError:
        return str(path)


# -- the report -------------------------------------------------------------------------------


def cells(records: list) -> list:
    """One dict per (workload, size, direction, fraction) with each method's record and the
    ratios recompute / auto and recompute / counting."""
    found: dict = {}
    for r in records:
        key = (r["workload"], r["size"], r["direction"], r["fraction"])
        found.setdefault(
            key,
            {
                "workload": r["workload"],
                "size": r["size"],
                "edges": r["edges"],
                "facts_before": r["facts_before"],
                "output": r["output"],
                "direction": r["direction"],
                "fraction": r["fraction"],
                "changed_edges": r["changed_edges"],
                "methods": {},
            },
        )
        found[key]["methods"][r["method"]] = r
    for cell in found.values():
        methods = cell["methods"]
        recompute = methods.get("recompute")
        for method in ("auto", "counting"):
            other = methods.get(method)
            cell[f"ratio_{method}"] = (
                recompute["seconds"] / other["seconds"]
                if recompute and other and other["seconds"] > 0
                else None
            )
    return list(found.values())


def _pct(fraction: float) -> str:
    return f"{fraction * 100:g}%" if fraction > 0 else "1 edge"


def _strata(record: dict) -> str:
    """``tc: dred (in the driver)``: each stratum's method and where it ran (older records
    have no placement)."""
    return ", ".join(
        f"{'/'.join(s[1])}: {s[2]}" + (f" ({s[4]})" if len(s) > 4 else "") for s in record["strata"]
    )


def _stratum_record(report) -> list:
    """[index, relations, method, seconds, where it ran, where and why] of a ``StratumReport``."""
    placement = report.placement
    where = [WHERE[placement.where], placement.explained()] if placement is not None else []
    return [report.index, list(report.relations), report.method, round(report.seconds, 3), *where]


def _time(record) -> str:
    if record is None:
        return "n/a"
    return f"{record['seconds']:.2f} ({record['jobs']})"


def _ratio(value) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def markdown(payload: dict, plot_path: str | None) -> str:
    meta, records = payload["meta"], payload["results"]
    m, v, s = meta["machine"], meta["versions"], meta["spark"]
    load = meta["load_average"]
    lines = [
        "# Incremental maintenance vs recomputation (measured)",
        "",
        f"Measured by `{meta['command']}` on {meta['finished']} (started {meta['started']}), in "
        f"{meta['wall_seconds']:.0f} s of wall-clock time"
        + (
            f" (budget {meta['budget_seconds'] / 60:g} min: sizes that would overrun it are "
            "listed under *Not measured*)"
            if meta.get("budget_seconds")
            else ""
        )
        + f". Raw measurements: `{meta['json']}`.",
        "",
        f"Machine: {m['logical_cores']} logical cores ({m['cpu']}), {m['memory_gib']} GiB; load "
        f"average (1, 5, 15 min) {load['start']} at start, {load['end']} at end (other processes "
        f"share this machine). Python {m['python']}, PySpark {v.get('pyspark')} (master "
        f"{s.get('master')}, {s.get('spark.sql.shuffle.partitions')} shuffle partitions, AQE "
        f"{s.get('spark.sql.adaptive.enabled')}, driver memory {s.get('spark.driver.memory')}), "
        f"{v.get('java')}, deltalake {v.get('deltalake')}, spark_datalog "
        f"{v.get('spark-datalog')}"
        + (f", commit {meta['git_commit'][:10]}" if meta.get("git_commit") else "")
        + ".",
        "",
        "How to read: each cell is the wall-clock seconds of one `update` call (best of "
        f"{meta['repeats']}) and, in parentheses, the number of Spark jobs it ran (independent of "
        "the machine's load). Every update starts from a fresh copy of the same materialized "
        'warehouse. *auto* = `method="auto"` (DRed for recursive strata, counting for '
        "non-recursive ones; the strata column says what each stratum used), *counting* = "
        '`method="counting"`, measured only where the program has a non-recursive stratum '
        "(n/a otherwise: counting does not terminate on recursive strata), *recompute* = "
        '`method="recompute"` (every stratum evaluated afresh from the new inputs and diffed '
        "with its stored state). Ratio = recompute / incremental, above 1 the incremental "
        "method is faster. All methods left every derived relation with the same number of "
        "facts and the same content checksum (checked; the run fails otherwise).",
        "",
    ]
    all_cells = cells(records)
    lines += _targets(all_cells)
    for size_info in _by_workload(payload["sizes"]):
        lines += _workload_section(size_info, all_cells)
    skipped = payload.get("skipped") or []
    if skipped:
        lines += ["## Not measured", ""]
        lines += [
            f"- {s['workload']} · {s['size']} ({s['edges']:,} edges): skipped, {s['reason']}" for s in skipped
        ]
        lines.append("")
    if plot_path:
        lines += [f"![ratio recompute / incremental vs batch size]({plot_path})", ""]
    return "\n".join(lines).rstrip() + "\n"


def _by_workload(sizes: list) -> list:
    grouped: dict = {}
    for entry in sizes:
        grouped.setdefault(entry["workload"], []).append(entry)
    return list(grouped.items())


def _workload_section(item, all_cells) -> list:
    name, sizes = item
    workload = WORKLOADS.get(name)
    title = f"## {name}" + (f": {workload.description}" if workload else "")
    program = f"`benchmarks/programs/{workload.program}.dl`" if workload else ""
    lines = [title, "", f"Program {program}. Sizes:", ""]
    for entry in sizes:
        facts = ", ".join(f"{rel} {n:,}" for rel, (n, _) in entry["facts"].items())
        lines.append(
            f"- {entry['size']}: {entry['edges']:,} edges; facts: {facts}; "
            f"materialize {entry['materialize_seconds']:.2f} s "
            f"({entry['materialize_jobs']} jobs)"
            + (
                f"; this size's measurements took {entry['seconds']:.0f} s"
                if entry.get("seconds") is not None
                else ""
            )
        )
    lines += [
        "",
        "| size | direction | batch | edges changed | auto s (jobs) | counting s (jobs) "
        "| recompute s (jobs) | recompute / auto | recompute / counting | strata (auto) "
        "| facts after |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for cell in [c for c in all_cells if c["workload"] == name]:
        methods = cell["methods"]
        auto = methods.get("auto")
        lines.append(
            f"| {cell['size']} | {cell['direction']} | {_pct(cell['fraction'])} | "
            f"{cell['changed_edges']:,} | {_time(auto)} | {_time(methods.get('counting'))} | "
            f"{_time(methods.get('recompute'))} | {_ratio(cell['ratio_auto'])} | "
            f"{_ratio(cell['ratio_counting'])} | {_strata(auto) if auto else ''} | "
            f"{format(auto['facts_after'], ',') if auto else ''} |"
        )
    lines.append("")
    return lines


def _targets(all_cells: list) -> list:
    """Issue 5's targets at 1% changes, per workload at its largest measured size."""
    lines = [
        "## Issue 5 targets",
        "",
        f"At {_pct(TARGET_FRACTION)} changes, incremental (auto) at least "
        f"{TARGETS['insert']:g}x faster than recompute for insertions and at least "
        f"{TARGETS['delete']:g}x for deletions; per workload at its largest measured size "
        "(smaller sizes in the tables below).",
        "",
    ]
    largest: dict = {}
    for cell in all_cells:
        largest[cell["workload"]] = max(largest.get(cell["workload"], 0), cell["edges"])
    found = False
    for direction in DIRECTIONS:
        for cell in all_cells:
            if (
                cell["direction"] != direction
                or cell["fraction"] != TARGET_FRACTION
                or cell["edges"] != largest[cell["workload"]]
                or cell["ratio_auto"] is None
            ):
                continue
            found = True
            met = cell["ratio_auto"] >= TARGETS[direction]
            smaller = [
                c
                for c in all_cells
                if c["workload"] == cell["workload"]
                and c["direction"] == direction
                and c["fraction"] == TARGET_FRACTION
                and c["edges"] < cell["edges"]
                and c["ratio_auto"] is not None
            ]
            trend = (
                "; by size: "
                + " → ".join(
                    f"{c['ratio_auto']:.2f} ({c['edges']:,} edges)"
                    for c in sorted(smaller + [cell], key=lambda c: c["edges"])
                )
                if smaller
                else ""
            )
            lines.append(
                f"- {cell['workload']} · {cell['size']} · {direction}: ratio "
                f"{cell['ratio_auto']:.2f} (target {TARGETS[direction]:g}): "
                f"**{'met' if met else 'not met'}**{trend}"
            )
    if not found:
        lines.append(f"- not measured: no batch of {_pct(TARGET_FRACTION)} in this run")
    lines.append("")
    return lines


def _batch_x(cell: dict) -> float:
    """Where a batch goes on the plot's x axis: its fraction, or for a single edge (fraction 0)
    the fraction that one edge is."""
    return cell["fraction"] or cell["changed_edges"] / cell["edges"]


def plot(records: list, path: Path) -> bool:
    """Ratio recompute / auto vs batch fraction (log x, log y), one panel per workload, a line
    per size and direction; the targets as horizontal lines. False when nothing to draw."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    from .report import save_panels

    all_cells = [c for c in cells(records) if c["ratio_auto"] is not None]
    if not all_cells:
        return False
    names = list(dict.fromkeys(c["workload"] for c in all_cells))
    columns = min(2, len(names))
    rows = (len(names) + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(6.2 * columns, 4.2 * rows), squeeze=False)
    colors = plt.get_cmap("viridis")
    for ax, name in zip(axes.flat, names, strict=False):
        mine = [c for c in all_cells if c["workload"] == name]
        sizes = sorted(dict.fromkeys((c["edges"], c["size"]) for c in mine))
        for i, (_, size) in enumerate(sizes):
            color = colors(0.15 + 0.7 * i / max(1, len(sizes) - 1))
            for direction, style, marker in (("insert", "-", "o"), ("delete", "--", "s")):
                points = sorted(
                    (_batch_x(c), c["ratio_auto"])
                    for c in mine
                    if c["size"] == size and c["direction"] == direction
                )
                if points:
                    ax.plot(
                        *zip(*points, strict=True),
                        linestyle=style,
                        marker=marker,
                        color=color,
                        label=f"{size}, {direction}",
                    )
        ax.axhline(
            TARGETS["insert"],
            color="tab:red",
            linewidth=1,
            linestyle=":",
            label=f"target insertions ({TARGETS['insert']:g}x at 1%)",
        )
        ax.axhline(
            TARGETS["delete"],
            color="tab:orange",
            linewidth=1,
            linestyle=":",
            label=f"target deletions ({TARGETS['delete']:g}x at 1%)",
        )
        ax.axhline(1, color="gray", linewidth=0.8)
        ratios = [c["ratio_auto"] for c in mine]
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(min(0.5, min(ratios) / 1.3), max(10.0, max(ratios) * 1.3))
        ticks = {f: _pct(f) for f in FRACTIONS}
        ticks.update({_batch_x(c): _pct(c["fraction"]) for c in mine})
        ax.set_xticks(sorted(ticks))
        ax.set_xticklabels([ticks[x] for x in sorted(ticks)])
        ax.xaxis.set_minor_locator(ticker.NullLocator())
        ax.yaxis.set_major_locator(ticker.FixedLocator([0.25, 0.5, 1, 2, 3, 5, 10, 20, 50, 100]))
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(ticker.NullFormatter())
        ax.set_xlabel("batch (fraction of the edges)")
        ax.set_ylabel("recompute / incremental (auto)")
        ax.set_title(name, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6)
    save_panels(fig, axes, len(names), path)
    return True


# -- command line -----------------------------------------------------------------------------


def parse_size(workload: Workload, text: str):
    """``14`` (tree depth), ``20000x40000`` (nodes x edges) or, for R-MAT, ``18x4194304``
    (scale x edges)."""
    if workload.graph == "tree":
        return int(text)
    n, m = text.lower().split("x")
    return (int(n), int(m))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.incremental",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--scale",
        default=",".join(DEFAULT_SCALES),
        help=f"comma-separated scales among {', '.join(SCALES)} (default {','.join(DEFAULT_SCALES)})",
    )
    parser.add_argument(
        "--workload",
        action="append",
        choices=tuple(WORKLOADS),
        help="measure only this workload (repeatable)",
    )
    parser.add_argument(
        "--size",
        action="append",
        default=[],
        metavar="WORKLOAD=SIZE",
        help="explicit size instead of the scales (repeatable): tree depth "
        "(tc-tree=14) or nodes x edges (cc-gnm=50000x50000)",
    )
    parser.add_argument(
        "--fractions",
        default=",".join(f"{f:g}" for f in FRACTIONS),
        help="comma-separated batch sizes as fractions of the edges (0: a single edge)",
    )
    parser.add_argument(
        "--directions", default=",".join(DIRECTIONS), help="insert, delete or both (default insert,delete)"
    )
    parser.add_argument("--repeats", type=int, default=1, help="runs per update (best kept)")
    parser.add_argument(
        "--budget-minutes",
        type=float,
        default=24.0,
        help="skip a size whose estimated time would end the run past this many "
        "minutes (0: no budget; default 24)",
    )
    parser.add_argument(
        "--md",
        "--out",
        type=Path,
        default=HERE / "INCREMENTAL.md",
        help="the Markdown report (default benchmarks/INCREMENTAL.md)",
    )
    parser.add_argument("--json", type=Path, default=HERE / "results" / "incremental.json")
    parser.add_argument("--plot", type=Path, default=HERE / "results" / "plots" / "incremental.png")
    parser.add_argument(
        "--render",
        type=Path,
        metavar="RUN.json",
        help="only render the Markdown and plot from this JSON (no measuring)",
    )
    args = parser.parse_args(argv)

    if args.render:
        payload = json.loads(args.render.read_text(encoding="utf-8"))
        write(payload, args.md, None, args.plot)
        print(args.md.read_text(encoding="utf-8"))
        return 0
    scales = tuple(s.strip() for s in args.scale.split(",") if s.strip())
    unknown = [s for s in scales if s not in SCALES]
    if unknown:
        parser.error(f"unknown scale(s) {', '.join(unknown)}; choose among {', '.join(SCALES)}")
    explicit = {}
    for item in args.size:
        name, _, text = item.partition("=")
        if name not in WORKLOADS or not text:
            parser.error(
                f"--size {item!r}: expected WORKLOAD=SIZE with WORKLOAD among {', '.join(WORKLOADS)}"
            )
        explicit.setdefault(name, []).append(parse_size(WORKLOADS[name], text))
    workloads = tuple(args.workload or (explicit.keys() if explicit else WORKLOADS))
    fractions = tuple(float(f) for f in args.fractions.split(","))
    directions = tuple(d.strip() for d in args.directions.split(",") if d.strip())
    if not directions or set(directions) - set(DIRECTIONS):
        parser.error(f"--directions: choose among {', '.join(DIRECTIONS)}")
    payload = run(
        scales,
        workloads,
        explicit or None,
        fractions,
        args.repeats,
        args.md,
        args.json,
        args.plot,
        budget=args.budget_minutes * 60 or None,
        directions=directions,
    )
    print(
        f"\n{len(payload['results'])} measurements in {payload['meta']['wall_seconds']:.0f} s; "
        f"wrote {args.md}, {args.json}, {args.plot}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
