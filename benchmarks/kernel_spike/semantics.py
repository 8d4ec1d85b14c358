"""What each library's expressions give on the cases where ``reference.terms`` (the language's
value semantics) is strict. Each probe evaluates one expression on a one-row Arrow table with
the library's closest operator and reports the value it gave or the error it raised."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

BIG = 2**63 - 1
NAN = float("nan")
# name, wanted, (a, b), the operation; ops: div (integer /), mod, add, eq, min, groups
CASES = (
    ("-7 / 2 (long)", "-3", (-7, 2), "div"),
    ("-7 mod 2", "-1", (-7, 2), "mod"),
    ("7 mod -2", "1", (7, -2), "mod"),
    ("1 / 0 (long)", "no row", (1, 0), "div"),
    ("2^63-1 + 1", "overflow error", (BIG, 1), "add"),
    ("NaN = NaN", "true", (NAN, NAN), "eq"),
    ("min<> of {NaN, 2.0}", "2.0", (NAN, 2.0), "min"),
    ("groups of {-0.0, 0.0}", "1", (-0.0, 0.0), "groups"),
)


def _polars(op: str, a, b):
    import polars as pl

    x, y = pl.col("a"), pl.col("b")
    df = pl.DataFrame({"a": [a], "b": [b]})
    if op in ("min", "groups"):
        col = pl.DataFrame({"v": [a, b]})
        return col.select(pl.col("v").min()).item() if op == "min" else col.n_unique()
    expr = {"div": x.truncdiv(y), "mod": x % y, "add": x + y, "eq": x == y}[op]
    return df.select(expr).item()


def _duckdb(op: str, a, b):
    import duckdb
    from duckdb import ColumnExpression as Col
    from duckdb import FunctionExpression as Fn

    con = duckdb.connect()
    if op in ("min", "groups"):
        rel = con.from_arrow(pa.table({"v": [a, b]}))
        agg = Fn("min", Col("v")) if op == "min" else Fn("count", Col("v"))
        return rel.aggregate([agg]).fetchall()[0][0] if op == "min" else len(rel.distinct().fetchall())
    rel = con.from_arrow(pa.table({"a": [a], "b": [b]}))
    x, y = Col("a"), Col("b")
    expr = {"div": x // y, "mod": x % y, "add": x + y, "eq": x == y}[op]
    return rel.select(expr).fetchall()[0][0]


def _arrow(op: str, a, b):
    if op in ("min", "groups"):
        col = pa.array([a, b])
        return pc.min(col).as_py() if op == "min" else len(pc.unique(col))
    x, y = pa.array([a]), pa.array([b])
    fn = {"div": pc.divide_checked, "mod": pc.remainder_checked, "add": pc.add_checked, "eq": pc.equal}[op]
    return fn(x, y)[0].as_py()


PROBES = {
    "polars": (_polars, "`truncdiv`, `%`, `+`, `==`, `min`, `n_unique`"),
    "duckdb": (_duckdb, "`//`, `%`, `+`, `==` on expression objects, `min`, `distinct`"),
    "arrow": (_arrow, "`divide_checked`, `remainder_checked`, `add_checked`, `equal`, `min`, `unique`"),
}


def _shown(probe, op: str, a, b) -> str:
    try:
        value = probe(op, a, b)
    except Exception as error:  # the error is the observation
        return f"error: {type(error).__name__}"
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def probe_all() -> list:
    """Rows (case, wanted, polars, duckdb, arrow)."""
    return [
        (name, wanted, *[_shown(probe, op, a, b) for probe, _ in PROBES.values()])
        for name, wanted, (a, b), op in CASES
    ]
