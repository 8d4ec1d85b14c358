"""Soufflé's statements: .type, qualifiers, .pragma, several heads, disjunction, aggregates over
bodies and eqrel — what the parser accepts, what it lowers them to, and its errors."""

from __future__ import annotations

import logging

import pytest
from tests.syntax.test_parse_errors import assert_error

import spark_datalog as sd
from dialect_aggregates import aggregate_cases
from dialect_orders import order_cases
from dialect_programs import DIALECT_PROGRAMS
from dialect_adts import adt_cases
from dialect_records import record_cases
from hypothesis import given
from programs import settings
from spark_datalog.errors import SchemaError
from spark_datalog.syntax import parse


def rules(text: str) -> list[str]:
    return [str(rule) for rule in parse(text).rules]


def column_types(text: str, relation: str) -> list[str]:
    declaration = next(d for d in parse(text).declarations if d.name == relation)
    return [column.type for column in declaration.columns]


# ---------------------------------------------------------------------------------------------
# .type


@pytest.mark.parametrize(
    "declaration, expected",
    [
        (".type T <: number", "long"),
        (".type T <: symbol", "string"),
        (".type T <: float", "double"),
        (".type T <: unsigned", "long"),
        (".type T = symbol", "string"),
        (".type A <: number .type B <: number .type T = A | B", "long"),
        (".type T = U .type U <: symbol", "string"),  # used before its declaration
        (".number_type T", "long"),
        (".symbol_type T", "string"),
        (".type T", "string"),  # Soufflé's old spelling of a symbol type
    ],
)
def test_declared_types_name_value_types(declaration, expected):
    assert column_types(f"{declaration}\n.decl r(x: T, y: number)", "r") == [expected, "long"]


def test_a_type_may_start_with_a_capital_letter_or_not():
    text = ".type Node <: symbol\n.type weight <: float\n.decl e(a: Node, w: weight)"
    assert column_types(text, "e") == ["string", "double"]
    assert str(parse(text).types[0]) == ".type Node <: symbol"


def test_unknown_column_type_points_at_the_type():
    error = assert_error(".type Node <: symbol\n.decl e(a: Nod)", 2, 12, "unknown type 'Nod'", "(Node)")
    assert error.errors == [error]


@pytest.mark.parametrize(
    "text, line, column, fragment",
    [
        (".type T <: Missing", 1, 7, "unknown type 'Missing' in the declaration of 'T'"),
        (".type A <: number\n.type B <: symbol\n.type U = A | B", 3, 7, "union type 'U' mixes value types"),
        (".type A = B\n.type B = A", 1, 7, "defined in terms of itself"),
        (".type A <: number\n.type A <: symbol", 2, 7, "declared twice"),
        (".type number <: symbol", 1, 7, "is a built-in type"),
        (
            ".type A = [b: B]\n.type B = A",
            1,
            7,
            "'A' is defined in terms of itself through a type that is no record type or ADT: not supported",
        ),
    ],
)
def test_bad_type_declarations(text, line, column, fragment):
    assert_error(text, line, column, fragment)


# ---------------------------------------------------------------------------------------------
# qualifiers and .pragma


def test_qualifiers_are_accepted_and_a_declaration_needs_no_dot():
    text = (
        ".decl a(x: number) btree\n.decl b(x: number) brie inline\n.decl c(x: number) magic overridable\n"
        "a(1). b(X) :- a(X). c(X) :- b(X)."
    )
    program = parse(text)
    assert [d.qualifiers for d in program.declarations] == [
        ("btree",),
        ("brie", "inline"),
        ("magic", "overridable"),
    ]
    assert rules(text) == ["b(X) :- a(X).", "c(X) :- b(X)."]


def test_btree_sum_is_refused_at_the_qualifier():
    assert_error(".decl p(x: number, c: number) btree_sum\n.output p", 1, 31, "'btree_sum'", "not supported")


