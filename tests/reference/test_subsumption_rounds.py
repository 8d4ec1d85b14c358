"""Subsumption with a general body in recursion on the reference: each round removes the
tuples another tuple of the relation or of the round's candidates dominates."""

from __future__ import annotations

import pytest

import spark_datalog as sd
from dialect_programs import INTERVAL_SEGMENTS, INTERVALS, PARETO_FRONT, PARETO_GRAPH, PARETO_PATHS

# C <= A, B <= D holds for a tuple and itself: it stays unless another tuple is above it;
# (1, 1) is below (1, 2) and (2, 1); those two and (0, 3) are not comparable
EQUAL_IS_NOT_DOMINATED = """
    r(1, 1). r(1, 2). r(2, 1). r(0, 3).
    r(A, B + 1) :- r(A, B), B < 0.
    r(A, B) <= r(C, D) :- A <= C, B <= D.
"""
# B <= D, D <= B: two distinct tuples with the same B dominate each other. Round 1 keeps
# (1, 5); round 2's candidate (2, 5) and (1, 5) remove each other: nothing is left
MUTUAL = """
    r(1, 5).
    r(A + 1, B) :- r(A, B), A < 3.
    r(A, B) <= r(C, D) :- B <= D, D <= B.
"""
# round 1: the facts; round 2: (1, 1) gives (1, 2), which removes it, and (11, 6), which
# stays; round 3: nothing new
REMOVED_SOURCE = """
    .decl s(a: number)
    .input s
    r(1, 1). r(5, 0).
    r(A, B + 1) :- r(A, B), s(B).
    r(A + 10, B + 5) :- r(A, B), B = 1.
    r(A, B) <= r(C, D) :- A = C, B < D.
"""
# the body reads an input: 1 is worse than 2, 2 than 3
READS_BELOW = """
    .decl worse(a: number, b: number)
    .input worse
    r(1). r(2). r(3).
    r(X) :- r(X), X > 9.
    r(A) <= r(B) :- worse(A, B).
"""
# the body reads a relation derived apart from r (and not read by an output otherwise): r is
# evaluated after it; 2 is better than 1
READS_DERIVED = """
    .decl worse(a: number, b: number)
    .input worse
    r(1). r(2). r(3).
    r(X) :- r(X), X > 9.
    r(A) <= r(B) :- better(B, A), B < 3.
    better(B, A) :- worse(A, B).
    .output r
"""
# the body reads r itself: the round's tuples R ∪ N. A tuple goes when its successor is in the
# round: each round keeps only the newest
READS_ITSELF = """
    r(1). r(X + 1) :- r(X), X < 5.
    r(X) <= r(Y) :- r(X + 1), Y = X + 1.
"""
# the body negates r itself: 1 goes by 10 (3 is not in the first round), 10 stays
NEGATES_ITSELF = """
    r(1). r(10). r(X + 2) :- r(X), X < 6.
    r(X) <= r(Y) :- !r(X + 2), Y > X.
"""
# the body negates another relation: a tuple not in s goes when a smaller one is there; 2 goes
# in every round it is derived again
NEGATES_INPUT = """
    .decl s(x: number)
    .input s
    r(1). r(2). r(X + 1) :- r(X), X < 4.
    r(X) <= r(Y) :- !s(X), r(Y), Y < X.
"""
# outside recursion (negation): r stands for all candidates; 1 and 2 go by another, 3 is in s
NEGATES_INPUT_ONCE = """
    .decl s(x: number)
    .input s
    r(1). r(2). r(3).
    r(X) <= r(Y) :- !s(X), r(Y).
"""
# outside recursion an aggregate counts the candidates: a tuple goes when another's first value
# has more tuples and its own first value is not in s; (2, 1) goes by (3, _), (1, 2) stays
COUNTS_ITSELF = """
    .decl s(x: number)
    .input s
    r(1, 2). r(2, 1). r(3, 1). r(3, 3).
    r(A, B) <= r(C, D) :- count : { r(A, _) } < count : { r(C, _) }, count : { s(A) } = 0.
"""
CASES = [
    (INTERVALS, {"seg": INTERVAL_SEGMENTS}, "iv", {(1, 7), (10, 12)}),
    (PARETO_PATHS, {"e": PARETO_GRAPH}, "path", PARETO_FRONT),
    (EQUAL_IS_NOT_DOMINATED, {}, "r", {(1, 2), (2, 1), (0, 3)}),
    (MUTUAL, {}, "r", set()),
    (REMOVED_SOURCE, {"s": {(1,)}}, "r", {(1, 2), (5, 0), (11, 6)}),
    (READS_BELOW, {"worse": {(1, 2), (2, 3)}}, "r", {(3,)}),
    (READS_DERIVED, {"worse": {(1, 2), (2, 3)}}, "r", {(2,), (3,)}),
    (READS_ITSELF, {}, "r", {(5,)}),
    (NEGATES_ITSELF, {}, "r", {(10,)}),
    (NEGATES_INPUT, {"s": {(3,)}}, "r", {(1,)}),
    (NEGATES_INPUT_ONCE, {"s": {(3,)}}, "r", {(3,)}),
    (COUNTS_ITSELF, {"s": {(1,)}}, "r", {(1, 2), (3, 1), (3, 3)}),
]


def evaluate(text: str, edb: dict, strategy: str = "seminaive") -> dict:
    return sd.reference.evaluate(sd.Program.parse(text, dialect="souffle"), edb, strategy=strategy)


@pytest.mark.parametrize(
    "text, edb, relation, expected",
    CASES,
    ids=[
        "intervals",
        "pareto",
        "equal",
        "mutual",
        "removed_source",
        "reads_below",
        "reads_derived",
        "reads_itself",
        "negates_itself",
        "negates_input",
        "negates_input_once",
        "counts_itself",
    ],
)
def test_each_round_removes_the_dominated_tuples(text, edb, relation, expected):
    assert evaluate(text, edb)[relation] == expected


def test_naive_rounds_keep_the_pareto_front_too():
    assert evaluate(PARETO_PATHS, {"e": PARETO_GRAPH}, "naive")["path"] == PARETO_FRONT


def test_the_subsumption_is_planned_for_the_stratum_of_its_relation():
    program = sd.Program.parse(INTERVALS + ".output iv")
    (plan,) = program.plans
    pseudo, plans = plan.subsumed["iv"]
    assert pseudo == "iv__all" and [p.relation for p in plans] == ["iv__dominated"] * 2
    assert plan.whole
    assert "subsumption of iv in each round" in program.explain()
