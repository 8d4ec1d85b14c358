"""plan.partitioning.stable_positions: the columns every semi-naive round keeps in place."""

from __future__ import annotations

import pytest

from spark_datalog.plan import plan_program
from spark_datalog.plan.partitioning import decomposition, stable_positions

from .helpers import checked


def _positions(text: str, relation: str):
    strata = plan_program(checked(text))
    stratum = next(s for s in strata if relation in s.relations)
    return stable_positions(relation, stratum.delta_rules)


@pytest.mark.parametrize(
    "text, relation, expected",
    [
        # right-linear: the source stays
        ("tc(X,Y) :- arc(X,Y). tc(X,Z) :- tc(X,Y), arc(Y,Z). .input arc", "tc", (0,)),
        # left-linear: the target stays
        ("tc(X,Y) :- arc(X,Y). tc(X,Z) :- arc(X,Y), tc(Y,Z). .input arc", "tc", (1,)),
        # both forms in one program: no column stays in every variant
        (
            "tc(X,Y) :- arc(X,Y). tc(X,Z) :- tc(X,Y), arc(Y,Z). tc(X,Z) :- arc(X,Y), tc(Y,Z). .input arc",
            "tc",
            None,
        ),
        # non-linear: each variant keeps a different column
        ("tc(X,Y) :- arc(X,Y). tc(X,Z) :- tc(X,Y), tc(Y,Z). .input arc", "tc", None),
        # same generation: both columns come from arc
        (
            "sg(X,Y) :- arc(P,X), arc(P,Y), X != Y. sg(X,Y) :- arc(A,X), sg(A,B), arc(B,Y). .input arc",
            "sg",
            None,
        ),
        # a column kept at another position does not count
        ("p(X,Y) :- e(X,Y). p(Y,X) :- p(X,Y), e(X,X). .input e", "p", None),
        # constants and expressions in the head are not kept columns
        ("p(X,Y) :- e(X,Y). p(X,1) :- p(X,Y), e(Y,Y). .input e", "p", (0,)),
        # three columns, two kept
        ("r(A,B,C) :- s(A,B,C). r(A,B,D) :- r(A,B,C), s(C,C,D). .input s", "r", (0, 1)),
    ],
)
def test_stable_positions(text, relation, expected):
    assert _positions(text, relation) == expected


def test_mutual_recursion_reading_another_relations_delta_has_no_stable_positions():
    text = "p(X,Y) :- e(X,Y). p(X,Z) :- q(X,Y), e(Y,Z). q(X,Z) :- p(X,Y), e(Y,Z). .input e"
    assert _positions(text, "p") is None
    assert _positions(text, "q") is None


def _decomposition(text: str, relation: str):
    strata = plan_program(checked(text))
    return decomposition(next(s for s in strata if relation in s.relations))


@pytest.mark.parametrize(
    "text, relation, key, static",
    [
        ("tc(X,Y) :- arc(X,Y). tc(X,Z) :- tc(X,Y), arc(Y,Z). .input arc", "tc", (0,), ("arc",)),
        ("tc(X,Y) :- arc(X,Y). tc(X,Z) :- arc(X,Y), tc(Y,Z). .input arc", "tc", (1,), ("arc",)),
        # min/max in recursion: the group's source stays
        (
            "path(X,Y,min<D>) :- e(X,Y,D). path(X,Y,min<D>) :- path(X,Z,D1), e(Z,Y,D2), D = D1 + D2."
            " .input e",
            "path",
            (0,),
            ("e",),
        ),
        # negation of a lower stratum inside the recursion: that relation is broadcast too
        ("b(3). r(X,Y) :- e(X,Y). r(X,Z) :- r(X,Y), e(Y,Z), not b(Z). .input e", "r", (0,), ("b", "e")),
    ],
)
def test_decomposable_strata(text, relation, key, static):
    split = _decomposition(text, relation)
    assert split is not None
    assert (split.relations, split.key, split.static) == ((relation,), key, static)
    assert [len(r.rule.body) for r in split.exit_rules] == [1] * len(split.exit_rules)
    assert all(r.delta_position is not None for r in split.delta_rules)


@pytest.mark.parametrize(
    "text, relation",
    [
        # non-linear recursion reads the relation twice
        ("tc(X,Y) :- arc(X,Y). tc(X,Z) :- tc(X,Y), tc(Y,Z). .input arc", "tc"),
        # nothing stays in place
        ("sg(X,Y) :- arc(P,X), arc(P,Y), X != Y. sg(X,Y) :- arc(A,X), sg(A,B), arc(B,Y). .input arc", "sg"),
        ("reach(1). reach(Y) :- reach(X), e(X,Y). .input e", "reach"),
        # mutual recursion: two relations in the stratum
        ("p(X,Y) :- e(X,Y). p(X,Z) :- q(X,Y), e(Y,Z). q(X,Z) :- p(X,Y), e(Y,Z). .input e", "p"),
        # a linear rule that also reads the relation in full at another atom is not linear
        ("p(X,Y) :- e(X,Y). p(X,Z) :- p(X,Y), e(Y,Z), p(Z,Z). .input e", "p"),
    ],
)
def test_strata_without_a_key_run_in_one_partition(text, relation):
    split = _decomposition(text, relation)
    assert split is not None and split.key == ()
    assert relation in split.relations


def test_mutual_recursion_reads_no_relation_of_its_own_as_static():
    split = _decomposition(
        "p(X,Y) :- e(X,Y). p(X,Z) :- q(X,Y), e(Y,Z). q(X,Z) :- p(X,Y), e(Y,Z). .input e", "p"
    )
    assert split.relations == ("p", "q") and split.static == ("e",)
    assert [r.relation for r in split.exit_rules] == ["p"]


def test_a_non_recursive_stratum_does_not_decompose():
    assert _decomposition("p(X,Y) :- e(X,Y). .input e", "p") is None
