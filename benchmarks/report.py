"""What a run leaves behind: a JSON file with every measurement, a Markdown report with the
tables and ratios, and PNG plots (time vs size per benchmark, log scales).

Every number in the Markdown comes from the JSON of the same run; ratios are engine / anchor,
both measured in that run (below 1: the engine is faster).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import textwrap
from datetime import datetime, timezone
from pathlib import Path

from .cases import RUN_ORDER, by_name

ENGINE = "engine-seminaive"


# -- the run's context ----------------------------------------------------------------------------


def machine() -> dict:
    import psutil

    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        model = platform.processor()
    return {
        "logical_cores": os.cpu_count(),
        "physical_cores": psutil.cpu_count(logical=False),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "cpu": model,
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def load_average() -> list:
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:
        return []


def versions() -> dict:
    from importlib import metadata

    found = {}
    for package in ("pyspark", "duckdb", "networkx", "psutil", "matplotlib", "pyarrow", "spark-datalog"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = None
    if found["spark-datalog"] is None:
        try:
            import spark_datalog

            found["spark-datalog"] = spark_datalog.__version__ + " (source tree)"
        except ImportError:
            pass
    try:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=20)
        found["java"] = (java.stderr or java.stdout).splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        found["java"] = None
    return found


def git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            cwd=Path(__file__).resolve().parent,
        )
        return out.stdout.strip() or None if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


# -- JSON -----------------------------------------------------------------------------------------


def write_json(path: Path, meta: dict, records: list, checks: list) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    mismatches = [c for c in checks if c["verdict"] == "mismatch"]
    payload = {"meta": meta, "mismatches": mismatches, "checks": checks, "results": records}
    path.write_text(json.dumps(payload, indent=1, default=str) + "\n", encoding="utf-8")


# -- Markdown -------------------------------------------------------------------------------------


def _secs(value: float) -> str:
    """Seconds with two decimals, or three significant digits below 0.1 s."""
    return f"{value:.2f}" if value >= 0.1 else f"{value:.2g}"


def _cell(record: dict | None) -> str:
    if record is None:
        return ""
    status = record["status"]
    if status == "ok":
        runs = record["runs"]
        text = f"{_secs(record['seconds'])} s"
        if len(runs) > 1:
            text += f" (median of {len(runs)})"
        if record.get("iterations"):
            text += f", {record['iterations']} it."
        return text
    if status == "unsupported":
        return "n/a¹"
    if status == "skipped":
        return "skipped²"
    if status == "timeout":
        return f"**timeout** after {record['seconds_to_failure']:.0f} s"
    return f"**error** {record.get('error_class')} after {record.get('seconds_to_failure', 0):.1f} s³"


def _ratio(engine: dict | None, anchor: dict | None) -> str:
    if not engine or not anchor:
        return ""
    if engine["status"] == "ok" and anchor["status"] == "ok" and anchor["seconds"] > 0:
        ratio = engine["seconds"] / anchor["seconds"]
        return f"{ratio:.2f}" if ratio < 100 else f"{ratio:,.0f}"
    if engine["status"] == "ok" and anchor["status"] in ("error", "timeout"):
        return f"anchor {anchor['status']}"
    if engine["status"] in ("error", "timeout") and anchor["status"] == "ok":
        return f"engine {engine['status']}"
    return "—"


def _fmt_facts(records: list) -> str:
    counts = sorted({r["facts"] for r in records if r["status"] == "ok"})
    return " / ".join(f"{c:,}" for c in counts) if counts else "—"


def markdown(meta: dict, records: list, checks: list, plots: dict) -> str:
    only = f": {', '.join(meta['only'])} only" if meta.get("only") else ""
    lines = [f"# Benchmark results ({meta['suite']} suite{only})", ""]
    lines += [
        f"Measured by `{meta['command']}` on {meta['finished']} (run started {meta['started']}), "
        f"in {meta['wall_seconds']:.0f} s of wall-clock time.",
        "",
        _machine_line(meta),
        "",
        f"Raw measurements (every run, memory, errors): `{meta['json']}`. "
        "Every number below comes from that file; nothing is estimated except where a cell says "
        "*skipped*, and a skipped cell has no number.",
        "",
    ]
    mismatches = [c for c in checks if c["verdict"] == "mismatch"]
    if mismatches:
        lines += ["## ❌ CORRECTNESS MISMATCH — this run FAILED", ""]
        lines += [f"- **{c['benchmark']} · {c['size']}**: {c['detail']}" for c in mismatches]
        lines.append("")
    else:
        compared = sum(1 for c in checks if c["verdict"] == "ok")
        with_rows = sum(1 for c in checks if c["verdict"] == "ok" and len(c["rows_compared"]) > 1)
        lines += [
            f"Correctness: on all {compared} sizes where two or more systems finished, they derived "
            f"the same number of facts; on the {with_rows} small sizes the facts themselves "
            "were compared and are equal.",
            "",
        ]
    lines += [
        "How to read: times are seconds of evaluation up to the one action that forces the "
        "result (inputs are generated, loaded and cached before the clock starts, for every "
        "system); short cases are the median of several runs. *it.* = fixpoint iterations "
        "reported by the system. Ratio = engine-seminaive time / anchor time in this run: below "
        "1 the engine is faster, above 1 it is slower. ¹ the system cannot express the program "
        "(reason in the notes); ² not run, reason in the notes; ³ the error is a result (class "
        "and time to failure; message in the notes).",
        "",
    ]
    lines += _issue_3_targets(records)
    by_bench: dict = {}
    for record in records:
        by_bench.setdefault(record["benchmark"], []).append(record)
    for bench_name, bench_records in by_bench.items():
        lines += _benchmark_section(bench_name, bench_records, plots.get(bench_name))
    lines += _losses(records)
    lines += _details(records)
    return "\n".join(lines).rstrip() + "\n"


def _machine_line(meta: dict) -> str:
    m, v, s = meta["machine"], meta["versions"], meta.get("spark", {})
    load = meta.get("load_average", {})
    return (
        f"Machine: {m['logical_cores']} logical cores ({m['cpu']}), {m['memory_gib']} GiB; "
        f"load average (1, 5, 15 min) at start {load.get('start')}, at end {load.get('end')} "
        "(other processes share this machine). "
        f"Python {m['python']}, PySpark {v.get('pyspark')} (master {s.get('master')}, "
        f"{s.get('spark.sql.shuffle.partitions')} shuffle partitions, AQE "
        f"{s.get('spark.sql.adaptive.enabled')}, driver memory {s.get('spark.driver.memory')}), "
        f"{v.get('java')}, DuckDB {v.get('duckdb')}, networkx {v.get('networkx')}, "
        f"spark_datalog {v.get('spark-datalog')}."
    )


def _benchmark_section(name: str, records: list, plot: str | None) -> list:
    bench = by_name(name)
    systems = [s for s in RUN_ORDER if any(r["system"] == s for r in records)]
    order = [
        ENGINE,
        "engine-rounds",
        "engine-naive",
        "spark-cte",
        "pyspark-loop",
        "duckdb",
        "networkx",
        "reference",
        "graphframes",
    ]
    systems = [s for s in order if s in systems]
    sizes = list(dict.fromkeys(r["size"] for r in records))
    cell = {(r["size"], r["system"]): r for r in records}
    lines = [f"## {name}", "", f"{bench.description}. Program: `benchmarks/{records[0]['program']}`.", ""]
    lines.append("| size | input rows | facts | " + " | ".join(systems) + " |")
    lines.append("|---|---:|---:|" + "---:|" * len(systems))
    for size in sizes:
        row = [r for r in records if r["size"] == size]
        lines.append(
            f"| {size} | {row[0]['input_rows']:,} | {_fmt_facts(row)} | "
            + " | ".join(_cell(cell.get((size, s))) for s in systems)
            + " |"
        )
    anchors = [s for s in systems if s != ENGINE]
    if ENGINE in systems and anchors:
        lines += ["", "Ratio engine-seminaive / anchor (same run):", ""]
        lines.append("| size | " + " | ".join(f"÷ {s}" for s in anchors) + " |")
        lines.append("|---|" + "---:|" * len(anchors))
        for size in sizes:
            lines.append(
                f"| {size} | "
                + " | ".join(_ratio(cell.get((size, ENGINE)), cell.get((size, s))) for s in anchors)
                + " |"
            )
    notes = [f"- {r['system']} · {r['size']}: {note(r)}" for r in records if note(r)]
    if notes:
        lines += ["", "Notes:", ""] + _dedupe_notes(notes)
    if plot:
        lines += ["", f"![{name}: time vs size]({plot})"]
    lines.append("")
    return lines


def note(r: dict) -> str:
    """What a record's note says: why it was not run, how it failed, or its remark ('' if none)."""
    if r["status"] in ("unsupported", "skipped"):
        return f"{r['status']} — {r['note']}"
    if r["status"] in ("error", "timeout"):
        return f"{r['status']} — {r.get('error_class')}: {(r.get('error') or '')[:300]}"
    return r.get("note") or ""


