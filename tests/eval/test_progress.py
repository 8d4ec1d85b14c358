"""Progress and observability of an evaluation: per-round seconds measured where the rounds run,
and the job group and description every Spark job of the engine carries (``spark.labels``)."""

from __future__ import annotations

import pytest

import spark_datalog as sd
from spark_datalog.spark.labels import DESCRIPTION, GROUP, group_id, labelled

from .test_driver import arcs, run
from .test_partitioned import NON_LINEAR_TC

pytestmark = pytest.mark.spark

TC_OUT = """
.decl arc(src: long, dst: long)
.input arc
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), arc(Y, Z).
hop2(X, Z) :- arc(X, Y), arc(Y, Z).
?- tc(1, X).
"""


def test_partition_local_rounds_have_their_seconds_measured_in_the_task(spark):
    # not decomposable: the whole fixpoint runs in one task, so its rounds add up to the task's
    edges = {(i, i + 1) for i in range(30)}
    _, stats = run(spark, NON_LINEAR_TC, {"arc": arcs(spark, edges)})
    stratum = stats[0]
    assert stratum.partitioned and stratum.iterations == len(stratum.rounds) >= 5
    assert all(r.seconds > 0 for r in stratum.rounds)
    assert stratum.in_tasks is not None
    assert sum(r.seconds for r in stratum.rounds) <= stratum.in_tasks <= stratum.seconds
    assert "in tasks)" in stratum.outcome() and "0.00s" not in stratum.outcome()


def _jobs(spark, group: str) -> set:
    return set(spark.sparkContext.statusTracker().getJobIdsForGroup(group))


def _descriptions(spark, job_ids: set) -> set:
    """The descriptions of ``job_ids`` in Spark's status store (what its UI shows)."""
    store = spark.sparkContext._jsc.sc().statusStore()
    found = set()
    for job_id in job_ids:
        description = store.job(job_id).description()
        found.add(description.get() if description.isDefined() else None)
    return found


def test_every_job_of_a_materialization_is_labelled(spark, tmp_path):
    groups = ("inputs", ("stratum", 0), ("stratum", 1), "commit", "query")
    names = {g: group_id(*g) if isinstance(g, tuple) else group_id(g) for g in groups}
    before = {g: _jobs(spark, name) for g, name in names.items()}
    context = spark.sparkContext
    context.setJobDescription("the caller's")
    group = context.getLocalProperty(GROUP)  # whatever earlier tests left: kept as it was
    program = sd.Program.parse(TC_OUT)
    frame = spark.createDataFrame([(1, 2), (2, 3)], "src long, dst long")
    result = program.materialize(spark, inputs={"arc": frame}, warehouse=sd.Warehouse(spark, str(tmp_path)))
    assert result.answers[0].count() == 2
    new = {g: _jobs(spark, name) - before[g] for g, name in names.items()}
    assert all(new[g] for g in ("inputs", "commit")), new
    assert any(new[g] for g in (("stratum", 0), ("stratum", 1))), new  # the recursive one runs jobs
    commits = _descriptions(spark, new["commit"])
    assert {"commit · tc", "commit · arc"} <= commits, commits
    recursive = next(g for g in (("stratum", 0), ("stratum", 1)) if new[g])
    assert all(d.startswith("stratum ") and " · tc" in d for d in _descriptions(spark, new[recursive]))
    assert context.getLocalProperty(DESCRIPTION) == "the caller's"  # restored
    assert context.getLocalProperty(GROUP) == group
    context.setJobDescription(None)  # type: ignore[arg-type]


def test_a_group_the_caller_set_is_kept_and_restored(spark):
    context = spark.sparkContext
    context.setJobGroup("callers-group", "caller")
    try:
        with labelled(spark, "commit · tc", group_id("commit")):
            assert context.getLocalProperty(GROUP) == "callers-group"
            spark.range(3).count()
            with labelled(spark, "inner", group_id("inner")):
                assert context.getLocalProperty(DESCRIPTION) == "inner"
            assert context.getLocalProperty(DESCRIPTION) == "commit · tc"
        assert context.getLocalProperty(DESCRIPTION) == "caller"
        assert context.getLocalProperty(GROUP) == "callers-group"
        assert _jobs(spark, "callers-group")
    finally:
        context.setLocalProperty(GROUP, None)  # type: ignore[arg-type]
        context.setLocalProperty(DESCRIPTION, None)  # type: ignore[arg-type]
