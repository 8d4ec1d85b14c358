"""The kernel on many rounds that each derive few facts, and what its known-facts index costs.

``python -m benchmarks.profile_chain --size 1000`` evaluates tc over a chain of ``size`` edges
on the kernel alone (no Spark) with the default index policy and with none, and prints the
time, the rounds and the time per round; ``--shuffled`` numbers the vertices in a random order
(as real graphs' ids are) instead of 0..n; ``--costs N`` also times, over N random two-column
facts, one anti-join pass of 500 candidates against them and building the index over them
(hashing and sorting), the two costs :class:`~spark_datalog.kernel.index.IndexPolicy` weighs.
Polars' thread count comes from ``POLARS_MAX_THREADS`` (Spark tasks run the kernel with 1).

Example (2-core machine, 2026-11-27)::

    $ POLARS_MAX_THREADS=1 python -m benchmarks.profile_chain --size 1000 --shuffled --costs 375000
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import polars as pl

import spark_datalog as sd
from spark_datalog.kernel.fixpoint import evaluate_stratum
from spark_datalog.kernel.frames import facts_table
from spark_datalog.kernel.index import DEFAULT, NEVER, HashIndex, IndexPolicy

PROGRAM = Path(__file__).parent / "programs" / "tc.dl"


def run_chain(size: int, policy: IndexPolicy, shuffled: bool = False) -> tuple:
    """(seconds, facts) of tc over a chain of ``size`` edges on the kernel under ``policy``;
    ``shuffled``: the vertices numbered in a random order, not 0..n."""
    program = sd.Program.parse(PROGRAM.read_text())
    schema = program.relations["arc"]
    ids = np.random.default_rng(0).permutation(10**9)[: size + 1] if shuffled else np.arange(size + 1)
    chain = {(int(ids[i]), int(ids[i + 1])) for i in range(size)}
    edges = facts_table(schema.column_names, schema.types, chain)
    start = time.perf_counter()
    result = evaluate_stratum(program.plans[-1], program.checked, {"arc": edges}, None, policy)
    return time.perf_counter() - start, result["tc"].num_rows


def _best(run, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def measure_costs(facts: int) -> dict:
    """Seconds per known fact of one anti-join pass and of building the index over them."""
    rng = np.random.default_rng(0)
    known = pl.DataFrame({"x": rng.integers(0, 10**6, facts), "y": rng.integers(0, 10**6, facts)})
    asked = pl.DataFrame({"x": rng.integers(0, 10**6, 500), "y": rng.integers(0, 10**6, 500)})
    anti = _best(lambda: asked.lazy().join(known.lazy(), on=["x", "y"], how="anti").unique().collect())
    build = _best(lambda: HashIndex(["x", "y"]).add(known), 3)
    return {"pass": anti / facts, "build": build / facts, "ratio": build / anti}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000, help="edges of the chain")
    parser.add_argument("--shuffled", action="store_true", help="vertex ids in a random order")
    parser.add_argument("--costs", type=int, default=0, help="known facts to time a pass and a build over")
    args = parser.parse_args(argv)
    run_chain(min(args.size, 50), NEVER)  # warm up: imports and Polars' first plans
    order = "shuffled ids" if args.shuffled else "ids 0..n"
    for name, policy in (("default", DEFAULT), ("never", NEVER)):
        seconds, facts = run_chain(args.size, policy, args.shuffled)
        rounds = args.size + 1
        print(
            f"chain {args.size} ({order}), {pl.thread_pool_size()} Polars threads, index {name}: "
            f"{seconds:.2f} s, {facts} facts, {rounds} rounds, {seconds / rounds * 1000:.2f} ms per round"
        )
    if args.costs:
        costs = measure_costs(args.costs)
        print(
            f"{args.costs} known facts: anti-join pass {costs['pass'] * 1e9:.1f} ns per fact, index build "
            f"{costs['build'] * 1e9:.1f} ns per fact: a build costs {costs['ratio']:.0f} passes"
        )


if __name__ == "__main__":
    main()