@pytest.mark.parametrize(
    ("qualifier", "dominated", "dominating"), [("btree_max", "L", "H"), ("btree_min", "H", "L")]
)
def test_a_lattice_qualifier_is_an_order_on_the_last_column(qualifier, dominated, dominating):
    columns = "(x: symbol, y: number, c: number)"
    text = f".decl p{columns} {qualifier}\n.decl q{columns}\np(X, Y, C) :- q(X, Y, C)."
    lowered = rules(text)
    func = qualifier[-3:]
    assert lowered == [f"p(X, Y, {func}<C>) :- q(X, Y, C)."]
    explicit = f"p(A, B, {dominated}) <= p(A, B, {dominating}) :- L < H."
    assert rules(text.replace(f" {qualifier}", "") + "\n" + explicit) == lowered


@pytest.mark.parametrize(
    ("text", "column", "fragment"),
    [
        (".decl p(c: number) btree_max btree_min\np(1).", 1, "two lattice qualifiers"),
        (".decl p() btree_min\np().", 1, "needs a column"),
        (".decl p(c: number) btree_max\n.input p", 1, "on an .input relation is not supported"),
    ],
)
def test_a_lattice_qualifier_it_cannot_apply_is_an_error_at_the_declaration(text, column, fragment):
    assert_error(text, 1, column, fragment)


def test_lattice_declarations_and_columns_are_refused_where_written():
    text = (
        ".type I = Bottom{} | Top{}\n.functor lub(a: I, b: I): I stateful\n"
        ".lattice I<> {\n  Bottom -> $Bottom(),\n  Lub -> @lub(_, _)\n}\n.decl v(n: symbol, i: I<>)"
    )
    error = assert_error(text, 3, 1, ".lattice declarations", "not supported")
    assert (error.errors[1].line, error.errors[1].column) == (7, 24)
    assert "lattice column type 'I<>' is not supported" in str(error.errors[1])


def test_a_lattice_relation_rule_with_another_aggregate_is_an_error_at_the_rule():
    text = ".decl p(x: number, c: number) btree_max\n.decl q(x: number, c: number)\np(X, min<C>) :- q(X, C)."
    assert_error(text, 3, 1, "min<>", "keeps the max")


def test_the_io_qualifiers_are_directives():
    text = """
    .decl a(x: number) input
    .decl b(x: number) output
    .decl c(x: number) printsize output
    .output c
    .comp K { .decl k(x: number) output k(1). }
    .init i = K
    b(X) :- a(X).
    c(X) :- a(X).
    """
    program = parse(text, dialect="souffle")
    assert {(d.kind, d.name) for d in program.directives} == {
        ("input", "a"),
        ("output", "b"),
        ("printsize", "c"),
        ("output", "c"),
        ("output", "i.k"),
    }
    assert len(program.directives) == 5  # .output c is not doubled


# ---------------------------------------------------------------------------------------------
# choice-domain and subsumption


def test_choice_domain_keys_are_parsed():
    declaration = parse(".decl r(x: number, y: number, z: number) choice-domain (x, y)").declarations[0]
    assert declaration.choice_domains == (("x", "y"),)


def test_choice_domain_chooses_the_least_candidate_per_key():
    text = """
        .decl c(k: number, x: symbol, y: number) choice-domain k
        c(1, "b", 0). c(1, "a", 9). c(1, "a", 3). c(2, "z", 1).
    """
    assert rules(text) == [
        "c__choice(_choice0, min<_choice1>) :- c__choices(_choice0, _choice1, _choice2).",
        "c__choice2(_choice0, _choice1, min<_choice2>) :- c__choices(_choice0, _choice1, _choice2), "
        "c__choice(_choice0, _choice1).",
        "c(_choice0, _choice1, _choice2) :- c__choice2(_choice0, _choice1, _choice2).",
    ]
    assert sd.reference.evaluate(sd.Program.parse(text), {})["c"] == {(1, "a", 3), (2, "z", 1)}


