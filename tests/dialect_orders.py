"""Random subsumption and choice-domain programs with what their definitions give, computed directly.

:func:`order_cases` draws one of:

- a shortest-path program whose lengths are kept least by subsumption (recursive, over a random
  weighted graph with cycles): expected by Dijkstra from every node;
- an order on one column written in one of its spellings (``B < A``, ``A >= B``, ...), keeping
  the least or the greatest value per key: expected by grouping;
- a subsumption with a body of two comparisons (outside recursion): a tuple is dropped when
  another tuple dominates it, computed pairwise;
- a subsumption whose body reads its own relation (all the candidates) and negates another,
  outside recursion: computed pairwise over the candidates;
- a ``choice-domain`` of one to three keys of one or two columns: the candidates in order,
  each kept unless it agrees on a key with one kept before (one key: the least per key);
- Soufflé's spanning tree (``choice-domain`` in recursion) over a random graph: round by round,
  the new candidates chosen in order, unless their node was reached before.

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


def _self_reads(draw):
    rows = draw(st.sets(st.tuples(_VALUES, _VALUES), max_size=8))
    kept = draw(st.sets(_VALUES, max_size=3))
    text = """
        .decl p(a: number, b: number)
        .decl keep(a: number)
        .input p, keep
        .decl r(a: number, b: number)
        r(A, B) :- p(A, B).
        r(A, B) <= r(C, D) :- !keep(A), r(B, C), C != A.
        .output r
    """
    expected = {
        (a, b)
        for a, b in rows
        if a in kept or not any((c, d) != (a, b) and c != a and (b, c) in rows for c, d in rows)
    }
    return text, {"p": rows, "keep": {(k,) for k in kept}}, expected


def _greedy(candidates, keys: tuple, accepted: list) -> list:
    """``accepted`` extended by the ``candidates``, in order, agreeing on no key with one before."""
    for row in sorted(candidates):
        if all(any(row[i] != old[i] for i in key) for old in accepted for key in keys):
            accepted.append(row)
    return accepted


def _choices(draw):
    keys = draw(st.sampled_from(("k", "(k, x)", "x", "k, x", "k, (x, y)", "y, x, k")))
    rows = draw(st.sets(st.tuples(_VALUES, _VALUES, _VALUES), max_size=8))
    text = f"""
        .decl p(k: number, x: number, y: number)
        .input p
        .decl r(k: number, x: number, y: number) choice-domain {keys}
        r(K, X, Y) :- p(K, X, Y), K != 4.
        .output r
    """
    positions = {
        "k": ((0,),),
        "(k, x)": ((0, 1),),
        "x": ((1,),),
        "k, x": ((0,), (1,)),
        "k, (x, y)": ((0,), (1, 2)),
        "y, x, k": ((2,), (1,), (0,)),
    }[keys]
    # one key: the least candidate per key (the first in order)
    return text, {"p": rows}, set(_greedy([row for row in rows if row[0] != 4], positions, []))


def _spanning_trees(draw):
    edges = draw(st.sets(st.tuples(_VALUES, _VALUES), max_size=10))
    text = """
        .decl e(x: number, y: number)
        .input e
        .decl r(x: number, y: number) choice-domain y
        r(X, Y) :- e(X, Y), X = 0.
        r(X, Y) :- e(X, Y), r(_, X).
        .output r
    """
    accepted: list = []
    while True:  # a round's candidates: e(0, Y), and e(X, Y) for X reached (the kept ones go)
        reached = {y for _, y in accepted}
        count = len(accepted)
        _greedy({(x, y) for x, y in edges if x == 0 or x in reached} - set(accepted), ((1,),), accepted)
        if len(accepted) == count:
            return text, {"e": edges}, set(accepted)


@st.composite
def order_cases(draw):
    """(program text in Soufflé's dialect, EDB, expected rows of r)."""
    builders = (_shortest_paths, _column_orders, _dominations, _self_reads, _choices, _spanning_trees)
    build = draw(st.sampled_from(builders))
    return build(draw)