def _dedupe_notes(notes: list) -> list:
    return list(dict.fromkeys(notes))


def _issue_3_targets(records: list) -> list:
    """Issue 3's targets, each stated as met / not met / not measured from this run's numbers."""
    cell = {(r["benchmark"], r["size"], r["system"]): r for r in records}
    if not any(r["benchmark"] in ("tc-chain", "tc-tree") for r in records):
        return []

    def seconds(bench, size, system):
        r = cell.get((bench, size, system))
        return r["seconds"] if r and r["status"] == "ok" else None

    def verdict(ok):
        return "**met**" if ok else "**not met**"

    lines = ["## Issue 3 targets", ""]
    pairs = [(b, s) for (b, s, system) in cell if system == ENGINE]
    naive = [(b, s, seconds(b, s, ENGINE), seconds(b, s, "engine-naive")) for b, s in pairs]
    naive = [(b, s, e, n) for b, s, e, n in naive if e is not None and n is not None]
    if naive:
        lines.append(
            "- Semi-naive beats naive: "
            + "; ".join(f"{b} · {s}: {e:.2f} s vs {n:.2f} s ({verdict(e < n)})" for b, s, e, n in naive)
            + "."
        )
    else:
        lines.append(
            "- Semi-naive beats naive: not measured (naive did not finish or was skipped on "
            "every size the engine ran)."
        )
    rounds = [(b, s, seconds(b, s, "engine-rounds"), seconds(b, s, "engine-naive")) for b, s in pairs]
    rounds = [(b, s, e, n) for b, s, e, n in rounds if e is not None and n is not None]
    if rounds:
        lines.append(
            "- Semi-naive in rounds of Spark joins (engine-rounds, no partition-local "
            "fixpoint) beats naive too: "
            + "; ".join(f"{b} · {s}: {e:.2f} s vs {n:.2f} s ({verdict(e < n)})" for b, s, e, n in rounds)
            + "."
        )
    engine = seconds("tc-chain", "chain 100", ENGINE)
    for anchor in ("spark-cte", "pyspark-loop"):
        other = seconds("tc-chain", "chain 100", anchor)
        if engine is not None and other is not None:
            ratio = engine / other
            lines.append(
                f"- At least 2x faster than {anchor} on the chain of 100: engine {engine:.2f} s, "
                f"{anchor} {other:.2f} s, ratio {ratio:.2f} (target ≤ 0.50): "
                f"{verdict(ratio <= 0.5)}."
            )
        else:
            lines.append(f"- At least 2x faster than {anchor} on the chain of 100: not measured in this run.")
    big = cell.get(("tc-chain", "chain 1000", ENGINE))
    if big is None:
        lines.append("- The chain of 1,000 finishes: not run.")
    elif big["status"] == "ok":
        lines.append(
            f"- The chain of 1,000 finishes: {big['seconds']:.1f} s, {big['facts']:,} facts, "
            f"{big['iterations']} iterations (**met**)."
        )
    else:
        detail = big.get("note") or big.get("error_class") or ""
        lines.append(f"- The chain of 1,000 finishes: {big['status']} ({detail}) (**not met**).")
    lines.append("")
    return lines


