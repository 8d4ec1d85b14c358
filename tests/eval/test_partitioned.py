"""Recursive strata evaluated by partition-local fixpoints (eval.partitioned).

Each program is run three ways: partition-local (the default), in rounds of Spark joins
(``decompose=False``) and by the reference interpreter. The facts must agree, and the
partition-local statistics must tell the same rounds as the rounds driver. Strata with a key
run one fixpoint per hash partition; the others (several relations, non-linear rules, nothing
kept in place) run in a single partition.
"""

from __future__ import annotations

import logging

import pytest

import spark_datalog as sd
import spark_datalog.eval.partitioned as partitioned
from spark_datalog.errors import NonTerminationError

from .test_driver import TC, arcs, as_set, run

pytestmark = pytest.mark.spark

LEFT_LINEAR_TC = """
.decl arc(src: long, dst: long)
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- arc(X, Y), tc(Y, Z).
"""

SHORTEST = """
.decl arc(src: long, dst: long, w: long)
path(X, Y, min<D>) :- arc(X, Y, D).
path(X, Y, min<D>) :- path(X, Z, D1), arc(Z, Y, D2), D = D1 + D2.
"""

AVOIDING = """
.decl arc(src: long, dst: long)
blocked(3). blocked(7).
reach(X, Y) :- arc(X, Y).
reach(X, Z) :- reach(X, Y), arc(Y, Z), not blocked(Z), Z != X.
"""

COUNTDOWN = """
.decl start(x: long)
.decl cost(x: long, c: double)
cost(X, 0) :- start(X).
cost(X, C) :- cost(X, D), C = D + 1.5, C < 6.
steps(X, N) :- start(X), N = 0.
steps(X, M) :- steps(X, N), M = N + 1, M <= 4, M / 2 != 1.
"""

NAMES = """
.decl link(a: string, b: string)
linked(A, B) :- link(A, B).
linked(A, C) :- linked(A, B), link(B, C).
"""

NON_LINEAR_TC = """
.decl arc(src: long, dst: long)
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), tc(Y, Z).
"""

SAME_GENERATION = """
.decl arc(src: long, dst: long)
sg(X, Y) :- arc(P, X), arc(P, Y), X != Y.
sg(X, Y) :- arc(A, X), sg(A, B), arc(B, Y).
"""

EVEN_ODD = """
.decl arc(src: long, dst: long)
even(1).
odd(Y) :- even(X), arc(X, Y).
even(Y) :- odd(X), arc(X, Y), Y != 8.
both(X) :- even(X), odd(X).
"""

COMPONENTS = """
.decl arc(src: long, dst: long)
node(X) :- arc(X, _).
node(Y) :- arc(_, Y).
label(X, min<X>) :- node(X).
label(Y, min<L>) :- label(X, L), arc(X, Y).
"""

# one task; the first even rule reads only arc, which the task is sent: it runs in the task
EVEN_ODD_FROM_ARCS = """
.decl arc(src: long, dst: long)
even(X) :- arc(X, _), X < 3.
even(100).
odd(Y) :- even(X), arc(X, Y).
even(Y) :- odd(X), arc(X, Y).
"""

UNDIRECTED_COMPONENTS = """
.decl arc(src: long, dst: long)
edge(X, Y) :- arc(X, Y).
edge(Y, X) :- arc(X, Y).
label(X, min<X>) :- edge(X, _).
label(Y, min<L>) :- label(X, L), edge(X, Y).
"""

GRAPH = {(1, 2), (2, 3), (3, 4), (4, 2), (4, 5), (5, 6), (6, 7), (7, 8), (9, 9), (10, 1)}

