"""Golden tests of the magic-set rewrite: the rules evaluated for a query, as `explain` shows
them, for transitive closure (both linear forms, either argument bound: factored where the free
argument is carried), same generation, mutual recursion, a supplementary relation and a program
with negation."""

from __future__ import annotations

import pytest

import spark_datalog as sd
from spark_datalog.query.plan import plan_query

CASES = {
    "tc_left": (
        ".input arc\ntc(X, Y) :- arc(X, Y).\ntc(X, Z) :- tc(X, Y), arc(Y, Z).\n",
        "tc(1, X)",
        """\
query: tc(1, X)
answered by: magic (argument 1 of tc is bound: only the facts it needs are derived)
rules evaluated:
  answer(X) :- tc_bf(1, X).
  tc_bf(X, Y) :- magic_tc_bf(X), arc(X, Y).
  tc_bf(X, Z) :- tc_bf(X, Y), arc(Y, Z).
  magic_tc_bf(1).
""",
    ),
    "tc_right": (
        ".input arc\ntc(X, Y) :- arc(X, Y).\ntc(X, Z) :- arc(X, Y), tc(Y, Z).\n",
        "tc(1, X)",
        """\
query: tc(1, X)
answered by: magic (argument 1 of tc is bound: only the facts it needs are derived)
rules evaluated:
  answer(X) :- tc_bf(X).
  tc_bf(Y) :- magic_tc_bf(X), arc(X, Y).
  magic_tc_bf(Y) :- magic_tc_bf(X), arc(X, Y).
  magic_tc_bf(1).
""",
    ),
    "tc_left_second": (
        ".input arc\ntc(X, Y) :- arc(X, Y).\ntc(X, Z) :- tc(X, Y), arc(Y, Z).\n",
        "tc(X, 1)",
        """\
query: tc(X, 1)
answered by: magic (argument 2 of tc is bound: only the facts it needs are derived)
rules evaluated:
  answer(X) :- tc_fb(X).
  tc_fb(X) :- magic_tc_fb(Y), arc(X, Y).
  magic_tc_fb(Y) :- magic_tc_fb(Z), arc(Y, Z).
  magic_tc_fb(1).
""",
    ),
    "sg": (
        ".input par\nsg(X, X) :- par(X, _).\nsg(X, Y) :- par(X, A), sg(A, B), par(Y, B).\n",
        "sg(1, Y)",
        """\
query: sg(1, Y)
answered by: magic (argument 1 of sg is bound: only the facts it needs are derived)
rules evaluated:
  answer(Y) :- sg_bf(1, Y).
  sg_bf(X, X) :- magic_sg_bf(X), par(X, _).
  magic_sg_bf(A) :- magic_sg_bf(X), par(X, A).
  sg_bf(X, Y) :- magic_sg_bf(X), par(X, A), sg_bf(A, B), par(Y, B).
  magic_sg_bf(1).
""",
    ),
    "mutual": (
        ".input e\neven(X, Y) :- e(X, Y).\nodd(X, Z) :- even(X, Y), e(Y, Z).\neven(X, Z) :- odd(X, Y), e(Y, Z).\n",  # noqa: E501
        "odd(1, Y)",
        """\
query: odd(1, Y)
answered by: magic (argument 1 of odd is bound: only the facts it needs are derived)
rules evaluated:
  answer(Y) :- odd_bf(1, Y).
  magic_even_bf(X) :- magic_odd_bf(X).
  odd_bf(X, Z) :- magic_odd_bf(X), even_bf(X, Y), e(Y, Z).
  even_bf(X, Y) :- magic_even_bf(X), e(X, Y).
  magic_odd_bf(X) :- magic_even_bf(X).
  even_bf(X, Z) :- magic_even_bf(X), odd_bf(X, Y), e(Y, Z).
  magic_odd_bf(1).
""",
    ),
    "supplementary": (
        ".input a, b, c\np(X, Y) :- c(X, Y).\np(X, Y) :- a(X, Z), b(Z, W), p(W, V), c(V, Y).\n",
        "p(1, Y)",
        """\
query: p(1, Y)
answered by: magic (argument 1 of p is bound: only the facts it needs are derived)
rules evaluated:
  answer(Y) :- p_bf(1, Y).
  p_bf(X, Y) :- magic_p_bf(X), c(X, Y).
  sup_1(X, W) :- magic_p_bf(X), a(X, Z), b(Z, W).
  magic_p_bf(W) :- sup_1(X, W).
  p_bf(X, Y) :- sup_1(X, W), p_bf(W, V), c(V, Y).
  magic_p_bf(1).
""",
    ),
    "negation": (
        ".input e, node\nreach(X, Y) :- e(X, Y).\nreach(X, Z) :- reach(X, Y), e(Y, Z).\nunreached(X, Y) :- node(X), node(Y), not reach(X, Y).\n",  # noqa: E501
        "unreached(1, Y)",
        """\
query: unreached(1, Y)
answered by: magic (argument 1 of unreached is bound: only the facts it needs are derived)
rules evaluated:
  answer(Y) :- unreached_bf(1, Y).
  sup_1(X, Y) :- magic_unreached_bf(X), node(X), node(Y).
  magic_reach_bb(X, Y) :- sup_1(X, Y).
  unreached_bf(X, Y) :- sup_1(X, Y), not reach_bb(X, Y).
  reach_bb(X, Y) :- magic_reach_bb(X, Y), e(X, Y).
  magic_reach_bb(X, Y) :- magic_reach_bb(X, Z), e(Y, Z).
  reach_bb(X, Z) :- magic_reach_bb(X, Z), e(Y, Z), reach_bb(X, Y).
  magic_unreached_bf(1).
""",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rewritten_rules(name):
    text, query, expected = CASES[name]
    assert plan_query(sd.Program.parse(text), query).describe() + "\n" == expected


def test_explain_shows_the_decision_the_rules_and_their_plans():
    text, query, _ = CASES["tc_left"]
    explained = sd.Program.parse(text).explain(query=query)
    assert explained.startswith("query: tc(1, X)\nanswered by: magic (argument 1 of tc is bound")
    assert "stratum 0: tc_bf (recursive" in explained and "Scan magic_tc_bf(X)" in explained
    assert "answered by: full (magic sets not asked for)" in sd.Program.parse(text).explain(
        query=query, magic=False
    )