def test_a_choice_domain_of_every_column_changes_nothing():
    assert rules(".decl r(x: number) choice-domain x\nr(X) :- q(X).") == ["r(X) :- q(X)."]


@pytest.mark.parametrize(
    "text, line, column, fragment",
    [
        (".decl r(x: number, y: number) choice-domain z", 1, 45, "names 'z', not one of its columns"),
        (".decl r(x: number, y: number) choice-domain (x, x)", 1, 46, "names a column twice"),
        (
            ".decl r(x: number, y: number) choice-domain x\n.input r",
            1,
            1,
            "an .input relation is not supported",
        ),
        (".decl r(x: number) choice-domain", 1, 33, "expected"),
    ],
)
def test_bad_choice_domains(text, line, column, fragment):
    assert_error(text, line, column, fragment)


def test_subsumption_of_one_column_is_a_head_min():
    text = """
        path(X, Y, D) :- e(X, Y, D).
        path(X, Y, D + W) :- path(X, Z, D), e(Z, Y, W).
        path(X, Y, D1) <= path(X, Y, D2) :- D2 <= D1.
    """
    assert rules(text) == [
        "path(X, Y, min<D>) :- e(X, Y, D).",
        "path(X, Y, min<_subsumed2>) :- path(X, Z, D), e(Z, Y, W), _subsumed2 = (D + W).",
    ]


@pytest.mark.parametrize(
    "clause, func",
    [
        ("r(K, A) <= r(K, B) :- B < A.", "min"),
        ("r(K, A) <= r(K, B) :- A >= B.", "min"),
        ("r(K, A) <= r(K, B) :- B > A.", "max"),
        ("r(K, A) <= r(K, B) :- A <= B.", "max"),
    ],
)
def test_each_spelling_of_an_order_on_one_column(clause, func):
    assert rules(f"r(K, V) :- p(K, V).\n{clause}") == [f"r(K, {func}<V>) :- p(K, V)."]


def test_subsumption_with_another_body_is_negation():
    text = """
        iv(0, 10). iv(2, 5).
        iv(L1, H1) <= iv(L2, H2) :- L2 <= L1, H1 <= H2 ; L2 = 0, H2 = 0.
    """
    program = parse(text)
    assert [str(f) for f in program.facts] == ["iv__candidates(0, 10).", "iv__candidates(2, 5)."]
    both = "iv__dominated(L1, H1) :- iv__candidates(L1, H1), iv__candidates(L2, H2)"
    assert [str(rule) for rule in program.rules] == [
        f"{both}, L2 <= L1, H1 <= H2, L1 != L2.",
        f"{both}, L2 <= L1, H1 <= H2, H1 != H2.",
        f"{both}, L2 = 0, H2 = 0, L1 != L2.",
        f"{both}, L2 = 0, H2 = 0, H1 != H2.",
        "iv(_column0, _column1) :- iv__candidates(_column0, _column1), "
        "not iv__dominated(_column0, _column1).",
    ]
    assert sd.reference.evaluate(sd.Program.parse(text), {})["iv"] == {(0, 10)}


def test_a_tuple_never_dominates_itself():
    text = "r(1). r(2).\nr(A) <= r(B) :- A <= B."  # 1 <= 2 drops 1; 2 <= 2 is the tuple itself
    assert sd.reference.evaluate(sd.Program.parse(text), {})["r"] == {(2,)}


