"""Dependency graph, SCCs, strata and the stratification rules."""

from __future__ import annotations

from spark_datalog.analysis.checked import AggregateSpec
from spark_datalog.analysis.dependencies import (
    AGGREGATE,
    NEGATIVE,
    POSITIVE,
    dependency_graph,
    strongly_connected_components,
)
from spark_datalog.errors import StratificationError
from spark_datalog.syntax.parser import parse

from .analysis_helpers import check, errors

TRANSITIVE_CLOSURE = """
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), arc(Y, Z).
.input arc
"""

SAME_GENERATION = """
sg(X, Y) :- arc(P, X), arc(P, Y), X != Y.
sg(X, Y) :- arc(A, X), sg(A, B), arc(B, Y).
.input arc
"""

# Seed 001, "Mutual recursion": John Liagouris's query.
MUTUAL = """
p(X,Z)   :- p(X,Y), p(Y,Z).
q(X,Y,Z) :- p(X,W), q(W,Y,Z).
q(X,P,W) :- q(X,R,W), r(R,P).
p(X,W)   :- p(X,Y), p(X,Z), c(Y,Z,W).
p(X,W)   :- q(X,R,Y), p(Y,Z), u(R,Z,W).
q(X,Y,Z) :- q(X,R,W), q(W,P,Z), t(R,P,Y).
.input r, c, u, t
"""

WITH_NEGATION = """
reach(X, Y) :- edge(X, Y).
reach(X, Z) :- reach(X, Y), edge(Y, Z).
node(X) :- edge(X, _).
node(Y) :- edge(_, Y).
unreachable(X, Y) :- node(X), node(Y), not reach(X, Y).
far(X, count<Y>) :- unreachable(X, Y).
.input edge
"""


def shape(checked) -> list:
    return [(s.relations, s.recursive, s.uses_prem) for s in checked.strata]


def test_transitive_closure_is_one_recursive_stratum():
    checked = check(TRANSITIVE_CLOSURE)
    assert shape(checked) == [(("tc",), True, False)]
    assert checked.strata[0].index == 0
    assert [str(r) for r in checked.strata[0].rules] == [str(r) for r in checked.rules]


def test_same_generation_is_one_recursive_stratum():
    assert shape(check(SAME_GENERATION)) == [(("sg",), True, False)]


def test_mutually_recursive_relations_share_a_stratum():
    checked = check(MUTUAL)
    assert shape(checked) == [(("p", "q"), True, False)]
    assert len(checked.strata[0].rules) == 6
    assert set(checked.edb) == {"r", "c", "u", "t"}


def test_negation_and_count_give_strata_in_dependency_order():
    checked = check(WITH_NEGATION)
    assert shape(checked) == [
        (("reach",), True, False),
        (("node",), False, False),
        (("unreachable",), False, False),
        (("far",), False, False),
    ]


def test_strata_follow_dependencies_not_text_order():
    checked = check("a(X) :- b(X).\nb(X) :- c(X), e(X).\nc(X) :- e(X).\n.input e\n")
    assert [s.relations for s in checked.strata] == [("c",), ("b",), ("a",)]


def test_independent_strata_come_in_order_of_first_appearance():
    checked = check("z(X) :- e(X).\na(X) :- e(X).\nm(X) :- e(X).\n.input e\n")
    assert [s.relations for s in checked.strata] == [("z",), ("a",), ("m",)]


def test_non_recursive_relation_is_not_recursive_and_self_loop_is():
    checked = check("a(X) :- e(X).\nb(X) :- b(X), e(X).\nb(X) :- a(X).\n.input e\n")
    assert shape(checked) == [(("a",), False, False), (("b",), True, False)]


def test_dependency_graph_labels_edges():
    program = parse("p(X) :- q(X), not r(X).\ns(X, min<Y>) :- q(X), t(X, Y).\n.input q, r, t\n")
    graph = dependency_graph(program.rules, ["p", "q", "r", "s", "t"])
    assert [(e.source, e.target, e.kind, e.func) for e in graph.edges] == [
        ("q", "p", POSITIVE, None),
        ("r", "p", NEGATIVE, None),
        ("q", "s", AGGREGATE, "min"),
        ("t", "s", AGGREGATE, "min"),
    ]


