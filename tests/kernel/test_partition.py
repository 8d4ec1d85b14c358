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
    run_partition,
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
    report = run_fixpoint(task, base, {"arc": to_frame(arc)}, relations, task.max_facts)
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


class _Reports:
    """The accumulator a task reports to, outside Spark."""

    def __init__(self):
        self.value: dict = {}

    def add(self, value: dict) -> None:
        self.value.update(value)


def _run_with_inputs(edges, max_facts, input_weight=1.0):
    """tc in one task whose ``arc`` arrives in its partition after the round-0 facts, each
    edge twice (as a relation's rules' outputs before Spark's distinct)."""
    task, relation = _tc_task(max_facts=max_facts)
    arc = LocalRelation("arc", ("a", "b"), ("long", "long"))
    exits = tuple((r.relation, r.plan) for r in sd.Program.parse(TC).plans[-1].rules if r.relation == "tc")
    task = PartitionTask(
        (relation,), task.variants, None, max_facts, exits[:1], (arc,), frozenset({"arc"}), input_weight
    )
    table = pa.table({"a": [a for a, _ in edges] * 2, "b": [b for _, b in edges] * 2})
    reports = _Reports()
    out = list(run_partition(iter(wide_batches(table, 1, (relation, arc))), task, None, reports))
    (report,) = reports.value.values()
    facts = split_batches(iter(out), (relation,))["tc"] if out else None
    return report, set(facts.rows()) if facts is not None else set()


def test_relations_sent_in_the_partition_are_made_sets_and_read_by_round_zero():
    edges = {(1, 2), (2, 3), (3, 4), (4, 2)}
    report, facts = _run_with_inputs(edges, max_facts=None)
    assert facts == reference(sd.Program.parse(TC), {"arc": edges})["tc"]
    assert report.sizes[0] == {"tc": len(edges)}  # round 0 from arc made a set: each edge once
    assert not report.overflow


def test_relations_sent_in_the_partition_count_against_the_task_memory():
    edges = {(i, i + 1) for i in range(6)}  # 12 rows of 2 values arrive: 24 facts' worth at 1.0
    report, facts = _run_with_inputs(edges, max_facts=24)
    assert report.overflow and report.sizes == [] and facts == set()
    report, facts = _run_with_inputs(edges, max_facts=24 + 21)  # tc holds 21 facts
    assert not report.overflow and len(facts) == 21
    report, facts = _run_with_inputs(edges, max_facts=21, input_weight=0.0)  # maxLocalFacts
    assert not report.overflow and len(facts) == 21


def test_a_task_stops_reading_once_what_it_is_sent_fills_its_memory():
    task, relation = _tc_task(max_facts=10)
    arc = LocalRelation("arc", ("a", "b"), ("long", "long"))
    task = PartitionTask((relation,), task.variants, None, 10, (), (arc,), frozenset(), 1.0)
    read = []

    def batches():
        for start in range(0, 40, 4):  # 4 rows (8 values) a batch; 10 facts hold 5 rows
            read.append(start)
            yield from wide_batches(
                pa.table({"a": list(range(start, start + 4)), "b": [0] * 4}), 1, (relation, arc)
            )

    reports = _Reports()
    assert list(run_partition(batches(), task, None, reports)) == []
    (report,) = reports.value.values()
    assert report.overflow and len(read) == 2  # the rest was never read