@pytest.mark.parametrize(
    "text, line, column, fragment",
    [
        ("r(1).\nr(A) <= q(B) :- A < B.", 2, 1, "must be of one relation ('r' and 'q')"),
        ("r(1).\nr(A) <= r(B, C) :- A < B.", 2, 1, "have different arities"),
        (
            ".decl r(x: number)\n.input r\nr(A) <= r(B) :- A < B.",
            3,
            1,
            "on an .input relation is not supported",
        ),
        (
            "r(1, 2).\ns(X) :- r(X, _).\nr(A, B) <= r(C, D) :- !s(C), A < C.",
            3,
            1,
            "a subsumption on 'r' reads 's', which depends on 'r': not supported",
        ),
        (
            "r(1, 2).\nr(X, Y) :- r(Y, X).\ns(X) :- r(X, _).\nr(A, B) <= r(C, D) :- s(A), A < C.",
            4,
            1,
            "reads 's', which depends on 'r'",
        ),
        (
            "r(1, 2).\nr(X, Y) :- r(Y, X).\nr(A, B) <= r(C, D) :- 1 = count : r(A, _), A < C.",
            3,
            1,
            "a subsumption on the recursive 'r' aggregates over 'r': not supported yet",
        ),
        (
            "r(1, 2). q(1).\nr(X, Y) :- r(Y, X).\nr(A, B) <= r(C, D) :- 1 = count : { q(X), X > A }.",
            3,
            1,
            "aggregates over groups its body does not bind: not supported yet",
        ),
        (
            "r(1, max<V>) :- r(V, _), V < 3.\nr(A, B) <= r(C, D) :- A < C, B < D.",
            1,
            1,
            "a subsumption in recursion on 'r', which has a head aggregate",
        ),
        (
            "r(K, max<V>) :- p(K, V).\nr(K, A) <= r(K, B) :- B < A.",
            1,
            1,
            "has max<> where its subsumption keeps the min",
        ),
        ("r(1).\nr(A) <= r(B) :- .", 2, 17, "expected"),
        ("r(1).\nr(min<A>) <= r(B) :- A < B.", 2, 3, "aggregate"),
    ],
)
def test_bad_subsumptions(text, line, column, fragment):
    assert_error(text, line, column, fragment)


def test_pragma_is_accepted_and_reported(caplog):
    with caplog.at_level(logging.WARNING, logger="spark_datalog"):
        program = parse('.pragma "legacy"\n.pragma "jobs" "4"\np(1).')
    assert len(program.facts) == 1
    assert ".pragma 'jobs' '4' ignored" in caplog.text


def test_a_plan_is_checked_then_ignored(caplog):
    text = "p(X, Z) :- e(X, Y), p(Y, Z), !f(Y).\n.plan 0:(2, 1), 1:(1,2)\nq(1)."
    with caplog.at_level(logging.WARNING, logger="spark_datalog"):
        assert rules(text) == ["p(X, Z) :- e(X, Y), p(Y, Z), not f(Y)."]
    assert "1 .plan clause(s) ignored" in caplog.text


@pytest.mark.parametrize(
    "text, line, column, fragment",
    [
        ("p(X) :- e(X, Y), f(Y).\n.plan 0:(1), 1:(2,1)", 2, 7, "version 0 orders (1)"),
        ("p(X) :- e(X, Y), f(Y).\n.plan 0:(1,2), 1:(1,3)", 2, 16, "permutation of 1..2"),
        ("p(1).\n.plan 0:(1)", 2, 1, "'.plan'"),
        ("p(X) :- e(X).\n.plan 0:(1,)", 2, 12, "expected a number"),
    ],
)
def test_bad_plans(text, line, column, fragment):
    assert_error(text, line, column, fragment)


def test_true_and_false_are_constraints():
    assert rules("p(X) :- e(X), true, !false.") == ["p(X) :- e(X), true = true, false = false."]
    assert rules("p(X) :- e(X), false.") == ["p(X) :- e(X), false = true."]


@pytest.mark.parametrize(
    "body, alternatives",
    [
        ("(X = 2 ; true)", ["X = 2", "true = true"]),
        ("(false ; X = 2)", ["false = true", "X = 2"]),
        ("(X = 2 ; e(X), !true)", ["X = 2", "e(X), true = false"]),
        ("(X = 2 ; (false ; true))", ["X = 2", "false = true", "true = true"]),
    ],
)
def test_true_and_false_close_either_conjunction_of_a_disjunction(body, alternatives):
    assert rules(f"p(X) :- e(X), {body}.") == [f"p(X) :- e(X), {a}." for a in alternatives]


