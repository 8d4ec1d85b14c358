"""Queries: the magic-set rewrite against full materialization and DuckDB (issue 20, item 6).

    python -m benchmarks.queries [--only NAME ...] [--full-factor 12] [--out benchmarks/QUERIES.md]

For each case, in one run: ``Program.query`` with magic sets (the default), the same query with
``magic=False`` (full materialization of what the queried relation needs, then the filter), and
DuckDB's ``WITH RECURSIVE`` seeded by the query's constant. Each measurement runs in a process
of its own with a time limit (a fresh JVM; start-up is not timed): the query call plus one
``count()`` of its answer. Full materialization gets ``--full-factor`` times the magic run's
seconds (at least 120 s): when it does not finish, the speed-up is reported as a lower bound
and its facts as the exact or estimated size of what it would derive (the method is named).

Facts derived: the facts of the recursive strata evaluated (``Answer.facts_derived``); for
DuckDB the rows of its recursive CTEs. Targets: at least 50x fewer facts and 10x faster than
full materialization on the tree and on G(1M, 2M).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
MIN_FULL_SECONDS = 120.0

TC = ".input arc\ntc(X, Y) :- arc(X, Y).\ntc(X, Z) :- tc(X, Y), arc(Y, Z).\n"
SG = ".input par\nsg(X, Y) :- par(P, X), par(P, Y).\nsg(X, Y) :- par(A, X), sg(A, B), par(B, Y).\n"
UNREACHED = TC + ".input node\nunreached(X, Y) :- node(X), node(Y), not tc(X, Y).\n"


@dataclass(frozen=True)
class Case:
    name: str
    program: str
    query: str
    graph: str  # "tree:K:DEPTH" or "gnm:N:M"
    relation: str  # the edge relation's name
    nodes: bool = False  # also a node relation


CASES = (
    Case("sg-tree-3-9", SG, "sg(19682, Y)", "tree:3:9", "par"),
    Case("tc-gnm-100k", TC, "tc(0, X)", "gnm:100000:200000", "arc"),
    Case("tc-gnm-100k-bound-second", TC, "tc(X, 0)", "gnm:100000:200000", "arc"),
    Case("unreached-gnm-100k", UNREACHED, "unreached(0, Y)", "gnm:100000:200000", "arc", nodes=True),
    # node 0 of G(1M, 2M) has no successor; 1 is the smallest node reaching more than half the graph
    Case("tc-gnm-1m", TC, "tc(1, X)", "gnm:1000000:2000000", "arc"),
)
# Tiny sizes: checks the pipeline (``--smoke``), measures nothing worth reporting.
SMOKE = (
    Case("sg-tree-3-4", SG, "sg(79, Y)", "tree:3:4", "par"),
    Case("tc-gnm-1k", TC, "tc(0, X)", "gnm:1000:2000", "arc"),
    Case("tc-gnm-1k-bound-second", TC, "tc(X, 0)", "gnm:1000:2000", "arc"),
    Case("unreached-gnm-1k", UNREACHED, "unreached(0, Y)", "gnm:1000:2000", "arc", nodes=True),
)


# -- data ----------------------------------------------------------------------------------------


def write_inputs(case: Case, folder: Path) -> dict:
    """The case's inputs as Parquet files (relation -> path), written once per graph."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from benchmarks import workloads

    kind, *params = case.graph.split(":")
    base = folder / case.graph.replace(":", "-")
    paths = {case.relation: str(base / "edges.parquet")}
    if case.nodes:
        paths["node"] = str(base / "nodes.parquet")
    if all(Path(p).exists() for p in paths.values()):
        return paths
    base.mkdir(parents=True, exist_ok=True)
    sizes = [int(p) for p in params]
    edges = workloads.tree(*sizes) if kind == "tree" else workloads.gnm(*sizes)
    src, dst = zip(*edges, strict=True)
    pq.write_table(
        pa.table({"src": pa.array(src, pa.int64()), "dst": pa.array(dst, pa.int64())}), paths[case.relation]
    )
    if case.nodes:
        count = sizes[0] if kind == "gnm" else len(edges) + 1
        pq.write_table(pa.table({"id": pa.array(range(count), pa.int64())}), paths["node"])
    return paths


# -- one measurement (in its own process) --------------------------------------------------------


