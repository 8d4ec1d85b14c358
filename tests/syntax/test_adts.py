"""Soufflé's algebraic data types: declarations, branch terms lowered to record construction and
field reads (see spark_datalog.record_types.adt_type), and their errors (class, line, column)."""

from __future__ import annotations

import pytest

import spark_datalog as sd
from spark_datalog.errors import SchemaError
from spark_datalog.record_types import Record, adt_branches
from spark_datalog.souffle_io import FileFormat, format_value
from spark_datalog.syntax import parse
from syntax.test_parse_errors import assert_error

TYPES = ".type Color = Red {} | Blue {}\n.type Shape = Circle {r: number} | Box {w: number, c: Color}\n"
DECLS = ".decl s(x: Shape)\n.decl o(x: number)\n.decl c(x: Color)\n"
SHAPE = "[$Shape|Box|Circle: long, Box: [w: long, c: [$Color|Blue|Red: long]], Circle: [r: long]]"


def rules(text: str) -> list:
    return [str(rule) for rule in parse(TYPES + DECLS + text).rules]


def test_an_adt_names_the_struct_of_its_tag_and_branches():
    program = parse(TYPES + DECLS)
    assert program.declarations[0].columns[0].type == SHAPE
    assert adt_branches(SHAPE) == (
        "Shape",
        (("Box", "[w: long, c: [$Color|Blue|Red: long]]"), ("Circle", "[r: long]")),
    )
    assert str(program.types[1]) == ".type Shape = Circle {r: long} | Box {w: long, c: Color}"
    assert parse(".type E = A {} | B {}\n.decl e(x: E)").declarations[0].columns[0].type == "[$E|A|B: long]"


@pytest.mark.parametrize(
    "rule, lowered",
    [
        (
            "o(R) :- s($Circle(R)).",
            "o(R) :- s(_record1_), (_record1_).$Shape|Box|Circle = 1, _record2_ = (_record1_).Circle, "
            "R = (_record2_).r.",
        ),
        (
            "o(W) :- s($Box(W, $Red)).",
            "o(W) :- s(_record1_), (_record1_).$Shape|Box|Circle = 0, _record2_ = (_record1_).Box, "
            "W = (_record2_).w, _record3_ = (_record2_).c, (_record3_).$Color|Blue|Red = 1.",
        ),
        (
            "o(1) :- s($Box(_, _)).",
            "o(1) :- s(_record1_), (_record1_).$Shape|Box|Circle = 0, _record2_ = (_record1_).Box.",
        ),
        (
            "o(1) :- s(X), X = $Circle(1).",
            "o(1) :- s(X), (X).$Shape|Box|Circle = 1, _record1_ = (X).Circle, (_record1_).r = 1.",
        ),
        ("c($Red) :- s(_).", "c([1]) :- s(_)."),
        ("c($Blue()) :- s(_).", "c([0]) :- s(_)."),
        ("o(R) :- s(S), S != $Circle(R), o(R).", "o(R) :- s(S), S != [1, [0, [0]], [R]], o(R)."),
        ("o(1) :- c(C), C = $Blue.", "o(1) :- c(C), (C).$Color|Blue|Red = 0."),
        ("o(1) :- c(C), !c($Red).", "o(1) :- c(C), not c([1])."),
    ],
)
def test_branch_terms_are_lowered(rule, lowered):
    assert rules(rule)[-1] == lowered


def test_a_fact_of_branches_holds_record_values_with_defaults_in_other_branches():
    (fact,) = parse(TYPES + DECLS + "s($Box(1, $Blue())).").facts
    assert fact.values == (Record((0, Record((1, Record((0,)))), Record((0,)))),)


def test_adt_values_print_as_souffle_writes_them():
    box, circle = (
        Record((0, Record((1, Record((1,)))), Record((0,)))),
        Record((1, Record((0, Record((0,)))), Record((5,)))),
    )
    assert format_value(box, SHAPE, FileFormat()) == "$Box(1, $Red)"
    assert format_value(circle, SHAPE, FileFormat()) == "$Circle(5)"
    assert format_value(Record((0,)), "[$Color|Blue|Red: long]", FileFormat()) == "$Blue"


def test_adts_evaluate_on_the_reference():
    text = (
        TYPES
        + DECLS
        + "s($Circle(2)). s($Box(3, $Red)). s($Box(4, $Blue)).\n"
        + "o(N) :- s($Box(N, $Red)).\no(R) :- s($Circle(R))."
    )
    assert sd.reference.evaluate(sd.Program.parse(text), {})["o"] == {(2,), (3,)}


@pytest.mark.parametrize(
    "text, line, column, fragment",
    [
        (TYPES + DECLS + "o(1) :- s($Square(1)).", 6, 11, "unknown branch '$Square' (branches: $Blue, $Box"),
        (
            TYPES + DECLS + "o(1) :- s($Circle(1, 2)).",
            6,
            11,
            "$Circle(1, 2) has 2 fields, but branch 'Circle' of Shape has 1",
        ),
        (
            TYPES + DECLS + "o($Circle(1)) :- s(_).",
            6,
            3,
            "$Circle(1) is of type Shape, but column 1 of 'o' is long",
        ),
        (TYPES + DECLS + "s($Red).", 6, 3, "$Red is of type Color, but column 1 of 's' is Shape"),
        (
            TYPES + DECLS + "s($Box(1, $Circle(2))).",
            6,
            11,
            "$Circle(2) is of type Shape, but field 'c' is Color",
        ),
        (
            TYPES + DECLS + "s([1]).",
            6,
            3,
            "record term [1] needs a record type, but column 1 of 's' is Shape",
        ),
        (TYPES + DECLS + 's($Circle("a")).', 6, 11, "field 'r' of [r: long] cannot hold \"a\" (string)"),
        (".type A = X {} | Y {}\n.type B = X {}", 2, 7, "branch 'X' of 'B' is also a branch of 'A'"),
        (".type A = X {a: number, a: number}", 1, 7, "branch 'X' of 'A' has two fields of one name"),
        (".type A = X {} | X {}", 1, 7, "type 'A' has two branches named 'X'"),
        (".type A = X {a: Missing}", 1, 7, "unknown type 'Missing' of field 'a' of branch 'X' of 'A'"),
    ],
)
def test_adt_errors(text, line, column, fragment):
    assert_error(text, line, column, fragment)


@pytest.mark.parametrize(
    "rule, column, fragment",
    [
        ('o(1) :- s($Circle("a")).', 11, "type conflict"),
        ("o(1) :- s(X), X < $Circle(1).", 15, "records can only be compared with = and !="),
        ("o(X) :- s(X).", 3, "has type number but is given X of type Shape"),
        ("c(X) :- s(X).", 3, "has type Color but is given X of type Shape"),
    ],
)
def test_adt_type_errors(rule, column, fragment):
    with pytest.raises(SchemaError) as info:
        sd.Program.parse(TYPES + DECLS + rule)
    assert fragment in str(info.value) and (info.value.line, info.value.column) == (6, column)


def test_an_adt_in_a_component_is_named_by_its_instance():
    text = ".comp C {\n.type T = A {} | B {x: float}\n.decl r(t: T)\nr($A). r($B(1.5)).\n.output r\n}\n"
    text += ".init c = C\n"
    program = sd.Program.parse(text, dialect="souffle")
    type_ = program.relations["c.r"].types[0]
    assert type_ == "[$c.T|A|B: long, B: [x: double]]"
    values = {format_value(v, type_, FileFormat()) for (v,) in sd.reference.evaluate(program, {})["c.r"]}
    assert values == {"$A", "$B(1.5)"}
