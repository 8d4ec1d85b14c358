"""The spike's operators on DuckDB's relational Python API: relations, expression objects, no
SQL text. A round's relation is a lazy plan until ``materialize`` (``DuckDBPyRelation.materialize``:
executed once, rows held in client memory). Threads: the connection's ``threads`` setting.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa
from duckdb import ColumnExpression, ConstantExpression, FunctionExpression
from duckdb.sqltypes import BIGINT


class DuckDBKernel:
    name = "duckdb"

    def __init__(self, threads: int):
        self.con = duckdb.connect(config={"threads": threads})

    def _expr(self, e, alias: dict):
        if e[0] in alias:
            return ColumnExpression(alias[e[0]], e[1]) if alias[e[0]] else ColumnExpression(e[1])
        if e[0] == "lit":
            return ConstantExpression(e[1]).cast(BIGINT)
        left, right = self._expr(e[1], alias), self._expr(e[2], alias)
        return left + right if e[0] == "+" else left != right

    def scan(self, table: pa.Table):
        return self.con.from_arrow(table)

    def to_arrow(self, rel) -> pa.Table:
        return rel.to_arrow_table()

    def materialize(self, rel):
        return rel.materialize()

    def count(self, rel) -> int:
        return rel.shape[0]

    def select(self, rel, out: dict):
        return rel.select(*[self._expr(e, {"c": None}).alias(name) for name, e in out.items()])

    def filter(self, rel, cond):
        return rel.filter(self._expr(cond, {"c": None}))

    def _on(self, pairs: list, left: str, right: str):
        cond = None
        for a, b in pairs:
            eq = ColumnExpression(left, a) == ColumnExpression(right, b)
            cond = eq if cond is None else cond & eq
        return cond

    def join(self, left, right, on: list, out: dict):
        joined = left.set_alias("l").join(right.set_alias("r"), self._on(on, "l", "r"))
        return joined.select(*[self._expr(e, {"l": "l", "r": "r"}).alias(name) for name, e in out.items()])

    def distinct(self, rel):
        return rel.distinct()

    def anti(self, rel, known, cols=None):
        cols = cols or rel.columns
        return rel.set_alias("a").join(
            known.set_alias("k"), self._on([(c, c) for c in cols], "a", "k"), how="anti"
        )

    def union(self, a, b):
        return a.union(b)  # UNION ALL

    def group_min(self, rel, key: str, value: str):
        agg = FunctionExpression("min", ColumnExpression(value)).alias(value)
        return rel.aggregate([ColumnExpression(key), agg], ColumnExpression(key))

    def improved(self, cand, best, key: str, value: str):
        joined = cand.set_alias("c").join(best.set_alias("b"), self._on([(key, key)], "c", "b"), how="left")
        known, new = ColumnExpression("b", value), ColumnExpression("c", value)
        kept = joined.filter(known.isnull() | (new < known))
        return kept.select(ColumnExpression("c", key).alias(key), new.alias(value))