def test_a_parenthesised_boolean_still_reads_as_a_term():
    assert rules("p(X) :- e(X), (true) = true.") == ["p(X) :- e(X), true = true."]


# ---------------------------------------------------------------------------------------------
# several heads, disjunction


def test_several_heads_share_the_body():
    text = "a(X), b(X, 1) :- c(X)."
    assert rules(text) == ["a(X) :- c(X).", "b(X, 1) :- c(X)."]
    assert {rule.text for rule in parse(text).rules} == {text}


def test_disjunctions_are_multiplied_out():
    assert rules("a(X) :- b(X) ; c(X), d(X).") == ["a(X) :- b(X).", "a(X) :- c(X), d(X)."]
    assert rules("a(X) :- e(X), (b(X) ; c(X)), (X = 1 ; X != 2).") == [
        "a(X) :- e(X), b(X), X = 1.",
        "a(X) :- e(X), b(X), X != 2.",
        "a(X) :- e(X), c(X), X = 1.",
        "a(X) :- e(X), c(X), X != 2.",
    ]
    assert rules("a(X) :- e(X), (b(X) ; (c(X) ; d(X)), !f(X)).") == [
        "a(X) :- e(X), b(X).",
        "a(X) :- e(X), c(X), not f(X).",
        "a(X) :- e(X), d(X), not f(X).",
    ]


def test_a_parenthesised_disjunction_ends_with_an_atom_with_parentheses():
    assert rules("a(X) :- e(X), (b(X) ; z()).") == ["a(X) :- e(X), b(X).", "a(X) :- e(X), z."]


def test_a_parenthesised_conjunction_without_a_disjunction_is_its_literals():
    assert rules("a(X) :- e(X), (X = 1).") == ["a(X) :- e(X), X = 1."]
    assert rules("a(X) :- (e(X), !b(X)), ((X < 3)).") == ["a(X) :- e(X), not b(X), X < 3."]
    assert rules("a(X) :- e(X), (X + 1) = 2.") == ["a(X) :- e(X), (X + 1) = 2."]


# ---------------------------------------------------------------------------------------------
# aggregates over a body


def test_count_is_lowered_to_a_relation_with_the_empty_group_zero():
    assert rules("n(X, N) :- node(X), N = count : { e(X, _) }.") == [
        "n__count1(X, sum<_one1>) :- e(X, _count1_), _one1 = 1.",
        "n(X, N) :- node(X), n__count1(X, _count1), N = _count1.",
        "n(X, N) :- node(X), not n__count1(X, _), _count1 = 0, N = _count1.",
    ]


def test_min_without_a_match_gives_no_row_and_a_target_expression_is_assigned():
    assert rules("m(X, M) :- node(X), M = min D + 1 : e(X, D).") == [
        "m__min1(X, min<_value1>) :- e(X, D), _value1 = (D + 1).",
        "m(X, M) :- node(X), m__min1(X, _min1), M = _min1.",
    ]


def test_groups_the_aggregate_does_not_bind_come_from_the_rule():
    assert rules("c(X, N) :- w(X, _), N = count : { w(Y, _), Y > X }.")[:2] == [
        "c__count1_groups(X) :- w(X, _).",
        "c__count1(X, sum<_one1>) :- c__count1_groups(X), w(Y, _count1_), Y > X, _one1 = 1.",
    ]


def test_auxiliary_names_never_clash_with_the_program():
    lowered = rules("n__count1(1). n(X, N) :- node(X), N = count : e(X, _).")
    assert lowered[0].startswith("n__count12(X, sum<")


@pytest.mark.parametrize(
    "text, line, column, fragment",
    [
        ("n(N) :- N = count X : e(X).", 1, 13, "aggregate 'count' takes no target"),
        ("n(N) :- N = sum : e(X).", 1, 13, "aggregate 'sum' needs a target"),
        ("n(N) :- N = count : { e(X) ; f(X) }.", 1, 28, "unexpected ';'"),
        ("n(N) :- N = count : { e(X), (f(X) ; g(X)) }.", 1, 13, "disjunction inside an aggregate's body"),
    ],
)
def test_bad_body_aggregates(text, line, column, fragment):
    assert_error(text, line, column, fragment)


