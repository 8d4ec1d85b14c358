"""Spark SQL's own recursion: ``WITH RECURSIVE ... UNION ALL`` (Spark 4.2) on temp views.

Spark 4.2 accepts only ``UNION ALL`` in a recursive CTE: there is no set semantics inside the
recursion, so a cycle never terminates (the run stops at the level or row limit), duplicate
derivations are all carried along, and a final ``DISTINCT`` gives the set. The recursion reads
only the rows of the previous level, so non-linear recursion (two references to the CTE) computes
something else than the Datalog program: those problems are reported as unsupported rather than
run. The level limit (100 by default) is raised with ``MAX RECURSION LEVEL`` to the number of
input rows + 1, which bounds the depth of any acyclic input; the row limit
(``spark.sql.cteRecursionRowLimit``) is left at Spark's default, so runaway recursion on a
cyclic input fails quickly and is recorded as an error. Problems without recursion use plain
Spark SQL. The SQL texts below are fixed benchmark queries, not built from program text.
"""

from __future__ import annotations

from . import Outcome

SYSTEM = "spark-cte"
KIND = "spark"

_CTE = {
    "tc": """
        WITH RECURSIVE tc(src, dst) MAX RECURSION LEVEL {levels} AS (
            SELECT src, dst FROM arc
            UNION ALL
            SELECT tc.src, arc.dst FROM tc JOIN arc ON tc.dst = arc.src)
        SELECT DISTINCT src, dst FROM tc""",
    "reach": """
        WITH RECURSIVE reach(node) MAX RECURSION LEVEL {levels} AS (
            SELECT node FROM source
            UNION ALL
            SELECT arc.dst FROM reach JOIN arc ON reach.node = arc.src)
        SELECT DISTINCT node FROM reach""",
    "sg": """
        WITH RECURSIVE sg(x, y) MAX RECURSION LEVEL {levels} AS (
            SELECT a.dst, b.dst FROM arc a JOIN arc b ON a.src = b.src WHERE a.dst <> b.dst
            UNION ALL
            SELECT a.dst, b.dst FROM sg JOIN arc a ON a.src = sg.x JOIN arc b ON b.src = sg.y)
        SELECT DISTINCT x, y FROM sg""",
    # No min inside the recursion: every path's length is carried, the minimum taken at the end.
    "sssp": """
        WITH RECURSIVE path(node, d) MAX RECURSION LEVEL {levels} AS (
            SELECT node, CAST(0 AS BIGINT) FROM source
            UNION ALL
            SELECT warc.dst, path.d + warc.weight FROM path JOIN warc ON path.node = warc.src)
        SELECT node, min(d) FROM path GROUP BY node""",
    "cc": """
        WITH RECURSIVE edge(x, y) AS (SELECT src, dst FROM arc UNION SELECT dst, src FROM arc),
        label(node, l) MAX RECURSION LEVEL {levels} AS (
            SELECT DISTINCT x, x FROM edge
            UNION ALL
            SELECT edge.y, label.l FROM label JOIN edge ON label.node = edge.x)
        SELECT node, min(l) FROM label GROUP BY node""",
    "pymk": """
        WITH uarc AS (SELECT src AS x, dst AS y FROM arc UNION SELECT dst, src FROM arc)
        SELECT a.y, b.y, count(DISTINCT a.x) FROM uarc a JOIN uarc b ON a.x = b.x
        LEFT ANTI JOIN uarc c ON c.x = a.y AND c.y = b.y
        WHERE a.y <> b.y
        GROUP BY a.y, b.y""",
}

_UNSUPPORTED = {
    "tc_nonlinear": "non-linear recursion: Spark's recursive CTE joins only the previous level with "
    "itself, which is not the Datalog program",
    "pointsto": "non-linear recursion (pt joined with pt) cannot be written as a Spark recursive CTE",
    "rdfs": "non-linear recursion (t joined with t) cannot be written as a Spark recursive CTE",
}


def supports(problem: str):
    if problem in _CTE:
        return None
    return _UNSUPPORTED.get(problem, f"no Spark SQL query written for {problem}")


def query(problem: str, levels: int) -> str:
    """The SQL text run for ``problem`` with the given recursion level limit."""
    return _CTE[problem].format(levels=levels)


def run(spark, frames: dict, task) -> Outcome:
    """Register the input frames as temp views, run the query and count its rows (one action)."""
    for name, frame in frames.items():
        frame.createOrReplaceTempView(name)
    result = spark.sql(query(task.problem, levels=task.input_rows + 1)).persist()
    try:
        facts = result.count()
    except BaseException:
        result.unpersist()
        raise
    return Outcome(
        facts=facts, fetch=lambda: {tuple(r) for r in result.collect()}, release=lambda: result.unpersist()
    )
