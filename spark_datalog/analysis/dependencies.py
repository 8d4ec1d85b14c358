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
from .checked import Stratum
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
    index_of: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in nodes:
        if root in index_of:
            continue
        work = [(root, iter(successors(root)))]
        index_of[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index_of:
                    index_of[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(successors(child))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index_of[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index_of[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(component)
    return components


def stratify(rules, relations, idb, aggregates) -> tuple[tuple, list]:
    """``(strata, errors)``: the strata of the IDB relations of ``rules`` in evaluation order.

    ``relations`` lists every relation in first-appearance order, ``idb`` the derived ones,
    ``aggregates`` maps relations to their :class:`AggregateSpec`.
    """
    graph = dependency_graph(rules, relations)
    successors: dict[str, list[str]] = {n: [] for n in graph.nodes}
    for edge in graph.edges:
        successors.setdefault(edge.source, []).append(edge.target)
        successors.setdefault(edge.target, [])
    order = {name: i for i, name in enumerate(successors)}
    components = strongly_connected_components(list(successors), lambda n: successors[n])
    component_of = {n: i for i, c in enumerate(components) for n in c}

    errors = _cycle_errors(graph, rules, component_of)

    self_loops = {e.source for e in graph.edges if e.source == e.target}
    rules_of: dict[str, list[int]] = {}  # relation -> the indexes of its rules, ascending
    for index, rule in enumerate(rules):
        rules_of.setdefault(rule.head.predicate, []).append(index)
    strata: list[Stratum] = []
    derived = set(idb)
    for members in _topological(components, component_of, successors, order):
        if not derived.isdisjoint(members):
            strata.append(_stratum(len(strata), members, rules, rules_of, self_loops, order, aggregates))
    return tuple(strata), errors


def _stratum(
    index: int, members: list, rules, rules_of: dict, self_loops: set, order: dict, aggregates
) -> Stratum:
    """The stratum ``index`` of the component ``members``: its relations in first-appearance order
    and their rules in program order."""
    if len(members) == 1:  # most components: no sorting needed
        indices: list = rules_of.get(members[0], [])
        recursive = members[0] in self_loops
    else:
        members = sorted(members, key=order.__getitem__)
        indices = sorted(i for m in members for i in rules_of.get(m, ()))
        recursive = True
    uses_prem = recursive and any(
        aggregates[m].func in ast.PREMAPPABLE_FUNCTIONS for m in members if m in aggregates
    )
    return Stratum(index, tuple(members), tuple(rules[i] for i in indices), recursive, uses_prem)


def _topological(components, component_of, successors, order) -> list[list[str]]:
    """Components in dependency order; among ready ones, the one appearing first goes first."""
    indegree = [0] * len(components)
    followers: list[set[int]] = [set() for _ in components]
    for source, targets in successors.items():
        for target in targets:
            a, b = component_of[source], component_of[target]
            if a != b and b not in followers[a]:
                followers[a].add(b)
                indegree[b] += 1
    key = [min(map(order.__getitem__, c)) for c in components]
    ready = [(key[i], i) for i in range(len(components)) if indegree[i] == 0]
    heapq.heapify(ready)
    out: list[list[str]] = []
    while ready:
        _, i = heapq.heappop(ready)
        out.append(components[i])
        for j in followers[i]:
            indegree[j] -= 1
            if indegree[j] == 0:
                heapq.heappush(ready, (key[j], j))
    return out


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
