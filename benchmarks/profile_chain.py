"""The kernel on many rounds that each derive few facts, and what its known-facts index costs.

``python -m benchmarks.profile_chain --size 1000`` evaluates tc over a chain of ``size`` edges
on the kernel alone (no Spark) under each index policy and prints the time, the rounds and the
time per round; ``--costs N`` also times, over N random two-column facts, one anti-join pass of
500 candidates against them and building the index over them (hashing and sorting), the two
costs :class:`~spark_datalog.kernel.index.IndexPolicy` weighs.

Example (2-core machine, 2026-11-27)::

    $ python -m benchmarks.profile_chain --size 1000 --costs 375000
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import polars as pl

import spark_datalog as sd
import spark_datalog.kernel.relation as relation
from spark_datalog.kernel.fixpoint import evaluate_stratum
from spark_datalog.kernel.frames import facts_table
from spark_datalog.kernel.index import NEVER, HashIndex, IndexPolicy

PROGRAM = Path(__file__).parent / "programs" / "tc.dl"


def run_chain(size: int, policy: IndexPolicy) -> tuple:
    """(seconds, facts) of tc over a chain of ``size`` edges on the kernel under ``policy``."""
    program = sd.Program.parse(PROGRAM.read_text())
    schema = program.relations["arc"]
    edges = facts_table(schema.column_names, schema.types, {(i, i + 1) for i in range(size)})
    default = relation.SetRelation.__init__.__defaults__
    relation.SetRelation.__init__.__defaults__ = (None, policy)  # a measurement, not the engine
    try:
        start = time.perf_counter()
        result = evaluate_stratum(program.plans[-1], program.checked, {"arc": edges}, None)
        return time.perf_counter() - start, result["tc"].num_rows
    finally:
        relation.SetRelation.__init__.__defaults__ = default


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
    parser.add_argument("--costs", type=int, default=0, help="known facts to time a pass and a build over")
    args = parser.parse_args(argv)
    for name, policy in (("default", IndexPolicy()), ("never", NEVER)):
        seconds, facts = run_chain(args.size, policy)
        rounds = args.size + 1
        print(
            f"chain {args.size}, index {name}: {seconds:.2f} s, {facts} facts, {rounds} rounds, "
            f"{seconds / rounds * 1000:.2f} ms per round"
        )
    if args.costs:
        costs = measure_costs(args.costs)
        print(
            f"{args.costs} known facts: anti-join pass {costs['pass'] * 1e9:.1f} ns per fact, index build "
            f"{costs['build'] * 1e9:.1f} ns per fact: a build costs {costs['ratio']:.0f} passes"
        )


if __name__ == "__main__":
    main()
