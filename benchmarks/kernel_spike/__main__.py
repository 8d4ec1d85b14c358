"""``python -m benchmarks.kernel_spike [--workload W ...] [--threads 1,2] [--out FILE.md]``

Runs DuckDB's WITH RECURSIVE anchor and every candidate kernel on the small workloads, then the
anchor and the best two libraries (geometric mean of their best variant's 1-thread times on the
small workloads) on the big ones; writes the Markdown report and the raw JSON beside it. Exits 1
when a kernel's fact count differs from the anchor's.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
import time
from pathlib import Path

from .inputs import BY_NAME, WORKLOADS, cached
from .measure import ANCHOR, CANDIDATES, LIBRARY, child, measure


def _args(argv):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.kernel_spike", description=__doc__)
    parser.add_argument("--workload", action="append", help="workload name (repeatable; default: all)")
    parser.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    parser.add_argument("--systems", default=",".join(CANDIDATES), help="candidates for the small workloads")
    parser.add_argument("--big", default="auto", help="candidates for the big workloads (auto: the best two)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs after the warm-up")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per measurement process")
    parser.add_argument("--out", default="benchmarks/KERNEL_SPIKE.md")
    parser.add_argument("--render", metavar="JSON", help="re-render a run's JSON into --out, no measuring")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def _best_two(results: list, systems: list) -> list:
    """The best variant of each of the two fastest libraries on the small workloads."""
    small = {r["workload"] for r in results if not BY_NAME[r["workload"]].big}
    scores = {}
    for system in systems:
        times = [r["best"] for r in results if r["system"] == system and r["threads"] == 1 and "best" in r]
        if len(times) == len(small):
            scores[system] = math.exp(sum(math.log(t) for t in times) / len(times))
    best: dict = {}
    for system in sorted(scores, key=scores.get):
        best.setdefault(LIBRARY[system], system)
    return list(best.values())[:2]


def _run_workload(name: str, systems: list, threads: list, args, results: list) -> list:
    """Anchor first (its facts are the truth), then each system at each thread count."""
    cached(name)  # generate outside the measured processes
    mismatches = []
    for system in [ANCHOR, *systems]:
        for n in threads:
            spec = {"workload": name, "system": system, "threads": n, "repeats": args.repeats}
            r = measure(spec, args.timeout)
            results.append(r)
            anchor = next(
                (a for a in results if a["workload"] == name and a["system"] == ANCHOR and "facts" in a), None
            )
            if anchor and "facts" in r and r["facts"] != anchor["facts"]:
                r["mismatch"] = f"{r['facts']} facts, the anchor {anchor['facts']}"
                mismatches.append(f"{name} {system} threads={n}: {r['mismatch']}")
                print(f"MISMATCH {mismatches[-1]}", file=sys.stderr)
            shown = r.get("error") or f"{r['best']:.3f} s, {r['peak_rss_mb']:.0f} MB, {r['facts']} facts"
            print(f"{name:16} {system:13} t={n}: {shown}", flush=True)
    return mismatches


def main(argv=None) -> int:
    args = _args(argv)
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return 0
    from . import report
    from .semantics import probe_all

    if args.render:
        Path(args.out).write_text(report.render(json.loads(Path(args.render).read_text()), Path(args.out)))
        return 0

    started, load_start = time.time(), os.getloadavg()
    threads = [int(t) for t in args.threads.split(",")]
    names = args.workload or [wl.name for wl in WORKLOADS]
    systems = args.systems.split(",")
    results: list = []
    mismatches: list = []
    for name in [n for n in names if not BY_NAME[n].big]:
        mismatches += _run_workload(name, systems, threads, args, results)
    big = _best_two(results, systems) if args.big == "auto" else [s for s in args.big.split(",") if s]
    for name in [n for n in names if BY_NAME[n].big]:
        mismatches += _run_workload(name, big, threads, args, results)
    run = {
        "command": "python -m benchmarks.kernel_spike "
        + shlex.join(argv if argv is not None else sys.argv[1:]),
        "started": started,
        "seconds": time.time() - started,
        "load": [load_start, os.getloadavg()],
        "big_systems": big,
        "results": results,
        "mismatches": mismatches,
        "semantics": probe_all(),
    }
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps(run, indent=1) + "\n")
    out.write_text(report.render(run, out))
    print(f"wrote {out} and {out.with_suffix('.json')} in {run['seconds']:.0f} s")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
