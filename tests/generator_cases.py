"""Random arguments of range and frange, and the programs that run them (shared by the kernel
and Spark property tests), with Soufflé's own loop (``runRange``) as a model of the values."""

from __future__ import annotations

import math

from hypothesis import strategies as st

LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1

INTEGER_PROGRAM = """
.decl a(s: long, e: long, t: long)
.decl b(s: long, e: long)
.input a, b
stepped(S, E, T, X) :- a(S, E, T), X = range(S, E, T).
default(S, E, X) :- b(S, E), X = range(S, E).
.output stepped, default
"""
FLOAT_PROGRAM = """
.decl a(s: float, e: float, t: float)
.input a
r(S, E, T, X) :- a(S, E, T), X = frange(S, E, T).
.output r
"""


def souffle_range(start, stop, step=None) -> list:
    """Soufflé's runRange: add ``step`` while below (above) ``stop``; step 0 gives ``start``
    once unless the range is empty."""
    if step is None:
        step = 1 if start <= stop else -1
    out = []
    x = start
    if step > 0:
        while x < stop:
            out.append(x)
            x += step
    elif step < 0:
        while stop < x:
            out.append(x)
            x += step
    elif start != stop:
        out.append(start)
    return out


def FAR_APART(start: int, stop: int) -> bool:  # noqa: N802 (a predicate named as the limit)
    return abs(float(stop) - float(start)) >= 2.0**62


def _clip(value: int) -> int:
    return max(LONG_MIN, min(LONG_MAX, value))


@st.composite
def _small(draw):
    start = draw(st.integers(-20, 20))
    return start, draw(st.integers(-20, 20)), draw(st.integers(-6, 6))


@st.composite
def _extreme(draw):
    """Bounds anywhere in long with at most ~60 values, or too many (undefined), or bounds
    2**62 or more apart (undefined)."""
    start = draw(st.integers(LONG_MIN, LONG_MAX))
    kind = draw(st.sampled_from(["near", "far", "many"]))
    if kind == "near":
        stop = _clip(start + draw(st.integers(-60, 60)) * 2 ** draw(st.integers(0, 40)))
        values = draw(st.integers(1, 60))
        step = max(1, math.ceil(abs(stop - start) / values)) * draw(st.sampled_from([1, -1]))
        return start, stop, step
    if kind == "far":
        stop = LONG_MAX if start < 0 else LONG_MIN
        return start, stop, draw(st.integers(LONG_MIN, LONG_MAX))
    return 0, 2 ** draw(st.integers(33, 61)), draw(st.integers(1, 3))


def integer_rows():
    """Rows (start, stop, step) for ``a`` and (start, stop) for ``b`` (small ranges only)."""
    rows = st.sets(st.one_of(_small(), _extreme()), min_size=1, max_size=12)
    pairs = st.sets(st.tuples(st.integers(-30, 30), st.integers(-30, 30)), max_size=8)
    return st.tuples(rows, pairs)


def float_rows():
    finite = st.floats(-10, 10, allow_nan=False, width=64)
    special = st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -0.0])
    odd = st.sampled_from([0.0, math.nan, math.inf])
    step = st.one_of(st.floats(0.05, 3), st.floats(-3, -0.05), odd)
    row = st.tuples(st.one_of(finite, special), st.one_of(finite, special), step)
    return st.sets(row, min_size=1, max_size=10)


QUERY_PROGRAM = """
.decl span(a: long, b: long)
.decl arc(x: long, y: long)
.input span, arc
cell(A, X) :- span(A, B), X = range(A, B).
reach(A, X) :- cell(A, X).
reach(A, Z) :- reach(A, X), arc(X, Y), Z = range(Y, Y + 2).
"""
QUERY_EDB = {"span": {(1, 3), (5, 7), (9, 8)}, "arc": {(2, 20), (21, 30), (6, 2)}}
# reach(1, X): cells 1, 2; 2 -> 20 gives 20, 21; 21 -> 30 gives 30, 31
QUERY_ANSWER = {(1,), (2,), (20,), (21,), (30,), (31,)}
