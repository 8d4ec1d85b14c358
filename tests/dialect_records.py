"""Random record data for the records program of ``dialect_programs.RECORDS``, with what its
rules give worked out directly in Python (a closure over points, projections, patterns), so the
reference (tests/syntax), the kernel (tests/kernel) and Spark (tests/differential) are each
checked against the definition, not only against each other."""

from __future__ import annotations

from hypothesis import strategies as st

from dialect_programs import RECORDS

_POINTS = st.tuples(st.integers(0, 2), st.integers(-1, 1))


@st.composite
def record_cases(draw):
    """``(text, edb, expected)``: the records program, random segments, and some of its relations."""
    segments = draw(st.sets(st.tuples(st.tuples(_POINTS, _POINTS)), max_size=8))
    return RECORDS.text, {"seg": segments}, _expected(segments)


def _expected(segments: set) -> dict:
    pairs = {(a, b) for ((a, b),) in segments}
    reach = set(pairs)
    while True:
        more = {(a, d) for (a, b) in reach for (c, d) in pairs if b == c} - reach
        if not more:
            break
        reach |= more
    points = {(0, 0)} | {p for pair in pairs for p in pair}
    from_origin = {b for (a, b) in reach if a == (0, 0)}
    return {
        "reach": reach,
        "xs": {(p[0],) for p in points},
        "diag": {(p,) for p in points if p[0] == p[1]},
        "far": {(p,) for p in points if p != (0, 0) and p not in from_origin},
        "shifted": {((p[0] + 1, p[1] * 2),) for p in points if p[0] < 2},
        "common": {(a,) for (a, _) in reach} & {(b,) for (_, b) in reach},
        "nested": {(a[0], b[0]) for (a, b) in pairs if a[1] == 0},
    }
