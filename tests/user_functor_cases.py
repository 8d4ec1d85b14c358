"""Random user-defined functors (``.functor f(x: number, y: number): number``) for hypothesis:
an arithmetic function of two integers, undefined (None) where a divisor is zero, used in an
assignment, a comparison and a recursive rule. Shared by the kernel and Spark tests."""

from __future__ import annotations

from hypothesis import strategies as st

TEXT = """
.functor f(x: number, y: number): number
.decl e(x: number, y: number)
.input e
value(X, Y, Z) :- e(X, Y), Z = @f(X, Y).
kept(X) :- e(X, Y), @f(Y, X) > {threshold}.
reach(X, Y) :- e(X, Y).
reach(X, Z) :- reach(X, Y), e(Y, Z), @f(X, Z) >= {threshold}.
"""


def arithmetic(a: int, b: int, c: int, d):
    """``(a*x + b*y + c) // (x - d)``, None for x == d (``d`` None: no division). A nested
    function: cloudpickle ships it by value to Spark's workers (they cannot import this module)."""

    def f(x, y):
        value = a * x + b * y + c
        if d is None:
            return value
        return None if x == d else value // (x - d)

    f.__qualname__ = f"arithmetic({a}, {b}, {c}, {d})"  # shown by hypothesis
    return f


@st.composite
def user_functor_cases(draw):
    """``(text, edb, functors)``."""
    small = st.integers(-4, 4)
    function = arithmetic(draw(small), draw(small), draw(small), draw(st.none() | st.integers(0, 5)))
    threshold = draw(st.integers(-6, 6))
    edges = draw(st.sets(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=10))
    return TEXT.format(threshold=threshold), {"e": edges}, {"f": function}