def measure_engine(case: Case, paths: dict, magic: bool) -> dict:
    """Seconds, answers and facts derived of ``Program.query`` on a fresh local session."""
    import spark_datalog as sd
    from benchmarks.session import bench_session
    from spark_datalog.query.run import answer_query

    spark = bench_session()
    program = sd.Program.parse(case.program)
    warm = {
        name: spark.createDataFrame([(0,), (1,)] if name == "node" else [(0, 1), (1, 2)]) for name in paths
    }
    # a first query on two edges: JVM code generation and Python workers warm, as in a long session
    answer_query(program, spark, case.query, inputs=warm, magic="auto" if magic else False).frame.count()
    inputs = {name: (path, "parquet") for name, path in paths.items()}
    start = time.perf_counter()
    answer = answer_query(program, spark, case.query, inputs=inputs, magic="auto" if magic else False)
    answers = answer.frame.count()
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "answers": answers,
        "facts": answer.facts_derived(),
        "strategy": answer.plan.strategy,
    }


def measure_duckdb(case: Case, paths: dict) -> dict:
    """Seconds, answers and CTE rows of DuckDB's recursive query seeded by the constant."""
    import duckdb

    con = duckdb.connect()
    for name, path in paths.items():
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM read_parquet(?)", [path])
    sql, facts_sql = _duckdb_sql(case)
    start = time.perf_counter()
    answers = con.execute(sql).fetchone()[0]
    seconds = time.perf_counter() - start
    facts = con.execute(facts_sql).fetchone()[0]
    return {"seconds": seconds, "answers": answers, "facts": facts, "strategy": "WITH RECURSIVE"}


_REACH = (
    "WITH RECURSIVE r(x) AS (SELECT {out} FROM arc WHERE {into} = {v} "
    "UNION SELECT arc.{out} FROM r JOIN arc ON arc.{into} = r.x) "
)


def _duckdb_sql(case: Case) -> tuple:
    """(answer count query, derived rows query) for the case."""
    constant = case.query.split("(")[1].split(",")[0]
    if case.name.startswith("sg"):
        with_ = (
            "WITH RECURSIVE up(x) AS (SELECT {v} UNION SELECT par.src FROM up JOIN par ON par.dst = up.x), "
            "sg(x, y) AS (SELECT a.dst, b.dst FROM up JOIN par a ON a.dst = up.x JOIN par b ON a.src = b.src "
            "UNION SELECT a.dst, b.dst FROM sg JOIN par a ON a.src = sg.x JOIN up ON up.x = a.dst "
            "JOIN par b ON b.src = sg.y) "
        ).format(v=constant)
        return with_ + f"SELECT count(*) FROM sg WHERE x = {constant}", with_ + "SELECT count(*) FROM sg"
    if case.name.startswith("unreached"):
        with_ = _REACH.format(out="dst", into="src", v=constant)
        return (
            with_ + "SELECT count(*) FROM node WHERE id NOT IN (SELECT x FROM r)",
            with_ + "SELECT count(*) FROM r",
        )
    if "bound-second" in case.name:
        constant = case.query.split(",")[1].strip(" )")
        with_ = _REACH.format(out="src", into="dst", v=constant)
    else:
        with_ = _REACH.format(out="dst", into="src", v=constant)
    return with_ + "SELECT count(*) FROM r", with_ + "SELECT count(*) FROM r"


# -- the run -------------------------------------------------------------------------------------


