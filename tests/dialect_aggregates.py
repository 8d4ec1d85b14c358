"""Random aggregates over bodies with what Soufflé's semantics gives, computed directly.

:func:`aggregate_cases` draws a rule with one aggregate over a body (count, sum, min, max, mean;
grouped by the rule's variable or not; with a condition on that variable that only the rule's
other atom binds) and random ``q`` and ``p``, with the expected rows of ``r`` worked out in
Python from the definition: the aggregate ranges over the distinct tuples of ``p`` that satisfy
its body, count and sum of no tuples are 0, and min, max and mean of none give no row. The
reference (tests/syntax), the kernel (tests/kernel) and Spark (tests/differential) must all give
these rows.
"""

from __future__ import annotations

from hypothesis import strategies as st

_VALUES = st.integers(0, 4)

# (aggregate, the body's condition on a p tuple (y, v) given x, the condition's text)
_CONDITIONS = (
    (lambda x, y, v: y == x, "{ p(X, V) }"),
    (lambda x, y, v: y > x, "{ p(Y, V), Y > X }"),
    (lambda x, y, v: v != x, "{ p(_, V), V != X }"),
    (lambda x, y, v: True, "p(_, V)"),
)


def _reduce(func: str, values: list):
    if func == "count":
        return len(values)
    if func == "sum":
        return sum(values)
    if not values:
        return None
    return {"min": min, "max": max, "mean": lambda v: sum(v) / len(v)}[func](values)


@st.composite
def aggregate_cases(draw):
    """(program text, EDB, expected rows of r)."""
    func = draw(st.sampled_from(("count", "sum", "min", "max", "mean")))
    condition, body = draw(st.sampled_from(_CONDITIONS))
    q = draw(st.sets(_VALUES, max_size=4))
    p = draw(st.sets(st.tuples(_VALUES, _VALUES), max_size=8))
    target = "" if func == "count" else " V"
    declarations = ".decl p(y: number, v: number)\n.decl q(x: number)\n.input p, q\n"
    text = f"{declarations}r(X, N) :- q(X), N = {func}{target} : {body}.\n"
    expected = set()
    for x in q:
        value = _reduce(func, [v for (y, v) in p if condition(x, y, v)])
        if value is not None:
            expected.add((x, value))
    return text, {"p": p, "q": {(x,) for x in q}}, expected
