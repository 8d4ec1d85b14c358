"""Incremental maintenance vs full recomputation (seed 004's question, at small scale).

Transitive closure on a binary tree and on a sparse random graph: from one materialized
warehouse, batches of 1% and 10% of the edges are inserted and, separately, deleted, and
``update`` is timed with the incremental method (``auto``: DRed for the recursive ``tc``) and
with ``method="recompute"`` (the stratum evaluated afresh from the new inputs and diffed with
its stored state). Every timed update starts from a copy of the same warehouse, and the two
methods' results are checked equal. Counting does not apply: ``tc`` is recursive.

    PYTHONPATH=. .venv/bin/python -m benchmarks.incremental --out benchmarks/INCREMENTAL.md

The Markdown holds only what was measured, with the command and the machine's load.
"""

from __future__ import annotations

import argparse
import os
import random
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path

from . import workloads as w

TC = """
.decl arc(x: long, y: long)
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), arc(Y, Z).
"""

WORKLOADS = {
    "tree": lambda: w.tree(2, 10),  # 2046 edges, tc 18,434 facts
    "random": lambda: w.gnm(600, 540, seed=4),  # sparse: average out-degree 0.9
}
FRACTIONS = (0.01, 0.10)
METHODS = ("auto", "recompute")


def insertions(name: str, edges: list, fraction: float, seed: int) -> list:
    """New edges, a ``fraction`` of the graph's. The tree grows new leaves under random nodes
    (it stays a tree); the random graph gets random edges between its nodes, not present yet."""
    rng = random.Random(seed)
    nodes = sorted({n for e in edges for n in e})
    present, new = set(edges), set()
    while len(new) < max(1, round(fraction * len(edges))):
        u = rng.choice(nodes)
        v = nodes[-1] + 1 + len(new) if name == "tree" else rng.choice(nodes)
        if u != v and (u, v) not in present:
            new.add((u, v))
    return sorted(new)


def deletions(name: str, edges: list, fraction: float, seed: int) -> list:
    return sorted(random.Random(seed).sample(edges, max(1, round(fraction * len(edges)))))


def run(out: Path, repeats: int) -> str:
    from benchmarks.session import bench_session

    import spark_datalog as sd
    from spark_datalog.incremental import update
    from spark_datalog.storage import Warehouse

    spark = bench_session()
    program = sd.Program.parse(TC)
    root = Path(tempfile.mkdtemp(prefix="sd_incremental_bench_"))
    load_before = os.getloadavg()
    rows = []
    try:
        for name, make in WORKLOADS.items():
            edges = make()
            base = root / f"{name}-base"
            arcs = spark.createDataFrame(edges, "x long, y long")
            started = time.perf_counter()
            program.materialize(spark, inputs={"arc": arcs}, warehouse=Warehouse(spark, str(base)))
            materialize_s = time.perf_counter() - started
            tc_size = Warehouse(spark, str(base)).read("tc").count()
            print(f"{name}: {len(edges)} edges, tc {tc_size} facts, materialized in "
                  f"{materialize_s:.1f}s", flush=True)
            for direction in ("insert", "delete"):
                for fraction in FRACTIONS:
                    batch = (insertions if direction == "insert" else deletions)(
                        name, edges, fraction, 7)
                    sign = 1 if direction == "insert" else -1
                    frame = spark.createDataFrame([e + (sign,) for e in batch],
                                                  "x long, y long, _count long")
                    times, results = {}, {}
                    for method in METHODS:
                        best = None
                        for i in range(repeats):
                            copy = root / f"{name}-{direction}-{fraction}-{method}-{i}"
                            shutil.copytree(base, copy)
                            wh = Warehouse(spark, str(copy))
                            started = time.perf_counter()
                            report = update(program, spark, wh, changes={"arc": frame},
                                            method=method)
                            seconds = time.perf_counter() - started
                            best = seconds if best is None else min(best, seconds)
                            results[method] = wh.read("tc").count()
                            assert {s.method for s in report.strata} == {
                                "dred" if method == "auto" else "recompute"}
                            shutil.rmtree(copy, ignore_errors=True)
                        times[method] = best
                    if results["auto"] != results["recompute"]:
                        raise AssertionError(f"{name} {direction} {fraction}: the methods disagree "
                                             f"({results})")
                    ratio = times["recompute"] / times["auto"]
                    row = (name, len(edges), tc_size, direction, fraction, len(batch),
                           times["auto"], times["recompute"], ratio, results["auto"])
                    rows.append(row)
                    print(f"  {direction} {fraction:.0%} ({len(batch)} edges): incremental "
                          f"{times['auto']:.2f}s, recompute {times['recompute']:.2f}s, "
                          f"ratio {ratio:.2f}", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    load_after = os.getloadavg()
    text = render(rows, repeats, load_before, load_after, spark)
    out.write_text(text, encoding="utf-8")
    return text


def render(rows, repeats, load_before, load_after, spark) -> str:
    command = "PYTHONPATH=. .venv/bin/python -m benchmarks.incremental " + " ".join(
        shlex.quote(a) for a in sys.argv[1:])
    lines = [
        "# Incremental maintenance vs recomputation (measured)",
        "",
        f"Command: `{command}`",
        "",
        f"Spark {spark.version}, {spark.sparkContext.master}, shuffle partitions "
        f"{spark.conf.get('spark.sql.shuffle.partitions')}; {os.cpu_count()} cores; load average "
        f"{load_before[0]:.1f} before, {load_after[0]:.1f} after. Program: transitive closure "
        f"`tc`. Times are wall-clock seconds of one `update` call (best of {repeats}), each from a "
        "copy of the same materialized warehouse; incremental = `method=\"auto\"` (DRed for `tc`), "
        "recompute = `method=\"recompute\"`. Both give the same `tc` size (checked).",
        "",
        "| graph | edges | tc before | direction | batch | edges changed | incremental s "
        "| recompute s | recompute / incremental | tc after |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for (name, edges, tc, direction, fraction, n, inc, rec, ratio, after) in rows:
        lines.append(f"| {name} | {edges} | {tc} | {direction} | {fraction:.0%} | {n} | {inc:.2f} "
                     f"| {rec:.2f} | {ratio:.2f} | {after} |")
    lines += ["", "Target (issue 5): at 1% changes, ratio >= 5 for insertions and >= 3 for "
              "deletions."]
    for direction, target in (("insert", 5.0), ("delete", 3.0)):
        at1 = [r for r in rows if r[3] == direction and r[4] == 0.01]
        met = all(r[8] >= target for r in at1)
        shown = ", ".join(f"{r[0]} {r[8]:.2f}" for r in at1)
        label = {"insert": "insertions", "delete": "deletions"}[direction]
        lines.append(f"- {label} at 1%: {shown} -> target {'MET' if met else 'NOT met'}")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.incremental", description=__doc__)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "INCREMENTAL.md")
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args(argv)
    print(run(args.out, args.repeats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
