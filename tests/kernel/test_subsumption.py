"""Subsumption with a general body in recursion: the kernel equals the reference, on the
hand-worked programs and on random graphs."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import spark_datalog as sd
from dialect_programs import INTERVALS, PARETO_PATHS
from kernel.harness import assert_same
from programs import settings
from reference.test_subsumption_rounds import CASES
from spark_datalog.kernel.subsumption import SubsumedRelation

NODES = st.integers(0, 5)


@pytest.mark.parametrize("text, edb, relation, expected", CASES, ids=lambda c: "")
def test_hand_worked_programs(text, edb, relation, expected):
    assert_same(text, edb)


@settings(default=30)
@given(edges=st.sets(st.tuples(NODES, NODES, st.integers(1, 4), st.integers(1, 4)), max_size=12))
def test_random_pareto_paths(edges):
    assert_same(PARETO_PATHS, {"e": edges})


@settings(default=30)
@given(segments=st.sets(st.tuples(NODES, NODES), max_size=12))
def test_random_intervals(segments):
    assert_same(INTERVALS, {"seg": segments})


def test_a_round_keeps_the_relation_and_candidates_nothing_dominates():
    above = lambda u: u.join(u, how="cross").filter(pl.col("x_right") > pl.col("x")).select("x")  # noqa: E731
    relation = SubsumedRelation({"x": pl.Int64}, above)
    relation.insert(pl.LazyFrame({"x": [2]}))
    assert relation.absorb(relation.pending().collect()) == 1
    relation.insert(pl.LazyFrame({"x": [1, 2, 3]}))  # 2 is known; 3 removes it, 1 goes
    assert relation.absorb(relation.pending().collect()) == 1
    assert relation.facts().rows() == [(3,)] and relation.recent.rows() == [(3,)]


# r is subsumed inside a recursion through another relation, which reads r's full facts
MUTUAL = """
    .decl e(x: number, y: number, w: number)
    .input e
    reach(X, Y, W) :- e(X, Y, W).
    reach(X, Z, W + V) :- hop(X, Y, W), e(Y, Z, V), W + V < 12.
    hop(X, Y, W) :- reach(X, Y, W), X != Y.
    reach(X, Y, W) <= reach(A, B, V) :- A <= X, Y <= B, V <= W.
"""


@settings(default=30)
@given(edges=st.sets(st.tuples(NODES, NODES, st.integers(1, 4)), max_size=10))
def test_random_subsumption_through_mutual_recursion(edges):
    assert_same(MUTUAL, {"e": edges})


# the body reads reach itself (the round's tuples) and negates an input: a path goes when a
# longer one from the same node is in the round and its end is not a stop, unless the way back
# is in the round too
READS_ITSELF = """
    .decl e(x: number, y: number)
    .decl stop(x: number)
    .input e, stop
    reach(X, Y, 1) :- e(X, Y).
    reach(X, Z, N + 1) :- reach(X, Y, N), e(Y, Z), N < 4.
    reach(X, Y, N) <= reach(X, Z, M) :- M > N, !stop(Y), !reach(Y, X, _).
"""


@settings(default=30)
@given(edges=st.sets(st.tuples(NODES, NODES), max_size=10), stops=st.sets(st.tuples(NODES), max_size=2))
def test_random_subsumption_reading_its_own_relation(edges, stops):
    assert_same(READS_ITSELF, {"e": edges, "stop": stops})


@pytest.mark.parametrize(
    "text, expected",
    [
        ("r(). r() :- r(). r() <= r() :- 1 < 2.", {()}),
        ("r(1, 2). r(X, Y) :- r(Y, X). r(A, B) <= r(A, B) :- A < 2.", {(1, 2), (2, 1)}),
    ],
)
def test_clauses_relating_a_tuple_only_to_itself_remove_nothing(text, expected):
    assert sd.reference.evaluate(sd.Program.parse(text), {})["r"] == expected
    assert_same(text, {})
