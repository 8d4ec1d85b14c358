"""The runner's bookkeeping without Spark: extrapolation, the cross-system check, the report."""

from __future__ import annotations

import pytest

from benchmarks import report
from benchmarks.checks import check_size
from benchmarks.guard import Repeats, Run
from benchmarks.runner import extrapolate


def test_extrapolation_needs_a_smaller_measured_size():
    assert extrapolate([], 100) is None
    assert extrapolate([(1000, 5.0)], 100) is None


def test_extrapolation_is_linear_from_one_point_and_fitted_from_two():
    seconds, how = extrapolate([(100, 10.0)], 1000)
    assert seconds == pytest.approx(100.0)
    assert "100" in how
    quadratic, _ = extrapolate([(10, 1.0), (100, 100.0)], 1000)
    assert quadratic == pytest.approx(10_000.0)
    # Sub-linear growth (fixed overheads) is not trusted: the exponent is at least 1.
    flat, _ = extrapolate([(10, 5.0), (100, 6.0)], 1000)
    assert flat == pytest.approx(60.0)


def test_repeats_only_short_successful_runs():
    policy = Repeats(count=3, short_seconds=10.0)
    assert policy.more([Run(seconds=1.0, facts=3)])
    assert not policy.more([Run(seconds=1.0, facts=3)] * 3)
    assert not policy.more([Run(seconds=11.0, facts=3)])
    assert not policy.more([Run(seconds=1.0, error_class="Boom")])


def _record(system, status="ok", facts=3, rows=None, seconds=1.0):
    return {"system": system, "status": status, "facts": facts, "rows": rows, "seconds": seconds}


def test_check_accepts_agreement_and_ignores_failures():
    rows = {(1, 2), (2, 3), (1, 3)}
    records = [
        _record("reference", rows=rows),
        _record("duckdb", rows=set(rows)),
        _record("spark-cte", status="error", facts=None),
    ]
    result = check_size("tc-chain", "chain 2", records, compared_rows=True)
    assert result["verdict"] == "ok"
    assert result["rows_compared"] == ["reference", "duckdb"]


def test_check_reports_a_count_mismatch():
    result = check_size(
        "tc", "s", [_record("reference", facts=3), _record("engine-seminaive", facts=4)], compared_rows=False
    )
    assert result["verdict"] == "mismatch"
    assert "engine-seminaive=4" in result["detail"]


def test_check_reports_different_facts_with_equal_counts():
    records = [
        _record("reference", rows={(1, 2), (2, 3)}, facts=2),
        _record("engine-seminaive", rows={(1, 2), (3, 2)}, facts=2),
    ]
    result = check_size("tc", "s", records, compared_rows=True)
    assert result["verdict"] == "mismatch"
    assert "(2, 3)" in result["detail"] and "(3, 2)" in result["detail"]


def test_check_treats_integral_floats_as_equal():
    records = [_record("reference", rows={(1, 3)}, facts=1), _record("duckdb", rows={(1, 3.0)}, facts=1)]
    assert check_size("sssp", "s", records, compared_rows=True)["verdict"] == "ok"


def _full_record(system, size, status="ok", seconds=2.0, facts=10, **extra):
    record = {
        "benchmark": "tc-chain",
        "problem": "tc",
        "program": "programs/tc.dl",
        "workload": "chain",
        "size": size,
        "x": 10.0,
        "params": {},
        "input_rows": 10,
        "system": system,
        "status": status,
        "seconds": seconds if status == "ok" else None,
        "runs": [seconds],
        "facts": facts if status == "ok" else None,
        "iterations": None,
        "memory": {},
        "note": None,
    }
    record.update(extra)
    return record


