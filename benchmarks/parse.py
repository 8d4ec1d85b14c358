"""Parsing and checking large generated programs: ``Program.parse`` (parse + analysis), the
call users make, on 100,000 facts and on 100,000 rules (issue 19, item 9: the target is under
5 s each), in the default dialect and in Soufflé's (issue 23: lower-case variables).

    python -m benchmarks.parse [--count N] [--repeat R] [--dialect datalog|souffle|both]
                               [--out benchmarks/PARSE.md]

Writes a Markdown table with the command that made it, the machine's load and the phases
(parse, analysis), the median over ``--repeat`` fresh processes (default 3) of the first call.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET_SECONDS = 5.0


DIALECTS = ("datalog", "souffle")


def facts(count: int, dialect: str = "datalog") -> str:
    """``count`` facts of a declared binary relation, one per line, plus one rule over it (with
    Soufflé's lower-case variables and ``number`` type in ``dialect`` souffle)."""
    x, y, z = ("x", "y", "z") if dialect == "souffle" else ("X", "Y", "Z")
    kind = "number" if dialect == "souffle" else "long"
    lines = [f".decl edge(src: {kind}, dst: {kind})"]
    lines += [f"edge({i}, {(i * 7919) % count})." for i in range(count)]
    lines.append(f"reach({x}, {y}) :- edge({x}, {y}).\nreach({x}, {z}) :- reach({x}, {y}), edge({y}, {z}).")
    return "\n".join(lines) + "\n"


def rules(count: int, dialect: str = "datalog") -> str:
    """``count`` rules of three literals each over two inputs (joins, a constant, a comparison),
    each deriving its own relation, which the next rule reads (a chain of strata); with Soufflé's
    lower-case variables in ``dialect`` souffle."""
    x, y, z = ("x", "y", "z") if dialect == "souffle" else ("X", "Y", "Z")
    lines = [".input edge, label"]
    for i in range(count):
        source = "edge" if i == 0 else f"r{i - 1}"
        lines.append(
            f"r{i}({x}, {y}) :- {source}({x}, {z}), edge({z}, {y}), label({y}, {i % 10}), {x} != {y}."
        )
    return "\n".join(lines) + "\n"


def measure(kind: str, count: int, repeat: int, dialect: str = "datalog") -> dict:
    """Median over ``repeat`` fresh processes of the first ``Program.parse`` of the process (what a
    user's job pays: nothing warmed, no memory to reuse), with its phases measured after it."""
    runs = []
    for _ in range(repeat):
        command = [sys.executable, "-m", "benchmarks.parse", "--child", kind, str(count), dialect]
        done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=HERE.parent)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def measure_here(kind: str, count: int, dialect: str = "datalog") -> dict:
    """One fresh process: ``Program.parse`` first, then parsing and analysis alone."""
    import resource

    import spark_datalog as sd
    from spark_datalog.analysis import analyse
    from spark_datalog.program import _collector_paused
    from spark_datalog.syntax.parser import parse

    text = (facts if kind == "facts" else rules)(count, dialect)
    start = time.perf_counter()
    program = sd.Program.parse(text, dialect=dialect)
    total = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    del program
    with _collector_paused():  # as Program.parse runs them
        start = time.perf_counter()
        tree = parse(text, dialect=dialect)
        parsed = time.perf_counter()
        analyse(tree)
        analysed = time.perf_counter()
    return {"parse": parsed - start, "analysis": analysed - parsed, "Program.parse": total, "rss": rss}


def report(results: dict, count: int, repeat: int, argv: list) -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    command = "python -m benchmarks.parse " + shlex.join(argv) if argv else "python -m benchmarks.parse"
    lines = [
        "# Parsing and checking large programs",
        "",
        f"Made by `{command}` on {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, load average {load:.1f} at the end, median of {repeat} fresh processes: "
        "`Program.parse` is the first call of the process (what a job pays); parse and analysis are "
        "measured after it in the same process, so they need not add up to it.",
        f"Target (issue 19, item 9): `Program.parse` of {count:,} facts or rules in under "
        f"{TARGET_SECONDS:.0f} s. Dialect souffle: the same programs with lower-case variables.",
        "",
        "| program | clauses | parse s | analysis s | `Program.parse` s | µs per clause | max RSS MB "
        "| target met |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, row in results.items():
        total = row["Program.parse"]
        lines.append(
            f"| {name} | {count:,} | {row['parse']:.2f} | {row['analysis']:.2f} | {total:.2f} | "
            f"{total / count * 1e6:.0f} | {row['rss']:.0f} | {'yes' if total < TARGET_SECONDS else 'no'} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "--child":
        print(json.dumps(measure_here(argv[1], int(argv[2]), argv[3])))
        return 0
    parser = argparse.ArgumentParser(prog="python -m benchmarks.parse", description=__doc__)
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dialect", choices=(*DIALECTS, "both"), default="both")
    parser.add_argument("--out", type=Path, default=HERE / "PARSE.md")
    args = parser.parse_args(argv)
    results = {}
    for dialect in DIALECTS if args.dialect == "both" else (args.dialect,):
        for kind in ("facts", "rules"):
            name = kind if dialect == "datalog" else f"{kind} (souffle)"
            results[name] = measure(kind, args.count, args.repeat, dialect)
            print(name, {k: round(v, 2) for k, v in results[name].items()}, flush=True)
    text = report(results, args.count, args.repeat, argv)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