def test_aggregates_over_bodies_evaluate_with_souffles_semantics():
    program = sd.Program.parse(
        """
        .decl w(x: number, v: number)
        .decl node(x: number)
        w(1, 5). w(2, 5). w(3, 7). node(1). node(2). node(3). node(4).
        s(T) :- T = sum V : { w(_, V) }.                 % tuples, not values: 5 + 5 + 7
        distinct(T) :- T = count : { w(_, V), V > 0 }.   % three tuples
        per(X, N) :- node(X), N = count : { w(Y, _), Y > X }.
        low(X, M) :- node(X), M = min V : { w(Y, V), Y >= X }.
        avg(A) :- A = mean V : w(_, V).
        nested(N) :- N = count : { node(X), 2 = count : { w(Y, _), Y > X } }.
        none(N) :- N = sum V : { w(_, V), V > 100 }.
        """
    )
    result = sd.reference.evaluate(program, {})
    assert result["s"] == {(17,)}
    assert result["distinct"] == {(3,)}
    assert result["per"] == {(1, 2), (2, 1), (3, 0), (4, 0)}
    assert result["low"] == {(1, 5), (2, 5), (3, 7)}
    assert result["avg"] == {(17 / 3,)}
    assert result["nested"] == {(1,)}
    assert result["none"] == {(0,)}


# ---------------------------------------------------------------------------------------------
# eqrel


def test_eqrel_is_the_equivalence_closure():
    program = sd.Program.parse(
        """
        .decl same(x: symbol, y: symbol) eqrel
        .decl link(x: symbol, y: symbol)
        link("a", "b"). link("c", "b"). link("d", "e").
        same(X, Y) :- link(X, Y).
        same("f", "f").
        .output same
        """
    )
    result = sd.reference.evaluate(program, {})
    groups = [{"a", "b", "c"}, {"d", "e"}, {"f"}]
    assert result["same"] == {(x, y) for group in groups for x in group for y in group}


@pytest.mark.parametrize(
    "text, fragment",
    [
        (".decl e(x: number) eqrel", "must have two columns of one type"),
        (".decl e(x: number, y: symbol) eqrel", "must have two columns of one type"),
    ],
)
def test_bad_eqrel_relations(text, fragment):
    assert_error(text, 1, 1, fragment)


@pytest.mark.parametrize("case", DIALECT_PROGRAMS, ids=str)
def test_dialect_programs_on_the_reference(case):
    result = sd.reference.evaluate(case.program(), case.edb)
    assert result == case.expected


@settings(default=40)
@given(case=adt_cases())
def test_random_adt_data_on_the_reference(case):
    text, edb, expected = case
    assert sd.reference.evaluate(sd.Program.parse(text), edb) == expected


@settings(default=40)
@given(case=record_cases())
def test_random_record_data_on_the_reference(case):
    text, edb, expected = case
    result = sd.reference.evaluate(sd.Program.parse(text), edb)
    assert {name: result[name] for name in expected} == expected


@settings(default=60)
@given(case=aggregate_cases())
def test_random_body_aggregates_on_the_reference(case):
    text, edb, expected = case
    assert sd.reference.evaluate(sd.Program.parse(text), edb)["r"] == expected


@settings(default=60)
@given(case=order_cases())
def test_random_subsumptions_and_choices_on_the_reference(case):
    text, edb, expected = case
    assert sd.reference.evaluate(sd.Program.parse(text, dialect="souffle"), edb)["r"] == expected


# ---------------------------------------------------------------------------------------------
# dialects and relation names


