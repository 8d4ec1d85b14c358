"""networkx: the single-threaded COST baseline for the graph problems.

The graph is built before timing (as every other system receives its inputs ready); the timed
part is the graph algorithm and the production of the same facts the Datalog program derives.
"""

from __future__ import annotations

from . import Outcome

SYSTEM = "networkx"
KIND = "python"

_UNSUPPORTED = {
    "sg": "same generation is not a graph-library algorithm",
    "pymk": "friends-of-friends counting is not a graph-library algorithm",
    "pointsto": "not a graph problem",
    "rdfs": "not a graph problem",
}


def supports(problem: str):
    if problem in _PROBLEMS:
        return None
    return _UNSUPPORTED.get(problem, f"no networkx algorithm for {problem}")


def version() -> str:
    import networkx

    return networkx.__version__


def load(task):
    """The networkx graph (and the source nodes) for the task's problem (not timed)."""
    import networkx as nx

    inputs, problem = task.inputs, task.problem
    if problem == "sssp":
        graph = nx.DiGraph()
        graph.add_weighted_edges_from(inputs["warc"])
    elif problem == "cc":
        graph = nx.Graph()
        graph.add_edges_from(inputs["arc"])
    else:
        graph = nx.DiGraph()
        graph.add_edges_from(inputs["arc"])
    sources = [row[0] for row in inputs.get("source", ())]
    return graph, sources


def _tc(graph, sources):
    """Every (x, y) with a non-empty path x -> y: descendants, plus x itself when x is on a cycle."""
    import networkx as nx

    on_cycle = set()
    for component in nx.strongly_connected_components(graph):
        if len(component) > 1:
            on_cycle |= component
    on_cycle |= {u for u in graph if graph.has_edge(u, u)}
    reached = {}
    for node in graph:
        reached[node] = nx.descendants(graph, node)
        if node in on_cycle:
            reached[node].add(node)
    facts = sum(len(r) for r in reached.values())
    return facts, lambda: {(x, y) for x, ys in reached.items() for y in ys}


def _reach(graph, sources):
    import networkx as nx

    reached = set(sources)
    for source in sources:
        if source in graph:
            reached |= nx.descendants(graph, source)
    return len(reached), lambda: {(n,) for n in reached}


def _cc(graph, sources):
    import networkx as nx

    labels = {}
    for component in nx.connected_components(graph):
        smallest = min(component)
        labels.update((node, smallest) for node in component)
    return len(labels), lambda: set(labels.items())


def _sssp(graph, sources):
    import networkx as nx

    present = [s for s in sources if s in graph]
    dist = dict(nx.multi_source_dijkstra_path_length(graph, present, weight="weight")) if present else {}
    for s in sources:
        dist.setdefault(s, 0)
    return len(dist), lambda: set(dist.items())


_PROBLEMS = {"tc": _tc, "tc_nonlinear": _tc, "reach": _reach, "cc": _cc, "sssp": _sssp}


def run(loaded, task) -> Outcome:
    graph, sources = loaded
    facts, fetch = _PROBLEMS[task.problem](graph, sources)
    return Outcome(facts=facts, fetch=fetch)
