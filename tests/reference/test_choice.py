"""The greedy ``choice-domain`` on the reference: several keys, and in recursion."""

from __future__ import annotations

import pytest

import spark_datalog as sd
from dialect_programs import SPANNING_GRAPH as GRAPH
from dialect_programs import SPANNING_TREE
from spark_datalog.reference.choice import greedy, taken_keys


def evaluate(text: str, edb: dict, strategy: str = "seminaive") -> dict:
    return sd.reference.evaluate(sd.Program.parse(text, dialect="souffle"), edb, strategy=strategy)


def test_greedy_takes_candidates_in_order_against_every_key():
    taken = taken_keys(((0,), (1, 2)), [(0, 1, 1)])
    found = greedy({(2, 1, 1), (1, 1, 2), (1, 3, 3), (2, 3, 3), (3, 1, 2)}, ((0,), (1, 2)), taken)
    assert found == [(1, 1, 2), (2, 3, 3)]
    assert taken == [{(0,), (1,), (2,)}, {(1, 1), (1, 2), (3, 3)}]


@pytest.mark.parametrize("strategy", ["seminaive", "naive"])
def test_spanning_tree_reaches_each_node_by_the_least_edge_of_its_round(strategy):
    # round 1: (1,2) (1,3); round 2: (2,4) before (3,4), (3,5); round 3: (4,6), (5,1), not
    # (4,5) or (5,6) (5 and 6 reached); round 4: (6,2) is not new for 2
    found = evaluate(SPANNING_TREE, {"e": GRAPH}, strategy)["st"]
    assert found == {(1, 2), (1, 3), (2, 4), (3, 5), (4, 6), (5, 1)}


def test_several_keys_choose_a_matching():
    text = """
        .decl likes(p: symbol, d: symbol)
        .input likes
        .decl served(p: symbol, d: symbol) choice-domain p, d
        served(P, D) :- likes(P, D).
    """
    likes = {("ann", "soup"), ("ann", "stew"), ("bob", "soup"), ("bob", "pie"), ("cy", "pie")}
    assert evaluate(text, {"likes": likes})["served"] == {("ann", "soup"), ("bob", "pie")}


def test_stated_facts_are_first_round_candidates():
    text = """
        .decl e(x: number, y: number)
        .input e
        .decl st(x: number, y: number) choice-domain y
        st(9, 2).
        st(X, Y) :- st(_, X), e(X, Y).
    """
    # the fact (9, 2) is a candidate of round 1 alone; then 2 -> 3, not 1 -> 2 (2 is taken)
    assert evaluate(text, {"e": {(2, 3), (1, 2), (3, 2)}})["st"] == {(9, 2), (2, 3)}


def test_a_relation_reading_a_choice_sees_only_the_chosen_tuples():
    text = SPANNING_TREE + "parent_of_four(X) :- st(X, 4)."
    assert evaluate(text, {"e": GRAPH})["parent_of_four"] == {(2,)}