def test_markdown_states_ratios_skips_and_losses():
    records = [
        _full_record("engine-seminaive", "chain 10", seconds=4.0),
        _full_record("duckdb", "chain 10", seconds=0.5),
        _full_record("spark-cte", "chain 10", seconds=8.0),
        _full_record("spark-cte", "chain 1000", status="skipped", note="budget: predicted 900 s"),
        _full_record(
            "engine-seminaive",
            "chain 1000",
            status="timeout",
            error_class="CaseTimeout",
            error="ran past",
            seconds_to_failure=150.0,
        ),
    ]
    meta = {
        "suite": "quick",
        "command": "python -m benchmarks run --suite quick",
        "finished": "t1",
        "started": "t0",
        "wall_seconds": 12.0,
        "json": "benchmarks/results/quick.json",
        "load_average": {"start": [1, 1, 1], "end": [1, 1, 1]},
        "machine": {"logical_cores": 2, "cpu": "x", "memory_gib": 24, "python": "3.11"},
        "versions": {},
        "spark": {},
    }
    checks = [check_size("tc-chain", "chain 10", records[:3], compared_rows=False)]
    text = report.markdown(meta, records, checks, plots={})
    assert "python -m benchmarks run --suite quick" in text
    assert "| chain 10 | 0.50 | 8.00 |" in text  # 4.0 / 8.0 against the CTE, 4.0 / 0.5 against duckdb
    assert "budget: predicted 900 s" in text
    assert "**timeout** after 150 s" in text
    assert "duckdb (0.50 s, engine 8.0x slower)" in text
    assert "the engine did not finish" in text
    assert "MISMATCH" not in text


def test_markdown_puts_a_mismatch_at_the_top():
    records = [_full_record("engine-seminaive", "chain 10", facts=9), _full_record("duckdb", "chain 10")]
    checks = [check_size("tc-chain", "chain 10", records, compared_rows=False)]
    meta = {
        "suite": "quick",
        "command": "c",
        "finished": "t1",
        "started": "t0",
        "wall_seconds": 1.0,
        "json": "j",
        "load_average": {},
        "machine": {"logical_cores": 2, "cpu": "x", "memory_gib": 1, "python": "3"},
        "versions": {},
        "spark": {},
    }
    text = report.markdown(meta, records, checks, plots={})
    assert text.index("CORRECTNESS MISMATCH") < text.index("## tc-chain")


def test_error_class_names_the_java_exception_and_spark_condition():
    from benchmarks.guard import error_class

    class Py4JJavaError(Exception):
        pass

    spark_error = Py4JJavaError(
        "An error occurred while calling o11084.count.\n: org.apache.spark."
        "SparkException: [RECURSION_ROW_LIMIT_EXCEEDED] Recursion row limit"
    )
    assert error_class(spark_error) == "SparkException [RECURSION_ROW_LIMIT_EXCEEDED]"
    assert error_class(Py4JJavaError(": java.lang.OutOfMemoryError: Java heap space")) == "OutOfMemoryError"
    assert error_class(ValueError("plain")) == "ValueError"


def test_issue_3_targets_are_stated_from_the_numbers():
    records = [
        _full_record("engine-seminaive", "chain 100", seconds=10.0),
        _full_record("engine-naive", "chain 100", seconds=30.0),
        _full_record("spark-cte", "chain 100", seconds=15.0),
        _full_record("pyspark-loop", "chain 100", seconds=40.0),
        _full_record(
            "engine-seminaive",
            "chain 1000",
            status="timeout",
            error_class="CaseTimeout",
            seconds_to_failure=480.0,
            note="stopped at the 480 s limit",
        ),
    ]
    text = "\n".join(report._issue_3_targets(records))
    assert "chain 100: 10.00 s vs 30.00 s (**met**)" in text
    assert "spark-cte 15.00 s, ratio 0.67 (target ≤ 0.50): **not met**" in text
    assert "pyspark-loop 40.00 s, ratio 0.25 (target ≤ 0.50): **met**" in text
    assert "The chain of 1,000 finishes: timeout (stopped at the 480 s limit) (**not met**)" in text


def test_schedule_runs_sizes_in_order_and_late_sizes_last():
    from benchmarks.cases import by_name
    from benchmarks.runner import schedule

    order = [(b.name, s.label) for b, s in schedule([by_name("tc-chain"), by_name("tc-tree")], "quick")]
    assert order == [("tc-chain", "chain 100"), ("tc-tree", "3-ary tree depth 8"), ("tc-chain", "chain 1000")]