def test_the_souffle_dialect_reads_lower_case_names_in_terms_as_variables():
    text = ".decl edge(x: number, y: number)\nedge(1, 2). edge(2, 3).\npath(x, z) :- edge(x, y), edge(y, z)."
    assert sd.reference.evaluate(sd.Program.parse(text, dialect="souffle"), {})["path"] == {(1, 3)}
    assert [c.name for c in sd.Program.parse(text, dialect="souffle").relations["path"].columns] == ["x", "z"]
    assert sd.reference.evaluate(sd.Program.parse("q(lis). p(X) :- q(X), X = lis."), {})["p"] == {("lis",)}


def test_a_program_in_souffles_syntax_with_symbol_names_is_warned_of(caplog):
    with caplog.at_level(logging.WARNING, logger="spark_datalog"):
        parse(".type T <: symbol\n.decl e(x: T)\ne(a).")
    assert "<program>:3:3: 'a' reads as a symbol" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="spark_datalog"):
        parse(".type T <: symbol\n.decl e(x: T)\ne(a).", dialect="souffle")
        parse("e(a). f(X) :- e(X).")
    assert caplog.text == ""


def test_relation_names_may_start_with_a_capital_letter():
    program = sd.Program.parse(
        ".decl Edge(x: number, y: number)\nEdge(1, 2).\nPath(X, Y) :- Edge(X, Y), !Edge(Y, X)."
    )
    assert sd.reference.evaluate(program, {})["Path"] == {(1, 2)}


def test_an_unknown_dialect_is_refused():
    with pytest.raises(ValueError, match="unknown dialect 'prolog'"):
        parse("p(1).", dialect="prolog")


# ---------------------------------------------------------------------------------------------
# components: the examples of Soufflé's documentation (docs/components)

SOUFFLE_COMPONENT_EXAMPLES = [
    (
        """
        .comp MyComponent {
            .type myType = number
            .decl TheAnswer(x:myType)
            TheAnswer(42).
        }
        .init myInstance1 = MyComponent
        .init myInstance2 = MyComponent
        myInstance2.TheAnswer(33).
        .decl Test(x:number)
        Test(x) :- myInstance1.TheAnswer(x).
        Test(x) :- myInstance2.TheAnswer(x).
        .output Test
        """,
        {"Test": {(33,), (42,)}},
    ),
    (
        """
        .decl Out(x:number)
        .comp A {
           .decl R(x:number)
           .comp Count {
               R(1).
               R(x+1):- R(x), x<10.
           }
           .init myCount = Count
           Out(x) :- R(x).
        }
        .init myA = A
        .output Out
        """,
        {"Out": {(n,) for n in range(1, 11)}},
    ),
    (
        """
        .comp ParamComponent<myType> {
            .decl TheAnswer(x:myType)
            TheAnswer(42).
            .output TheAnswer
        }
        .init numberInstance = ParamComponent<number>
        .init floatInstance = ParamComponent<float>
        """,
        {"numberInstance.TheAnswer": {(42,)}, "floatInstance.TheAnswer": {(42.0,)}},
    ),
    (
        """
        .decl R(x:number)
        .comp Case<Selector> {
           .comp One { R(1). }
           .comp Two { R(2). }
           .init selection = Selector
        }
        .init myCase = Case<Two>
        .output R
        """,
        {"R": {(2,)}},
    ),
    (
        """
        .comp Base {
            .decl R(x:number) overridable
            R(1).
            R(x+1) :- R(x), x < 5.
            .output R
        }
        .comp Sub : Base {
            .override R
            R(2).
            R(x+1) :- R(x), x < 4.
        }
        .init mySub = Sub
        """,
        {"mySub.R": {(2,), (3,), (4,)}},
    ),
    (
        """
        .comp Base {
            .type myNumber = number
            .decl TheAnswer(x:myNumber)
            TheAnswer(42).
        }
        .comp Sub  : Base {
            .decl WhatIsTheAnswer(n:myNumber)
            WhatIsTheAnswer(n) :- TheAnswer(n).
            .output WhatIsTheAnswer
        }
        .init mySub = Sub
        """,
        {"mySub.WhatIsTheAnswer": {(42,)}},
    ),
]