CASES = [
    ("right-linear tc", TC, {"arc": GRAPH}),
    ("left-linear tc", LEFT_LINEAR_TC, {"arc": GRAPH}),
    (
        "min in recursion",
        SHORTEST,
        {"arc": {(a, b, (a * 7 + b) % 5 + 1) for a, b in GRAPH} | {(1, 5, 1), (2, 8, 20)}},
    ),
    ("negation and comparison", AVOIDING, {"arc": GRAPH}),
    ("arithmetic, doubles", COUNTDOWN, {"start": {(1,), (2,), (5,)}}),
    ("strings", NAMES, {"link": {("a", "b"), ("b", "c"), ("c", "a"), ("d", "é")}}),
    ("non-linear tc, one partition", NON_LINEAR_TC, {"arc": GRAPH}),
    (
        "same generation, one partition",
        SAME_GENERATION,
        {"arc": {(1, 2), (1, 3), (2, 4), (2, 5), (3, 6), (6, 7), (4, 8)}},
    ),
    ("mutual recursion, one partition", EVEN_ODD, {"arc": GRAPH}),
    ("min label propagation, one partition", COMPONENTS, {"arc": GRAPH}),
    ("round 0 in the task and from facts", EVEN_ODD_FROM_ARCS, {"arc": GRAPH}),
    ("undirected components, one partition", UNDIRECTED_COMPONENTS, {"arc": GRAPH}),
]


def _frames(spark, text, edb):
    program = sd.Program.parse(text)
    frames = {}
    for name, rows in edb.items():
        schema = program.relations[name]
        columns = ", ".join(
            f"{c} {'double' if t == 'double' else t}"
            for c, t in zip(schema.column_names, schema.types, strict=True)
        )
        frames[name] = spark.createDataFrame(sorted(rows), columns)
    return program, frames


@pytest.mark.parametrize("name, text, edb", CASES, ids=[c[0] for c in CASES])
def test_partition_local_equals_rounds_and_reference(spark, name, text, edb):
    program, frames = _frames(spark, text, edb)
    local = program.materialize(spark, inputs=frames)
    rounds = program.materialize(spark, inputs=frames, decompose=False)
    expected = sd.reference.evaluate(program, edb)
    for relation in expected:
        assert as_set(local[relation]) == expected[relation], relation
        assert as_set(rounds[relation]) == expected[relation], relation
    recursive = [stratum for stratum in local.stats if stratum.recursive]
    assert recursive and all(stratum.partitioned for stratum in recursive)
    assert not any(stratum.partitioned for stratum in rounds.stats)
    for by_partition, by_rounds in zip(local.stats, rounds.stats, strict=True):
        assert by_partition.rows_per_iteration == by_rounds.rows_per_iteration
        assert by_partition.iterations == by_rounds.iterations


