"""Soufflé's record types: declarations, record terms lowered to construction and field reads,
and their errors (class, line, column)."""

from __future__ import annotations

import pytest

import spark_datalog as sd
from spark_datalog.errors import SchemaError
from spark_datalog.record_types import Record, fields
from spark_datalog.syntax import parse
from syntax.test_parse_errors import assert_error

from kernel.harness import kernel_result

TYPES = ".type P = [x: number, y: number]\n.type Q = [p: P, n: symbol]\n"
DECLS = ".decl p(r: P)\n.decl q(r: Q)\n.decl out(x: number)\n.decl pts(r: P)\n"


def rules(text: str) -> list:
    return [str(rule) for rule in parse(TYPES + DECLS + text).rules]


def test_a_record_type_names_a_struct_of_its_fields():
    program = parse(TYPES + DECLS)
    assert program.declarations[1].columns[0].type == "[p: [x: long, y: long], n: string]"
    assert fields("[p: [x: long, y: long], n: string]") == (("p", "[x: long, y: long]"), ("n", "string"))
    assert str(parse(".type P = [x: number]").types[0]) == ".type P = [x: long]"


@pytest.mark.parametrize(
    "rule, lowered",
    [
        ("out(X) :- p([X, 1]).", "out(X) :- p(_record1_), X = (_record1_).x, (_record1_).y = 1."),
        ("out(X) :- p([X, _]).", "out(X) :- p(_record1_), X = (_record1_).x."),
        (
            'out(X) :- q([[X, _], "a"]).',
            'out(X) :- q(_record1_), _record2_ = (_record1_).p, X = (_record2_).x, (_record1_).n = "a".',
        ),
        ("pts([Y, X]) :- p([X, Y]).", "pts([Y, X]) :- p(_record1_), X = (_record1_).x, Y = (_record1_).y."),
        ("pts(R) :- p(R), R = [X, X].", "pts(R) :- p(R), X = (R).x, X = (R).y."),
        ("pts(R) :- p(R), R != [1, 2].", "pts(R) :- p(R), R != [1, 2]."),
        ('pts(R) :- p(R), !q([R, "a"]).', 'pts(R) :- p(R), not q([R, "a"]).'),
        ("pts(R) :- out(X), R = [X, X + 1].", "pts(R) :- out(X), R = [X, (X + 1)]."),
    ],
)
def test_record_terms_are_lowered(rule, lowered):
    assert rules(rule)[-1] == lowered


def test_a_fact_of_records_holds_record_values():
    (fact,) = parse(TYPES + DECLS + 'q([[1, 2], "a"]).').facts
    assert fact.values == (Record((Record((1, 2)), "a")),)


def test_records_evaluate_on_the_reference():
    text = (
        TYPES
        + DECLS
        + 'p([1, 2]). p([3, 3]). q([[3, 3], "a"]).\nout(X) :- q([[X, _], _]).\npts(R) :- p(R), !q([R, "a"]).'
    )
    result = sd.reference.evaluate(sd.Program.parse(text), {})
    assert result["out"] == {(3,)} and result["pts"] == {((1, 2),)}


def test_a_negated_pattern_with_an_anonymous_field_reads_through_a_relation():
    text = (
        ".type P = [a: number, b: number]\n.type S = Dot {p: P} | Empty {}\n"
        ".decl e(p: P)\n.decl s(s: S)\n.decl n(x: number)\n"
        "e([1, 2]). e([3, 4]). s($Dot([5, 6])). n(2). n(5). n(7).\n"
        "q(X) :- n(X), !e([_, X]).\nr(X) :- n(X), !s($Dot([X, _])), !e([X, _]).\n"
    )
    program = sd.Program.parse(text, dialect="souffle")
    assert [str(r) for r in program.checked.program.rules if r.head.predicate == "q"] == [
        "q(X) :- n(X), not e__match(X)."
    ]
    expected = {"q": {(5,), (7,)}, "r": {(2,), (7,)}}
    reference = sd.reference.evaluate(program, {})
    assert {name: reference[name] for name in expected} == expected
    kernel = kernel_result(program, {})
    assert {name: kernel[name] for name in expected} == expected


@pytest.mark.parametrize(
    "text, line, column, fragment",
    [
        (".type A = [x: Missing]", 1, 7, "unknown type 'Missing' of field 'x' of 'A'"),
        (".type A = [x: number, x: symbol]", 1, 7, "two fields of one name"),
        (
            TYPES + DECLS + "out(X) :- p([X]).",
            7,
            13,
            "record term [X] has 1 fields, but column 1 of 'p' is [x: long, y: long]",
        ),
        (TYPES + DECLS + "out(X) :- p(R), R = [X].", 7, 21, "record term [X] has 1 fields"),
        (
            TYPES + DECLS + "out([X, 1]) :- p([X, _]).",
            7,
            5,
            "needs a record type, but column 1 of 'out' is long",
        ),
        (TYPES + DECLS + "out(X) :- q([[X], _]).", 7, 14, "record term [X] has 1 fields, but field 'p' is"),
        (
            TYPES + DECLS + "out(X) :- out(X), [X, 1] = [1, X].",
            7,
            28,
            "the record type of [1, X] is not known",
        ),
        (TYPES + DECLS + "out(1) :- out(X), Y = [X, X].", 7, 23, "the record type of [X, X] is not known"),
        (TYPES + DECLS + 'p([1, "a"]).', 7, 7, "field 'y' of [x: long, y: long] cannot hold \"a\" (string)"),
        (
            TYPES + DECLS + 'q([1, "a"]).',
            7,
            4,
            "field 'p' of [p: [x: long, y: long], n: string] cannot hold 1",
        ),
        (TYPES + DECLS + "?- p([1, 2]).", 7, 6, "record terms in queries are not supported yet"),
    ],
)
def test_record_errors(text, line, column, fragment):
    assert_error(text, line, column, fragment)


@pytest.mark.parametrize(
    "rule, fragment",
    [
        ("pts(R) :- p(R), p(S), R < S.", "records can only be compared with = and !="),
        ("out(X) :- p(R), X = R.", "type conflict"),
        ("out(X) :- p([X, Y]), q(Y).", "type conflict"),
        ("pts(M) :- M = min R : { p(R) }.", "min needs numbers or symbols, not records or ADTs"),
        ("pts(M) :- M = max R : p(R).", "max needs numbers or symbols, not records or ADTs"),
    ],
)
def test_record_type_errors(rule, fragment):
    with pytest.raises(SchemaError) as info:
        sd.Program.parse(TYPES + DECLS + rule)
    assert fragment in str(info.value) and info.value.line == 7


def test_an_eqrel_over_a_record_type_labels_by_value_order_but_users_still_cannot_min_records():
    eqrel = ".type P = [x: number, y: number]\n.decl same(a: P, b: P) eqrel\nsame([1, 2], [3, 4]).\n"
    assert len(sd.reference.evaluate(sd.Program.parse(eqrel, dialect="souffle"), {})["same"]) == 4
    own_label = ".decl same__eqrel_label(a: P, b: P)\nsame__eqrel_label(X, min<X>) :- same(X, _).\n"
    with pytest.raises(SchemaError) as info:
        sd.Program.parse(eqrel + own_label, dialect="souffle")
    assert "min needs numbers or symbols, not records or ADTs" in str(info.value)
    assert (info.value.line, info.value.column) == (5, 22)
