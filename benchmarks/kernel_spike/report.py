"""The Markdown report of a spike run. The hand-written ``## Decision`` section (and everything
after it) of an existing report is kept when the figures are re-rendered."""

from __future__ import annotations

import os
import platform
import time
from importlib.metadata import version
from pathlib import Path

from .inputs import BY_NAME
from .measure import ANCHOR
from .semantics import PROBES

DECISION = "## Decision"


def _header(run: dict) -> list:
    (s1, s5, s15), (e1, e5, e15) = run["load"]
    libs = ", ".join(f"{lib} {version(lib)}" for lib in ("polars", "duckdb", "pyarrow"))
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(run["started"]))
    return [
        "# Local kernel spike: Polars vs DuckDB vs Arrow Acero (issue 21, deliverable 1)",
        "",
        f"- Command: `{run['command']}` (from the repository root, under `flock /tmp/spark-heavy.lock`)",
        f"- Date: {when}; the run took {run['seconds']:.0f} s",
        f"- Machine: {os.cpu_count()} cores, {platform.platform()}, Python {platform.python_version()}",
        f"- Load average (1/5/15 min): {s1:.2f} / {s5:.2f} / {s15:.2f} at the start,"
        f" {e1:.2f} / {e5:.2f} / {e15:.2f} at the end",
        f"- Libraries: {libs}",
        f"- Big workloads ran for: {', '.join(run['big_systems']) or 'none'}",
        "",
        "Each cell is one fresh process: inputs read from cached Arrow IPC files, one warm-up run,",
        "then the timed runs; **seconds** is the best timed run, from Arrow tables in to the fixpoint",
        "as an Arrow table out. **Peak RSS** is the process's `VmHWM` at exit, so it includes the",
        "interpreter, the imported library and the inputs (**RSS after load**: before the first run).",
        "The anchor is DuckDB's `WITH RECURSIVE` (`benchmarks/anchors/duckdb_sql.py`, tables created",
        "before the clock starts); **ratio** is seconds / the anchor's seconds at the same thread",
        "count. Every kernel's fact count is checked against the anchor's. **rounds**: recursive",
        "rounds evaluated, the last one finding nothing new (the anchor does not report them).",
        "",
    ]


def _table(run: dict, name: str) -> list:
    rows = [r for r in run["results"] if r["workload"] == name]
    anchor = {r["threads"]: r.get("best") for r in rows if r["system"] == ANCHOR}
    wl = BY_NAME[name]
    issue = f" (the issue: {wl.issue} facts)" if wl.issue else ""
    lines = [f"### {name}: {wl.label}{issue}", ""]
    lines += [
        "| system | threads | seconds | peak RSS MB | RSS after load MB | rounds | facts | ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['system']} | {r['threads']} | {r['error']} | | | | | |")
            continue
        ratio = f"{r['best'] / anchor[r['threads']]:.2f}" if anchor.get(r["threads"]) else ""
        facts = f"{r['facts']:,}" + (" **MISMATCH**" if "mismatch" in r else "")
        rounds = "" if r["rounds"] is None else str(r["rounds"])
        cells = [
            r["system"],
            r["threads"],
            f"{r['best']:.3f}",
            f"{r['peak_rss_mb']:.0f}",
            f"{r['loaded_mb']:.0f}",
            rounds,
            facts,
            ratio,
        ]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return [*lines, ""]


def _per_round(run: dict) -> list:
    rows = [r for r in run["results"] if r["workload"] == "reach-chain1000" and r.get("rounds")]
    if not rows:
        return []
    lines = ["### Per-round overhead (reach-chain1000: every round joins one fact)", ""]
    lines += ["| system | threads | ms per round |", "|---|---|---|"]
    lines += [f"| {r['system']} | {r['threads']} | {1000 * r['best'] / r['rounds']:.2f} |" for r in rows]
    return [*lines, ""]


def _semantics(run: dict) -> list:
    names = list(PROBES)
    lines = ["## Expression semantics (wanted: `spark_datalog/reference/terms.py`)", ""]
    lines += [f"Operators probed: {'; '.join(f'{n}: {PROBES[n][1]}' for n in names)}.", ""]
    lines += ["| case | wanted | " + " | ".join(names) + " |", "|---" * (len(names) + 2) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in run["semantics"]]
    return [*lines, ""]


def render(run: dict, previous: Path) -> str:
    lines = _header(run)
    if run["mismatches"]:
        lines += ["**FACT COUNT MISMATCHES:** " + "; ".join(run["mismatches"]), ""]
    lines += ["## Figures", ""]
    for name in dict.fromkeys(r["workload"] for r in run["results"]):
        lines += _table(run, name)
    lines += _per_round(run) + _semantics(run)
    old = previous.read_text() if previous.exists() else ""
    kept = old[old.index(DECISION) :] if DECISION in old else f"{DECISION}\n\n(not written yet)\n"
    return "\n".join(lines) + "\n" + kept