def _losses(records: list) -> list:
    """Plain statements of every case where the engine is slower than an anchor or failed."""
    cell = {(r["benchmark"], r["size"], r["system"]): r for r in records}
    lines = ["## Where the engine loses", ""]
    found = []
    for r in records:
        if r["system"] != ENGINE:
            continue
        key = (r["benchmark"], r["size"])
        if r["status"] in ("error", "timeout"):
            found.append(
                f"- {key[0]} · {key[1]}: the engine did not finish ({r['status']}, {r.get('error_class')})."
            )
            continue
        if r["status"] != "ok":
            continue
        slower = []
        for anchor in RUN_ORDER:
            other = cell.get(key + (anchor,))
            if anchor == ENGINE or not other or other["status"] != "ok" or other["seconds"] <= 0:
                continue
            ratio = r["seconds"] / other["seconds"]
            if ratio > 1:
                slower.append(f"{anchor} ({_secs(other['seconds'])} s, engine {ratio:,.1f}x slower)")
        if slower:
            found.append(
                f"- {key[0]} · {key[1]}: engine-seminaive {r['seconds']:.2f} s is slower than "
                + "; ".join(slower)
                + "."
            )
    lines += found or ["- Nowhere in this run."]
    lines.append("")
    return lines


def _details(records: list) -> list:
    lines = [
        "## All measurements",
        "",
        "Memory: *Python RSS* is the peak resident set size, sampled every 50 ms, of the process "
        "that ran the system (the driver's Python process for Spark systems, the worker process "
        "for the others); *JVM heap* is the peak heap use of the local-mode JVM (driver and "
        "executors) during the case, from its memory-pool MXBeans; *JVM RSS* is the JVM's "
        "resident set size, a high-water mark of what it took from the OS that later cases "
        "inherit; *workers RSS* is the peak of the summed RSS of Spark's Python worker "
        "processes (where the engine's partition-local fixpoints run; an upper bound, forks "
        "share pages).",
        "",
        "*Load* is the machine's 1-minute load average when the case started (2 cores; other "
        "processes share the machine, so a load above 2 means the case competed for CPU).",
        "",
        "| benchmark | size | system | status | seconds | runs | facts | iterations | "
        "Python RSS MB | JVM heap MB | JVM RSS MB | workers RSS MB | load |",
        "|---|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in records:
        if r["status"] in ("unsupported", "skipped"):
            continue
        mem = r.get("memory") or {}
        seconds = r["seconds"] if r["status"] == "ok" else r.get("seconds_to_failure")
        lines.append(
            f"| {r['benchmark']} | {r['size']} | {r['system']} | {r['status']} | "
            f"{seconds if seconds is not None else ''} | {', '.join(str(x) for x in r['runs'])} | "
            f"{r['facts'] if r['facts'] is not None else ''} | {r['iterations'] or ''} | "
            f"{mem.get('python_rss_peak_mb', '')} | {mem.get('jvm_heap_peak_mb', '')} | "
            f"{mem.get('jvm_rss_peak_mb', '')} | {mem.get('spark_workers_rss_peak_mb', '')} | "
            f"{r.get('load_1min', '')} |"
        )
    lines.append("")
    return lines


# -- plots ----------------------------------------------------------------------------------------

# One colour and marker per system in every plot (hollow markers keep overlapping points visible).
_STYLE = {
    "engine-seminaive": ("tab:red", "o"),
    "engine-naive": ("tab:orange", "s"),
    "engine-rounds": ("tab:pink", "D"),
    "spark-cte": ("tab:blue", "^"),
    "pyspark-loop": ("tab:purple", "v"),
    "duckdb": ("tab:green", "D"),
    "networkx": ("tab:olive", "P"),
    "reference": ("tab:gray", "X"),
    "graphframes": ("tab:cyan", "h"),
}


def plot(records: list, out_dir: Path, prefix: str) -> dict:
    """One PNG per benchmark: seconds vs input size, log-log, one line per system; failures are
    drawn as crosses at their time to failure. Returns benchmark -> file path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    files = {}
    by_bench: dict = {}
    for r in records:
        by_bench.setdefault(r["benchmark"], []).append(r)
    for name, bench_records in by_bench.items():
        fig, ax = plt.subplots(figsize=(7, 4.5))
        drawn = False
        for system in RUN_ORDER:
            ok = sorted(
                (r["input_rows"], r["seconds"])
                for r in bench_records
                if r["system"] == system and r["status"] == "ok"
            )
            failed = [
                (r["input_rows"], r["seconds_to_failure"])
                for r in bench_records
                if r["system"] == system and r["status"] in ("error", "timeout")
            ]
            color, marker = _STYLE[system]
            if ok:
                ax.plot(
                    *zip(*ok, strict=True),
                    marker=marker,
                    color=color,
                    label=system,
                    markersize=7,
                    markerfacecolor="none" if system != ENGINE else color,
                    zorder=2 if system == ENGINE else 3,
                )
                drawn = True
            if failed:
                ax.scatter(
                    *zip(*failed, strict=True),
                    marker="x",
                    s=60,
                    color=color,
                    label=f"{system} (failed/timeout)",
                )
                drawn = True
        if not drawn:
            plt.close(fig)
            continue
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("input rows")
        ax.set_ylabel("seconds")
        ax.set_title(textwrap.fill(f"{name}: {by_name(name).description}", 90), fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = out_dir / f"{prefix}-{name}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        files[name] = path
    return files


def save_panels(fig, axes, used: int, path: Path) -> None:
    """Hide the panels of a grid past the first ``used``, lay out and save the figure, close it."""
    import matplotlib.pyplot as plt

    for ax in list(axes.flat)[used:]:
        ax.set_visible(False)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def print_summary(records: list, checks: list, log=print) -> None:
    for check in checks:
        if check["verdict"] == "mismatch":
            log("!" * 100)
            log(f"MISMATCH in {check['benchmark']} · {check['size']}: {check['detail']}")
            log("!" * 100)
