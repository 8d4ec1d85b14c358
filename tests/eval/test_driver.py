"""The fixpoint driver on real programs (parse -> analyse -> plan -> Spark)."""

from __future__ import annotations

import logging
import time

import pytest
from pyspark.testing import assertDataFrameEqual

from spark_datalog.analysis import analyse
from spark_datalog.errors import NonTerminationError
from spark_datalog.eval.driver import REMOVE_REDUNDANT_ALIASES, evaluate, kept_aliases
from spark_datalog.plan.translate import plan_program
from spark_datalog.spark.inputs import input_types, prepare_inputs
from spark_datalog.syntax.parser import parse

pytestmark = pytest.mark.spark

TC = """
.decl arc(src: long, dst: long)
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), arc(Y, Z).
"""


def run(spark, text, inputs=None, **options):
    """(relation -> DataFrame, stats) of ``text`` evaluated on Spark."""
    inputs = inputs or {}
    checked = analyse(parse(text))
    types = input_types(checked, inputs)
    if types:
        checked = analyse(parse(text), types)
    frames = prepare_inputs(spark, checked, inputs)
    return evaluate(spark, checked, plan_program(checked), frames, **options)


def as_set(frame) -> set:
    return {tuple(row) for row in frame.collect()}


def closure(edges) -> set:
    """Transitive closure in plain Python (the expected result)."""
    result = set(edges)
    while True:
        more = {(a, d) for a, b in result for c, d in edges if b == c} - result
        if not more:
            return result
        result |= more


def arcs(spark, edges):
    return spark.createDataFrame(sorted(edges), "a long, b long")


def test_transitive_closure_of_a_chain(spark):
    edges = {(i, i + 1) for i in range(6)}
    result, stats = run(spark, TC, {"arc": arcs(spark, edges)})
    assertDataFrameEqual(
        result["tc"], spark.createDataFrame(sorted(closure(edges)), "X long, Y long"), checkRowOrder=False
    )
    stratum = stats[0]
    assert stratum.recursive and stratum.relations == ("tc",)
    # semi-naive: paths of length 1, 2, ..., 6 are new in rounds 0..5; round 6 finds nothing
    assert stratum.rows_per_iteration == [6, 5, 4, 3, 2, 1, 0]
    assert stratum.iterations == 7
    assert stratum.rows == {"tc": 21}


def test_a_cycle_terminates(spark):
    result, stats = run(spark, TC + "arc(1, 2). arc(2, 1).")
    assert as_set(result["tc"]) == {(1, 2), (2, 1), (1, 1), (2, 2)}
    assert stats[0].rows_per_iteration[-1] == 0


@pytest.mark.parametrize(
    "text, inputs",
    [
        (TC, {"arc": {(1, 2), (2, 3), (3, 1), (3, 4), (5, 5)}}),
        (
            """
     .decl arc(src: long, dst: long)
     tc(X, Y) :- arc(X, Y).
     tc(X, Z) :- tc(X, Y), tc(Y, Z).
     """,
            {"arc": {(1, 2), (2, 3), (3, 4), (4, 5), (5, 2)}},
        ),
        (
            """
     .decl arc(src: long, dst: long)
     sg(X, Y) :- arc(P, X), arc(P, Y), X != Y.
     sg(X, Y) :- arc(A, X), sg(A, B), arc(B, Y).
     """,
            {"arc": {(1, 2), (1, 3), (2, 4), (3, 5), (4, 6), (5, 7)}},
        ),
    ],
)
def test_naive_equals_seminaive(spark, text, inputs):
    frames = {name: arcs(spark, rows) for name, rows in inputs.items()}
    seminaive, _ = run(spark, text, frames)
    naive, stats = run(spark, text, frames, strategy="naive")
    assert stats[-1].strategy == "naive"
    for name in seminaive:
        assert as_set(seminaive[name]) == as_set(naive[name])
        assert as_set(seminaive[name])


def test_mutual_recursion(spark):
    text = """
    .decl succ(a: long, b: long)
    even(0).
    even(Y) :- odd(X), succ(X, Y).
    odd(Y) :- even(X), succ(X, Y).
    """
    succ = spark.createDataFrame([(i, i + 1) for i in range(9)], "a long, b long")
    for strategy in ("seminaive", "naive"):
        result, stats = run(spark, text, {"succ": succ}, strategy=strategy)
        assert as_set(result["even"]) == {(i,) for i in range(0, 10, 2)}
        assert as_set(result["odd"]) == {(i,) for i in range(1, 10, 2)}
        assert set(stats[0].relations) == {"even", "odd"}


