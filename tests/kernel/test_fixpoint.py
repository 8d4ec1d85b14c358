"""The semi-naive loop and the datafrog-shaped relations: rounds, the iteration bound, min/max
groups improving, and the thread pool taken from ``POLARS_MAX_THREADS``."""

from __future__ import annotations

import os
import subprocess
import sys

import polars as pl
import pytest

import spark_datalog as sd
from kernel.harness import assert_same
from spark_datalog.errors import NonTerminationError
from spark_datalog.kernel.fixpoint import evaluate_stratum, seminaive
from spark_datalog.kernel.frames import facts_table
from spark_datalog.kernel.relation import BestRelation, SetRelation

TC = ".input e\ntc(X, Y) :- e(X, Y).\ntc(X, Z) :- tc(X, Y), e(Y, Z).\n"


def _stratum(text: str, edb: dict, max_iterations=500) -> tuple:
    """(rounds the loop ran, result) of the program's last stratum, counting the rounds."""
    program = sd.Program.parse(text)
    plan = program.plans[-1]
    inputs = {}
    for name, rows in edb.items():
        schema = program.relations[name]
        inputs[name] = facts_table(schema.column_names, schema.types, rows)
    rounds = []
    import spark_datalog.kernel.fixpoint as fixpoint

    original = fixpoint.seminaive

    def counting(*args, **kwargs):
        rounds.append(original(*args, **kwargs))
        return rounds[-1]

    fixpoint.seminaive = counting
    try:
        result = evaluate_stratum(plan, program.checked, inputs, max_iterations)
    finally:
        fixpoint.seminaive = original
    return rounds[0], result


def test_rounds_are_counted_as_the_spark_driver_counts_them():
    # a chain of 3 edges: round 0 finds the edges, rounds 1 and 2 paths of 2 and 3, round 3 nothing
    rounds, result = _stratum(TC, {"e": {(1, 2), (2, 3), (3, 4)}})
    assert rounds == 4 and result["tc"].num_rows == 6


def test_a_stratum_beyond_max_iterations_raises_non_termination():
    text = ".decl n(x: long)\nn(0).\nn(Y) :- n(X), Y = X + 1.\n"
    with pytest.raises(NonTerminationError, match="within 20 iterations"):
        _stratum(text, {}, max_iterations=20)
    assert_same(text, {}, max_iterations=20)  # the reference raises it too


def test_the_bound_allows_exactly_the_rounds_needed():
    assert _stratum(TC, {"e": {(1, 2), (2, 3), (3, 4)}}, max_iterations=4)[1]["tc"].num_rows == 6
    with pytest.raises(NonTerminationError):
        _stratum(TC, {"e": {(1, 2), (2, 3), (3, 4)}}, max_iterations=3)


def test_min_in_recursion_propagates_only_improved_groups():
    text = ".input arc\ndist(0, 0).\ndist(Y, min<D>) :- dist(X, D1), arc(X, Y, W), D = D1 + W.\n"
    arcs = {(0, 1, 5), (0, 2, 1), (2, 1, 1), (1, 3, 1)}
    rounds, result = _stratum(text, {"arc": arcs})
    assert {tuple(r.values()) for r in result["dist"].to_pylist()} == {(0, 0), (1, 2), (2, 1), (3, 3)}
    # round 0: node 0; 1: nodes 1 (5) and 2; 2: node 1 improves to 2, node 3 at 6; 3: 3 improves; 4: none
    assert rounds == 5
    assert_same(text, {"arc": arcs})


def test_set_relation_keeps_stable_recent_and_to_add_apart():
    relation = SetRelation({"x": pl.Int64})
    relation.insert(pl.LazyFrame({"x": [1, 2, 2]}))
    assert relation.absorb(relation.pending().collect()) == 2
    relation.insert(pl.LazyFrame({"x": [2, 3]}))
    assert relation.to_add and relation.absorb(relation.pending().collect()) == 1
    assert relation.recent.rows() == [(3,)] and not relation.to_add
    assert sorted(relation.facts().rows()) == [(1,), (2,), (3,)]


def test_best_relation_keeps_the_best_value_per_group_nan_largest():
    relation = BestRelation({"g": pl.Int64, "v": pl.Float64}, 1, "max")
    relation.insert(pl.LazyFrame({"g": [1, 1, 2], "v": [1.0, 3.0, 2.0]}))
    assert relation.absorb(relation.pending().collect()) == 2
    relation.insert(pl.LazyFrame({"g": [1, 2], "v": [2.0, float("nan")]}))
    assert relation.absorb(relation.pending().collect()) == 1  # only group 2 improves (NaN)
    assert relation.recent.rows()[0][0] == 2


def test_the_loop_stops_after_one_round_when_not_recursive():
    plan = sd.Program.parse(".input e\np(X) :- e(X, _).\n").plans[0]
    relations = {"p": SetRelation({"X": pl.Int64})}
    produced = lambda i, r: [("p", pl.LazyFrame({"X": [i]}))]  # noqa: E731
    assert seminaive(plan, relations, produced) == 1


def test_threads_come_from_polars_max_threads():
    code = "from spark_datalog.kernel import threads; print(threads())"
    env = {**os.environ, "POLARS_MAX_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1"
