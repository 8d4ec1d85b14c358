"""kernel.partition without Spark: the wide batches in and out, the task's fixpoint and its
limits, and the plans the kernel refuses before any task runs."""

from __future__ import annotations

import pyarrow as pa

import spark_datalog as sd
from spark_datalog.kernel.frames import to_frame
from spark_datalog.kernel.partition import (
    LocalRelation,
    PartitionTask,
    new_relation,
    run_fixpoint,
    split_batches,
    unsupported,
    wide_batches,
)
from spark_datalog.reference import evaluate as reference

PAIR = LocalRelation("p", ("a", "b"), ("long", "string"))
UNIT = LocalRelation("u", (), ())
TC = ".decl arc(a: long, b: long)\n.input arc\ntc(X, Y) :- arc(X, Y).\ntc(X, Z) :- tc(X, Y), arc(Y, Z)."


def test_wide_batches_split_back_into_each_relation():
    relations = (PAIR, UNIT)
    pair = pa.table({"a": [1, 2], "b": ["x", None]})
    batches = [
        *wide_batches(pair, 0, relations),
        *wide_batches(pa.table({"x": [1]}).select([]), 1, relations),
    ]
    assert [b.num_rows for b in batches] == [2, 1]
    frames = split_batches(iter(batches), relations)
    assert frames["p"].rows() == [(1, "x"), (2, None)]
    assert frames["u"].height == 1
    empty = split_batches(iter([]), relations)
    assert empty["p"].height == 0 and empty["u"].height == 0


def _tc_task(max_rounds=None, max_facts=None):
    program = sd.Program.parse(TC)
    plan = program.plans[-1]
    variants = tuple((r.relation, r.plan) for r in plan.delta_rules)
    relation = LocalRelation("tc", ("X", "Y"), ("long", "long"))
    return PartitionTask((relation,), variants, max_rounds, max_facts), relation


def _run(task, relation, edges):
    arc = pa.table(
        {"a": [a for a, _ in edges], "b": [b for _, b in edges]},
        schema=pa.schema([("a", pa.int64()), ("b", pa.int64())]),
    )
    relations = {"tc": new_relation(relation)}
    base = {"tc": to_frame(arc.rename_columns(["X", "Y"]), ["long", "long"])}
    report = run_fixpoint(task, base, {"arc": to_frame(arc)}, relations)
    return report, set(relations["tc"].facts().rows())


def test_the_task_fixpoint_equals_the_reference_and_reports_its_rounds():
    edges = {(1, 2), (2, 3), (3, 4), (4, 2)}
    report, facts = _run(*_tc_task(), edges)
    assert facts == reference(sd.Program.parse(TC), {"arc": edges})["tc"]
    assert not report.exceeded and not report.overflow
    assert report.rows == {"tc": len(facts)}
    assert sum(sizes["tc"] for sizes in report.sizes) == len(facts)
    assert report.sizes[-1] == {"tc": 0} and len(report.seconds) == len(report.sizes)


def test_the_task_stops_at_its_round_and_fact_limits():
    chain = {(i, i + 1) for i in range(10)}
    report, _ = _run(*_tc_task(max_rounds=3), chain)
    assert report.exceeded and not report.overflow and len(report.sizes) == 3
    report, _ = _run(*_tc_task(max_facts=20), chain)
    assert report.overflow and not report.exceeded


def test_a_plan_the_kernel_refuses_is_found_before_any_task_runs():
    task, _ = _tc_task()
    assert unsupported(task, {"arc": pa.schema([("a", pa.int64()), ("b", pa.int64())])}) is None
    # tc's Y (a long) joins arc's first column: as a string, the kernel refuses (no silent cast)
    refused = unsupported(task, {"arc": pa.schema([("a", pa.string()), ("b", pa.int64())])})
    assert refused is not None and "join column" in refused
