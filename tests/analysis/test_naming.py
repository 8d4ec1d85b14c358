"""Column names of relations without ``.decl``: from the head of their first rule."""

import pytest

from spark_datalog import Program, SchemaError
from spark_datalog.analysis.naming import unique_names


def names(text: str, relation: str) -> tuple:
    return Program.parse(text).relations[relation].column_names


def test_the_quickstart_closure_is_named_after_its_first_rule():
    text = ".decl arc(src: long, dst: long)\ntc(X, Y) :- arc(X, Y).\ntc(X, Z) :- tc(X, Y), arc(Y, Z).\n"
    assert names(text, "tc") == ("X", "Y")


def test_the_first_rule_in_the_text_decides_when_rules_disagree():
    text = "e(1, 2).\np(A, B) :- e(A, B).\np(B, A) :- e(A, B).\n"
    assert names(text, "p") == ("A", "B")
    assert names("e(1, 2).\np(B, A) :- e(A, B).\np(A, B) :- e(A, B).\n", "p") == ("B", "A")


def test_constants_expressions_and_underscore_variables_keep_positional_names():
    text = "e(1, 2).\np(X, 1, Y + 1, _Z, ?w) :- e(X, Y), e(_Z, ?w).\n"
    assert names(text, "p") == ("X", "c1", "c2", "c3", "w")


def test_a_variable_at_two_positions_names_neither():
    assert names("e(1).\np(X, X, Y) :- e(X), e(Y).\n", "p") == ("c0", "c1", "Y")


def test_names_that_differ_only_in_case_name_neither():
    # Spark and Delta resolve column names ignoring case: X and x would be one column
    assert names("e(1).\np(X, ?x) :- e(X), e(?x).\n", "p") == ("c0", "c1")


def test_a_name_equal_to_another_positions_positional_name_is_not_used():
    assert names("e(1).\np(1, ?c0) :- e(?c0).\n", "p") == ("c0", "c1")
    assert names("e(1).\np(?c0, Y) :- e(?c0), e(Y).\n", "p") == ("c0", "Y")


def test_head_aggregates_are_named_after_their_function_and_variable():
    text = "e(1, 2).\nd(X, count<Y>) :- e(X, Y).\nm(X, min<D>) :- e(X, D).\n"
    assert names(text, "d") == ("X", "count_Y")
    assert names(text, "m") == ("X", "min_D")


def test_relations_without_rules_and_declared_relations_keep_their_names():
    text = (
        ".decl arc(src: long, dst: long)\nf(1, 2).\ntc(X, Y) :- arc(X, Y), f(X, Y).\n"
        ".input g\nh(X) :- g(X).\n"
    )
    program = Program.parse(text)
    assert names(text, "arc") == ("src", "dst")
    assert names(text, "f") == ("c0", "c1")
    assert names(text, "g") == ("c0",)
    assert program.relations["tc"].column_names == ("X", "Y")


def test_input_types_keep_the_names_from_the_rules():
    program = Program.parse(".input e\np(X, Y) :- e(X, Y).\n").with_input_types({"e": ("int", "string")})
    assert program.relations["e"].column_names == ("c0", "c1")
    assert [str(c) for c in program.relations["p"].columns] == [
        "Column(name='X', type='int')",
        "Column(name='Y', type='string')",
    ]


def test_a_type_conflict_names_the_column_by_its_name():
    with pytest.raises(SchemaError) as caught:
        Program.parse('.decl e(a: long)\np(X) :- e(X).\np("a").\n')
    assert "column 'X' of relation 'p'" in caught.value.message


@pytest.mark.parametrize(
    ("candidates", "expected"),
    [
        (["X", "Y"], ("X", "Y")),
        ([None, None], ("c0", "c1")),
        (["X", None, "x", "c1", "Y"], ("c0", "c1", "c2", "c3", "Y")),
        (["c1", "c0"], ("c1", "c0")),  # each is unique: kept
        (["C2", None, None], ("c0", "c1", "c2")),  # C2 is c2 to Spark
    ],
)
def test_unique_names(candidates, expected):
    assert unique_names(candidates) == expected


def test_former_fingerprint_is_that_of_positional_names():
    undeclared = Program.parse(".decl arc(a: long, b: long)\ntc(X, Y) :- arc(X, Y).\n")
    declared = Program.parse(
        ".decl arc(a: long, b: long)\n.decl tc(c0: long, c1: long)\ntc(X, Y) :- arc(X, Y).\n"
    )
    assert undeclared.former_fingerprint == declared.fingerprint != undeclared.fingerprint
    assert declared.former_fingerprint is None
