"""NaN, infinities and -0.0: the reference and Spark (rounds and partition-local) agree.

The definition (Spark SQL's): NaN = NaN, NaN is greater than every other double (+inf too),
all NaNs are one value (deduplicated, grouped and joined together), and -0.0 is 0.0.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spark_datalog as sd

NAN, INF = float("nan"), float("inf")

PROGRAM = """
.decl a(g: long, x: double)
.input a
.decl arc(s: long, t: long)
.input arc
mx(G, max<X>) :- a(G, X).
mn(G, min<X>) :- a(G, X).
v(X) :- a(_, X).
eq(X, Y) :- a(_, X), a(_, Y), X = Y.
lt(X, Y) :- a(_, X), a(_, Y), X < Y.
ge(X) :- a(_, X), X >= 1.0e308.
ne(X) :- a(_, X), X != 0.0.
j(G, H) :- a(G, X), a(H, X), G < H.
neg(G) :- a(G, X), Y = X * -1.0, Y = 0.0.
lab(G, min<X>) :- a(G, X).
lab(T, min<X>) :- lab(S, X), arc(S, T).
top(G, max<X>) :- a(G, X).
top(T, max<X>) :- top(S, X), arc(S, T).
"""

DOUBLES = [NAN, INF, -INF, 0.0, -0.0, 2.0, -1.5, 1.0e308]


def _key(value):
    """A comparable stand-in for a value: NaN and -0.0 are told apart from other values."""
    return ("double", repr(value)) if isinstance(value, float) else value


def _keys(rows) -> set:
    return {tuple(_key(v) for v in row) for row in rows}


def _compare(spark, a_rows, arcs, decompose: bool) -> None:
    program = sd.Program.parse(PROGRAM)
    edb = {"a": set(a_rows), "arc": set(arcs)}
    expected = {name: _keys(rows) for name, rows in sd.reference.evaluate(program, edb).items()}
    inputs = {
        "a": spark.createDataFrame(list(a_rows), "g long, x double"),
        "arc": spark.createDataFrame(list(arcs), "s long, t long"),
    }
    result = program.materialize(spark, inputs=inputs, decompose=decompose)
    for name in expected:
        assert _keys(tuple(r) for r in result[name].collect()) == expected[name], name


def test_the_reference_follows_spark_semantics():
    program = sd.Program.parse(PROGRAM)
    rows = {(1, float("nan")), (1, 2.0), (2, float("nan")), (2, -0.0), (3, 0.0), (3, INF)}
    result = sd.reference.evaluate(program, {"a": rows, "arc": set()})
    assert _keys(result["mx"]) == _keys({(1, NAN), (2, NAN), (3, INF)})
    assert _keys(result["mn"]) == _keys({(1, 2.0), (2, 0.0), (3, 0.0)})
    assert _keys(result["v"]) == _keys({(NAN,), (2.0,), (0.0,), (INF,)})  # one NaN, one zero
    assert ("double", "nan") in {row[0] for row in _keys(result["eq"])}
    assert _keys(result["ge"]) == _keys({(INF,), (NAN,)})
    assert _keys(result["j"]) == {(1, 2), (2, 3)}  # joined on NaN and on 0.0 = -0.0
    assert all(not math.isnan(x) for x, _ in result["lt"])  # nothing is above NaN


@pytest.mark.parametrize("decompose", [True, False], ids=["partition-local", "rounds"])
def test_spark_agrees_on_nan_infinity_and_negative_zero(spark, decompose):
    rows = [(1, float("nan")), (1, 2.0), (2, float("nan")), (2, -0.0), (3, 0.0), (3, INF), (4, -INF)]
    _compare(spark, rows, [(1, 2), (2, 3), (4, 1)], decompose)


@settings(
    max_examples=4,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    rows=st.lists(st.tuples(st.integers(1, 4), st.sampled_from(DOUBLES)), min_size=1, max_size=10),
    arcs=st.lists(st.tuples(st.integers(1, 4), st.integers(1, 4)), max_size=5),
    decompose=st.booleans(),
)
def test_random_doubles_on_spark_equal_the_reference(spark, rows, arcs, decompose):
    _compare(spark, rows, arcs, decompose)
