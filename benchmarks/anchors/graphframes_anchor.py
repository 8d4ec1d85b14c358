"""GraphFrames: Spark's graph library, the anchor for graph problems it has an algorithm for.

GraphFrames needs its Python package and its jar on the Spark session (``--packages
io.graphframes:graphframes-spark4_2.13:...``). On the machine the scale suite was measured on,
neither can be loaded: the Maven mirror serves no ``io.graphframes`` or ``graphframes`` artifact
(HTTP 404), so the runner records GraphFrames as unsupported with that reason instead of a time.
Where the package is installed (and its jar was put on the session), connected components run
through ``GraphFrame.connectedComponents``; its component ids are not minimum labels, but there is
one fact per vertex, so the fact count is comparable with the other systems'.
"""

from __future__ import annotations

import importlib.util

from . import Outcome

SYSTEM = "graphframes"
KIND = "spark"

JAR_MISSING = (
    "GraphFrames' jar cannot be loaded here: the Maven mirror serves no io.graphframes or "
    "graphframes artifact (HTTP 404) and the graphframes Python package is not installed"
)

_UNSUPPORTED = {
    "tc": "GraphFrames has no transitive closure",
    "tc_nonlinear": "GraphFrames has no transitive closure",
    "sg": "same generation is not a GraphFrames algorithm",
    "reach": "not written: GraphFrames' BFS finds paths between two vertex sets, not a reachable set",
    "sssp": "GraphFrames' shortestPaths counts hops (unweighted); sssp here is weighted",
}


def available() -> bool:
    return importlib.util.find_spec("graphframes") is not None


def supports(problem: str):
    if not available():
        return JAR_MISSING
    if problem == "cc":
        return None
    return _UNSUPPORTED.get(problem, f"no GraphFrames algorithm for {problem}")


def version() -> str | None:
    if not available():
        return None
    from importlib import metadata

    try:
        return metadata.version("graphframes-py")
    except metadata.PackageNotFoundError:
        return None


def run(spark, frames: dict, task) -> Outcome:
    """Connected components of the arcs read as undirected (GraphFrames ignores direction)."""
    from graphframes import GraphFrame
    from pyspark.sql import functions as F

    arc = frames["arc"]
    edges = arc.select(F.col(arc.columns[0]).alias("src"), F.col(arc.columns[1]).alias("dst"))
    vertices = edges.select(F.col("src").alias("id")).union(edges.select(F.col("dst").alias("id"))).distinct()
    components = GraphFrame(vertices, edges).connectedComponents(algorithm="graphx")
    return Outcome(facts=components.count())
