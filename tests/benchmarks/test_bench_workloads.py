"""The benchmark generators: sizes, shapes and determinism (no Spark)."""

from __future__ import annotations

import pytest

from benchmarks import workloads as w


def test_chain_has_n_edges_in_a_path():
    assert w.chain(4) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert len(w.chain(1000)) == 1000


@pytest.mark.parametrize("k, depth", [(2, 3), (3, 4), (3, 8)])
def test_tree_is_complete_k_ary(k, depth):
    edges = w.tree(k, depth)
    nodes = (k ** (depth + 1) - 1) // (k - 1)
    assert len(edges) == nodes - 1
    children = {}
    for parent, child in edges:
        children.setdefault(parent, []).append(child)
    # Every internal node has exactly k children; every node but the root has one parent.
    assert all(len(c) == k for c in children.values())
    assert sorted(child for _, child in edges) == list(range(1, nodes))


def test_tree_of_depth_8_matches_issue_3():
    assert len(w.tree(3, 8)) == 9840


@pytest.mark.parametrize("make", [lambda s: w.gnm(300, 900, seed=s), lambda s: w.rmat(9, 2000, seed=s)])
def test_random_graphs_are_deterministic_distinct_and_loop_free(make):
    first, again, other = make(1), make(1), make(2)
    assert first == again
    assert first != other
    assert len(set(first)) == len(first)
    assert all(u != v for u, v in first)


def test_gnm_size_and_range():
    edges = w.gnm(50, 400, seed=3)
    assert len(edges) == 400
    assert all(0 <= u < 50 and 0 <= v < 50 for u, v in edges)
    with pytest.raises(ValueError):
        w.gnm(3, 7)


def test_rmat_is_skewed():
    edges = w.rmat(10, 8000, seed=1)
    assert len(edges) == 8000
    degree = {}
    for u, _ in edges:
        degree[u] = degree.get(u, 0) + 1
    # A power-law graph: the busiest node has far more edges than the average one.
    assert max(degree.values()) > 10 * (len(edges) / (1 << 10))


def test_weighted_and_undirected():
    edges = w.chain(20)
    heavy = w.weighted(edges, seed=2, max_weight=5)
    assert heavy == w.weighted(edges, seed=2, max_weight=5)
    assert [(u, v) for u, v, _ in heavy] == edges
    assert all(1 <= wt <= 5 for _, _, wt in heavy)
    both = w.undirected([(1, 2), (2, 1), (2, 3)])
    assert sorted(both) == [(1, 2), (2, 1), (2, 3), (3, 2)]


def test_points_to_facts():
    facts = w.points_to(100, seed=4)
    assert facts == w.points_to(100, seed=4)
    assert {name: len(rows) for name, rows in facts.items()} == {
        "alloc": 50,
        "assign": 100,
        "load": 25,
        "store": 25,
    }
    objects = {o for _, o in facts["alloc"]}
    assert all(o >= 100 for o in objects)


def test_university_ontology():
    triples = w.university_ontology(2, seed=1)
    assert triples == w.university_ontology(2, seed=1)
    assert len(set(triples)) == len(triples)
    assert ("Professor", w.SUBCLASS, "Faculty") in triples
    assert ("subOrganizationOf", w.RDF_TYPE, w.TRANSITIVE) in triples
    assert ("univ1.dept0", "subOrganizationOf", "univ1") in triples
    assert len(w.university_ontology(4)) > 1.9 * len(w.university_ontology(2)) - 100
