"""Factoring of the magic-set program (``spark_datalog/query/factoring.py``): where it applies,
what it must refuse, and random linear programs against full evaluation."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import programs
import spark_datalog as sd
from queries import linear_programs, query_for
from spark_datalog.query.plan import plan_query

DECLS = ".decl e(c0: long, c1: long)\n.decl f(a: long, b: long)\n.decl g(a: long)\n.input e, f, g\n"


def factored(program, query) -> bool:
    """True when the query's adorned relation lost its bound columns."""
    plan = plan_query(program, query)
    name = plan.query.atom.predicate
    arity = program.relations[name].arity
    return any(
        r.head.predicate.startswith(f"{name}_") and r.head.arity < arity for r in plan.program.checked.rules
    )


@pytest.mark.parametrize(
    "rules, query",
    [
        ("p(X, Z) :- e(X, Z).\np(X, Z) :- p(X, Y), f(Y, Z).", "p(A, 3)"),  # left-linear, 2nd bound
        ("p(X, Z) :- e(X, Z).\np(X, Z) :- f(X, Y), p(Y, Z).", "p(1, B)"),  # right-linear, 1st bound
        ("p(X, Z) :- e(X, Z).\np(X, Z) :- g(Z), f(Y, Z), p(X, Y).", "p(A, 3)"),  # a filter before
        ("p(X, Z) :- e(X, Z).\np(X, Z) :- f(Y, Z), p(X, Y), g(Y).", "p(A, 3)"),  # an input read first
    ],
)
def test_a_carried_free_argument_is_factored(rules, query):
    program = sd.Program.parse(DECLS + rules)
    edb = {"e": {(1, 2), (4, 0), (5, 3)}, "f": {(2, 3), (0, 2), (3, 1), (1, 2)}, "g": {(3,), (2,)}}
    assert factored(program, query)
    assert sd.reference.answer(program, query, edb, magic=True) == sd.reference.answer(program, query, edb)


@pytest.mark.parametrize(
    "rules, query",
    [
        # g(W), connected to nothing, is read after the recursive atom: the magic rule lacks it
        ("p(X, Z) :- e(X, Z).\np(X, Z) :- f(Y, Z), p(X, Y), g(W).", "p(A, 3)"),
        # the carried variable is changed on the way
        ("p(X, Z) :- e(X, Z).\np(X, Z) :- f(Y, Z), p(W, Y), f(W, X).", "p(A, 3)"),
        # left-linear with the first argument bound: the bound argument is carried, not the free one
        ("p(X, Z) :- e(X, Z).\np(X, Z) :- p(X, Y), f(Y, Z).", "p(1, B)"),
        # p is also read by another relation: its magic relation has other callers
        ("p(X, Z) :- e(X, Z).\np(X, Z) :- p(X, Y), f(Y, Z).\nq(X, Z) :- p(X, Y), p(Y, Z).", "q(A, 3)"),
    ],
)
def test_what_is_not_factored(rules, query):
    program = sd.Program.parse(DECLS + rules)
    edb = {"e": {(1, 2), (4, 0), (5, 3)}, "f": {(2, 3), (0, 2), (3, 1), (1, 2), (5, 1)}, "g": {(0,)}}
    assert not factored(program, query)
    assert sd.reference.answer(program, query, edb, magic=True) == sd.reference.answer(program, query, edb)


@st.composite
def bound_queries(draw):
    text, edb = draw(linear_programs())
    program = sd.Program.parse(text)
    query = draw(query_for(program).filter(lambda q: re.search(r"[(,] *-?[0-9]", q) is not None))
    return program, query, edb


@programs.settings(default=150)
@given(bound_queries())
def test_random_linear_programs(case):
    program, query, edb = case
    assert sd.reference.answer(program, query, edb, magic="auto") == sd.reference.answer(
        program, query, edb
    ), plan_query(program, query).describe()
