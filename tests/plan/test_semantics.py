"""Plans evaluated to a fixpoint by the kernel (see ir_eval.py) must give the facts a
program means — the seeds' hand-checked programs, random graphs against plain Python, and the
reference interpreter. Naive evaluation runs the full plans; semi-naive runs the delta variants."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from seed_programs import SEED_PROGRAMS
from spark_datalog.plan import plan_program

from .helpers import checked
from .ir_eval import run

STRATEGIES = ("naive", "seminaive")


def _evaluate(program, edb, strategy):
    inputs = {name: set(rows) for name, rows in edb.items()}
    for name, rows in program.facts.items():
        inputs.setdefault(name, set()).update(rows)
    result = run(program, plan_program(program), inputs, strategy)
    return {name: result[name] for name in program.idb}


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("seed", SEED_PROGRAMS, ids=str)
def test_seed_programs(seed, strategy):
    result = _evaluate(checked(seed.text), seed.edb, strategy)
    assert result == seed.expected


def _closure(edges):
    closure = set(edges)
    while True:
        extra = {(x, w) for (x, y) in closure for (z, w) in closure if y == z} - closure
        if not extra:
            return closure
        closure |= extra


TC_LINEAR = """
    tc(X, Y) :- arc(X, Y).
    tc(X, Z) :- tc(X, Y), arc(Y, Z).
    .input arc
"""
TC_NONLINEAR = """
    tc(X, Y) :- arc(X, Y).
    tc(X, Z) :- tc(X, Y), tc(Y, Z).
    .input arc
"""
SAME_GENERATION = """
    sg(X, Y) :- arc(P, X), arc(P, Y), X != Y.
    sg(X, Y) :- arc(A, X), sg(A, B), arc(B, Y).
    .input arc
"""

edges = st.sets(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=20)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("text", [TC_LINEAR, TC_NONLINEAR], ids=["linear", "nonlinear"])
@given(arcs=edges)
def test_transitive_closure_matches_python(text, strategy, arcs):
    assert _evaluate(checked(text), {"arc": arcs}, strategy)["tc"] == _closure(arcs)


def _same_generation(arcs):
    sg = {(x, y) for (p, x) in arcs for (q, y) in arcs if p == q and x != y}
    while True:
        extra = {(x, y) for (a, x) in arcs for (a2, b) in sg if a == a2 for (b2, y) in arcs if b == b2} - sg
        if not extra:
            return sg
        sg |= extra


@pytest.mark.parametrize("strategy", STRATEGIES)
@given(arcs=edges)
def test_same_generation_matches_python(strategy, arcs):
    assert _evaluate(checked(SAME_GENERATION), {"arc": arcs}, strategy)["sg"] == _same_generation(arcs)


# Constants, repeated variables, negation (also ground), arithmetic arguments, equalities melded
# into joins and a genuine cross product, compared with the reference interpreter.
MIXED = """
    loop(X) :- arc(X, X).
    from1(Y) :- arc(1, Y), arc(Y, _).
    lonely(X) :- node(X), not arc(X, _), not stop().
    next(X, Y) :- node(X), node(Y), Y = X + 1, not arc(X, Y).
    shifted(X) :- node(X), arc(X + 1, Z), not arc(X * 2, _), Z > X.
    tied(X, V) :- arc(X, W), arc(W2, V), W2 = W, X != V.
    pair(X, Y) :- loop(X), lonely(Y).
    far(X, Y) :- node(X), node(Y), D = Y - X, D >= 3, not arc(X, Y).
    nonempty :- arc(_, _).
    gated(X) :- node(X), nonempty, arc(1, 2).
    ratio(X, Q, M) :- arc(X, Y), Q = X / (Y - 3), M = Y mod (X - 1).
    .input arc, node, stop
"""


@given(arcs=edges, nodes=st.sets(st.integers(0, 7), max_size=8), stop=st.booleans())
def test_mixed_rules_match_reference(arcs, nodes, stop):
    from spark_datalog.reference import evaluate

    program = checked(MIXED)
    edb = {"arc": arcs, "node": {(n,) for n in nodes}, "stop": {()} if stop else set()}
    expected = evaluate(program, edb)
    for strategy in STRATEGIES:
        assert _evaluate(program, edb, strategy) == expected
