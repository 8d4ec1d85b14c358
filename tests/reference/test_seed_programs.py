"""The reference interpreter reproduces the seeds' worked examples (tests/seed_programs.py)."""

from __future__ import annotations

import heapq

import pytest

import spark_datalog as sd
from seed_programs import ARITHMETIC, RUNAWAY, SEED_PROGRAMS, SHORTEST_PATHS
from spark_datalog.reference import evaluate

STRATEGIES = ("naive", "seminaive")


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("seed", SEED_PROGRAMS, ids=str)
def test_seed_program(seed, strategy):
    result = evaluate(sd.Program.parse(seed.text), seed.edb, strategy=strategy)
    assert result == seed.expected


def _dijkstra(arcs, source):
    """Shortest paths of at least one arc from ``source``."""
    best: dict = {}
    queue = [(d, y) for (x, y, d) in arcs if x == source]
    heapq.heapify(queue)
    while queue:
        dist, node = heapq.heappop(queue)
        if node in best:
            continue
        best[node] = dist
        for x, y, d in arcs:
            if x == node and y not in best:
                heapq.heappush(queue, (dist + d, y))
    return best


def test_shortest_paths_hand_answer_is_dijkstras():
    arcs = SHORTEST_PATHS.edb["arc"]
    nodes = {x for x, _, _ in arcs}
    dijkstra = {(x, y, d) for x in nodes for y, d in _dijkstra(arcs, x).items()}
    assert dijkstra == SHORTEST_PATHS.expected["path"]


def test_double_columns_hold_floats():
    result = evaluate(sd.Program.parse(ARITHMETIC.text), ARITHMETIC.edb)
    assert all(type(h) is float for _, h in result["half"])
    assert all(type(v) is int for row in result["divmod"] for v in row)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_runaway_recursion_raises_non_termination(strategy):
    program = sd.Program.parse(RUNAWAY.text)
    with pytest.raises(sd.NonTerminationError) as caught:
        evaluate(program, strategy=strategy, max_iterations=50)
    message = str(caught.value)
    assert "(n)" in message and "50 iterations" in message and "derived 1 new tuples" in message
    assert caught.value.line == 3  # the stratum's first rule


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_max_iterations_counts_the_last_empty_iteration(strategy):
    # Three arcs in a chain: 1, 2 and 3-arc paths, then one iteration that finds nothing.
    program = sd.Program.parse("tc(X, Y) :- arc(X, Y).  tc(X, Z) :- tc(X, Y), arc(Y, Z). .input arc")
    arcs = {"arc": {(1, 2), (2, 3), (3, 4)}}
    assert len(evaluate(program, arcs, strategy=strategy, max_iterations=4)["tc"]) == 6
    with pytest.raises(sd.NonTerminationError, match="derived 1 new tuples"):
        evaluate(program, arcs, strategy=strategy, max_iterations=3)
