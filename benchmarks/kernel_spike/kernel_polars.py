"""The spike's operators on Polars: lazy frames collected once per round, or eager frames.

Threads: ``POLARS_MAX_THREADS`` is read once, when polars is imported, so the caller sets it in
the environment of a fresh process (``measure``).
"""

from __future__ import annotations

import polars as pl
import pyarrow as pa


class PolarsKernel:
    def __init__(self, threads: int, lazy: bool = True):
        self.lazy = lazy
        self.name = "polars-lazy" if lazy else "polars-eager"

    def _in(self, rel):
        return rel.lazy() if self.lazy else rel

    def _expr(self, e, prefix: dict):
        if e[0] in prefix:
            return pl.col(prefix[e[0]] + e[1])
        if e[0] == "lit":
            return pl.lit(e[1], dtype=pl.Int64)
        left, right = self._expr(e[1], prefix), self._expr(e[2], prefix)
        return left + right if e[0] == "+" else left != right

    def scan(self, table: pa.Table):
        return pl.from_arrow(table)

    def to_arrow(self, rel) -> pa.Table:
        return rel.to_arrow()

    def materialize(self, rel):
        return rel.lazy().collect() if self.lazy else rel

    def count(self, rel) -> int:
        return rel.height

    def select(self, rel, out: dict):
        return self._in(rel).select(**{name: self._expr(e, {"c": ""}) for name, e in out.items()})

    def filter(self, rel, cond):
        return self._in(rel).filter(self._expr(cond, {"c": ""}))

    def join(self, left, right, on: list, out: dict):
        """Inner equi-join; columns renamed l_*/r_* so that the projection can name both sides."""
        lhs = self._in(left).rename(lambda c: "l_" + c)
        rhs = self._in(right).rename(lambda c: "r_" + c)
        joined = lhs.join(rhs, left_on=["l_" + a for a, _ in on], right_on=["r_" + b for _, b in on])
        return joined.select(**{name: self._expr(e, {"l": "l_", "r": "r_"}) for name, e in out.items()})

    def distinct(self, rel):
        return self._in(rel).unique()

    def anti(self, rel, known, cols=None):
        rel = self._in(rel)
        cols = cols or (rel.collect_schema().names() if self.lazy else rel.columns)
        return rel.join(self._in(known), on=cols, how="anti")

    def union(self, a, b):
        return pl.concat([self._in(a), self._in(b)], rechunk=False)

    def group_min(self, rel, key: str, value: str):
        return self._in(rel).group_by(key).agg(pl.col(value).min())

    def improved(self, cand, best, key: str, value: str):
        known = self._in(best).rename({value: "_best"})
        joined = self._in(cand).join(known, on=key, how="left")
        keep = pl.col("_best").is_null() | (pl.col(value) < pl.col("_best"))
        return joined.filter(keep).select(key, value)