@pytest.mark.parametrize("text, expected", SOUFFLE_COMPONENT_EXAMPLES)
def test_souffles_component_examples(text, expected):
    assert sd.reference.evaluate(sd.Program.parse(text, dialect="souffle"), {}) == expected


def test_an_instance_renames_what_its_component_declares():
    program = parse(".comp C<T> { .type U <: T .decl r(x: U) r(1). q(X) :- r(X). } .init a = C<number>")
    assert [str(d) for d in program.declarations] == [".decl a.r(x: long)"]
    assert [str(r) for r in program.rules] == ["q(X) :- a.r(X)."]
    assert [str(t) for t in program.types] == [".type a.U <: number"]


def test_a_type_an_instance_declares_is_named_through_it():
    text = """
    .comp C<P> { .type Id <: P .decl r(x: Id) r(2). }
    .init a = C<number>
    .init b = C<number>
    .type Both = a.Id | b.Id
    .decl s(x: a.Id)
    .decl u(x: Both)
    s(X) :- a.r(X).
    s(as(X, a.Id)) :- b.r(X).
    u(X) :- s(X).
    """
    assert sd.reference.evaluate(sd.Program.parse(text, dialect="souffle"), {})["u"] == {(2,)}
    mixed = ".comp C { .type Id <: number .decl r(x: Id) }\n.init a = C\n.init b = C\n.decl s(x: a.Id)\n"
    with pytest.raises(SchemaError, match="has type a.Id but is given X of type b.Id") as error:
        parse(mixed + "s(X) :- b.r(X).", dialect="souffle")
    assert (error.value.line, error.value.column) == (5, 3)


def test_a_relation_named_as_a_type_leaves_the_type_alone():
    # relations and types are two namespaces: the instance renames the relation node, and its
    # column keeps the global type node; a type the component declares is renamed
    text = """
    .symbol_type node
    .comp G {
        .type w = number
        .decl node(n: node)
        .decl weight(n: node, x: w)
        node("a").
        weight(n, 2) :- node(n).
    }
    .init g = G
    .decl out(n: node, x: number)
    out(n, x) :- g.weight(n, x).
    """
    program = sd.Program.parse(text, dialect="souffle")
    types = parse(text, dialect="souffle").types
    assert [str(t) for t in types] == [".type node <: symbol", ".type g.w = number"]
    assert sd.reference.evaluate(program, {})["out"] == {("a", 2)}


@pytest.mark.parametrize(
    "text, line, column, fragment",
    [
        (".init a = Missing", 1, 11, "unknown component 'Missing'"),
        (".comp C<T> { }\n.init a = C", 2, 11, "takes 1 type parameter(s), given 0"),
        (
            ".comp B { .decl r(x: number) }\n.comp C : B { .override r }\n.init a = C",
            2,
            25,
            "cannot be overridden",
        ),
        (".comp C : C { }\n.init a = C", 1, 11, "more than 100 deep"),
        (".comp C { .decl r(x: T) }\n.init a = C", 1, 22, "unknown type 'T'"),
        (".comp C { ?- p(1). }\n.init a = C", 1, 11, "unexpected '?-'"),
    ],
)
def test_bad_components(text, line, column, fragment):
    assert_error(text, line, column, fragment)


def test_a_subsumption_body_reads_its_relation_as_the_tuples_decided_on():
    once = parse("r(1). r(2).\nr(A) <= r(B) :- r(A + 1), B = A + 1.")
    assert str(once.rules[0]).startswith(
        "r__dominated(A) :- r__candidates(A), r__candidates(B), r__candidates((A + 1))"
    )
    rounds = parse("r(1). r(X + 1) :- r(X), X < 3.\nr(A) <= r(B) :- !r(A + 2), B > A.")
    assert str(rounds.rules[-1]).startswith("r__dominated(A) :- r__all(A), r__all(B), not r__all((A + 2))")
