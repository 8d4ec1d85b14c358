"""Command line:

    python -m benchmarks run --suite smoke|quick|full|scale [--only NAME]... [--size SIZE]... [--out DIR]
    python -m benchmarks report [--md PATH] RUN.json [RUN.json ...]
    python -m benchmarks list

``run`` measures and writes ``<out>/<run>.json``, ``<out>/<run>.md`` and plots (and
``benchmarks/RESULTS.md`` for a complete quick-suite run); ``report`` renders the Markdown and
plots again from the JSON of one or more runs, without measuring anything. Exit status 1 when
the systems disagree on any size (the correctness check failed).
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SUITE_NAMES = ("smoke", "quick", "full", "scale")


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a suite and write JSON, Markdown and plots")
    run.add_argument("--suite", choices=SUITE_NAMES, default="quick")
    run.add_argument(
        "--only", action="append", metavar="NAME", help="run only this benchmark (repeatable), e.g. tc-chain"
    )
    run.add_argument(
        "--size",
        action="append",
        default=[],
        metavar="SIZE",
        help="run only this size (repeatable): its label as `list` prints it, or one of its "
        "parameters as name=value, e.g. depth=12 or m=1048576",
    )
    run.add_argument("--out", type=Path, default=HERE / "results", help="output folder")
    run.add_argument(
        "--results-md",
        type=Path,
        default=None,
        help="also write the Markdown here (default: benchmarks/RESULTS.md for a "
        "complete quick-suite run, nowhere otherwise)",
    )
    render = sub.add_parser("report", help="render Markdown and plots from the JSON of earlier runs")
    render.add_argument("runs", nargs="+", type=Path, metavar="RUN.json")
    render.add_argument("--md", type=Path, default=None, help="write the Markdown here (default: stdout)")
    sub.add_parser("list", help="list the benchmarks of each suite")
    args = parser.parse_args(argv)

    from .cases import BENCHMARKS

    if args.command == "list":
        for bench in BENCHMARKS:
            sizes = {s: ", ".join(z.label for z in bench.sizes_for(s)) for s in SUITE_NAMES}
            print(f"{bench.name:20} {bench.description}")
            for suite, labels in sizes.items():
                if not labels:
                    continue
                print(f"{'':20} {suite + ':':6} {labels}")
        return 0
    if args.command == "report":
        return report_command(args.runs, args.md)
    return run_command(args, argv)


def run_command(args, argv) -> int:
    from . import report
    from .cases import BENCHMARKS, by_name
    from .runner import SUITES, Runner

    benchmarks = [by_name(n) for n in args.only] if args.only else list(BENCHMARKS)
    settings = SUITES[args.suite]
    name = args.suite + ("-" + "-".join(args.only) if args.only else "")
    if args.size:
        name += "-" + "-".join(re.sub(r"[^0-9A-Za-z]+", "", s.split("=")[-1]) for s in args.size)
    out = args.out.resolve()
    started_at, load_start, started = report.now(), report.load_average(), time.monotonic()

    runner = Runner(settings, log=lambda text: print(text, flush=True))
    runner.run(benchmarks, args.size)

    from .session import session_settings

    json_path = out / f"{name}.json"
    meta = {
        "suite": args.suite,
        "only": args.only,
        "sizes": args.size,
        "command": "python -m benchmarks " + " ".join(shlex.quote(a) for a in argv),
        "started": started_at,
        "finished": report.now(),
        "wall_seconds": round(time.monotonic() - started, 1),
        "load_average": {"start": load_start, "end": report.load_average()},
        "machine": report.machine(),
        "versions": report.versions(),
        "git_commit": report.git_commit(),
        "spark": session_settings(runner.spark),
        "budgets": {
            "case_seconds": settings.case_budget,
            "engine_seconds": settings.engine_budget,
            "suite_seconds": settings.suite_budget,
            "repeats": settings.repeats.count,
            "repeat_below_seconds": settings.repeats.short_seconds,
        },
        "json": _relative(json_path),
    }
    report.write_json(json_path, meta, runner.records, runner.checks)
    md_target = args.results_md or (HERE / "RESULTS.md" if args.suite == "quick" and not args.only else None)
    text = render_runs([json_path], out / f"{name}.md")
    if md_target:
        render_runs([json_path], md_target)
    print(text)
    report.print_summary(runner.records, runner.checks)
    print(
        f"wrote {json_path}, {out / (name + '.md')}"
        + (f", {md_target}" if md_target else "")
        + f" and plots in {out / 'plots'}"
    )
    return 1 if any(c["verdict"] == "mismatch" for c in runner.checks) else 0


def render_runs(json_paths: list, md_path: Path | None) -> str:
    """The Markdown of the given runs (one section each, in order), with their plots drawn next
    to each JSON file (``plots/<run>-<benchmark>.png``); written to ``md_path`` if given."""
    import json

    from . import report

    sections = []
    for json_path in json_paths:
        json_path = Path(json_path).resolve()
        payload = json.loads(json_path.read_text(encoding="utf-8"))
        plots = report.plot(payload["results"], json_path.parent / "plots", json_path.stem)
        md_dir = md_path.resolve().parent if md_path else json_path.parent
        sections.append(
            report.markdown(
                payload["meta"],
                payload["results"],
                payload["checks"],
                {b: _relative(p, md_dir) for b, p in plots.items()},
            )
        )
    text = "\n---\n\n".join(sections)
    if md_path:
        md_path.write_text(text, encoding="utf-8")
    return text


def report_command(json_paths: list, md_path: Path | None) -> int:
    import json

    text = render_runs(json_paths, md_path)
    if md_path is None:
        print(text)
    mismatched = any(json.loads(Path(p).read_text(encoding="utf-8"))["mismatches"] for p in json_paths)
    return 1 if mismatched else 0


def _relative(path: Path, start: Path | None = None) -> str:
    import os

    base = start or HERE.parent
    try:
        return os.path.relpath(path, base)
    except ValueError:
        return str(path)


if __name__ == "__main__":
    sys.exit(main())
