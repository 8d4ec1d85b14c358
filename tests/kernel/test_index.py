"""The hash index of a relation's known facts (``kernel.index``): exact membership (hash
collisions included), the same facts with and without it, built where rounds derive few facts
and not where they derive many, and whole programs against the reference."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from kernel.harness import assert_same
from spark_datalog.kernel.index import ALWAYS, NEVER, HashIndex, IndexPolicy, hashes
from spark_datalog.kernel.relation import SetRelation

DTYPES = {"i": pl.Int64, "d": pl.Float64, "s": pl.String, "b": pl.Boolean}
_ROW = st.tuples(
    st.integers(-3, 3),
    st.sampled_from([0.0, -0.0, 1.5, math.nan, math.inf]),
    st.sampled_from(["", "a", "é", "a b"]),
    st.booleans(),
)
_BATCHES = st.lists(st.lists(_ROW, max_size=12), min_size=1, max_size=6)


def _frame(rows) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=DTYPES, orient="row")


def _canonical(row) -> tuple:
    """A row as Python compares it once 0.0 == -0.0 and NaN == NaN (the kernel's joins)."""
    i, d, s, b = row
    return i, "NaN" if math.isnan(d) else d + 0.0, s, b


def _members(index: HashIndex, rows: pl.DataFrame, candidates: pl.DataFrame, wanted=None) -> list:
    if wanted is None:
        wanted = hashes(candidates, index.columns)
    return index.known(candidates, rows, wanted).tolist()


@settings(max_examples=60, deadline=None)
@given(_BATCHES, st.lists(_ROW, max_size=15))
def test_the_index_knows_exactly_the_rows_it_was_given(batches, asked):
    index, frames = HashIndex(list(DTYPES)), []
    for batch in batches:
        frame = _frame(batch).unique()
        index.add(frame)
        frames.append(frame)
    rows = pl.concat(frames)
    candidates = _frame(asked)
    held = {_canonical(row) for row in rows.rows()}
    assert _members(index, rows, candidates) == [_canonical(row) in held for row in asked]
    joined = candidates.with_row_index().join(rows, on=list(DTYPES), how="semi")["index"].to_list()
    assert _members(index, rows, candidates) == [n in joined for n in range(len(asked))]


def test_facts_whose_hashes_collide_are_compared_one_by_one():
    # every hash is 0: each candidate meets every row of the run before its own
    rows = pl.DataFrame({"x": [5, 3, 9, 1]})
    index = HashIndex(["x"])
    index.add(rows.head(2), np.zeros(2, dtype=np.uint64))
    index.add(rows.tail(2), np.zeros(2, dtype=np.uint64))
    candidates = pl.DataFrame({"x": [1, 2, 9, 3, 7, 5]})
    zeros = np.zeros(candidates.height, dtype=np.uint64)
    assert _members(index, rows, candidates, zeros) == [True, False, True, True, False, True]


def test_runs_merge_as_they_fill():
    index = HashIndex(["x"])
    for start in range(0, 64, 4):
        index.add(pl.DataFrame({"x": list(range(start, start + 4))}))
    sizes = [len(run[0]) for run in index.runs]
    assert sum(sizes) == 64 and len(sizes) <= 2
    assert all(np.all(np.diff(run[0].astype(np.float64)) >= 0) for run in index.runs)


def _drive(policy: IndexPolicy, rounds: list, known=None) -> tuple:
    """Feed each round's candidate rows to a relation; (new facts per round, facts, indexed?)."""
    relation = SetRelation(DTYPES, known, policy)
    found = []
    for candidates in rounds:
        relation.insert(_frame(candidates).lazy())
        found.append(relation.absorb(relation.pending().collect()))
    facts = {_canonical(row) for row in relation.facts().rows()}
    assert len(facts) == relation.size()  # no fact twice
    return found, facts, relation.index is not None


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(_ROW, max_size=10), min_size=1, max_size=8), st.lists(_ROW, max_size=6))
def test_a_relation_finds_the_same_facts_with_and_without_its_index(rounds, known):
    start = _frame(known).unique()
    indexed = _drive(ALWAYS, rounds, start)
    assert indexed[2]
    assert indexed[:2] == _drive(NEVER, rounds, start)[:2] == _drive(IndexPolicy(), rounds, start)[:2]


def _row(n: int) -> tuple:
    return n, float(n % 7), f"v{n}", n % 2 == 0


def test_the_default_policy_indexes_a_long_run_of_small_rounds():
    # rounds of 4 new and 4 known candidates over a growing relation: indexed once past the
    # default's minimum size (lowered here to 0), same facts; below it, never indexed
    rounds = [[_row(4 * k + j) for j in range(4)] + [_row(j) for j in range(4)] for k in range(200)]
    indexed = _drive(IndexPolicy(min_known=0), rounds)
    assert indexed[2]
    assert indexed[:2] == _drive(NEVER, rounds)[:2]
    assert not _drive(IndexPolicy(), rounds)[2]  # 800 facts: fewer than the default's 100,000


def test_the_default_policy_does_not_index_a_few_rounds_of_large_deltas():
    # a tree's rounds: each derives more than it knew, so no round re-reads much for little
    rounds, start = [], 0
    for size in (10, 30, 90, 270, 810):
        rounds.append([_row(n) for n in range(start, start + size)])
        start += size
    assert not _drive(IndexPolicy(min_known=0), rounds)[2]


TC = ".decl e(x: symbol, y: symbol)\n.input e\ntc(X, Y) :- e(X, Y).\ntc(X, Z) :- tc(X, Y), e(Y, Z).\n"


def test_a_long_chain_and_a_cycle_agree_with_the_reference():
    # 100 to 150 rounds of few facts each: ~45 to 90 rounds are checked by the index at the
    # default policy without its minimum size (below ~100K facts, not at all); a chain with
    # edges that skip a vertex derives most paths twice, so most of the index's candidates are
    # known already (1,600 hits), and a cycle's last round derives only known facts
    chain = {(f"n{i}", f"n{i + 1}") for i in range(150)}
    skipping = {(f"n{i}", f"n{i + step}") for i in range(200) for step in (1, 2)}
    cycle = {(f"c{i}", f"c{(i + 1) % 120}") for i in range(120)}
    for edges in (chain, skipping, cycle):
        assert_same(TC, {"e": edges}, index=IndexPolicy(min_known=0))
