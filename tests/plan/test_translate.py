"""Structure of the plans plan_program builds: what the driver and the Spark backend rely on."""

from __future__ import annotations

import pytest

from seed_programs import SEED_PROGRAMS
from spark_datalog.analysis.checked import AggregateSpec
from spark_datalog.plan import delta_variants, plan_program, plan_rule
from spark_datalog.plan import ir
from spark_datalog.syntax import ast

from .helpers import checked


@pytest.mark.parametrize("seed", SEED_PROGRAMS, ids=str)
def test_every_plan_produces_its_relation_columns(seed):
    program = checked(seed.text)
    for stratum in plan_program(program):
        for rule_plan in stratum.rules + stratum.delta_rules:
            assert rule_plan.relation == rule_plan.rule.head.predicate
            assert rule_plan.plan.columns == program.relations[rule_plan.relation].column_names


def test_one_variant_per_body_atom_of_the_same_stratum():
    program = checked("""
        p(X, Z) :- p(X, Y), p(Y, Z).
        p(X, Y) :- q(X, Y), e(Y).
        q(X, Y) :- p(X, Y), e(X), p(Y, X).
        p(X, Y) :- e(X), e(Y).
        .input e
    """)
    (stratum,) = plan_program(program)
    assert stratum.recursive and len(stratum.rules) == 4
    positions = [(str(v.rule), v.delta_position) for v in stratum.delta_rules]
    assert positions == [
        ("p(X, Z) :- p(X, Y), p(Y, Z).", 0),
        ("p(X, Z) :- p(X, Y), p(Y, Z).", 1),
        ("p(X, Y) :- q(X, Y), e(Y).", 0),
        ("q(X, Y) :- p(X, Y), e(X), p(Y, X).", 0),
        ("q(X, Y) :- p(X, Y), e(X), p(Y, X).", 2),
    ]
    for variant in stratum.delta_rules:
        sources = [(s.relation, s.source) for s in ir.scans(variant.plan)]
        assert sources[0] == (variant.rule.body[variant.delta_position].predicate, "delta")
        assert [s for _, s in sources].count("delta") == 1


def test_non_recursive_strata_have_no_variants():
    program = checked("""
        tc(X, Y) :- arc(X, Y).
        tc(X, Z) :- tc(X, Y), arc(Y, Z).
        out(X) :- tc(X, X), not arc(X, X).
        .input arc
    """)
    first, second = plan_program(program)
    assert first.recursive and len(first.delta_rules) == 1
    assert not second.recursive and second.delta_rules == ()
    assert delta_variants(second.rules[0].rule, program, program.strata[1]) == ()
    assert all(s.source == "full" for s in ir.scans(second.rules[0].plan))


def test_stratum_plan_carries_the_aggregates():
    program = checked("""
        path(X, Y, min<D>) :- w(X, Y, D).
        path(X, Y, min<D>) :- path(X, Z, D1), w(Z, Y, D2), D = D1 + D2.
        deg(X, count<Y>) :- path(X, Y, _).
        .input w
    """)
    path, deg = plan_program(program)
    assert path.uses_prem and path.aggregates == {"path": AggregateSpec(2, "min")}
    assert deg.aggregates == {"deg": AggregateSpec(1, "count")}
    assert [v.delta_position for v in path.delta_rules] == [0]


def test_fresh_columns_do_not_collide_with_underscore_or_question_mark_variables():
    program = checked("p(_X, ?y) :- a(_X, 1, ?y, ?y, _). .input a")
    plan = plan_program(program)[0].rules[0].plan
    scan = ir.scans(plan)[0]
    assert scan.columns == ("_X", "#1_2", "?y", "#1_4", "#1_5")
    assert plan.columns == ("c0", "y")  # _X names no column


def _rule(head, *body):
    return ast.Rule(head, tuple(body))


