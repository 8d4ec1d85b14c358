"""The magic-set rewrite on the reference interpreter, against full evaluation (the oracle):
random programs of every kind (positive, negation, aggregates, min/max in recursion) x random
queries with random bound positions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import programs
from dialect_programs import INTERVAL_SEGMENTS, INTERVALS, SPANNING_GRAPH, SPANNING_TREE
import spark_datalog as sd
from queries import query_for
from spark_datalog.query.plan import plan_query
from spark_datalog.syntax import ast


@pytest.mark.parametrize(
    "kind",
    ["positive_programs", "stratified_programs", "aggregate_programs", "prem_programs"],
)
@programs.settings(default=60)
@given(data=st.data())
def test_magic_answers_equal_full_evaluation(kind, data):
    text, edb = data.draw(getattr(programs, kind)())
    program = sd.Program.parse(text)
    query = data.draw(query_for(program))
    full = sd.reference.answer(program, query, edb, magic=False)
    plan = plan_query(program, query)
    assert sd.reference.answer(program, query, edb, magic="auto") == full, plan.describe()
    if plan.strategy == "magic":  # the rewritten program, naive, agrees too
        assert sd.reference.answer(program, query, edb, magic=True, strategy="naive") == full


@programs.settings(default=60)
@given(programs.positive_programs(), st.data())
def test_a_bound_positive_query_is_always_rewritten(drawn, data):
    text, _ = drawn
    program = sd.Program.parse(text)
    query = data.draw(query_for(program))
    plan = plan_query(program, query)
    bound = any(a.type != "string" for a in _constants(plan))
    assert (plan.strategy == "magic") == bound, plan.describe()


def _constants(plan):
    return [a for a in plan.query.atom.args if isinstance(a, ast.Constant)]


AUTOINC = """
.decl e(x: number, y: number)
.input e
tc(X, Y) :- e(X, Y).
tc(X, Z) :- tc(X, Y), e(Y, Z).
lab(X, Y, autoinc()) :- tc(X, Y).
far(X, I) :- lab(X, Y, I), Y > 2.
gap(X, I) :- tc(X, _), I = range(0, 9), !lab(X, _, I).
"""


@pytest.mark.parametrize("query", ["far(1, I)", "gap(2, I)", "lab(1, Y, I)", "far(X, 2)"])
def test_relations_calling_autoinc_are_computed_in_full(query):
    """Adorned, lab would number only the facts asked for: its numbers would change."""
    program = sd.Program.parse(AUTOINC)
    edb = {"e": {(1, 2), (2, 3), (3, 4), (5, 6)}}
    full = sd.reference.answer(program, query, edb, magic=False)
    assert sd.reference.answer(program, query, edb, magic="auto") == full
    plan = plan_query(program, query)
    assert "lab_" not in plan.describe(), plan.describe()  # never adorned
    # tc: (1,2) 0, (1,3) 1, (1,4) 2, (2,3) 3, (2,4) 4, (3,4) 5, (5,6) 6
    assert sd.reference.evaluate(program, edb)["lab"] == {
        (1, 2, 0),
        (1, 3, 1),
        (1, 4, 2),
        (2, 3, 3),
        (2, 4, 4),
        (3, 4, 5),
        (5, 6, 6),
    }


@pytest.mark.parametrize("query", ["st(X, 4)", "st(3, Y)", "below(1, Y)", "pair(2, Y)"])
def test_greedy_choice_relations_are_computed_in_full(query):
    """Adorned, st would choose among the candidates asked for only: other edges would win."""
    text = (
        SPANNING_TREE
        + """
        below(X, Y) :- st(X, Y).
        below(X, Z) :- below(X, Y), st(Y, Z).
        .decl pair(x: number, y: number) choice-domain x, y
        pair(X, Y) :- e(X, Y).
    """
    )
    program = sd.Program.parse(text, dialect="souffle")
    edb = {"e": SPANNING_GRAPH}
    full = sd.reference.answer(program, query, edb, magic=False)
    assert full and sd.reference.answer(program, query, edb, magic="auto") == full
    plan = plan_query(program, query)
    assert "st_" not in plan.describe() and "pair_" not in plan.describe(), plan.describe()


@pytest.mark.parametrize("query", ["iv(1, Y)", "inside(X, 7)"])
def test_relations_with_a_subsumption_in_recursion_are_computed_in_full(query):
    """Adorned, iv would see only the intervals asked for: others would not remove them."""
    text = (
        INTERVALS
        + """
        inside(X, Y) :- iv(X, Y), seg(X, _).
    """
    )
    program = sd.Program.parse(text, dialect="souffle")
    edb = {"seg": INTERVAL_SEGMENTS}
    full = sd.reference.answer(program, query, edb, magic=False)
    assert full and sd.reference.answer(program, query, edb, magic="auto") == full
    assert "magic_iv" not in plan_query(program, query).describe()


LIMITED = """
.decl e(x: number, y: number)
.input e
tc(X, Y) :- e(X, Y).
tc(X, Z) :- tc(X, Y), e(Y, Z).
.limitsize tc(n=6)
up(X, Y) :- tc(X, Y), X > 1.
"""


@pytest.mark.parametrize("query", ["tc(1, Y)", "up(2, Y)", "tc(X, 4)"])
def test_limited_relations_are_computed_in_full(query):
    """Adorned, tc would keep the least of the facts asked for only: others than its own."""
    program = sd.Program.parse(LIMITED, dialect="souffle")
    edb = {"e": {(1, 2), (2, 3), (3, 4), (2, 5)}}
    assert sd.reference.evaluate(program, edb)["tc"] == {(1, 2), (2, 3), (2, 5), (3, 4), (1, 3), (1, 5)}
    full = sd.reference.answer(program, query, edb, magic=False)
    assert full and sd.reference.answer(program, query, edb, magic="auto") == full
    assert "magic_tc" not in plan_query(program, query).describe()
