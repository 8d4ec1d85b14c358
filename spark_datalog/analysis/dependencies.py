"""The predicate dependency graph, its strongly connected components and the strata.

An edge goes from a body relation to the head relation of a rule, labelled ``negative`` for a
negated atom, ``aggregate`` (with the function) for a positive atom of a rule with a head
aggregate, and ``positive`` otherwise. Each SCC that holds a derived (IDB) relation is one
stratum; strata come in topological order, ties broken by first appearance in the program.
Negation and count/sum/avg may not occur inside a cycle; min/max may (Pre-Mappability), which
marks the stratum ``uses_prem``.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass
from typing import NamedTuple, Optional, Union

from ..errors import StratificationError
from ..syntax import ast
from .checked import Stratum, stratum
from .mentions import error_at, rule_text

POSITIVE = "positive"
NEGATIVE = "negative"
AGGREGATE = "aggregate"


class Dependency(NamedTuple):
    """``target`` (a rule head) depends on ``source`` (a relation of that rule's body). A named
    tuple: a program makes one per body atom, and tuples are quick to make."""

    source: str
    target: str
    kind: str  # POSITIVE, NEGATIVE or AGGREGATE
    rule_index: int
    literal: Union[ast.Atom, ast.Negation]
    func: Optional[str] = None  # the aggregate function of an AGGREGATE edge

    def label(self) -> str:
        """How the body relation reads from the head: ``q``, ``not q`` or ``count(q)``."""
        if self.kind == NEGATIVE:
            return f"not {self.source}"
        if self.kind == AGGREGATE:
            return f"{self.func}({self.source})"
        return self.source


@dataclass(frozen=True)
class DependencyGraph:
    nodes: tuple  # relation names, in first-appearance order
    edges: tuple  # tuple[Dependency, ...], in rule order


def dependency_graph(rules, relations) -> DependencyGraph:
    """The graph over ``relations`` (names in first-appearance order) defined by ``rules``."""
    edges: list[Dependency] = []
    for index, rule in enumerate(rules):
        aggregate = rule.aggregate
        for literal in rule.body:
            if isinstance(literal, ast.Negation):
                edges.append(
                    Dependency(literal.atom.predicate, rule.head.predicate, NEGATIVE, index, literal)
                )
            elif isinstance(literal, ast.Atom):
                if aggregate is not None:
                    edges.append(
                        Dependency(
                            literal.predicate,
                            rule.head.predicate,
                            AGGREGATE,
                            index,
                            literal,
                            aggregate[1].func,
                        )
                    )
                else:
                    edges.append(Dependency(literal.predicate, rule.head.predicate, POSITIVE, index, literal))
    return DependencyGraph(tuple(relations), tuple(edges))


def strongly_connected_components(nodes, successors) -> list[list[str]]:
    """Tarjan's algorithm, iterative. Components come in reverse topological order (a component
    before the components it is reachable from)."""
    names = list(nodes)
    ids = {name: i for i, name in enumerate(names)}
    adjacency: list[list[int]] = []
    while len(adjacency) < len(names):  # nodes first found as successors join names
        row = []
        for child in successors(names[len(adjacency)]):
            if child not in ids:
                ids[child] = len(names)
                names.append(child)
            row.append(ids[child])
        adjacency.append(row)
    return [[names[i] for i in component] for component in _Tarjan(adjacency).components]


class _Tarjan:
    """Tarjan's algorithm over the nodes ``0 .. n-1`` (``successors[i]``: where ``i`` leads),
    iterative: ``components`` in reverse topological order."""

    def __init__(self, successors: list[list[int]]) -> None:
        self.successors = successors
        self.index = [-1] * len(successors)
        self.low = [0] * len(successors)
        self.on_stack = [False] * len(successors)
        self.stack: list[int] = []
        self.components: list[list[int]] = []
        self.counter = 0
        for root in range(len(successors)):
            if self.index[root] < 0:
                self._visit(root)

    def _enter(self, node: int) -> None:
        self.index[node] = self.low[node] = self.counter
        self.counter += 1
        self.stack.append(node)
        self.on_stack[node] = True

    def _visit(self, root: int) -> None:
        index, low, on_stack, stack = self.index, self.low, self.on_stack, self.stack
        self._enter(root)
        work = [(root, iter(self.successors[root]))]
        while work:
            node, children = work[-1]
            for child in children:
                if index[child] < 0:  # self._enter(child), inline
                    index[child] = low[child] = self.counter
                    self.counter += 1
                    stack.append(child)
                    on_stack[child] = True
                    work.append((child, iter(self.successors[child])))
                    break
                if on_stack[child] and index[child] < low[node]:
                    low[node] = index[child]
            else:  # every child done
                work.pop()
                if work and low[node] < low[work[-1][0]]:
                    low[work[-1][0]] = low[node]
                if low[node] == index[node]:
                    self._pop_component(node)

    def _pop_component(self, node: int) -> None:
        component = []
        while True:
            member = self.stack.pop()
            self.on_stack[member] = False
            component.append(member)
            if member == node:
                break
        self.components.append(component)


class _Graph(NamedTuple):
    """The dependency graph over relation ids (``names[i]`` is relation ``i``, in
    first-appearance order), with what stratification needs besides the edges."""

    names: list  # relation names
    successors: list  # successors[i]: the heads of the rules reading relation i (one per edge)
    self_loops: set  # ids of relations read by one of their own rules
    rules_of: dict  # relation name -> the indexes of its rules, ascending
    checked: list  # (source, target) of every negative edge and count/sum/avg edge


def _graph(rules, relations, aggregates) -> _Graph:
    """The dependency graph of ``rules`` over relation ids (without :class:`Dependency` records).
    ``aggregates`` holds every relation with an aggregate rule."""
    names = list(relations)
    ids = {name: i for i, name in enumerate(names)}
    graph = _Graph(names, [[] for _ in names], set(), {}, [])
    for index, rule in enumerate(rules):
        head = rule.head.predicate
        aggregate = rule.aggregate if head in aggregates else None
        strict = aggregate is not None and aggregate[1].func not in ast.PREMAPPABLE_FUNCTIONS
        b = ids.get(head)
        for literal in rule.body:
            kind = type(literal)
            if kind is ast.Atom:
                source, checked = literal.predicate, strict
            elif kind is ast.Negation:
                source, checked = literal.atom.predicate, True
            else:
                continue
            a = ids.get(source)
            if a is None or b is None:  # a relation missing from those given: in edge order
                a, b = _node_id(graph, ids, source), _node_id(graph, ids, head)
            graph.successors[a].append(b)
            if a == b:
                graph.self_loops.add(a)
            if checked:
                graph.checked.append((a, b))
        graph.rules_of.setdefault(head, []).append(index)
    return graph


def _node_id(graph: _Graph, ids: dict, name: str) -> int:
    """The id of relation ``name`` (a new one for a relation missing from the relations given)."""
    node = ids.get(name)
    if node is None:
        node = ids[name] = len(graph.names)
        graph.names.append(name)
        graph.successors.append([])
    return node


def stratify(rules, relations, idb, aggregates, after: tuple = ()) -> tuple[tuple, list]:
    """``(strata, errors)``: the strata of the IDB relations of ``rules`` in evaluation order.

    ``relations`` lists every relation in first-appearance order, ``idb`` the derived ones,
    ``aggregates`` maps relations to their :class:`AggregateSpec`; ``after`` holds pairs
    ``(a, b)``: ``b`` is evaluated after ``a`` though no rule of ``b`` reads ``a`` (a
    subsumption's body read in the rounds of ``b``, :mod:`spark_datalog.syntax.subsumption`).
    """
    graph = _graph(rules, relations, aggregates)
    ids = {name: node for node, name in enumerate(graph.names)} if after else {}
    for source, target in after:
        graph.successors[_node_id(graph, ids, source)].append(_node_id(graph, ids, target))
    components = _Tarjan(graph.successors).components
    component_of = [0] * len(graph.names)
    for i, component in enumerate(components):
        for node in component:
            component_of[node] = i

    errors: list = []
    if any(component_of[a] == component_of[b] for a, b in graph.checked):
        by_name = {graph.names[node]: c for node, c in enumerate(component_of)}
        errors = _cycle_errors(dependency_graph(rules, graph.names), rules, by_name)

    strata: list[Stratum] = []
    derived = {node for node, name in enumerate(graph.names) if name in idb}
    for members in _topological(components, component_of, graph.successors):
        if not derived.isdisjoint(members):
            strata.append(_stratum(len(strata), members, rules, graph, aggregates))
    return tuple(strata), errors


def _stratum(index: int, members: list, rules, graph: _Graph, aggregates) -> Stratum:
    """The stratum ``index`` of the component ``members`` (relation ids): its relations in
    first-appearance order and their rules in program order."""
    if len(members) == 1:  # most components: no sorting needed
        names = [graph.names[members[0]]]
        indices: list = graph.rules_of.get(names[0], [])
        recursive = members[0] in graph.self_loops
    else:
        names = [graph.names[node] for node in sorted(members)]
        indices = sorted(i for name in names for i in graph.rules_of.get(name, ()))
        recursive = True
    uses_prem = recursive and any(
        aggregates[m].func in ast.PREMAPPABLE_FUNCTIONS for m in names if m in aggregates
    )
    return stratum(index, tuple(names), tuple([rules[i] for i in indices]), recursive, uses_prem)


def _topological(components: list, component_of: list, successors: list) -> list[list[int]]:
    """Components in dependency order; among ready ones, the one appearing first goes first."""
    indegree = [0] * len(components)
    followers: list = []  # the components each component leads to, without repeats
    for a, component in enumerate(components):
        found = _followers(a, component, component_of, successors)
        followers.append(found)
        for b in found:
            indegree[b] += 1
    key = [min(c) for c in components]  # ids are in first-appearance order
    ready = [(key[i], i) for i in range(len(components)) if indegree[i] == 0]
    heapq.heapify(ready)
    out: list[list[int]] = []
    while ready:
        _, i = heapq.heappop(ready)
        out.append(components[i])
        for j in followers[i]:
            indegree[j] -= 1
            if indegree[j] == 0:
                heapq.heappush(ready, (key[j], j))
    return out


def _followers(a: int, component: list, component_of: list, successors: list):
    """The other components the component ``a`` leads to, without repeats (a tuple for one
    relation with at most one edge, the most common case: no set to build and keep)."""
    if len(component) == 1:
        targets = successors[component[0]]
        if not targets:
            return ()
        if len(targets) == 1:
            b = component_of[targets[0]]
            return () if b == a else (b,)
    found = {component_of[target] for node in component for target in successors[node]}
    found.discard(a)
    return found


def _cycle_errors(graph: DependencyGraph, rules, component_of) -> list[StratificationError]:
    """Negation and count/sum/avg inside a cycle (edges within one component)."""
    inside = [e for e in graph.edges if component_of[e.source] == component_of[e.target]]
    if not inside:
        return []
    errors: list[StratificationError] = []
    uses: dict[str, list[Dependency]] = {}  # head relation -> its dependencies
    for edge in graph.edges:
        uses.setdefault(edge.target, []).append(edge)
    for edge in inside:
        if edge.kind == NEGATIVE:
            rule = rules[edge.rule_index]
            errors.append(
                error_at(
                    StratificationError,
                    f"negation through recursion: {_cycle_text(uses, edge, component_of)} "
                    f"(in rule '{rule_text(rule)}')",
                    edge.literal.span,
                )
            )
    reported: set[int] = set()
    for edge in inside:
        rule = rules[edge.rule_index]
        aggregate = rule.aggregate
        if aggregate is None or aggregate[1].func in ast.PREMAPPABLE_FUNCTIONS or edge.rule_index in reported:
            continue
        reported.add(edge.rule_index)
        agg = aggregate[1]
        errors.append(
            error_at(
                StratificationError,
                f"aggregate {agg} inside recursion: {_cycle_text(uses, edge, component_of)} "
                f"(in rule '{rule_text(rule)}'); only min and max may be used in recursion",
                agg.span if agg.span.line else rule.span,
            )
        )
    return errors


def _cycle_text(uses: dict, edge: Dependency, component_of) -> str:
    """The cycle through ``edge`` read from the head: ``p -> not q -> p``."""
    component = component_of[edge.target]
    # Breadth-first from the body relation back to the head, walking from heads to bodies.
    previous: dict[str, Optional[Dependency]] = {edge.source: None}
    queue = deque([edge.source])
    while queue and edge.target not in previous:
        node = queue.popleft()
        for step in uses.get(node, ()):
            if component_of[step.source] == component and step.source not in previous:
                previous[step.source] = step
                queue.append(step.source)
    steps: list[Dependency] = []
    node = edge.target
    while edge.source != edge.target and (back := previous.get(node)) is not None:
        steps.append(back)
        node = back.target
    steps.reverse()
    return " -> ".join([edge.target, edge.label()] + [s.label() for s in steps])
