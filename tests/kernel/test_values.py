"""Value semantics on the kernel, each against the reference interpreter on the same program:
integer overflow at the int and long bounds, division and ``mod`` signs and zero divisors, NaN,
infinities and -0.0, integers against doubles, strings, bools, empty inputs, nullary relations.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from differential.test_nan import DOUBLES, PROGRAM as NAN_PROGRAM
from differential.test_overflow import CASES as OVERFLOW_CASES
from kernel.harness import assert_same, kernel_result, outcome
from programs import settings

LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
INT_MIN, INT_MAX = -(2**31), 2**31 - 1
OPERATORS = ("+", "-", "*", "/", "mod")


@pytest.mark.parametrize("case", list(OVERFLOW_CASES))
def test_overflow_cases_raise_what_the_reference_raises(case):
    text, rows = OVERFLOW_CASES[case]
    assert_same(text, {"a": set(rows)})
    raised = outcome(lambda: kernel_result(__import__("spark_datalog").Program.parse(text), {"a": set(rows)}))
    overflows = not case.startswith(("up to", "down to", "int bound"))
    assert (raised[0] == "ArithmeticOverflowError") == overflows


def _integers(low: int, high: int):
    edges = [low, low + 1, -2, -1, 0, 1, 2, 3, 7, high - 1, high]
    return st.one_of(st.sampled_from(edges), st.integers(low, high), st.integers(-8, 8))


def _arithmetic_program(kind: str, op: str) -> str:
    return (
        f".decl a(x: {kind}, y: {kind})\n.input a\n"
        f"b(X, Y, Z) :- a(X, Y), Z = X {op} Y.\n"
        f"c(X, Y) :- a(X, Y), X {op} Y > 0.\n"
        f"d(X, Y, Z) :- a(X, Y), Z = X {op} 2 {op} Y.\n"
    )


BOUNDS = {"long": (LONG_MIN, LONG_MAX), "int": (INT_MIN, INT_MAX)}


@st.composite
def _integer_case(draw) -> tuple:
    kind = draw(st.sampled_from(sorted(BOUNDS)))
    values = _integers(*BOUNDS[kind])
    return kind, draw(st.sampled_from(OPERATORS)), draw(st.sets(st.tuples(values, values), max_size=4))


@settings(default=120)
@given(case=_integer_case())
def test_integer_arithmetic_at_the_int_and_long_bounds(case):
    kind, op, rows = case
    assert_same(_arithmetic_program(kind, op), {"a": rows})


def test_division_truncates_and_mod_keeps_the_dividends_sign():
    text = _arithmetic_program("long", "/") + "m(X, Y, Z) :- a(X, Y), Z = X mod Y.\n"
    rows = {(-7, 2), (7, -2), (-7, -2), (7, 2), (5, 0), (0, 0), (LONG_MIN, 1), (LONG_MIN + 1, -1)}
    assert_same(text, {"a": rows})
    result = kernel_result(__import__("spark_datalog").Program.parse(text), {"a": rows})
    assert {(-7, 2, -3), (7, -2, -3)} <= result["b"] and (5, 0, 0) not in {r[:2] + (0,) for r in result["b"]}
    assert {(-7, 2, -1), (7, -2, 1), (-7, -2, -1)} <= result["m"]


_DOUBLES = st.one_of(st.sampled_from(DOUBLES + [1.5, -2.25, 1e-300, 3.0]), st.floats(allow_nan=True))


@settings(default=40)
@given(op=st.sampled_from(OPERATORS), rows=st.sets(st.tuples(_DOUBLES, _DOUBLES), max_size=4))
def test_double_arithmetic(op, rows):
    text = (
        ".decl a(x: double, y: double)\n.input a\n"
        f"b(X, Y, Z) :- a(X, Y), Z = X {op} Y.\nc(Z) :- a(X, Y), Z = X {op} 3.\n"
    )
    assert_same(text, {"a": rows})


@settings(default=40)
@given(
    rows=st.sets(st.tuples(st.sampled_from([0, 1, 2, 3]), st.sampled_from(DOUBLES)), max_size=6),
    arcs=st.sets(st.tuples(st.sampled_from([0, 1, 2, 3]), st.sampled_from([0, 1, 2, 3])), max_size=5),
)
def test_nan_infinities_and_negative_zero(rows, arcs):
    assert_same(NAN_PROGRAM, {"a": rows, "arc": arcs})


_MIXED = st.one_of(_integers(LONG_MIN, LONG_MAX), st.sampled_from([2**53 + 1, 2**53, -(2**53) - 1]))
_NEAR = st.one_of(_DOUBLES, st.sampled_from([2.0**53, 2.0**63, -(2.0**63), 9.223372036854776e18, 0.5, -0.5]))


@settings(default=60)
@given(rows=st.sets(st.tuples(_MIXED, _NEAR), max_size=5))
def test_integers_against_doubles_compare_exactly(rows):
    text = ".decl a(x: long, y: double)\n.input a\n" + "".join(
        f"r{i}(X, Y) :- a(X, Y), X {op} Y.\ns{i}(X, Y) :- a(X, Y), Y {op} X.\n"
        for i, op in enumerate(("=", "!=", "<", "<=", ">", ">="))
    )
    assert_same(text, {"a": rows})


STRINGS_AND_BOOLS = """
.decl s(x: string, b: bool)
.input s
lt(X, Y) :- s(X, _), s(Y, _), X < Y.
ge(X, Y) :- s(X, _), s(Y, _), X >= Y.
m(max<X>) :- s(X, _).
n(B, min<X>) :- s(X, B).
c(B, count<X>) :- s(X, B).
f(X) :- s(X, B), B = true.
u(X) :- s(X, B), B != false, X = "a".
k(count<B>) :- s(_, B).
"""


@settings(default=30)
@given(
    rows=st.sets(
        st.tuples(st.sampled_from(["", "a", "B", "é", "\U0001f600", "\uffff", "ab"]), st.booleans()),
        max_size=6,
    )
)
def test_strings_and_bools(rows):
    assert_same(STRINGS_AND_BOOLS, {"s": rows})


NULLARY = """
.decl e(x: long)
.input e
q() :- e(X).
r(X) :- e(X), q().
n() :- !q().
t() :- 2 < 1.
w() :- q(), !t().
z(X) :- X = 3, !q().
"""


@pytest.mark.parametrize("rows", [set(), {(1,)}, {(1,), (2,)}], ids=["empty", "one", "two"])
def test_nullary_relations_and_empty_inputs(rows):
    assert_same(NULLARY, {"e": rows})


def test_empty_inputs_everywhere():
    text = _arithmetic_program("long", "+") + "s(sum<X>) :- a(X, _).\nk(X, count<Y>) :- a(X, Y).\n"
    assert_same(text, {"a": set()})