def test_tarjan_finds_components_in_reverse_topological_order():
    edges = {"a": ["b"], "b": ["c", "a"], "c": ["d"], "d": ["c"], "e": ["a"]}
    components = strongly_connected_components(list(edges), lambda n: edges[n])
    assert [sorted(c) for c in components] == [["c", "d"], ["a", "b"], ["e"]]


def test_tarjan_handles_a_long_chain_without_recursion_limit():
    n = 5000
    edges = {i: [i + 1] for i in range(n)}
    edges[n] = [0]
    components = strongly_connected_components(list(edges), lambda v: edges[v])
    assert len(components) == 1 and len(components[0]) == n + 1


def test_negation_through_recursion_names_the_cycle():
    [error] = errors("p(X) :- r(X), not q(X).\nq(X) :- p(X).\n.input r\n", StratificationError)
    assert "p -> not q -> p" in error.message
    assert (error.line, error.column) == (1, 15)


def test_negation_through_a_longer_cycle():
    text = "p(X) :- e(X), not q(X).\nq(X) :- r(X).\nr(X) :- p(X).\n.input e\n"
    [error] = errors(text, StratificationError)
    assert "p -> not q -> r -> p" in error.message


def test_negation_of_itself():
    [error] = errors("p(X) :- e(X), not p(X). .input e", StratificationError)
    assert "p -> not p" in error.message


def test_count_in_recursion_is_rejected():
    text = "c(X, count<Y>) :- e(X, Y).\nd(X, Y) :- c(X, Y).\nc(X, count<Y>) :- d(X, Y).\n.input e\n"
    found = errors(text, StratificationError)
    assert len(found) == 1
    assert "count<Y>" in found[0].message and "c -> count(d) -> c" in found[0].message
    assert (found[0].line, found[0].column) == (3, 6)


def test_sum_of_itself_is_rejected():
    [error] = errors("s(X, sum<Y>) :- e(X, Y), s(Y, _). .input e", StratificationError)
    assert "sum<Y>" in error.message


def test_min_in_recursion_is_accepted_with_prem():
    checked = check(
        "path(X, Y, min<D>) :- arc(X, Y, D).\n"
        "path(X, Y, min<D>) :- path(X, Z, D1), arc(Z, Y, D2), D = D1 + D2.\n"
        ".input arc\n"
    )
    assert shape(checked) == [(("path",), True, True)]
    assert checked.relations["path"].aggregate == AggregateSpec(2, "min")


def test_max_outside_recursion_is_not_prem():
    checked = check("best(X, max<Y>) :- e(X, Y). .input e")
    assert shape(checked) == [(("best",), False, False)]


def test_min_relation_may_mix_plain_rules():
    # Seed 002's coin change: a plain rule beside the min rule.
    checked = check(
        "num(C, 1) :- coins(C).\nnum(V, min<N>) :- num(V1, N1), coins(C), V = V1 + C, N = N1 + 1, V <= 100.\n"
        ".input coins\n"
    )
    assert checked.relations["num"].aggregate == AggregateSpec(1, "min")
    assert shape(checked) == [(("num",), True, True)]


def test_conflicting_aggregates_are_rejected():
    found = errors("a(X, min<Y>) :- e(X, Y).\na(X, max<Y>) :- e(X, Y).\n.input e\n", StratificationError)
    [error] = found
    assert "conflicting aggregates for relation 'a'" in error.message
    assert (error.line, error.column) == (2, 6)


def test_aggregates_at_different_positions_conflict():
    found = errors("a(min<Y>, X) :- e(X, Y).\na(X, min<Y>) :- e(X, Y).\n.input e\n", StratificationError)
    assert "conflicting aggregates" in found[0].message


def test_count_relation_with_plain_rule_or_fact_is_rejected():
    found = errors(
        "b(X, count<Y>) :- e(X, Y).\nb(1, 2).\nb(X, Y) :- e(X, Y).\n.input e\n", StratificationError
    )
    assert [(e.line, "facts" in e.message, "plain rules" in e.message) for e in found] == [
        (2, True, False),
        (3, False, True),
    ]


def test_all_stratification_errors_are_collected():
    text = (
        "p(X) :- e(X), not p(X).\n"
        "c(X, count<Y>) :- c(X, Y).\n"
        "a(X, min<Y>) :- f(X, Y).\na(X, max<Y>) :- f(X, Y).\n"
        ".input e, f\n"
    )
    found = errors(text, StratificationError)
    assert [e.line for e in found] == [1, 2, 4]
    assert all(isinstance(e, StratificationError) for e in found)
