"""kernel.counted: a rule's IR evaluated with derivation counts (signed weights) on the kernel.

Node by node on small tables, then a property: for random programs and random signed counts
of their facts, the summed weights of every rule plan equal derivation counts found by brute
force (every choice of one fact per binding atom of the body, checked by the reference
interpreter's own body matching; a derivation weighs the product of its facts' counts, and a
negated atom or an existence test sees only the facts of positive count).
"""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import spark_datalog as sd
from programs import positive_programs, settings, stratified_programs
from spark_datalog.kernel.counted import WEIGHT, count_derivations, weighted
from spark_datalog.kernel.frames import facts_table
from spark_datalog.overflow import Overflow
from spark_datalog.plan import ir
from spark_datalog.plan.translate import binds_nothing
from spark_datalog.reference.body import head_tuple, order_body, substitutions
from spark_datalog.reference.relation import Relation
from spark_datalog.reference.terms import Undefined
from spark_datalog.syntax import ast

E = ir.Scan("e", ("X", "Y"))
F = ir.Scan("f", ("Y", "Z"))


def col(name):
    return ir.ColumnRef(name)


def lit(value, type_="long"):
    return ir.Literal(value, type_)


def counted(*rows) -> pa.Table:
    """A counted frame: rows of values with their count last."""
    width = len(rows[0]) - 1 if rows else 2
    columns = {f"c{i}": [row[i] for row in rows] for i in range(width)}
    return pa.table({**columns, "_count": pa.array([row[-1] for row in rows], pa.int64())})


def run(node, **tables) -> dict:
    frames = {(name, "full"): table for name, table in tables.items()}
    result = count_derivations(node, frames)
    assert result.columns == [*node.columns, WEIGHT]
    return {row[:-1]: row[-1] for row in result.rows()}


def test_a_scan_row_weighs_its_count_and_equal_rows_are_summed():
    assert run(E, e=counted((1, 2, 3), (1, 2, -1), (4, 5, 1))) == {(1, 2): 2, (4, 5): 1}


def test_zero_sums_are_dropped():
    assert run(E, e=counted((1, 2, 3), (1, 2, -3), (4, 5, 1))) == {(4, 5): 1}


def test_a_projection_keeps_weights_without_merging_rows():
    node = ir.Project(E, (("X", col("X")),))
    assert run(node, e=counted((1, 2, 2), (1, 3, 5), (2, 2, -1))) == {(1,): 7, (2,): -1}


def test_an_undefined_output_drops_its_row_and_weight():
    node = ir.Project(E, (("Q", ir.Arithmetic("/", col("X"), col("Y"))),))
    assert run(node, e=counted((6, 0, 4), (6, 3, 2), (4, 2, 1))) == {(2,): 3}


def test_a_selection_keeps_the_weights_of_the_rows_it_keeps():
    node = ir.Select(E, (ir.Compare("<", col("X"), col("Y")),))
    assert run(node, e=counted((1, 2, 4), (3, 2, 9))) == {(1, 2): 4}


def test_a_join_multiplies_weights():
    node = ir.Project(ir.Join(E, F, ("Y",)), (("X", col("X")), ("Z", col("Z"))))
    e = counted((1, 2, 3), (5, 2, -1))
    f = counted((2, 7, 2), (2, 8, 1), (9, 9, 4))
    assert run(node, e=e, f=f) == {(1, 7): 6, (1, 8): 3, (5, 7): -2, (5, 8): -1}


def test_a_cross_product_multiplies_weights():
    node = ir.Join(ir.Scan("e", ("X",)), ir.Scan("f", ("Y",)), ())
    assert run(node, e=counted((1, 2), (2, -1)), f=counted((7, 3))) == {(1, 7): 6, (2, 7): -3}


def test_a_weight_product_beyond_long_is_an_overflow():
    node = ir.Join(ir.Scan("e", ("X",)), ir.Scan("f", ("Y",)), ())
    with pytest.raises(Overflow):
        run(node, e=counted((1, 2**62)), f=counted((7, 4)))


def test_an_antijoin_keeps_left_weights_against_right_rows_of_positive_count():
    node = ir.AntiJoin(E, ir.Scan("g", ("Y",)), ("Y",))
    e = counted((1, 2, 3), (1, 3, 2), (1, 4, 5))
    g = counted((2, 4), (3, -1), (4, 0))  # a row of count <= 0 is no fact: it blocks nothing
    assert run(node, e=e, g=g) == {(1, 3): 2, (1, 4): 5}


def test_a_semijoin_keeps_left_weights_and_never_multiplies():
    node = ir.SemiJoin(E, ir.Scan("g", ("Y",)), ("Y",))
    e = counted((1, 2, 3), (1, 3, 2))
    g = counted((2, 4), (2, 5), (3, -1))
    assert run(node, e=e, g=g) == {(1, 2): 3}