def test_negation_against_a_completed_lower_stratum(spark):
    text = (
        TC
        + """
    node(1). node(2). node(3). node(4).
    arc(1, 2). arc(2, 3). arc(3, 2).
    unreachable(X, Y) :- node(X), node(Y), not tc(X, Y).
    sink(X) :- node(X), not arc(X, _).
    """
    )
    result, stats = run(spark, text)
    reach = closure({(1, 2), (2, 3), (3, 2)})
    nodes = range(1, 5)
    assert as_set(result["unreachable"]) == {(x, y) for x in nodes for y in nodes if (x, y) not in reach}
    assert as_set(result["sink"]) == {(4,)}
    assert [s.recursive for s in stats] == [True, False, False] or [s.recursive for s in stats][0]


def test_stratified_aggregates(spark):
    text = """
    .decl sale(shop: string, item: string, price: long)
    total(S, sum<P>) :- sale(S, _, P).
    turnover(S, sum<P>) :- sale(S, I, P).
    items(S, count<I>) :- sale(S, I, _).
    mean(S, avg<P>) :- sale(S, _, P).
    cheapest(S, min<P>) :- sale(S, _, P).
    dearest(S, max<P>) :- sale(S, _, P).
    all(count<S>) :- sale(S, _, _).
    """
    sales = spark.createDataFrame(
        [("a", "x", 3), ("a", "y", 3), ("a", "z", 6), ("b", "x", 10), ("b", "x", 10)],
        "shop string, item string, price long",
    )
    result, _ = run(spark, text, {"sale": sales})
    # sum/avg range over the distinct assignments of the named variables: (S, P) for total —
    # a: 3 + 6 — and (S, I, P) for turnover — a: 3 + 3 + 6; b's duplicate sale counts once
    assert as_set(result["total"]) == {("a", 9), ("b", 10)}
    assert as_set(result["turnover"]) == {("a", 12), ("b", 10)}
    assert as_set(result["items"]) == {("a", 3), ("b", 1)}
    assert as_set(result["mean"]) == {("a", 4.5), ("b", 10.0)}
    assert as_set(result["cheapest"]) == {("a", 3), ("b", 10)}
    assert as_set(result["dearest"]) == {("a", 6), ("b", 10)}
    assert as_set(result["all"]) == {(2,)}


def test_aggregate_over_a_recursive_relation(spark):
    text = (
        TC
        + """
    reach(X, count<Y>) :- tc(X, Y).
    """
    )
    edges = {(1, 2), (2, 3), (3, 4), (10, 11)}
    result, _ = run(spark, text, {"arc": arcs(spark, edges)})
    counts = {}
    for x, _ in closure(edges):
        counts[x] = counts.get(x, 0) + 1
    assert as_set(result["reach"]) == set(counts.items())


def shortest_paths(weighted) -> set:
    """All-pairs shortest path lengths (Floyd-Warshall) over paths of at least one edge."""
    best = {}
    for a, b, w in weighted:
        best[(a, b)] = min(w, best.get((a, b), w))
    nodes = {a for a, _, _ in weighted} | {b for _, b, _ in weighted}
    for k in nodes:
        for i in nodes:
            for j in nodes:
                if (i, k) in best and (k, j) in best:
                    via = best[(i, k)] + best[(k, j)]
                    if via < best.get((i, j), via + 1):
                        best[(i, j)] = via
    return {(a, b, d) for (a, b), d in best.items()}


@pytest.mark.parametrize("strategy", ["seminaive", "naive"])
def test_shortest_paths_with_min_in_recursion(spark, strategy):
    text = """
    .decl edge(a: long, b: long, w: long)
    path(X, Y, min<D>) :- edge(X, Y, D).
    path(X, Y, min<D>) :- path(X, Z, D1), edge(Z, Y, D2), D = D1 + D2.
    """
    weighted = {(1, 2, 7), (1, 3, 2), (3, 2, 1), (2, 4, 1), (4, 1, 1), (3, 4, 8), (4, 5, 3)}
    edges = spark.createDataFrame(sorted(weighted), "a long, b long, w long")
    result, stats = run(spark, text, {"edge": edges}, strategy=strategy)
    assert as_set(result["path"]) == shortest_paths(weighted)
    assert stats[0].rows_per_iteration[-1] == 0


def test_min_relation_mixing_plain_and_aggregate_rules(spark):
    # seed 002's coin change: fewest coins for each amount up to 10 with coins 1, 3 and 4
    text = """
    coin(1). coin(3). coin(4).
    num(C, 1) :- coin(C).
    num(V, min<N>) :- num(V1, N1), coin(C), V = V1 + C, V <= 10, N = N1 + 1.
    """
    result, _ = run(spark, text)
    fewest = {0: 0}
    for v in range(1, 11):
        fewest[v] = 1 + min(fewest[v - c] for c in (1, 3, 4) if c <= v)
    assert as_set(result["num"]) == {(v, n) for v, n in fewest.items() if v > 0}


