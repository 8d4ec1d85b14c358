"""DuckDB, the single-machine vectorised reference: recursive CTEs with set semantics.

Linear recursion uses ``WITH RECURSIVE ... UNION`` (set semantics, so cycles terminate). Min in
recursion uses DuckDB's ``USING KEY`` (DuckDB >= 1.3): the CTE is a dictionary keyed on the group,
and the step emits only the groups whose value improves on ``recurring.<cte>`` (the whole
dictionary so far), so the recursion stops when nothing improves. A plain recursive reference
reads only the previous iteration's rows, so non-linear recursion is written the same way with
``USING KEY`` on all columns: each step joins the last iteration's rows with ``recurring.<cte>``
in both orders and keeps only rows not already present -- semi-naive evaluation spelled in SQL.
The SQL texts are fixed benchmark queries, not built from program text.
"""

from __future__ import annotations

from . import Outcome

SYSTEM = "duckdb"
KIND = "python"

_QUERIES = {
    "tc": """
        WITH RECURSIVE tc(src, dst) AS (
            SELECT src, dst FROM arc
            UNION
            SELECT tc.src, arc.dst FROM tc JOIN arc ON tc.dst = arc.src)
        SELECT src, dst FROM tc""",
    "tc_nonlinear": """
        WITH RECURSIVE tc(src, dst) USING KEY (src, dst) AS (
            SELECT src, dst FROM arc
            UNION
            SELECT DISTINCT n.src, n.dst FROM (
                SELECT a.src, b.dst FROM tc a JOIN recurring.tc b ON a.dst = b.src
                UNION ALL
                SELECT a.src, b.dst FROM recurring.tc a JOIN tc b ON a.dst = b.src) n
            WHERE NOT EXISTS (SELECT 1 FROM recurring.tc r WHERE r.src = n.src AND r.dst = n.dst))
        SELECT src, dst FROM tc""",
    "reach": """
        WITH RECURSIVE reach(node) AS (
            SELECT node FROM source
            UNION
            SELECT arc.dst FROM reach JOIN arc ON reach.node = arc.src)
        SELECT node FROM reach""",
    "sg": """
        WITH RECURSIVE sg(x, y) AS (
            SELECT a.dst, b.dst FROM arc a JOIN arc b ON a.src = b.src WHERE a.dst <> b.dst
            UNION
            SELECT a.dst, b.dst FROM sg JOIN arc a ON a.src = sg.x JOIN arc b ON b.src = sg.y)
        SELECT x, y FROM sg""",
    "cc": """
        WITH RECURSIVE
        edge(x, y) AS (SELECT src, dst FROM arc UNION SELECT dst, src FROM arc),
        cc(node, label) USING KEY (node) AS (
            SELECT DISTINCT x, x FROM edge
            UNION
            SELECT c.node, c.label FROM (
                SELECT edge.y AS node, min(cc.label) AS label
                FROM cc JOIN edge ON cc.node = edge.x GROUP BY edge.y) c
            LEFT JOIN recurring.cc r ON r.node = c.node
            WHERE r.label IS NULL OR c.label < r.label)
        SELECT node, label FROM cc""",
    "sssp": """
        WITH RECURSIVE dist(node, d) USING KEY (node) AS (
            SELECT node, CAST(0 AS BIGINT) FROM source
            UNION
            SELECT c.node, c.d FROM (
                SELECT warc.dst AS node, min(dist.d + warc.weight) AS d
                FROM dist JOIN warc ON dist.node = warc.src GROUP BY warc.dst) c
            LEFT JOIN recurring.dist r ON r.node = c.node
            WHERE r.d IS NULL OR c.d < r.d)
        SELECT node, d FROM dist""",
    "pymk": """
        WITH uarc AS (SELECT src AS x, dst AS y FROM arc UNION SELECT dst, src FROM arc)
        SELECT a.y, b.y, count(DISTINCT a.x) FROM uarc a JOIN uarc b ON a.x = b.x
        WHERE a.y <> b.y AND NOT EXISTS (SELECT 1 FROM uarc c WHERE c.x = a.y AND c.y = b.y)
        GROUP BY a.y, b.y""",
    "pointsto": """
        WITH RECURSIVE pt(v, o) USING KEY (v, o) AS (
            SELECT var, obj FROM alloc
            UNION
            SELECT DISTINCT n.v, n.o FROM (
                SELECT assign."to" AS v, pt.o FROM assign JOIN pt ON assign."from" = pt.v
                UNION ALL
                SELECT load."to", q.o FROM load JOIN pt p ON load.ptr = p.v JOIN recurring.pt q ON q.v = p.o
                UNION ALL
                SELECT load."to", q.o FROM load JOIN recurring.pt p ON load.ptr = p.v JOIN pt q ON q.v = p.o
                UNION ALL
                SELECT p.o, w.o FROM store JOIN pt p ON store.ptr = p.v
                    JOIN recurring.pt w ON w.v = store."from"
                UNION ALL
                SELECT p.o, w.o FROM store JOIN recurring.pt p ON store.ptr = p.v
                    JOIN pt w ON w.v = store."from"
            ) n
            WHERE NOT EXISTS (SELECT 1 FROM recurring.pt r WHERE r.v = n.v AND r.o = n.o))
        SELECT v, o FROM pt""",
}

_UNSUPPORTED = {
    "rdfs": "not written: eight self-joins of the triple relation, each in two semi-naive orders",
}


def supports(problem: str):
    if problem in _QUERIES:
        return None
    return _UNSUPPORTED.get(problem, f"no DuckDB query written for {problem}")


def version() -> str:
    import duckdb

    return duckdb.__version__


def load(task):
    """A fresh in-memory DuckDB database holding the input relations (not timed)."""
    import duckdb
    import pyarrow as pa

    arrow_types = {
        "long": pa.int64(),
        "int": pa.int32(),
        "double": pa.float64(),
        "string": pa.string(),
        "bool": pa.bool_(),
    }
    con = duckdb.connect()
    for name, rows in task.inputs.items():
        columns = task.schemas[name]
        table = pa.table(
            {
                col: pa.array([r[i] for r in rows], type=arrow_types[typ])
                for i, (col, typ) in enumerate(columns)
            }
        )
        con.register("_input", table)
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM _input")
        con.unregister("_input")
    return con


def run(con, task) -> Outcome:
    """Materialise the query's result into a table and count it."""
    con.execute("DROP TABLE IF EXISTS result")
    con.execute(f"CREATE TEMP TABLE result AS {_QUERIES[task.problem]}")
    facts = con.execute("SELECT count(*) FROM result").fetchone()[0]
    return Outcome(
        facts=facts, fetch=lambda: {tuple(r) for r in con.execute("SELECT * FROM result").fetchall()}
    )
