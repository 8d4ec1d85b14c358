"""The greedy ``choice-domain`` on the kernel: a round's new facts filtered together, in Polars.

The choice (:mod:`spark_datalog.syntax.choice`) is sequential: the candidates in value order,
each accepted iff it agrees on no key with a tuple accepted before (in an earlier round or
earlier in this round). :func:`greedy` computes the same set in a few vectorised steps. First
the candidates agreeing on a key with an earlier round's tuple go. Then, repeatedly, every
remaining candidate that is the least of the remaining ones agreeing with it on each key (the
*locally least*) is accepted, and the remaining candidates agreeing with an accepted one on a
key go, until none remain.

Why this is the sequential greedy's answer (``S`` its accepted set), by induction over the
steps, showing every accepted candidate is in ``S`` and every removed one is not:

- A locally least ``c`` is in ``S``: a candidate ``d < c`` agreeing with ``c`` on a key is not
  remaining (else ``c`` is not least on that key), so it was removed, hence ``d`` is not in
  ``S``; and no accepted candidate agrees with ``c`` (else ``c`` would have been removed). So
  no tuple of ``S`` before ``c`` agrees with it: the sequential greedy accepts ``c``.
- A candidate ``e`` removed for agreeing on a key with an accepted ``a`` comes after ``a``:
  when ``a`` was accepted, ``e`` remained and agreed with it on that key, and ``a`` was the
  least such. ``a`` is in ``S`` and before ``e``, so the sequential greedy rejects ``e``.
- Every step accepts at least the least remaining candidate (locally least on every key), so
  the loop ends. One key takes one step (per key value, its least candidate).

The Spark backend (``eval.choice``) runs the same steps on DataFrames. A record or ADT column
is a struct: Polars sorts it, joins on it and finds its first distinct values field by field,
the value order of :mod:`spark_datalog.syntax.choice` (as the reference's tuples compare).
"""

from __future__ import annotations

import polars as pl


def greedy(candidates: pl.DataFrame, keys: list, known: pl.LazyFrame) -> pl.DataFrame:
    """The distinct ``candidates`` (facts not known yet) the greedy choice accepts; ``keys``:
    the column names of each key; ``known``: the facts accepted in earlier rounds.

    >>> greedy(pl.DataFrame({"a": [1, 1, 2, 3], "b": [2, 3, 3, 4]}), [["a"], ["b"]],
    ...        pl.LazyFrame({"a": [0], "b": [4]})).rows()
    [(1, 2), (2, 3)]
    """
    columns = candidates.columns
    remaining = candidates.lazy()
    for key in keys:
        remaining = remaining.join(known.select(key).unique(), on=key, how="anti")
    remaining_frame = remaining.sort(columns).collect()
    accepted = [remaining_frame.clear()]
    while remaining_frame.height:
        least = pl.all_horizontal([pl.struct(key).is_first_distinct() for key in keys])
        chosen = remaining_frame.filter(least)
        accepted.append(chosen)
        for key in keys:  # the anti-joins keep the sorted order
            remaining_frame = remaining_frame.join(
                chosen.select(key), on=key, how="anti", maintain_order="left"
            )
    return pl.concat(accepted, how="vertical")