def test_idb_facts_are_unconditional(spark):
    result, _ = run(spark, TC + "arc(1, 2). tc(7, 7).")
    assert as_set(result["tc"]) == {(1, 2), (7, 7)}


def test_division_by_zero_derives_nothing(spark):
    text = """
    n(0). n(2). n(-4).
    q(X, Y) :- n(X), Y = 12 / X.
    r(X, Y) :- n(X), Y = X mod 3.
    """
    result, _ = run(spark, text)
    assert as_set(result["q"]) == {(2, 6), (-4, -3)}
    assert as_set(result["r"]) == {(0, 0), (2, 2), (-4, -1)}


def test_runaway_arithmetic_recursion_raises(spark):
    text = """
    n(0).
    n(Y) :- n(X), Y = X + 1.
    """
    with pytest.raises(NonTerminationError) as error:
        run(spark, text, max_iterations=20)
    message = str(error.value)
    assert "stratum 0" in message and "(n)" in message and "20 iterations" in message
    assert "1 new rows" in message


def test_max_iterations_is_not_hit_by_a_fixpoint_within_it(spark):
    result, stats = run(spark, TC + "arc(1, 2). arc(2, 3).", max_iterations=3)
    assert stats[0].iterations == 3
    assert as_set(result["tc"]) == {(1, 2), (2, 3), (1, 3)}


def test_checkpointing_every_round(spark):
    edges = {(i, i + 1) for i in range(12)} | {(12, 0)}
    result, stats = run(spark, TC, {"arc": arcs(spark, edges)}, checkpoint_interval=1, decompose=False)
    assert as_set(result["tc"]) == closure(edges)
    assert stats[0].rows == {"tc": 13 * 13}


@pytest.mark.parametrize("decompose", [True, False], ids=["partition-local", "rounds"])
def test_progress_lines_per_stratum_and_iteration_and_job_description_reset(spark, caplog, decompose):
    context = spark.sparkContext
    context.setJobDescription("the caller's")
    before = [context.getLocalProperty(key) for key in ("spark.job.description", "spark.jobGroup.id")]
    with caplog.at_level(logging.DEBUG, logger="spark_datalog"):
        _, stats = run(spark, TC + "arc(1, 2). arc(2, 3). arc(3, 4).", decompose=decompose)
    records = [r for r in caplog.records if r.name == "spark_datalog.progress"]
    rounds = [r.getMessage() for r in records if r.levelno == logging.DEBUG]
    strata = [r.getMessage() for r in records if r.levelno == logging.INFO]
    assert len(rounds) == stats[0].iterations == 4
    assert rounds[0].startswith("stratum 0 · tc · iteration 0: 3 new rows in ")
    assert rounds[0].endswith(" in tasks") == decompose
    assert strata[0] == "stratum 0 · tc · started (recursive, seminaive)"
    method = "partition-local" if decompose else "rounds of Spark joins, seminaive"
    assert strata[1].startswith(f"stratum 0 · tc · done: {method}, 4 iterations, tc 6 facts in ")
    assert ("in tasks)" in strata[1]) == decompose
    # what the caller (here: earlier tests) had set is what is set afterwards
    assert [context.getLocalProperty(key) for key in ("spark.job.description", "spark.jobGroup.id")] == before
    context.setJobDescription(None)  # type: ignore[arg-type]  # None clears it (PySpark)


def test_one_materialisation_per_iteration(spark):
    """Cost discipline: the jobs a round runs do not grow with the number of rounds."""
    edges = {(i, i + 1) for i in range(16)}
    context = spark.sparkContext
    context.setJobGroup("driver-cost", "driver cost")
    try:
        _, stats = run(spark, TC, {"arc": arcs(spark, edges)}, checkpoint_interval=100, decompose=False)
    finally:
        context.setJobGroup("", "")
    jobs = len(context.statusTracker().getJobIdsForGroup("driver-cost"))
    # one action per round; adaptive execution runs each shuffle stage as its own job
    assert jobs <= 6 * stats[0].iterations


