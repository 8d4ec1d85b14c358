"""The Spark engine against the reference interpreter, on the same programs and data.

Every seed program, under both strategies, and random programs drawn by ``tests/programs.py``
(positive, with negation, with aggregates, with min/max in recursion), each evaluated either by
partition-local fixpoints or in rounds of Spark joins (drawn): the materialized relations must
equal the reference result. Doubles are compared rounded (Spark sums in another order).

Each random example costs a few Spark jobs per iteration, so the default example count is small;
``SD_SPARK_EXAMPLES`` raises it (for example ``SD_SPARK_EXAMPLES=200 make test``).
"""

from __future__ import annotations

import math
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spark_datalog as sd
from programs import (
    aggregate_programs,
    any_program,
    limited_programs,
    positive_programs,
    prem_programs,
    stratified_programs,
)
from dialect_aggregates import aggregate_cases
from dialect_autoinc import assert_expected, assert_unique_numbers, autoinc_cases
from dialect_orders import order_cases
from dialect_programs import DIALECT_PROGRAMS
from dialect_adts import adt_cases
from dialect_records import record_cases
from seed_programs import SEED_PROGRAMS
from spark_datalog.plan.partitioning import decomposition, is_linear
from spark_datalog.spark.types import schema as spark_schema

SPARK_EXAMPLES = int(os.environ.get("SD_SPARK_EXAMPLES", "4"))

spark_settings = settings(
    max_examples=SPARK_EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)


def _normal(value):
    if isinstance(value, float):
        return round(value, 6) if math.isfinite(value) else value
    return value


def _normal_set(rows) -> set:
    return {tuple(_normal(v) for v in row) for row in rows}


def input_frames(spark, program, edb: dict) -> dict:
    """DataFrames for the EDB tuples, typed by the program's relation schemas."""
    frames = {}
    for name, rows in edb.items():
        relation = program.relations[name]
        schema = spark_schema(relation.column_names, relation.types)
        frames[name] = spark.createDataFrame(sorted(rows), schema)
    return frames


def spark_result(spark, program, edb: dict, strategy: str = "seminaive", decompose: bool = True) -> dict:
    result = program.materialize(
        spark,
        inputs=input_frames(spark, program, edb),
        strategy=strategy,
        max_iterations=500,
        decompose=decompose,
    )
    return {name: _normal_set(tuple(row) for row in result[name].collect()) for name in result}


def reference_result(program, edb: dict) -> dict:
    return {name: _normal_set(rows) for name, rows in sd.reference.evaluate(program, edb).items()}


def assert_same(spark, text: str, edb: dict, strategy: str = "seminaive", decompose: bool = True) -> None:
    program = sd.Program.parse(text)
    expected = reference_result(program, edb)
    actual = spark_result(spark, program, edb, strategy, decompose)
    assert actual.keys() == expected.keys()
    for name in expected:
        assert actual[name] == expected[name], (
            f"relation {name} differs on\n{text}\nEDB {edb}\n"
            f"only Spark: {sorted(actual[name] - expected[name])[:10]}\n"
            f"only reference: {sorted(expected[name] - actual[name])[:10]}"
        )


@pytest.mark.parametrize("seed", SEED_PROGRAMS + DIALECT_PROGRAMS, ids=str)
def test_seed_program_on_spark_equals_reference(spark, seed):
    program = seed.program()
    actual = spark_result(spark, program, seed.edb)
    assert actual == reference_result(program, seed.edb)
    assert actual == {name: _normal_set(rows) for name, rows in seed.expected.items()}


@pytest.mark.parametrize(
    "seed",
    [s for s in SEED_PROGRAMS if s.name in ("same_generation", "shortest_paths", "mutual_recursion")],
    ids=str,
)
def test_naive_strategy_on_spark_equals_reference(spark, seed):
    assert_same(spark, seed.text, seed.edb, strategy="naive")


@spark_settings
@given(case=positive_programs(), decompose=st.booleans())
def test_random_positive_programs(spark, case, decompose):
    assert_same(spark, *case, decompose=decompose)


@spark_settings
@given(case=stratified_programs(), decompose=st.booleans())
def test_random_programs_with_negation(spark, case, decompose):
    assert_same(spark, *case, decompose=decompose)


@spark_settings
@given(case=aggregate_programs(), decompose=st.booleans())
def test_random_programs_with_aggregates(spark, case, decompose):
    assert_same(spark, *case, decompose=decompose)


@spark_settings
@given(case=prem_programs(), decompose=st.booleans())
def test_random_programs_with_min_max_in_recursion(spark, case, decompose):
    assert_same(spark, *case, decompose=decompose)


@settings(parent=spark_settings, max_examples=min(SPARK_EXAMPLES, 2))
@given(case=limited_programs(), decompose=st.booleans())
def test_random_programs_with_limits(spark, case, decompose):
    """``.limitsize`` in one task or rounds of Spark joins, and in Spark plans outside recursion."""
    assert_same(spark, *case, decompose=decompose)


def _decomposes(case) -> bool:
    return any(getattr(decomposition(plan), "key", None) for plan in sd.Program.parse(case[0]).plans)


@spark_settings
@given(case=any_program().filter(_decomposes))
def test_random_decomposable_programs_partition_local_and_in_rounds(spark, case):
    """Programs with a stratum that decomposes on a key (eval.partitioned): partition-local
    fixpoints and the rounds driver (``decompose=False``) must both give the reference's
    facts. The other random tests draw which of the two paths they take."""
    assert_same(spark, *case)
    assert_same(spark, *case, decompose=False)


def _has_keyless_linear_stratum(case) -> bool:
    return any(
        plan.recursive and not decomposition(plan).key and is_linear(plan)
        for plan in sd.Program.parse(case[0]).plans
    )


@spark_settings
@given(case=st.one_of(any_program(), prem_programs()).filter(_has_keyless_linear_stratum))
def test_random_programs_in_bsp_rounds(spark, datalog_settings, case):
    """Programs with a linear recursive stratum that does not decompose, in BSP rounds across
    partitions wherever they apply (``spark.datalog.bspMinRows=0``, eval.bsp): the reference's
    facts, min/max in recursion included."""
    datalog_settings(bspMinRows=0)
    assert_same(spark, *case)


@spark_settings
@given(case=aggregate_cases())
def test_random_body_aggregates(spark, case):
    text, edb, expected = case
    assert spark_result(spark, sd.Program.parse(text), edb)["r"] == _normal_set(expected)


@spark_settings
@given(case=order_cases())
def test_random_subsumptions_and_choices(spark, case):
    text, edb, expected = case
    assert spark_result(spark, sd.Program.parse(text, dialect="souffle"), edb)["r"] == _normal_set(expected)


@settings(spark_settings, max_examples=min(SPARK_EXAMPLES, 2))  # the seed program runs it too
@given(case=adt_cases())
def test_random_adt_data(spark, case):
    text, edb, expected = case
    program = sd.Program.parse(text)
    actual = spark_result(spark, program, edb)
    assert actual == expected
    assert actual == reference_result(program, edb)


@spark_settings
@given(case=autoinc_cases())
def test_random_programs_with_autoinc(spark, case):
    text, edb, expected, calls = case
    program = sd.Program.parse(text)
    actual = spark_result(spark, program, edb)
    assert_expected(actual, expected, text)
    assert_unique_numbers(actual, calls)


@spark_settings
@given(case=record_cases())
def test_random_record_data(spark, case):
    text, edb, expected = case
    program = sd.Program.parse(text)
    actual = spark_result(spark, program, edb)
    assert {name: actual[name] for name in expected} == expected
    assert actual == reference_result(program, edb)
