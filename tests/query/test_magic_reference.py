"""The magic-set rewrite on the reference interpreter, against full evaluation (the oracle):
random programs of every kind (positive, negation, aggregates, min/max in recursion) x random
queries with random bound positions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import programs
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
