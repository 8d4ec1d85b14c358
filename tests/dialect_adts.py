"""Random data for the algebraic data types program of ``dialect_programs.ADTS``, with what its
rules give worked out directly in Python (branches built, matched, a closure growing rectangles),
so the reference (tests/syntax), the kernel (tests/kernel) and Spark (tests/differential) are
each checked against the definition, not only against each other."""

from __future__ import annotations

from hypothesis import strategies as st

from dialect_programs import ADTS, COLORS, shape

_RAW = st.tuples(st.sampled_from(["circle", "rect"]), st.integers(0, 5), st.integers(0, 6))


@st.composite
def adt_cases(draw):
    """``(text, edb, expected)``: the ADT program, random raw shapes, and its relations."""
    raw = draw(st.sets(_RAW, max_size=8))
    return ADTS.text, {"raw": raw}, _expected(raw)


def _expected(raw: set) -> dict:
    circles = {(a, b) for kind, a, b in raw if kind == "circle"}
    rects = {(a, b) for kind, a, b in raw if kind == "rect"}
    labels = {("big", "Red") for a, b in rects if a * b > 10} | {
        ("small", "Blue") for _, b in circles if b < 3
    }
    shapes = (
        {shape("Circle", (a, a), b) for a, b in circles}
        | {shape("Rect", a, b) for a, b in rects}
        | {shape("Label", text, COLORS[colour]) for text, colour in labels}
        | {shape("Empty")}
    )
    is_rect = {shape("Rect", a, b) for a, b in rects}
    grown = {shape("Rect", w, h) for a, h in rects for w in range(a, max(a, 4) + 1)}
    return {
        "shape": {(s,) for s in shapes},
        "radius": {(b,) for _, b in circles},
        "centred": {(b,) for a, b in circles if a == 0},
        "squares": {(a,) for a, b in rects if a == b},
        "coloured": {(text,) for text, _ in labels},
        "red": {(text,) for text, colour in labels if colour == "Red"},
        "is_rect": {(s,) for s in is_rect},
        "non_rect": {(s,) for s in shapes - is_rect},
        "grown": {(s,) for s in grown},
        "same": {(s,) for s in shapes & grown},
    }
