"""The kernel against the reference interpreter on random programs and data.

Programs and inputs come from ``tests/programs.py`` (positive, with negation, with aggregates,
with min/max in recursion) and the seed programs; the kernel runs the plans the Spark path runs
(``Program.plans``) stratum by stratum. Results must be equal exactly (doubles included, NaN
as one value), and an error must be the reference's (class, position, rule). The seed programs
and random programs with negation run again with every known-facts check made by the relations'
hash index (``kernel.index``), which the default policy uses only on large relations.
"""

from __future__ import annotations

import pytest
from hypothesis import given

from dialect_aggregates import aggregate_cases
from dialect_autoinc import assert_expected, assert_unique_numbers, autoinc_cases
from dialect_orders import order_cases
from dialect_adts import adt_cases
from dialect_records import record_cases
from kernel.harness import assert_same, kernel_result, reference_result

import spark_datalog as sd
from programs import (
    aggregate_programs,
    limited_programs,
    positive_programs,
    prem_programs,
    settings,
    stratified_programs,
)
from dialect_programs import DIALECT_PROGRAMS
from seed_programs import SEED_PROGRAMS
from spark_datalog.kernel.index import ALWAYS


@pytest.mark.parametrize("seed", SEED_PROGRAMS + DIALECT_PROGRAMS, ids=str)
def test_seed_programs(seed):
    assert_same(seed.text, seed.edb, functors=seed.functors)


@settings(default=40)
@given(case=positive_programs())
def test_random_positive_programs(case):
    assert_same(*case)


@settings(default=40)
@given(case=stratified_programs())
def test_random_programs_with_negation(case):
    assert_same(*case)


@settings(default=40)
@given(case=aggregate_programs())
def test_random_programs_with_aggregates(case):
    assert_same(*case)


@settings(default=40)
@given(case=prem_programs())
def test_random_programs_with_min_max_in_recursion(case):
    assert_same(*case)


@pytest.mark.parametrize("seed", SEED_PROGRAMS, ids=str)
def test_seed_programs_with_every_check_by_the_index(seed):
    assert_same(seed.text, seed.edb, index=ALWAYS)


@settings(default=40)
@given(case=stratified_programs())
def test_random_programs_with_every_check_by_the_index(case):
    assert_same(*case, index=ALWAYS)


@settings(default=40)
@given(case=aggregate_cases())
def test_random_body_aggregates(case):
    text, edb, expected = case
    assert kernel_result(sd.Program.parse(text), edb)["r"] == expected


@settings(default=40)
@given(case=order_cases())
def test_random_subsumptions_and_choices(case):
    text, edb, expected = case
    assert kernel_result(sd.Program.parse(text, dialect="souffle"), edb)["r"] == expected


@settings(default=40)
@given(case=autoinc_cases())
def test_random_programs_with_autoinc(case):
    text, edb, expected, calls = case
    result = kernel_result(sd.Program.parse(text), edb)
    assert_expected(result, expected, text)
    assert_unique_numbers(result, calls)


@settings(default=30)
@given(case=record_cases())
def test_random_record_data(case):
    text, edb, expected = case
    program = sd.Program.parse(text)
    result = kernel_result(program, edb)
    assert {name: result[name] for name in expected} == expected
    assert result == reference_result(program, edb)


@settings(default=15)
@given(case=adt_cases())
def test_random_adt_data(case):
    text, edb, expected = case
    program = sd.Program.parse(text)
    result = kernel_result(program, edb)
    assert result == expected
    assert result == reference_result(program, edb)


@settings(default=60)
@given(case=limited_programs())
def test_random_programs_with_limits(case):
    assert_same(*case)
