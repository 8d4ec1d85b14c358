"""The scale suite's summary (issue 21, item 5): every run of ``--suite scale`` and of the
incremental cases at scale, merged into one report with the targets and a plot of time vs facts.

    python -m benchmarks.scale [--md benchmarks/SCALE.md] RUN.json [RUN.json ...]

Each RUN.json is either a ``python -m benchmarks run --suite scale ...`` result or a
``python -m benchmarks.incremental ...`` result (told apart by their content). Nothing is
measured here: every number comes from those files, and a size of the suite that no file holds
is listed as *not run*. The targets are reported, never asserted: within 2x of DuckDB; at least
5x faster than Spark's recursive CTE, the hand-written PySpark loop and GraphFrames where they
ran; time per fact within 2x from the smallest to the largest R-MAT graph; a 1-edge update of
the 9.2M-fact transitive closure under 1 s and a 1% update at least 20x faster than recomputing.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path

from . import cases
from .report import _STYLE, ENGINE, _secs, note, save_panels
from .report import _cell as report_cell

HERE = Path(__file__).resolve().parent
ANCHORS = ("duckdb", "networkx", "spark-cte", "pyspark-loop", "graphframes")
SPARK_ANCHORS = ("spark-cte", "pyspark-loop", "graphframes")
TARGET_DUCKDB = 2.0  # engine / DuckDB at most
TARGET_SPARK = 5.0  # Spark anchor / engine at least
TARGET_PER_FACT = 2.0  # time per fact, largest / smallest R-MAT size, at most
TARGET_ONE_EDGE = 1.0  # seconds, 1-edge update of tc on the 3-ary tree of depth 12
TARGET_ONE_PERCENT = 20.0  # recompute / update at 1%, at least
# The incremental cases of the scale suite (workload, size label), as `make bench-scale` runs them.
INCREMENTAL_CASES = (("tc-tree3", "3-ary tree depth 12"), ("cc-rmat", "R-MAT 2^18, 4,194,304 edges"))


def load(paths) -> tuple:
    """(suite runs, incremental runs): the payloads of the given JSON files."""
    suite, incremental = [], []
    for path in paths:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
        payload["path"] = str(path)
        (incremental if "sizes" in payload and "checks" not in payload else suite).append(payload)
    return suite, incremental


def _records(suite_runs) -> list:
    """Every record of the runs, each with its run's command; a later run of the same benchmark,
    size and system replaces an earlier one."""
    found: dict = {}
    for run in suite_runs:
        for record in run["results"]:
            found[(record["benchmark"], record["size"], record["system"])] = dict(
                record, command=run["meta"]["command"]
            )
    return list(found.values())


def _cell(record) -> str:
    return "not run" if record is None else report_cell(record)


def _ratio(numerator, denominator) -> float | None:
    if not numerator or not denominator:
        return None
    if numerator["status"] != "ok" or denominator["status"] != "ok" or denominator["seconds"] <= 0:
        return None
    return numerator["seconds"] / denominator["seconds"]


def _memory(record) -> str:
    if not record or record["status"] != "ok":
        return ""
    mem = record.get("memory") or {}
    if "jvm_heap_peak_mb" in mem:
        parts = [f"heap {mem['jvm_heap_peak_mb']:,.0f}"]
        if mem.get("spark_workers_rss_peak_mb") is not None:
            parts.append(f"workers {mem['spark_workers_rss_peak_mb']:,.0f}")
        return " / ".join(parts)
    if "python_rss_peak_mb" in mem:
        return f"RSS {mem['python_rss_peak_mb']:,.0f}"
    return ""


def _fmt_ratio(value) -> str:
    return "" if value is None else f"{value:.2f}"


def markdown(suite_runs, incremental_runs, plot_path: str | None) -> str:
    records = _records(suite_runs)
    cell = {(r["benchmark"], r["size"], r["system"]): r for r in records}
    lines = [
        "# Scale suite (issue 21, item 5)",
        "",
        "The engine (`engine-seminaive`: partition-local fixpoints run by the Polars kernel inside "
        "Spark tasks) against DuckDB, networkx, Spark's recursive CTE, a hand-written PySpark loop "
        "and GraphFrames, at millions of facts. Every number below comes from the JSON files "
        "listed under *Runs*; a size of the suite that none of them measured is listed as *not "
        "run*, never estimated. Targets are reported, not asserted.",
        "",
    ]
    lines += _runs_section(suite_runs, incremental_runs)
    lines += _correctness(suite_runs)
    lines += _targets(records, cell, incremental_runs)
    lines += [
        "How to read: seconds of evaluation up to the one action that forces the result (inputs "
        "generated, loaded and cached before the clock starts, for every system; runs shorter "
        "than 10 s are the median of 3). *engine / duckdb* below 1: the engine is faster. "
        "*µs/fact* = engine seconds per output fact. Memory in MB: for the engine, the peak JVM "
        "heap during the case and the peak summed RSS of Spark's Python workers (where the "
        "kernel runs; an upper bound, forks share pages); for DuckDB and networkx the peak RSS of "
        "the worker process that ran them. *Load* = 1-minute load average when the engine's case "
        "started (2 cores shared with other work). ¹ the system cannot run the problem; ² not "
        "run, reason in the notes; ³ the failure is a result (notes).",
        "",
    ]
    notes = []
    for bench in [b for b in cases.BENCHMARKS if b.sizes_for("scale")]:
        lines += _bench_table(bench, cell, notes)
    if notes:
        lines += ["## Notes", ""] + list(dict.fromkeys(notes)) + [""]
    lines += _incremental_section(incremental_runs)
    if plot_path:
        lines += [f"![time vs facts]({plot_path})", ""]
    return "\n".join(lines).rstrip() + "\n"


def _runs_section(suite_runs, incremental_runs) -> list:
    lines = ["## Runs", ""]
    for run in suite_runs + incremental_runs:
        meta = run["meta"]
        load = meta.get("load_average", {})
        commit = (meta.get("git_commit") or "")[:10]
        lines.append(
            f"- `{meta['command']}` — {meta['finished']}, {meta['wall_seconds']:.0f} s, load average "
            f"(1, 5, 15 min) {load.get('start')} → {load.get('end')}, commit {commit or '?'}; "
            f"`{meta.get('json', run['path'])}`"
        )
    if suite_runs:
        m, v = suite_runs[0]["meta"]["machine"], suite_runs[0]["meta"]["versions"]
        spark = suite_runs[0]["meta"].get("spark", {})
        lines += [
            "",
            f"Machine: {m['logical_cores']} logical cores ({m['cpu']}), {m['memory_gib']} GiB, "
            "shared with other Spark work (every run held a machine-wide lock so that no other "
            f"benchmark ran at the same time). Python {m['python']}, PySpark {v.get('pyspark')} "
            f"(master {spark.get('master')}, {spark.get('spark.sql.shuffle.partitions')} shuffle "
            f"partitions, driver memory {spark.get('spark.driver.memory')}), {v.get('java')}, "
            f"DuckDB {v.get('duckdb')}, networkx {v.get('networkx')}.",
        ]
    lines.append("")
    return lines


def _correctness(suite_runs) -> list:
    checks = [c for run in suite_runs for c in run["checks"]]
    bad = [c for c in checks if c["verdict"] == "mismatch"]
    if bad:
        return (
            ["## ❌ CORRECTNESS MISMATCH", ""]
            + [f"- {c['benchmark']} · {c['size']}: {c['detail']}" for c in bad]
            + [""]
        )
    compared = [c for c in checks if c["verdict"] == "ok"]
    alone = [c for c in checks if c["verdict"] != "ok"]
    lines = [
        f"Correctness: on all {len(compared)} sizes where two or more systems finished, every "
        "system derived the same number of facts (the run fails otherwise)."
    ]
    if alone:
        lines[-1] += (
            " Only one system finished on: "
            + ", ".join(f"{c['benchmark']} · {c['size']}" for c in alone)
            + "."
        )
    return lines + [""]


def _bench_table(bench, cell, notes) -> list:
    lines = [
        f"## {bench.name}",
        "",
        f"{bench.description}. Program: `benchmarks/programs/{bench.program}.dl`.",
        "",
        "| size | input rows | facts | engine | duckdb | engine / duckdb | networkx | spark-cte | "
        "pyspark-loop | graphframes | µs/fact | engine memory MB | duckdb memory MB | load |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|",
    ]
    for size in sorted(bench.sizes_for("scale"), key=lambda s: s.x):
        engine = cell.get((bench.name, size.label, ENGINE))
        if engine is None:
            lines.append(f"| {size.label} | {int(size.x):,} | | not run | not run | | | | | | | | | |")
            notes.append(f"- {bench.name} · {size.label}: not run in these runs (see *Not run*).")
            continue
        facts = engine.get("facts") or next(
            (cell[k]["facts"] for k in cell if k[:2] == (bench.name, size.label) and cell[k].get("facts")),
            None,
        )
        duck = cell.get((bench.name, size.label, "duckdb"))
        per_fact = engine["seconds"] / facts * 1e6 if engine["status"] == "ok" and facts else None
        lines.append(
            f"| {size.label} | {engine['input_rows']:,} | {facts or 0:,} | {_cell(engine)} | {_cell(duck)} | "
            f"{_fmt_ratio(_ratio(engine, duck))} | "
            + " | ".join(_cell(cell.get((bench.name, size.label, s))) for s in ANCHORS[1:])
            + f" | {'' if per_fact is None else f'{per_fact:.2f}'} | {_memory(engine)} | {_memory(duck)} | "
            f"{engine.get('load_1min', '')} |"
        )
        for system in (ENGINE,) + ANCHORS:
            r = cell.get((bench.name, size.label, system))
            if r is not None and note(r):
                notes.append(f"- {bench.name} · {size.label} · {system}: {note(r)}")
    lines.append("")
    return lines


def _targets(records, cell, incremental_runs) -> list:
    lines = ["## Targets (reported, not asserted)", ""]
    engine_ok = [r for r in records if r["system"] == ENGINE and r["status"] == "ok"]
    duck = []
    for r in engine_ok:
        ratio = _ratio(r, cell.get((r["benchmark"], r["size"], "duckdb")))
        if ratio is not None:
            verdict = "met" if ratio <= TARGET_DUCKDB else "not met"
            duck.append(f"{r['benchmark']} · {r['size']}: {ratio:.2f} (**{verdict}**)")
    lines.append(
        f"- Within {TARGET_DUCKDB:g}x of DuckDB (engine / DuckDB ≤ {TARGET_DUCKDB:g}): "
        + ("; ".join(duck) if duck else "nothing measured")
        + "."
    )
    spark = []
    for r in engine_ok:
        for anchor in SPARK_ANCHORS:
            other = cell.get((r["benchmark"], r["size"], anchor))
            if other is None or other["status"] in ("unsupported", "skipped"):
                continue
            if other["status"] == "ok":
                speedup = other["seconds"] / r["seconds"]
                verdict = "met" if speedup >= TARGET_SPARK else "not met"
                spark.append(f"{anchor} on {r['benchmark']} · {r['size']}: {speedup:.1f}x (**{verdict}**)")
            else:
                spark.append(
                    f"{anchor} on {r['benchmark']} · {r['size']}: {anchor} {other['status']} after "
                    f"{other.get('seconds_to_failure', 0):.0f} s, engine {r['seconds']:.1f} s"
                )
    lines.append(
        f"- At least {TARGET_SPARK:g}x faster than Spark's CTE, the PySpark loop and GraphFrames where they "
        "ran: " + ("; ".join(spark) if spark else "none of them ran at these sizes (notes say why)") + "."
    )
    per_fact = []
    for bench in [b for b in cases.BENCHMARKS if b.sizes_for("scale") and b.family == "rmat"]:
        points = []
        for size in sorted(bench.sizes_for("scale"), key=lambda s: s.x):
            r = cell.get((bench.name, size.label, ENGINE))
            if r and r["status"] == "ok" and r["facts"]:
                points.append((size.label, r["seconds"] / r["facts"] * 1e6))
        if len(points) >= 2:
            growth = points[-1][1] / points[0][1]
            verdict = "met" if growth <= TARGET_PER_FACT else "not met"
            per_fact.append(
                f"{bench.name}: {points[0][1]:.2f} µs/fact at {points[0][0]} → {points[-1][1]:.2f} at "
                f"{points[-1][0]} ({growth:.2f}x, **{verdict}**"
                + ("" if points[-1][0].endswith("16777216 edges") else "; 16M edges not run")
                + ")"
            )
        elif points:
            per_fact.append(
                f"{bench.name}: only {points[0][0]} measured ({points[0][1]:.2f} µs/fact), not assessed"
            )
    lines.append(
        f"- Time per fact within {TARGET_PER_FACT:g}x from 1M to 16M edges: "
        + ("; ".join(per_fact) if per_fact else "nothing measured")
        + "."
    )
    lines += _incremental_targets(incremental_runs)
    lines.append("")
    return lines


def _incremental_cells(incremental_runs) -> list:
    from .incremental import cells

    return cells([r for run in incremental_runs for r in run["results"]])


def _incremental_targets(incremental_runs) -> list:
    found = _incremental_cells(incremental_runs)
    one_edge = [c for c in found if c["fraction"] == 0 and c["methods"].get("auto")]
    percent = [c for c in found if c["fraction"] == 0.01 and c["ratio_auto"] is not None]
    lines = []
    if one_edge:
        parts = []
        for c in one_edge:
            seconds = c["methods"]["auto"]["seconds"]
            verdict = "met" if seconds < TARGET_ONE_EDGE else "not met"
            target = c["workload"] == "tc-tree3"
            parts.append(
                f"{c['workload']} · {c['size']} · {c['direction']}: {seconds:.2f} s"
                + (f" (**{verdict}**)" if target else " (no target)")
            )
        lines.append(
            f"- 1-edge update (target < {TARGET_ONE_EDGE:g} s on tc, 3-ary depth 12): "
            + "; ".join(parts)
            + "."
        )
    else:
        lines.append("- 1-edge update: not measured in these runs.")
    if percent:
        parts = [
            f"{c['workload']} · {c['size']} · {c['direction']}: {c['ratio_auto']:.2f}x "
            f"(**{'met' if c['ratio_auto'] >= TARGET_ONE_PERCENT else 'not met'}**)"
            for c in percent
        ]
        lines.append(
            f"- 1% update at least {TARGET_ONE_PERCENT:g}x faster than recomputing: " + "; ".join(parts) + "."
        )
    else:
        lines.append("- 1% update vs recompute: not measured in these runs.")
    lines.append(
        "- Peak memory per system: in the tables (engine: JVM heap and Python workers; DuckDB and "
        "networkx: worker RSS) and per run in the runs' Markdown."
    )
    return lines


def _time(record) -> str:
    return "" if record is None else f"{_secs(record['seconds'])} ({record['jobs']})"


def _incremental_section(incremental_runs) -> list:
    if not incremental_runs:
        return ["## Incremental at scale", "", "Not run in this session.", ""]
    from .incremental import _pct, _strata

    lines = [
        "## Incremental at scale",
        "",
        "`python -m benchmarks.incremental` on the scale suite's graphs (workloads `tc-tree3`: tc "
        "on the complete 3-ary tree; `cc-rmat`: cc on the R-MAT graph). Each update starts from "
        'a fresh copy of one materialized Delta warehouse; *auto* = `update(method="auto")` '
        '(DRed for recursive strata), *recompute* = `update(method="recompute")`; both must '
        "leave the same relations (size and checksum; the run fails otherwise). Seconds (Spark "
        "jobs).",
        "",
    ]
    for run in incremental_runs:
        for size in run["sizes"]:
            facts = ", ".join(f"{rel} {n:,}" for rel, (n, _) in size["facts"].items())
            lines.append(
                f"- {size['workload']} · {size['size']}: {size['edges']:,} edges; {facts}; materialized "
                f"into the warehouse in {size['materialize_seconds']:.1f} s"
            )
        for skipped in run.get("skipped") or []:
            lines.append(f"- {skipped['workload']} · {skipped['size']}: not measured, {skipped['reason']}")
    measured = {(size["workload"], size["size"]) for run in incremental_runs for size in run["sizes"]}
    lines += [
        f"- {name} · {label}: not run in these runs"
        for name, label in INCREMENTAL_CASES
        if (name, label) not in measured
    ]
    lines += [
        "",
        "| workload | size | direction | batch | edges changed | auto s (jobs) | recompute s (jobs) "
        "| recompute / auto | strata (auto) |",
        "|---|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for c in _incremental_cells(incremental_runs):
        auto, recompute = c["methods"].get("auto"), c["methods"].get("recompute")
        lines.append(
            f"| {c['workload']} | {c['size']} | {c['direction']} | {_pct(c['fraction'])} | "
            f"{c['changed_edges']:,} | {_time(auto)} | "
            f"{_time(recompute)} | "
            f"{_fmt_ratio(c['ratio_auto'])} | {_strata(auto)} |"
        )
    lines.append("")
    return lines


def not_run(suite_runs) -> list:
    """(benchmark, size label) of the scale suite that no run measured the engine on."""
    measured = {(r["benchmark"], r["size"]) for r in _records(suite_runs) if r["system"] == ENGINE}
    return [
        (b.name, s.label)
        for b in cases.BENCHMARKS
        for s in sorted(b.sizes_for("scale"), key=lambda s: s.x)
        if (b.name, s.label) not in measured
    ]


def plot(suite_runs, path: Path) -> bool:
    """Seconds vs facts (log-log), one panel per benchmark, one line per system."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = [r for r in _records(suite_runs) if r["status"] == "ok" and r["facts"]]
    names = [
        b.name
        for b in cases.BENCHMARKS
        if b.sizes_for("scale") and any(r["benchmark"] == b.name for r in records)
    ]
    if not names:
        return False
    columns = min(3, len(names))
    rows = (len(names) + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(5.2 * columns, 4.0 * rows), squeeze=False)
    for ax, name in zip(axes.flat, names, strict=False):
        for system in (ENGINE,) + ANCHORS:
            points = sorted(
                (r["facts"], r["seconds"])
                for r in records
                if r["benchmark"] == name and r["system"] == system
            )
            if not points:
                continue
            color, marker = _STYLE[system]
            ax.plot(
                *zip(*points, strict=True),
                marker=marker,
                color=color,
                label=system,
                markerfacecolor=color if system == ENGINE else "none",
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("output facts")
        ax.set_ylabel("seconds")
        ax.set_title(textwrap.fill(name, 40), fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    save_panels(fig, axes, len(names), path)
    return True


def render(paths, md_path: Path, plot_path: Path, reason: str = "") -> str:
    suite_runs, incremental_runs = load(paths)
    plotted = plot(suite_runs, plot_path)
    import os

    text = markdown(
        suite_runs,
        incremental_runs,
        os.path.relpath(plot_path, md_path.resolve().parent) if plotted else None,
    )
    missing = not_run(suite_runs)
    if missing:
        text += "\n## Not run\n\nSizes of the scale suite the engine was not run on in these runs"
        text += f" ({reason}):\n\n" if reason else ":\n\n"
        text += "".join(f"- {name} · {label}\n" for name, label in missing)
    import shlex

    text += (
        "\nThis file: `python -m benchmarks.scale "
        + " ".join(shlex.quote(a) for a in sys.argv[1:])
        + "`. The runs were started from the repository root as `flock /tmp/spark-heavy.lock env "
        "PYTHONPATH=. SPARK_LOCAL_IP=127.0.0.1 .venv/bin/python -m ...` (the lock keeps other "
        "Spark work on the shared machine from running at the same time).\n"
    )
    md_path.write_text(text, encoding="utf-8")
    return text


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.scale",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN.json")
    parser.add_argument("--md", type=Path, default=HERE / "SCALE.md")
    parser.add_argument("--plot", type=Path, default=HERE / "results" / "plots" / "scale-time-vs-facts.png")
    parser.add_argument("--not-run-reason", default="", help="why sizes were not run (goes into the report)")
    args = parser.parse_args(argv)
    text = render(args.runs, args.md, args.plot, args.not_run_reason)
    print(text)
    suite_runs, _ = load(args.runs)
    return 1 if any(c["verdict"] == "mismatch" for run in suite_runs for c in run["checks"]) else 0


if __name__ == "__main__":
    sys.exit(main())
