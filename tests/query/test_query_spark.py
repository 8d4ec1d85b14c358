"""Queries on Spark: ``Program.query`` (magic sets, full evaluation, stored reads),
``Materialization.answers``, and random programs x random queries against the reference."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import spark_datalog as sd
from differential.test_spark_vs_reference import _normal_set, input_frames, spark_settings
from programs import any_program
from queries import linear_programs, query_for
from spark_datalog.query.plan import plan_query
from spark_datalog.query.run import answer_query

TC = """.input arc
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), arc(Y, Z).
?- tc(1, X).
?- tc(4, 1).
"""
ARCS = [(1, 2), (2, 3), (3, 4), (5, 6)]


@pytest.fixture
def arc(spark):
    return spark.createDataFrame(ARCS, "a long, b long")


def rows(frame) -> set:
    return {tuple(row) for row in frame.collect()}


@pytest.mark.parametrize(
    "query, columns, expected",
    [
        ("tc(1, X)", ["X"], {(2,), (3,), (4,)}),
        ("?- tc(X, 4).", ["X"], {(1,), (2,), (3,)}),
        ("tc(1, 4)", ["holds"], {(True,)}),
        ("tc(4, 1)", ["holds"], {(False,)}),
        ("tc(1, _)", ["holds"], {(True,)}),
        ("tc(X, Y)", ["X", "Y"], {(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4), (5, 6)}),
        ("tc(X, X)", ["X"], set()),
        ("arc(5, Y)", ["Y"], {(6,)}),
    ],
)
def test_query_answers(spark, arc, query, columns, expected):
    frame = sd.Program.parse(TC).query(spark, query, inputs={"arc": arc})
    assert frame.columns == columns
    assert rows(frame) == expected


def test_magic_derives_fewer_facts_than_full_evaluation(spark):
    chain = [(i, i + 1) for i in range(30)]
    frame = spark.createDataFrame(chain, "a long, b long")
    program = sd.Program.parse(TC)
    magic = answer_query(program, spark, "tc(25, X)", inputs={"arc": frame})
    full = answer_query(program, spark, "tc(25, X)", inputs={"arc": frame}, magic=False)
    assert rows(magic.frame) == rows(full.frame) == {(i,) for i in range(26, 31)}
    assert (magic.plan.strategy, full.plan.strategy) == ("magic", "full")
    derived = {name: a.facts_derived() for name, a in (("magic", magic), ("full", full))}
    assert derived["magic"] * 20 < derived["full"], derived


@pytest.mark.parametrize("decompose", [True, False])
def test_magic_forced_and_refused(spark, arc, decompose):
    program = sd.Program.parse(TC)
    frame = program.query(spark, "tc(X, Y)", inputs={"arc": arc}, magic=True, decompose=decompose)
    assert len(rows(frame)) == 7
    with pytest.raises(ValueError):
        program.query(spark, "tc(1, X)", inputs={"arc": arc}, magic="sometimes")


@pytest.mark.parametrize(
    "query, error, column",
    [
        ("tc(1, X, 3)", sd.SchemaError, 1),
        ("tcc(1, X)", sd.SchemaError, 1),
        ('tc("a", X)', sd.SchemaError, 4),
        ("tc(1 X)", sd.ParseError, 6),
        ("tc(X + 1, Y)", sd.SafetyError, 4),
        ("tc(1, X). arc(1, 2).", sd.ParseError, 1),
    ],
)
def test_bad_queries_are_positioned_in_the_query_text(query, error, column):
    program = sd.Program.parse(TC)
    with pytest.raises(error) as caught:
        plan_query(program, query)
    assert (caught.value.line, caught.value.column) == (1, column)
    assert query.split(".")[0] in str(caught.value)  # the caret is under the query's text


def test_materialization_answers_the_programs_queries(spark, arc):
    result = sd.Program.parse(TC).materialize(spark, inputs={"arc": arc})
    assert [rows(frame) for frame in result.answers] == [{(2,), (3,), (4,)}, {(False,)}]


def test_queried_relations_are_evaluated_despite_output(spark, arc):
    text = TC.replace(".input arc", ".input arc\n.output arc2\narc2(X, Y) :- arc(Y, X).")
    result = sd.Program.parse(text).materialize(spark, inputs={"arc": arc})
    assert list(result) == ["arc2"]
    assert rows(result.answers[0]) == {(2,), (3,), (4,)}


def test_answers_from_a_warehouse(spark, arc, tmp_path):
    from spark_datalog.storage import Warehouse

    program = sd.Program.parse(TC)
    wh = Warehouse(spark, str(tmp_path / "wh"), backend="embedded")
    program.materialize(spark, inputs={"arc": arc}, warehouse=wh)
    stored = answer_query(program, spark, "tc(2, X)", warehouse=wh)
    assert stored.plan.strategy == "stored"
    assert rows(stored.frame) == {(3,), (4,)}
    assert "answered by: stored" in program.explain(query="tc(2, X)", warehouse=wh)
    # a changed input table: the stored tc is no longer current, the query is evaluated
    program.materialize(
        spark, inputs={"arc": spark.createDataFrame([(2, 9)], "a long, b long")}, warehouse=wh
    )
    other = sd.Program.parse(TC + "extra(X) :- arc(X, _).")
    again = answer_query(other, spark, "tc(2, X)", warehouse=wh)
    assert again.plan.strategy == "magic"  # another program: the stored tables are not its
    assert rows(again.frame) == {(9,)}  # over the warehouse's input table


@spark_settings
@given(case=st.one_of(any_program(), linear_programs()), data=st.data(), decompose=st.booleans())
def test_random_queries_on_spark_equal_the_reference(spark, case, data, decompose):
    text, edb = case
    program = sd.Program.parse(text)
    query = data.draw(query_for(program))
    expected = _normal_set(sd.reference.answer(program, query, edb))
    answer = answer_query(
        program,
        spark,
        query,
        inputs=input_frames(spark, program, edb),
        max_iterations=500,
        decompose=decompose,
    )
    assert _normal_set(tuple(r) for r in answer.frame.collect()) == expected, answer.plan.describe()