def test_a_deep_chain_is_one_job_not_one_per_round(spark):
    edges = {(i, i + 1) for i in range(40)}
    context = spark.sparkContext
    context.setJobGroup("partition-local", "partition-local cost")
    try:
        result, stats = run(spark, TC, {"arc": arcs(spark, edges)})
    finally:
        context.setJobGroup("", "")
    jobs = len(context.statusTracker().getJobIdsForGroup("partition-local"))
    assert stats[0].partitioned and stats[0].iterations == 41
    assert stats[0].rows == {"tc": 40 * 41 // 2}
    # the null check (a scan for a first null row: Spark may take two jobs), collecting arc,
    # then the fixpoint job (its shuffle may run as a job of its own)
    assert jobs <= 4, jobs
    assert result["tc"].count() == 40 * 41 // 2


def test_runaway_recursion_raises_the_same_error_both_ways(spark):
    text = """
    .decl start(x: long)
    count(X, 0) :- start(X).
    count(X, M) :- count(X, N), M = N + 1.
    """
    starts = spark.createDataFrame([(1,), (2,)], "x long")
    messages = []
    for decompose in (True, False):
        with pytest.raises(NonTerminationError) as error:
            run(spark, text, {"start": starts}, max_iterations=15, decompose=decompose)
        messages.append(str(error.value))
    assert messages[0] == messages[1]
    assert "stratum 0" in messages[0] and "15 iterations" in messages[0]
    assert "derived 2 new rows" in messages[0]


def test_a_large_broadcast_relation_falls_back_to_rounds(spark, caplog, datalog_settings):
    datalog_settings(maxBroadcastRows=3)
    with caplog.at_level(logging.INFO, logger="spark_datalog"):
        result, stats = run(spark, TC, {"arc": arcs(spark, GRAPH)})
    assert any("over 3 rows" in r.getMessage() for r in caplog.records)
    assert not stats[0].partitioned
    expected = sd.reference.evaluate(sd.Program.parse(TC), {"arc": GRAPH})["tc"]
    assert as_set(result["tc"]) == expected


def _cannot_import(batches, *args):
    raise ModuleNotFoundError("No module named 'spark_datalog'")


def test_workers_without_the_package_fall_back_to_rounds(spark, monkeypatch, caplog):
    monkeypatch.setattr(partitioned, "run_partition", _cannot_import)
    with caplog.at_level(logging.WARNING, logger="spark_datalog"):
        result, stats = run(spark, TC, {"arc": arcs(spark, GRAPH)})
    assert any("PYSPARK_PYTHON" in r.getMessage() for r in caplog.records)
    assert not stats[0].partitioned
    expected = sd.reference.evaluate(sd.Program.parse(TC), {"arc": GRAPH})["tc"]
    assert as_set(result["tc"]) == expected


@pytest.mark.parametrize("text", [TC, SAME_GENERATION], ids=["by key", "one partition"])
def test_rounds_continue_from_what_the_tasks_derived(spark, caplog, text, datalog_settings):
    """A task at its memory budget yields what it derived; the rounds of Spark joins start from
    those facts, so they need fewer rounds than from scratch, and find the same fixpoint."""
    edges = {(i, i + 1) for i in range(24)} | {(0, 30), (30, 31)}
    program = sd.Program.parse(text)
    (name,) = program.strata[0]
    expected = sd.reference.evaluate(program, {"arc": edges})[name]
    _, scratch = run(spark, text, {"arc": arcs(spark, edges)}, decompose=False)
    datalog_settings(maxLocalFacts=len(expected) // 2)
    with caplog.at_level(logging.INFO, logger="spark_datalog"):
        result, stats = run(spark, text, {"arc": arcs(spark, edges)})
    assert as_set(result[name]) == expected
    assert not stats[0].partitioned and stats[0].placement.where == "rounds"
    assert "continuing from the facts derived" in str(stats[0].placement)
    assert stats[0].iterations < scratch[0].iterations, (stats[0].iterations, scratch[0].iterations)
    assert any(r.levelno == logging.WARNING and "declined" in r.getMessage() for r in caplog.records)


def test_an_empty_base_gives_an_empty_relation(spark):
    empty = spark.createDataFrame([], "a long, b long")
    result, stats = run(spark, TC, {"arc": empty})
    assert result["tc"].count() == 0
    assert stats[0].rows == {"tc": 0}


@pytest.mark.parametrize("text", [TC, SAME_GENERATION], ids=["by key", "one partition"])
def test_too_many_facts_for_a_task_falls_back_to_rounds(spark, caplog, text, datalog_settings):
    datalog_settings(maxLocalFacts=5)
    edges = {(1, 2), (1, 3), (2, 4), (2, 5), (3, 6), (6, 7), (4, 8), (8, 9)}
    with caplog.at_level(logging.INFO, logger="spark_datalog"):
        result, stats = run(spark, text, {"arc": arcs(spark, edges)})
    assert any("rounds of Spark joins" in r.getMessage() for r in caplog.records)
    assert not stats[0].partitioned
    program = sd.Program.parse(text)
    (name,) = program.strata[0]
    assert as_set(result[name]) == sd.reference.evaluate(program, {"arc": edges})[name]


def test_the_kernel_runs_one_thread_per_task_as_local_session_sets_it(spark):
    from spark_datalog.spark.session import LOCAL_DEFAULTS

    def _kernel_threads(_rows):  # nested: shipped by value to the workers
        from spark_datalog.kernel import threads

        yield threads()

    assert LOCAL_DEFAULTS["spark.executorEnv.POLARS_MAX_THREADS"] == "1"
    assert spark.sparkContext.parallelize([1, 2], 2).mapPartitions(_kernel_threads).collect() == [1, 1]


def _exits_in_task(text) -> list:
    """For each recursive stratum of ``text``: whether each of its round-0 rules runs in the
    task (``partitioned.is_read_from_static``)."""
    from spark_datalog.plan.partitioning import decomposition

    found = []
    for plan in sd.Program.parse(text).plans:
        split = decomposition(plan)
        if split is not None:
            found.append([partitioned.is_read_from_static(rule, split) for rule in split.exit_rules])
    return found


def test_round_zero_rules_reading_only_what_the_task_is_sent_run_in_the_task():
    assert _exits_in_task(SAME_GENERATION) == [[True]]
    assert _exits_in_task(UNDIRECTED_COMPONENTS) == [[True]]
    assert _exits_in_task(EVEN_ODD_FROM_ARCS) == [[True]]
    assert _exits_in_task(COMPONENTS) == [[False]]  # node is not sent to the task
    assert _exits_in_task(TC) == [[False]]  # by key: round 0 is partitioned by Spark


UNDIRECTED_TC = """
.decl arc(src: long, dst: long)
link(X, Y) :- arc(X, Y).
link(Y, X) :- arc(X, Y).
tc(X, Y) :- link(X, Y).
tc(X, Z) :- tc(X, Y), link(Y, Z).
"""

ONE_TASK = [case for case in CASES if "one partition" in case[0] or "in the task" in case[0]]


@pytest.mark.parametrize("name, text, edb", ONE_TASK, ids=[c[0] for c in ONE_TASK])
def test_one_task_gets_relations_over_the_broadcast_limit_through_spark(
    spark, datalog_settings, name, text, edb
):
    """With nothing small enough to broadcast, a stratum in one task still runs in its task:
    Spark sends every relation it reads into its partition."""
    datalog_settings(maxBroadcastRows=1)
    program, frames = _frames(spark, text, edb)
    result, stats = run(spark, text, frames)
    expected = sd.reference.evaluate(program, edb)
    for plan_stats in stats:
        if plan_stats.recursive:
            assert plan_stats.placement.where == "one task", plan_stats.placement
    for relation, facts in expected.items():
        if relation in result:
            assert as_set(result[relation]) == facts, relation


def test_relations_sent_to_one_task_count_against_its_memory(spark, caplog, datalog_settings):
    """arc (20 rows of two longs) alone is more than a task of 1 KiB holds (10 facts of two
    values at the kernel's bytes per value): the task stops before its first round and the
    stratum runs in rounds, with the same facts."""
    datalog_settings(maxBroadcastRows=1, taskMemory="1k")
    edb = {"arc": GRAPH | {(b, a) for a, b in GRAPH}}
    program, frames = _frames(spark, UNDIRECTED_COMPONENTS, edb)
    with caplog.at_level(logging.INFO, logger="spark_datalog"):
        result, stats = run(spark, UNDIRECTED_COMPONENTS, frames)
    assert stats[-1].placement.where == "rounds", stats[-1].placement
    assert "counting what edge took" in str(stats[-1].placement)
    assert as_set(result["label"]) == sd.reference.evaluate(program, edb)["label"]


@pytest.mark.parametrize("text", [UNDIRECTED_COMPONENTS, UNDIRECTED_TC], ids=["one task", "by key"])
def test_a_relation_whose_rules_repeat_rows_is_read_as_a_set(spark, datalog_settings, text):
    """The rules of edge (link) derive every pair twice (arc holds both directions). Its rules'
    outputs are twice the broadcast limit: one task gets them through Spark and makes them a
    set; a stratum with a key broadcasts the relation after Spark's distinct."""
    edges = GRAPH | {(b, a) for a, b in GRAPH}
    datalog_settings(maxBroadcastRows=len(edges))
    program, frames = _frames(spark, text, {"arc": edges})
    result, stats = run(spark, text, frames)
    assert stats[-1].partitioned, stats[-1].placement
    expected = sd.reference.evaluate(program, {"arc": edges})
    for relation, facts in expected.items():
        assert as_set(result[relation]) == facts, relation
