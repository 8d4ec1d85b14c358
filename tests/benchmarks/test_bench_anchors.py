"""The single-machine anchors (networkx, DuckDB) derive exactly the reference interpreter's facts
on tiny inputs, for every benchmark program they support; the programs all parse and check.
No Spark. DuckDB and networkx are optional (the `bench` extra): those tests skip without them."""

from __future__ import annotations

import pytest

import spark_datalog as sd
from benchmarks import workloads as w
from benchmarks.anchors import Task
from benchmarks.cases import BENCHMARKS, by_name

TINY = {
    "tc": {"arc": w.gnm(12, 20, seed=2)},  # has cycles
    "tc_nonlinear": {"arc": w.gnm(12, 20, seed=3)},
    "sg": {"arc": w.tree(2, 3) + [(3, 1)]},
    "reach": {"arc": w.gnm(15, 22, seed=4), "source": [(0,), (7,)]},
    "cc": {"arc": w.gnm(20, 12, seed=5)},
    "sssp": {"warc": w.weighted(w.gnm(15, 40, seed=6), seed=1), "source": [(0,)]},
    "pymk": {"arc": w.gnm(12, 25, seed=7)},
    "pointsto": w.points_to(24, seed=8),
    "rdfs": {"triple": w.university_ontology(1, seed=1, departments=1)},
}
BENCH_FOR = {b.problem: b for b in reversed(BENCHMARKS)}


def task_for(problem: str) -> Task:
    bench = BENCH_FOR[problem]
    program = sd.Program.from_file(bench.program_path)
    inputs = TINY[problem]
    schemas = {
        n: tuple(zip(program.relations[n].column_names, program.relations[n].types, strict=True))
        for n in inputs
    }
    return Task(problem, inputs, schemas, str(bench.program_path), bench.output, collect=True)


def expected(task: Task) -> set:
    program = sd.Program.from_file(task.program_path)
    return sd.reference.evaluate(program, {n: set(r) for n, r in task.inputs.items()})[task.output]


def outcome_rows(module, task: Task) -> set:
    outcome = module.run(module.load(task), task)
    rows = outcome.fetch()
    assert outcome.facts == len(rows)
    return rows


@pytest.mark.parametrize("bench", BENCHMARKS, ids=lambda b: b.name)
def test_every_program_parses_and_outputs_its_relation(bench):
    program = sd.Program.from_file(bench.program_path)
    assert bench.output in program.outputs
    inputs = bench.make_inputs(bench.sizes["smoke"][0].p)
    assert set(inputs) <= {n for n, s in program.relations.items() if s.kind == "edb"}


def test_every_problem_has_a_tiny_input_that_derives_something():
    for problem in BENCH_FOR:
        assert expected(task_for(problem)), problem


@pytest.mark.parametrize("problem", ["tc", "tc_nonlinear", "reach", "cc", "sssp"])
def test_networkx_matches_the_reference(problem):
    pytest.importorskip("networkx")
    from benchmarks.anchors import networkx_anchor

    assert networkx_anchor.supports(problem) is None
    task = task_for(problem)
    assert outcome_rows(networkx_anchor, task) == expected(task)


@pytest.mark.parametrize("problem", ["tc", "tc_nonlinear", "reach", "sg", "cc", "sssp", "pymk", "pointsto"])
def test_duckdb_matches_the_reference(problem):
    pytest.importorskip("duckdb")
    from benchmarks.anchors import duckdb_sql

    assert duckdb_sql.supports(problem) is None
    task = task_for(problem)
    assert outcome_rows(duckdb_sql, task) == expected(task)


def test_unsupported_problems_say_why():
    from benchmarks.anchors import networkx_anchor, spark_cte

    assert "non-linear" in spark_cte.supports("tc_nonlinear")
    assert networkx_anchor.supports("sg")
    assert spark_cte.supports("tc") is None
    assert by_name("tc-chain").problem == "tc"


@pytest.mark.parametrize("problem", sorted(TINY))
def test_the_engine_matches_the_reference(spark, problem):
    """Every benchmark program through the benchmarked engine system, inputs built as the
    suite builds them (a regression here once failed only inside the benchmark run)."""
    from benchmarks import engine
    from benchmarks.session import input_frames, release_frames

    task = task_for(problem)
    frames = input_frames(spark, task)
    try:
        outcome = engine.run(spark, frames, task, engine.load(task), "seminaive")
        assert outcome.fetch() == expected(task)
        outcome.release()
    finally:
        release_frames(spark, frames)
