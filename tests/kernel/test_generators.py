"""range and frange on random arguments: the kernel gives the reference's rows, and the
reference gives Soufflé's loop's values (wherever that loop neither wraps nor exceeds the
limits ``spark_datalog.generators`` documents)."""

from __future__ import annotations

from hypothesis import given

import spark_datalog as sd
from generator_cases import FAR_APART, FLOAT_PROGRAM, INTEGER_PROGRAM, float_rows, integer_rows, souffle_range
from kernel.harness import assert_same
from programs import settings
from spark_datalog.generators import MAX_VALUES


@settings(default=60)
@given(rows=integer_rows())
def test_integer_ranges_on_the_kernel_equal_the_reference(rows):
    a, b = rows
    assert_same(INTEGER_PROGRAM, {"a": a, "b": b})


@settings(default=60)
@given(rows=float_rows())
def test_float_ranges_on_the_kernel_equal_the_reference(rows):
    assert_same(FLOAT_PROGRAM, {"a": rows})


@settings(default=60)
@given(rows=integer_rows())
def test_the_reference_gives_souffles_values(rows):
    a, b = rows
    result = sd.reference.evaluate(sd.Program.parse(INTEGER_PROGRAM), {"a": a, "b": b})
    for s, e, t in a:
        got = {x for (s2, e2, t2, x) in result["stepped"] if (s2, e2, t2) == (s, e, t)}
        if FAR_APART(s, e) or _too_many(s, e, t):
            assert got == set()
        else:
            assert got == set(souffle_range(s, e, t)), (s, e, t)
    for s, e in b:
        assert {x for (s2, e2, x) in result["default"] if (s2, e2) == (s, e)} == set(souffle_range(s, e))


def _too_many(start: int, stop: int, step: int) -> bool:
    if step == 0:
        return False
    return (stop - start) / step > MAX_VALUES


def test_limits():
    program = sd.Program.parse(INTEGER_PROGRAM)
    low, high = -(2**61) + 2**20, 2**61 - 2**20  # 2**62 - 2**21 apart
    edb = {"a": {(0, 2**40, 1), (-(2**62), 2**62, 2**61), (low, high, 2**60)}, "b": set()}
    stepped = sd.reference.evaluate(program, edb)["stepped"]
    # too many values, and bounds 2**62 or more apart: none; less apart: four values
    assert {row[3] for row in stepped} == {low, low + 2**60, low + 2**61, low + 3 * 2**60}
    assert_same(INTEGER_PROGRAM, edb)


def test_magic_sets_through_range():
    from generator_cases import QUERY_ANSWER, QUERY_EDB, QUERY_PROGRAM

    from spark_datalog.reference.query import answer

    program = sd.Program.parse(QUERY_PROGRAM)
    assert answer(program, "reach(1, X)", QUERY_EDB, magic=True) == QUERY_ANSWER
    assert answer(program, "reach(1, X)", QUERY_EDB, magic=False) == QUERY_ANSWER
    assert answer(program, "reach(9, X)", QUERY_EDB, magic=True) == {(9,)}
