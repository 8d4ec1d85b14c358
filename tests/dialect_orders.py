"""Random subsumption and choice-domain programs with what their definitions give, computed directly.

:func:`order_cases` draws one of:

- a shortest-path program whose lengths are kept least by subsumption (recursive, over a random
  weighted graph with cycles): expected by Dijkstra from every node;
- an order on one column written in one of its spellings (``B < A``, ``A >= B``, ...), keeping
  the least or the greatest value per key: expected by grouping;
- a subsumption with a body of two comparisons (outside recursion): a tuple is dropped when
  another tuple dominates it, computed pairwise;
- a ``choice-domain`` on one or two columns: per key the least candidate in column order.

The reference (tests/syntax), the kernel (tests/kernel) and Spark (tests/differential) must all
give the expected rows of ``r``.
"""

from __future__ import annotations

import heapq

from hypothesis import strategies as st

_VALUES = st.integers(0, 4)


def _shortest(edges: set) -> set:
    """(x, y, d): the least length of a path of one or more edges from x to y."""
    out: dict = {}
    for x, y, d in edges:
        out.setdefault(x, []).append((y, d))
    rows = set()
    for start in out:
        best: dict = {}
        queue = [(d, y) for y, d in out[start]]
        heapq.heapify(queue)
        while queue:
            d, node = heapq.heappop(queue)
            if node in best:
                continue
            best[node] = d
            for y, w in out.get(node, ()):
                heapq.heappush(queue, (d + w, y))
        rows |= {(start, node, d) for node, d in best.items()}
    return rows


def _shortest_paths(draw):
    edges = draw(st.sets(st.tuples(_VALUES, _VALUES, st.integers(1, 5)), max_size=10))
    text = """
        .decl e(x: number, y: number, d: number)
        .input e
        .decl r(x: number, y: number, d: number)
        r(X, Y, D) :- e(X, Y, D).
        r(X, Y, D + W) :- r(X, Z, D), e(Z, Y, W).
        r(X, Y, D1) <= r(X, Y, D2) :- D2 <= D1.
        .output r
    """
    return text, {"e": edges}, _shortest(edges)


# (body written with the dominated value A and the dominating B, keeps the least)
_ORDERS = (
    ("B < A", True),
    ("B <= A", True),
    ("A > B", True),
    ("A >= B", True),
    ("A < B", False),
    ("B >= A", False),
)


def _column_orders(draw):
    body, least = draw(st.sampled_from(_ORDERS))
    rows = draw(st.sets(st.tuples(_VALUES, _VALUES), max_size=8))
    text = f"""
        .decl p(k: number, v: number)
        .input p
        r(K, V) :- p(K, V).
        r(K, A) <= r(K, B) :- {body}.
        .output r
    """
    pick = min if least else max
    expected = {(k, pick(v for kk, v in rows if kk == k)) for k, _ in rows}
    return text, {"p": rows}, expected


def _dominations(draw):
    rows = draw(st.sets(st.tuples(_VALUES, _VALUES), max_size=8))
    text = """
        .decl p(lo: number, hi: number)
        .input p
        .decl r(lo: number, hi: number)
        r(L, H) :- p(L, H).
        r(L1, H1) <= r(L2, H2) :- L2 <= L1, H1 <= H2.
        .output r
    """
    expected = {
        (lo, hi)
        for lo, hi in rows
        if not any((l2, h2) != (lo, hi) and l2 <= lo and hi <= h2 for l2, h2 in rows)
    }
    return text, {"p": rows}, expected


def _choices(draw):
    key = draw(st.sampled_from(("k", "(k, x)", "x")))
    rows = draw(st.sets(st.tuples(_VALUES, _VALUES, _VALUES), max_size=8))
    text = f"""
        .decl p(k: number, x: number, y: number)
        .input p
        .decl r(k: number, x: number, y: number) choice-domain {key}
        r(K, X, Y) :- p(K, X, Y), K != 4.
        .output r
    """
    positions = {"k": (0,), "(k, x)": (0, 1), "x": (1,)}[key]
    candidates = sorted(row for row in rows if row[0] != 4)
    chosen: dict = {}
    for row in candidates:  # sorted: the first of a key is the least in column order
        chosen.setdefault(tuple(row[i] for i in positions), row)
    return text, {"p": rows}, set(chosen.values())


@st.composite
def order_cases(draw):
    """(program text in Soufflé's dialect, EDB, expected rows of r)."""
    build = draw(st.sampled_from((_shortest_paths, _column_orders, _dominations, _choices)))
    return build(draw)
