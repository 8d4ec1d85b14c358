"""plan.partitioning.stable_positions: the columns every semi-naive round keeps in place."""

from __future__ import annotations

import pytest

from spark_datalog.plan import plan_program
from spark_datalog.plan.partitioning import stable_positions

from .helpers import checked


def _positions(text: str, relation: str):
    strata = plan_program(checked(text))
    stratum = next(s for s in strata if relation in s.relations)
    return stable_positions(relation, stratum.delta_rules)


@pytest.mark.parametrize("text, relation, expected", [
    # right-linear: the source stays
    ("tc(X,Y) :- arc(X,Y). tc(X,Z) :- tc(X,Y), arc(Y,Z).", "tc", (0,)),
    # left-linear: the target stays
    ("tc(X,Y) :- arc(X,Y). tc(X,Z) :- arc(X,Y), tc(Y,Z).", "tc", (1,)),
    # both forms in one program: no column stays in every variant
    ("tc(X,Y) :- arc(X,Y). tc(X,Z) :- tc(X,Y), arc(Y,Z). tc(X,Z) :- arc(X,Y), tc(Y,Z).",
     "tc", None),
    # non-linear: each variant keeps a different column
    ("tc(X,Y) :- arc(X,Y). tc(X,Z) :- tc(X,Y), tc(Y,Z).", "tc", None),
    # same generation: both columns come from arc
    ("sg(X,Y) :- arc(P,X), arc(P,Y), X != Y. sg(X,Y) :- arc(A,X), sg(A,B), arc(B,Y).", "sg", None),
    # a column kept at another position does not count
    ("p(X,Y) :- e(X,Y). p(Y,X) :- p(X,Y), e(X,X).", "p", None),
    # constants and expressions in the head are not kept columns
    ("p(X,Y) :- e(X,Y). p(X,1) :- p(X,Y), e(Y,Y).", "p", (0,)),
    # three columns, two kept
    ("r(A,B,C) :- s(A,B,C). r(A,B,D) :- r(A,B,C), s(C,C,D).", "r", (0, 1)),
])
def test_stable_positions(text, relation, expected):
    assert _positions(text, relation) == expected


def test_mutual_recursion_reading_another_relations_delta_has_no_stable_positions():
    text = "p(X,Y) :- e(X,Y). p(X,Z) :- q(X,Y), e(Y,Z). q(X,Z) :- p(X,Y), e(Y,Z)."
    assert _positions(text, "p") is None
    assert _positions(text, "q") is None