@pytest.mark.slow
def test_chain_of_depth_100_completes_with_plans_that_do_not_grow(spark, monkeypatch):
    """100 rounds of Spark joins: lineage must be cut (no stack overflow, no exponential
    plans), or each round's plan would hold the rounds before it. Checked structurally: after
    the first two compactions (checkpoint_interval 10) no round's plan is bigger than the
    biggest of the first 20 — without cut lineage or without compaction the plans grow with the
    depth. So 100 rounds show what 1,000 would (a round costs ~0.15 s here). (By default this
    stratum would run in one partition-local job.)"""
    depth = 100
    text = """
    .decl next(a: long, b: long)
    reach(0).
    reach(Y) :- reach(X), next(X, Y).
    """
    plans = _round_plans(monkeypatch, "logical")  # unplanned: recording costs no planning
    chain = spark.createDataFrame([(i, i + 1) for i in range(depth)], "a long, b long")
    started = time.perf_counter()
    result, stats = run(spark, text, {"next": chain}, decompose=False, checkpoint_interval=10)
    seconds = time.perf_counter() - started
    assert stats[0].iterations == depth + 2  # reach(0) in round 0, one more per round, an empty last
    assert stats[0].rows == {"reach": depth + 1}
    assert result["reach"].count() == depth + 1
    sizes = [plan.count("\n") for plan in plans]
    assert len(sizes) == depth + 2, len(sizes)
    assert max(sizes[20:]) <= max(sizes[1:20]), sizes
    print(f"chain of depth {depth}: {seconds:.1f}s, {seconds / (depth + 1):.3f}s per iteration")


SG = """
.decl arc(src: long, dst: long)
sg(X, Y) :- arc(P, X), arc(P, Y), X != Y.
sg(X, Y) :- arc(A, X), sg(A, B), arc(B, Y).
"""


def _round_plans(monkeypatch, stage="executedPlan"):
    """Record the executed plan (or another ``stage`` of the query execution, e.g. ``logical``)
    of every frame the driver's states store (one per relation per round)."""
    import spark_datalog.eval.state as state

    plans = []
    original = state.materialise

    def recording(frames, flags=None):
        plans.extend(getattr(frame._jdf.queryExecution(), stage)().toString() for frame in frames.values())
        return original(frames, flags)

    monkeypatch.setattr(state, "materialise", recording)
    return plans


@pytest.mark.parametrize("text, relation, shuffles", [(TC, "tc", False), (SG, "sg", True)])
def test_rounds_shuffle_only_where_a_column_moves(spark, monkeypatch, text, relation, shuffles):
    """Right-linear tc keeps every fact's source column in place: its leaves are partitioned on
    it, so with a broadcast arc no delta round shuffles anything (decomposable, seed 001). sg
    moves both columns, so its rounds shuffle the candidates — but never the known facts."""
    plans = _round_plans(monkeypatch)
    edges = {(i, i + 1) for i in range(12)} | {(0, 20), (20, 21), (21, 22)}
    results, _ = run(spark, text, {"arc": arcs(spark, edges)}, checkpoint_interval=4, decompose=False)
    assert len(plans) >= 3
    delta_rounds = plans[1:]
    exchanges = [plan.count("Exchange hashpartitioning") for plan in delta_rounds]
    if shuffles:
        assert all(count == 1 for count in exchanges), exchanges
    else:
        assert exchanges == [0] * len(delta_rounds)
    if relation == "tc":
        assert as_set(results["tc"]) == closure(edges)


def test_recursive_strata_keep_redundant_aliases_and_the_session_s_excluded_rules():
    """A session's excluded optimizer rules stay excluded; the alias rule is added once."""
    assert kept_aliases(None) == REMOVE_REDUNDANT_ALIASES
    assert kept_aliases(" a.B, c.D ") == f"a.B,c.D,{REMOVE_REDUNDANT_ALIASES}"
    assert kept_aliases(f"a.B,{REMOVE_REDUNDANT_ALIASES}") == f"a.B,{REMOVE_REDUNDANT_ALIASES}"


def test_a_cached_input_is_read_from_its_cache_and_stays_cached(spark):
    """An input the caller cached is neither cached a second time nor released by the
    evaluation; an input it did not cache is cached for the evaluation and released after."""
    cached = spark.createDataFrame([(1, 2), (2, 3)], "src long, dst long").cache()
    plain = spark.createDataFrame([(1, 2), (2, 3)], "src long, dst long")
    try:
        cached.count()
        result, _ = run(spark, TC, {"arc": cached})
        assert as_set(result["tc"]) == {(1, 2), (2, 3), (1, 3)}
        assert cached.storageLevel.useMemory
        result, _ = run(spark, TC, {"arc": plain})
        assert as_set(result["tc"]) == {(1, 2), (2, 3), (1, 3)}
        assert not plain.storageLevel.useMemory and not plain.storageLevel.useDisk
    finally:
        cached.unpersist()