def test_a_rule_without_positive_atom_starts_from_the_unit_relation():
    from spark_datalog.analysis.checked import CheckedProgram, Column, RelationSchema

    x = ast.Variable("X")
    rule = _rule(ast.Atom("p", (x,)), ast.Assignment(x, ast.Constant(3, "long")))
    relations = {"p": RelationSchema("p", (Column("c0", "long"),), "idb")}
    program = CheckedProgram(ast.Program(), relations, (), (rule,), {}, ())
    plan = plan_rule(rule, program).plan
    assert ir.scans(plan) == []
    assert plan.columns == ("c0",)
    units = []

    def walk(node):
        if isinstance(node, ir.Unit):
            units.append(node)
        for child in ir.children(node):
            walk(child)

    walk(plan)
    assert units == [ir.Unit()]


def test_unbound_literal_is_an_internal_error_not_a_wrong_plan():
    from spark_datalog.analysis.checked import CheckedProgram, Column, RelationSchema

    x, y = ast.Variable("X"), ast.Variable("Y")
    rule = _rule(ast.Atom("p", (x,)), ast.Atom("e", (x,)), ast.Comparison("<", x, y))
    long = (Column("c0", "long"),)
    relations = {"p": RelationSchema("p", long, "idb"), "e": RelationSchema("e", long, "edb")}
    program = CheckedProgram(ast.Program(), relations, (), (rule,), {}, ())
    with pytest.raises(ValueError, match="unbound variables in X < Y"):
        plan_rule(rule, program)


def test_delta_position_must_be_a_positive_atom():
    program = checked("p(X) :- e(X), not p2(X).\np2(X) :- e(X), X > 1. .input e")
    rule = program.strata[-1].rules[0]
    with pytest.raises(ValueError, match="not a positive atom"):
        plan_rule(rule, program, delta_position=1)


TEN_EXISTENCE_TESTS = """
    .decl a(x: long, y: long)
    .decl b(x: long)
    .decl c(x: long, y: long, z: long)
    .decl m()
    r(X, Y) :- a(X, Y), a(_, _), b(_), c(_, _, _), a(_, _), b(_), c(_, _, _), a(_, _), b(_), c(1, _, _), m().
    s() :- a(_, _), b(_).
    t(X) :- b(X), not m().
"""


def _nodes(node, kind) -> list:
    found = [node] if isinstance(node, kind) else []
    for child in ir.children(node):
        found += _nodes(child, kind)
    return found


def test_an_atom_that_binds_no_variable_is_an_existence_test_not_a_product():
    """Issue 19, item 6: ten atoms of only ``_`` (and constants) made a product of ~10^9 rows."""
    program = checked(TEN_EXISTENCE_TESTS)
    rules = {p.relation: p for stratum in plan_program(program) for p in stratum.rules}
    r_plan = rules["r"].plan
    tests = _nodes(r_plan, ir.SemiJoin)
    assert len(tests) == 10 and all(t.on == () for t in tests)
    assert [s.relation for t in tests for s in ir.scans(t.right)].count("a") == 3
    assert not _nodes(r_plan, ir.Join)  # one binding atom: nothing is joined
    assert r_plan.columns == ("X", "Y")
    s_plan = rules["s"].plan
    assert len(_nodes(s_plan, ir.SemiJoin)) == 2 and not _nodes(s_plan, ir.Join)
    assert _nodes(s_plan, ir.Unit)  # no binding atom: the tests filter the one empty row
    assert not _nodes(rules["t"].plan, ir.SemiJoin)  # negation stays an anti-join


def test_a_delta_at_an_existence_test_reads_the_delta_in_it():
    program = checked("""
        .decl e(x: long, y: long)
        m().
        m() :- m(), e(_, _).
        r(X) :- m(), e(X, _).
    """)
    variants = [v for stratum in plan_program(program) for v in stratum.delta_rules]
    (variant,) = [v for v in variants if v.relation == "m"]
    (test,) = [t for t in _nodes(variant.plan, ir.SemiJoin) if ir.scans(t.right)[0].relation == "m"]
    assert ir.scans(test.right)[0].source == "delta"
