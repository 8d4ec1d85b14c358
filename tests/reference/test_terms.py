"""The value semantics every engine must match (spark_datalog.reference.terms)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spark_datalog.reference.terms import Undefined, arithmetic, coerce, compare, int_div, int_mod


@pytest.mark.parametrize(
    "left, right, quotient, remainder",
    [
        (7, 2, 3, 1),
        (-7, 2, -3, -1),
        (7, -2, -3, 1),
        (-7, -2, 3, -1),
        (0, 5, 0, 0),
        (6, 3, 2, 0),
    ],
)
def test_integer_division_truncates_and_mod_takes_the_dividend_sign(left, right, quotient, remainder):
    assert arithmetic("/", left, right) == quotient
    assert arithmetic("mod", left, right) == remainder
    assert isinstance(arithmetic("/", left, right), int)


@given(st.integers(-(10**6), 10**6), st.integers(-100, 100).filter(bool))
def test_division_identity(left, right):
    assert right * int_div(left, right) + int_mod(left, right) == left
    assert abs(int_mod(left, right)) < abs(right)
    assert int_mod(left, right) == 0 or (int_mod(left, right) > 0) == (left > 0)
    assert int_div(left, right) == math.trunc(left / right)


@pytest.mark.parametrize("op", ["/", "mod"])
@pytest.mark.parametrize("zero", [0, 0.0])
def test_zero_divisor_is_undefined(op, zero):
    with pytest.raises(Undefined):
        arithmetic(op, 5, zero)


def test_doubles():
    assert arithmetic("/", 7, 2.0) == 3.5
    assert arithmetic("/", -7.0, 2) == -3.5
    assert arithmetic("mod", -7.5, 2) == -1.5
    assert arithmetic("+", 1, 0.5) == 1.5
    assert isinstance(arithmetic("*", 2, 1.0), float)
    assert isinstance(arithmetic("-", 2, 1), int)


def test_comparisons():
    assert compare("=", 1, 1.0) and compare("<", 1, 1.5) and compare(">=", 2.0, 2)
    assert compare("<", "Banana", "apple") and compare("!=", "a", "b")
    assert compare("=", True, True) and compare("!=", True, False)
    with pytest.raises(TypeError):
        compare("<", True, False)
    with pytest.raises(TypeError):
        compare("=", "1", 1)
    with pytest.raises(TypeError):
        arithmetic("+", "a", 1)


def test_coerce():
    assert coerce(1, "double") == 1.0 and isinstance(coerce(1, "double"), float)
    assert coerce(3, "long") == 3 and coerce("x", "string") == "x" and coerce(False, "bool") is False
    for value, type_ in [
        (1.5, "long"),
        (True, "long"),
        ("1", "long"),
        (1, "string"),
        (1, "bool"),
        (True, "double"),
    ]:
        with pytest.raises(TypeError):
            coerce(value, type_)
