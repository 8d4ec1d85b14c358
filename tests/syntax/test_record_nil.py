"""Soufflé's record gaps closed on the reference: ``nil`` of a record type that is not
recursive, ``?name`` columns and fields, record terms in a subsumption's atoms, and records
destructured from a field of a recursive record (the engines run the same programs in
tests/dialect: records_nil, records_question_names, records_subsumption, records_in_lists)."""

from __future__ import annotations

import pytest

import spark_datalog as sd
from spark_datalog.errors import ParseError
from spark_datalog.record_text import parse_record
from spark_datalog.record_types import Record, nil_record
from spark_datalog.souffle_io import FileFormat, format_value
from syntax.test_fast_parser import check_same

POINT = "[x: long, y: long]"
TYPES = ".type P = [x: number, y: number]\n.type N = [p: P, s: symbol]\n"


def _evaluate(text: str, edb=None) -> dict:
    return sd.reference.evaluate(sd.Program.parse(TYPES + text, dialect="souffle"), edb or {})


def test_nil_is_the_record_of_nulls_and_prints_as_nil():
    text = '.decl r0(p: P)\nr0(nil). r0([1, 2]).\n.decl n0(n: N)\nn0(nil). n0([nil, "a"]).\n'
    result = _evaluate(text + ".decl r(p: P)\nr(p) :- r0(p).\n.decl n(n: N)\nn(n) :- n0(n).")
    assert result["r"] == {(Record((None, None)),), (Record((1, 2)),)}
    assert result["n"] == {(Record((None, None)),), (Record((Record((None, None)), "a")),)}
    texts = {format_value(v, "[p: [x: long, y: long], s: string]", FileFormat()) for (v,) in result["n"]}
    assert texts == {"nil", "[nil, a]"}


def test_nil_is_read_from_fact_texts():
    assert parse_record(" nil", POINT) == nil_record(POINT)
    assert parse_record("[nil, nil]", "[p: [x: long, y: long], s: string]") == Record(
        (nil_record(POINT), "nil")
    )
    assert parse_record("nil]", POINT) is None


def test_the_python_api_gives_nil_as_none_or_a_record_of_nulls():
    text = ".decl r(p: P)\n.input r\n.decl s(p: P)\ns(p) :- r(p), p = nil."
    assert _evaluate(text, {"r": {(None,), ((1, 2),)}})["s"] == {(nil_record(POINT),)}
    assert _evaluate(text, {"r": {((None, None),)}})["s"] == {(nil_record(POINT),)}


@pytest.mark.parametrize(
    "rule, expected",
    [
        ("o(x) :- r([x, _]).", {(1,)}),  # a field of nil is undefined: the pattern fails
        ("o(1) :- r(p), p = [_, _].", {(1,)}),  # no field read: a guard p != nil
        ("o(2) :- r(p), p = nil.", {(2,)}),
        ("o(x) :- r(p), p != nil, p = [x, _].", {(1,)}),
        ("o(3) :- r(p), !r2(p).", {(3,)}),
    ],
)
def test_patterns_never_match_nil(rule, expected):
    text = ".decl r(p: P)\nr(nil). r([1, 2]).\n.decl r2(p: P)\nr2([1, 2]).\n.decl o(x: number)\n" + rule
    assert _evaluate(text)["o"] == expected


def test_a_pattern_without_a_field_read_is_guarded():
    program = sd.Program.parse(
        TYPES + ".decl r(p: P)\n.decl o(x: number)\no(1) :- r([_, _]).", dialect="souffle"
    )
    assert str(program.checked.program.rules[0]) == "o(1) :- r(_record1_), _record1_ != nil."


def test_nil_is_first_in_a_choice_and_in_autoinc_order():
    text = (
        '.decl c(k: symbol, p: P)\nc("a", [0, 0]). c("a", nil). c("b", [-1, 5]).\n'
        ".decl pick(k: symbol, p: P) choice-domain k\npick(k, p) :- c(k, p).\n"
        ".decl num(p: P, i: number)\nnum(p, autoinc()) :- c(_, p).\n"
    )
    result = _evaluate(text)
    assert result["pick"] == {("a", nil_record(POINT)), ("b", Record((-1, 5)))}
    assert (nil_record(POINT), 0) in result["num"]


@pytest.mark.parametrize(
    "rule, line, column, fragment",
    [
        ("o(nil).", 4, 3, "nil needs a record type, but column 1 of 'o' is long"),
        ("o(1) :- X = nil.", 4, 13, "nil needs a record type, but the other side of '=' has no known"),
    ],
)
def test_nil_where_no_record_type_is_expected(rule, line, column, fragment):
    with pytest.raises(ParseError) as info:
        sd.Program.parse(TYPES + ".decl o(x: number)\n" + rule, dialect="souffle")
    assert fragment in str(info.value) and (info.value.line, info.value.column) == (line, column)


def test_question_mark_names_in_declarations_and_record_fields():
    text = '.type Q = [?a: number, ?b: symbol]\n.decl r(?x: number, ?q: Q)\nr(1, [2, "s"]).\n'
    text += ".decl s(?y: number)\ns(?y) :- r(_, [?y, _]).\n"
    program = sd.Program.parse(text, dialect="souffle")
    assert program.relations["r"].column_names == ("?x", "?q")
    assert program.relations["r"].types[1] == "[?a: long, ?b: string]"
    assert sd.reference.evaluate(program, {})["s"] == {(2,)}


def test_the_fast_parser_reads_question_mark_columns():
    check_same('.decl r(?x: number, y: symbol)\nr(1, "a").\n', must_accept=True, dialect="souffle")


def test_record_terms_in_a_subsumption_are_typed_by_the_relation():
    text = (
        ".type I = [lo: number, hi: number]\n.decl v(n: symbol, i: I)\n"
        "v(n, [l1, u1]) <= v(n, [l2, u2]) :- l2 <= l1, u1 <= u2.\n"
        'v("a", [1, 5]). v("a", [2, 3]). v("b", [2, 3]). v("b", [3, 4]).\n'
    )
    result = sd.reference.evaluate(sd.Program.parse(text, dialect="souffle"), {})
    assert result["v"] == {("a", Record((1, 5))), ("b", Record((2, 3))), ("b", Record((3, 4)))}


def test_a_record_in_a_field_of_a_recursive_record_is_typed_through_the_field():
    text = (
        ".type I = [lo: number, hi: number]\n.type L = [head: I, tail: L]\n.decl l(x: L)\n"
        "l([[1, 2], [[3, 4], nil]]).\n.decl o(a: number, b: number)\n"
        "o(a, b) :- l(x), i = [a, b], t = [i, _], x = [_, t].\n"
    )
    assert sd.reference.evaluate(sd.Program.parse(text, dialect="souffle"), {})["o"] == {(3, 4)}


def test_a_record_whose_type_nothing_tells_is_still_refused():
    text = ".type I = [lo: number, hi: number]\n.decl o(a: number)\no(a) :- i = [a, 1], j = [a, 1], i = j."
    with pytest.raises(ParseError, match="the record type of \\[a, 1\\] is not known") as info:
        sd.Program.parse(text, dialect="souffle")
    assert (info.value.line, info.value.column) == (3, 13)