def run_one(case: Case, system: str, paths: dict, timeout: float) -> dict:
    """One measurement in a child process; ``{"timeout": seconds}`` when it did not finish."""
    command = [sys.executable, "-m", "benchmarks.queries", "--child", case.name, system, json.dumps(paths)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=HERE.parent)
    except subprocess.TimeoutExpired:
        return {"timeout": timeout}
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def full_facts_estimate(case: Case, paths: dict) -> tuple:
    """(facts, how) full materialization derives, when it did not finish: exact for the tree's
    same generation, estimated for a closure from DuckDB reach sizes of 20 random sources."""
    import duckdb

    kind, *params = case.graph.split(":")
    if case.name.startswith("sg"):
        k, depth = int(params[0]), int(params[1])
        return sum((k**level) ** 2 for level in range(1, depth + 1)), "exact: sum over levels of nodes^2"
    n = int(params[0])
    con = duckdb.connect()
    con.execute("CREATE TABLE arc AS SELECT * FROM read_parquet(?)", [paths["arc"]])
    sizes = []
    for source in range(0, n, max(1, n // 20))[:20]:
        sql = _REACH.format(out="dst", into="src", v=source) + "SELECT count(*) FROM r"
        sizes.append(con.execute(sql).fetchone()[0])
    return int(n * sum(sizes) / len(sizes)), "estimated: n x mean reach of 20 sources (DuckDB)"


def run_case(case: Case, folder: Path, full_factor: float) -> dict:
    paths = write_inputs(case, folder)
    magic = run_one(case, "magic", paths, timeout=1800)
    duck = run_one(case, "duckdb", paths, timeout=1800)
    budget = max(MIN_FULL_SECONDS, full_factor * magic.get("seconds", MIN_FULL_SECONDS))
    full = run_one(case, "full", paths, timeout=budget)
    if "seconds" not in full:
        full["facts"], full["facts_how"] = full_facts_estimate(case, paths)
    row = {
        "case": case.name,
        "query": case.query,
        "graph": case.graph,
        "magic": magic,
        "full": full,
        "duckdb": duck,
    }
    print(json.dumps(row), flush=True)
    return row


def _seconds(result: dict) -> str:
    if "seconds" in result:
        return f"{result['seconds']:.1f}"
    if "timeout" in result:
        return f"> {result['timeout']:.0f} (stopped)"
    return f"error: {result.get('error', '?')}"


def _count(value) -> str:
    return "-" if value is None else f"{value:,}"


def _ratio(full: dict, magic: dict, key: str) -> str:
    if key not in magic or not magic[key]:
        return "-"
    if key == "seconds" and "seconds" not in full:
        return f"> {full['timeout'] / magic['seconds']:.0f}x" if "timeout" in full else "-"
    value = full.get(key)
    return f"{value / magic[key]:,.0f}x" if value else "-"


def report(rows: list, argv: list) -> str:
    command = "python -m benchmarks.queries " + shlex.join(argv) if argv else "python -m benchmarks.queries"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# Queries: magic sets vs full materialization vs DuckDB",
        "",
        f"Made by `{command}` on {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, load average {load:.1f} at the end. Seconds: the query plus one "
        "`count()` of its answers, in a fresh process (start-up not timed). Facts: facts derived by "
        "the recursive strata (DuckDB: rows of its recursive CTEs). Targets (issue 20): full / magic "
        "at least 50x for facts and 10x for seconds on the tree and on G(1M, 2M). A run of some cases "
        "(`--only`) keeps the other cases' rows of the previous run (`benchmarks/QUERIES.json`).",
        "",
        "| case | query | answers | magic s | magic facts | full s | full facts | DuckDB s | DuckDB facts "
        "| facts full/magic | seconds full/magic |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    notes = []
    for row in rows:
        magic, full, duck = row["magic"], row["full"], row["duckdb"]
        full_facts = f"{full['facts']:,}" if full.get("facts") is not None else "-"
        if full.get("facts_how"):
            full_facts += " *"
            notes.append(f"* {row['case']}: full facts {full['facts_how']}.")
        lines.append(
            f"| {row['case']} | `{row['query']}` | {magic.get('answers', '-')} | {_seconds(magic)} | "
            f"{_count(magic.get('facts'))} | {_seconds(full)} | {full_facts} | {_seconds(duck)} | "
            f"{_count(duck.get('facts'))} | {_ratio(full, magic, 'facts')} | "
            f"{_ratio(full, magic, 'seconds')} |"
        )
    return "\n".join(lines + [""] + notes) + "\n"


def _previous(out: Path) -> list:
    """The rows of the last run (kept next to the report), for a run of some cases only."""
    path = out.with_suffix(".json")
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else []


def _merged(previous: list, rows: list) -> list:
    """``previous`` rows in case order with the new ``rows`` in place of theirs."""
    new = {row["case"]: row for row in rows}
    order = [c.name for c in CASES + SMOKE]
    kept = {row["case"]: row for row in previous if row["case"] not in new}
    merged = {**kept, **new}
    return [merged[name] for name in order if name in merged]


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "--child":
        case = next(c for c in CASES + SMOKE if c.name == argv[1])
        paths = json.loads(argv[3])
        result = (
            measure_duckdb(case, paths)
            if argv[2] == "duckdb"
            else measure_engine(case, paths, argv[2] == "magic")
        )
        print(json.dumps(result))
        return 0
    parser = argparse.ArgumentParser(prog="python -m benchmarks.queries", description=__doc__)
    parser.add_argument("--only", action="append", default=[], help="case name (repeatable)")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: check the pipeline")
    parser.add_argument("--full-factor", type=float, default=12.0)
    parser.add_argument(
        "--data", type=Path, default=Path(tempfile.gettempdir()) / "spark_datalog_query_bench"
    )
    parser.add_argument("--out", type=Path, default=HERE / "QUERIES.md")
    args = parser.parse_args(argv)
    cases = [c for c in (SMOKE if args.smoke else CASES) if not args.only or c.name in args.only]
    rows = _merged(_previous(args.out), [run_case(case, args.data, args.full_factor) for case in cases])
    text = report(rows, argv)
    args.out.write_text(text, encoding="utf-8")
    args.out.with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