def test_tests_of_existence_without_columns():
    some = ir.SemiJoin(E, ir.Scan("g", ("Y",)), ())
    none = ir.AntiJoin(E, ir.Scan("g", ("Y",)), ())
    e = counted((1, 2, 3))
    assert run(some, e=e, g=counted((9, 2))) == {(1, 2): 3}
    assert run(some, e=e, g=counted((9, -2))) == {}
    assert run(none, e=e, g=counted((9, -2))) == {(1, 2): 3}


def test_a_union_adds_the_weights_of_its_children():
    node = ir.Union_((ir.Scan("e", ("X",)), ir.Scan("f", ("X",))))
    assert run(node, e=counted((1, 2), (2, 1)), f=counted((1, -2), (3, 4))) == {(2,): 1, (3,): 4}


def test_unit_and_relations_without_columns():
    assert run(ir.Project(ir.Unit(), (("X", lit(3)),))) == {(3,): 1}
    nullary = ir.Scan("m", ())
    assert run(nullary, m=pa.table({"_count": pa.array([4], pa.int64())})) == {(): 4}
    assert run(ir.Join(nullary, E, ()), m=pa.table({"_count": [2]}), e=counted((1, 2, 3))) == {(1, 2): 6}


def test_distinct_and_aggregates_have_no_derivation_counts():
    with pytest.raises(TypeError, match="Distinct"):
        weighted(ir.Project(ir.Distinct(E), (("X", col("X")),)))
    with pytest.raises(TypeError, match="Aggregate"):
        weighted(ir.Aggregate(E, ("X",), "count", "Y", "N"))


def test_the_weighted_plan_carries_the_weight_last():
    node = ir.Project(ir.Join(E, F, ("Y",)), (("Z", col("Z")),))
    assert weighted(node).columns == ("Z", WEIGHT)


# --- the property: the kernel's weights are derivation counts found by brute force


def _binding(literal) -> bool:
    return isinstance(literal, ast.Atom) and not binds_nothing(literal)


def _brute_force(rule: ast.Rule, weights: dict) -> Counter:
    """Head tuple -> summed weight of its derivations: one fact per binding atom, in every
    combination, the body checked by the reference's matching."""
    positions = [i for i, literal in enumerate(rule.body) if _binding(literal)]
    present = {name: Relation(f for f, w in facts.items() if w > 0) for name, facts in weights.items()}
    order = order_body(rule.body)
    choices = [list(weights[rule.body[i].predicate].items()) for i in positions]
    sums: Counter = Counter()
    for chosen in itertools.product(*choices):
        single = {i: Relation([fact]) for i, (fact, _) in zip(positions, chosen, strict=True)}
        weight = 1
        for _, w in chosen:
            weight *= w

        def relation_for(i, single=single):
            literal = rule.body[i]
            return single[i] if i in single else present[ast_atom(literal).predicate]

        for subst in substitutions(rule.body, order, relation_for):
            try:
                sums[head_tuple(rule.head, subst)] += weight
            except Undefined:
                continue
    return Counter({fact: n for fact, n in sums.items() if n})


def ast_atom(literal) -> ast.Atom:
    return literal.atom if isinstance(literal, ast.Negation) else literal


def _combinations(rule: ast.Rule, weights: dict) -> int:
    total = 1
    for literal in rule.body:
        if _binding(literal):
            total *= len(weights[literal.predicate])
    return total


@settings(default=120)
@given(case=st.one_of(positive_programs(), stratified_programs()), seed=st.integers(0, 2**32))
def test_weights_are_derivation_counts_by_brute_force(case, seed):
    text, edb = case
    program = sd.Program.parse(text)
    facts = {**edb, **sd.reference.evaluate(program, edb)}
    draw = random.Random(seed)
    weights = {}
    for name in program.checked.relations:
        weights[name] = {fact: draw.choice((-2, -1, 1, 1, 2, 3)) for fact in sorted(facts.get(name, ()))}
    frames = {}
    for name, schema in program.checked.relations.items():
        rows = list(weights[name])
        table = facts_table(schema.column_names, schema.types, rows)
        counts = pa.array([weights[name][row] for row in rows], pa.int64())
        frames[(name, "full")] = table.append_column("_count", counts)
    checked = 0
    for plan in program.plans:
        for rule_plan in plan.rules:
            if rule_plan.relation in plan.aggregates or _combinations(rule_plan.rule, weights) > 3000:
                continue
            result = count_derivations(rule_plan.plan, frames)
            kernel = {row[:-1]: row[-1] for row in result.rows()}
            assert kernel == _brute_force(rule_plan.rule, weights), str(rule_plan.rule)
            checked += 1
    assert checked or not program.plans
