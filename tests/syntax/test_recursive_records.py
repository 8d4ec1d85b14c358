"""Soufflé's recursive record types and ``nil``: declarations, the encoding of their values
(spark_datalog.recursive_records), lowering (destructuring guarded by ``!= nil``), errors (class,
line, column) and results on the reference interpreter."""

from __future__ import annotations

import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spark_datalog as sd
from spark_datalog.errors import ParseError, SchemaError
from spark_datalog.record_text import parse_record
from spark_datalog.recursive_records import (
    NIL,
    decode,
    double_of,
    double_text,
    encode,
    polars_field,
    polars_text,
    read_field,
    recursive_fields,
    spark_field,
    spark_text,
    text_of,
)
from spark_datalog.souffle_io import FileFormat, format_value, parse_field
from spark_datalog.syntax import parse

LIST = "@List[head: long, tail: @List]"
TYPES = ".type List = [head: number, tail: List]\n.type W = [w: symbol, ok: bool, rest: W]\n"
DECLS = ".decl l(x: List)\n.decl w(x: W)\n.decl o(x: number)\n.decl s(x: symbol)\n"
WORDS = "@W[w: string, ok: bool, rest: @W]"


def lowered(rule: str, dialect: str = "souffle") -> str:
    return str(sd.Program.parse(TYPES + DECLS + rule, dialect=dialect).ast.rules[-1])


def test_a_recursive_record_type_names_its_encoded_type():
    program = parse(TYPES + DECLS)
    assert program.declarations[0].columns[0].type == LIST
    assert recursive_fields(LIST) == (("head", "long"), ("tail", LIST))
    assert sd.Program.parse(TYPES + DECLS).relations["w"].types == (WORDS,)


@pytest.mark.parametrize(
    "values, text",
    [
        ((1, "nil"), "[1, nil]"),
        ((-12, encode((3, "nil"), LIST)), "[-12, [3, nil]]"),
    ],
)
def test_the_encoding_is_read_back_and_printed_as_souffle_does(values, text):
    encoded = encode(values, LIST)
    assert decode(encoded, LIST) == values
    assert text_of(encoded, LIST) == format_value(encoded, LIST, FileFormat()) == text
    assert parse_field(text, LIST) == encoded


def test_symbols_with_digits_and_colons_keep_the_encoding_injective():
    tricky = encode(("1:a", True, encode(("", False, "nil"), WORDS)), WORDS)
    assert decode(tricky, WORDS)[:2] == ("1:a", True)
    assert read_field(decode(tricky, WORDS)[2], 0, "string") == ""
    assert text_of(tricky, WORDS) == "[1:a, true, [, false, nil]]"
    assert parse_record('[ "x, y" , false,nil]', WORDS) == encode(("x, y", False, "nil"), WORDS)
    assert parse_record("[1, [2]]", LIST) is None and parse_record("nil", LIST) == "nil"


@pytest.mark.parametrize(
    "rule, expected",
    [
        ("o(H) :- l(L), L = [H, _].", "o(H) :- l(L), L != nil, H = (L).head."),
        (
            "l(T) :- l([_, T]), T != nil.",
            "l(T) :- l(_record1_), _record1_ != nil, T = (_record1_).tail, T != nil.",
        ),
        (
            "o(H) :- l([H, nil]).",
            "o(H) :- l(_record1_), _record1_ != nil, H = (_record1_).head, (_record1_).tail = nil.",
        ),
        ("l([1, [H, nil]]) :- o(H).", "l([1, [H, nil]]) :- o(H)."),
        ("o(1) :- l(L), !l([1, L]).", "o(1) :- l(L), not l([1, L])."),
    ],
)
def test_recursive_record_terms_are_lowered_with_a_nil_guard(rule, expected):
    assert lowered(rule) == expected


def test_a_bare_nil_of_the_default_dialect_is_nil_where_a_recursive_record_is_expected():
    text = TYPES + DECLS + "l(nil). l([1, nil]). s(nil).\no(H) :- l([H, T]), T = nil.\n.output l, s, o\n"
    result = sd.reference.evaluate(sd.Program.parse(text), {})
    assert result["l"] == {("nil",), (encode((1, "nil"), LIST),)}
    assert result["s"] == {("nil",)} and result["o"] == {(1,)}


def test_lists_evaluate_on_the_reference():
    text = (
        TYPES
        + DECLS
        + (
            "l([1, [2, [3, nil]]]).\n"
            "l(T) :- l([_, T]), T != nil.\n"
            "o(H) :- l(L), L = [H, _].\n"
            ".decl two(x: List)\ntwo(L) :- l(L), L = [_, [_, nil]].\n"
            ".decl out(x: List)\nout([H + 10, nil]) :- o(H), !two([H, _]).\n.output l, o, two, out\n"
        )
    )
    result = sd.reference.evaluate(sd.Program.parse(text, dialect="souffle"), {})
    texts = {name: {text_of(row[0], LIST) for row in result[name]} for name in ("l", "two", "out")}
    assert texts["l"] == {"[1, [2, [3, nil]]]", "[2, [3, nil]]", "[3, nil]"}
    assert result["o"] == {(1,), (2,), (3,)}
    assert texts["two"] == {"[2, [3, nil]]"}
    assert texts["out"] == {"[11, nil]", "[13, nil]"}


@pytest.mark.parametrize(
    "rule, line, column, fragment",
    [
        ("o(nil).", 7, 3, "nil needs a record type, but column 1 of 'o' is long"),
        (
            "o(X) :- X = nil.",
            7,
            13,
            "nil needs a record type, but the other side of '=' has no known",
        ),
        ("l([1]).", 7, 3, "record term [1] has 1 fields, but column 1 of 'l' is List"),
        ("o(1) :- l([1, 2, 3]).", 7, 11, "record term [1, 2, 3] has 3 fields, but column 1 of 'l' is List"),
        ('l(["a", nil]).', 7, 4, "field 'head' of List cannot hold \"a\" (string)"),
        ("l([1, 2]).", 7, 7, "field 'tail' of List cannot hold 2 (long)"),
        ("o(1) :- l(L), L = [1].", 7, 19, "record term [1] has 1 fields, but the other side of '=' is List"),
    ],
)
def test_recursive_record_errors(rule, line, column, fragment):
    text = TYPES + DECLS + rule
    with pytest.raises(ParseError) as info:
        sd.Program.parse(text, dialect="souffle")
    assert fragment in str(info.value) and (info.value.line, info.value.column) == (line, column)


@pytest.mark.parametrize(
    "rule, column, fragment",
    [
        ("o(1) :- l(L), l(M), L < M.", 21, "records can only be compared with = and !="),
        ("l([X, nil]) :- s(X).", 18, "type conflict for variable X"),
        ("l([1, X]) :- o(X).", 16, "List (field of [1, X]"),
        ("s(X) :- l(X).", 3, "has type symbol but is given X of type List"),
    ],
)
def test_recursive_record_type_errors(rule, column, fragment):
    with pytest.raises(SchemaError) as info:
        sd.Program.parse(TYPES + DECLS + rule, dialect="souffle")
    assert fragment in str(info.value) and (info.value.line, info.value.column) == (7, column)


@pytest.mark.parametrize(
    "types",
    [
        ".type L = [h: float, t: L]",
        ".type P = [x: float]\n.type L = [p: P, t: L]",
        ".type A = [x: number, b: B]\n.type B = [y: A, f: float]",
        ".type E = N {p: P} | Add {l: E, r: E}\n.type P = [x: float]",
    ],
)
def test_floats_in_recursive_types_parse(types):
    """A float field (also inside a record field) of a recursive type (once a ParseError)."""
    parse(types)


def test_the_cli_prints_lists_as_souffle_writes_them(tmp_path, capsys):
    from spark_datalog.cli import main

    path = tmp_path / "l.dl"
    path.write_text(
        TYPES + ".decl l(x: List)\nl([1, [2, nil]]).\nl(T) :- l([_, T]).\n.output l\n?- l(nil).\n"
    )
    assert main(["run", str(path), "--dialect", "souffle", "--engine", "reference", "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[lines.index("l: 3 facts") + 1 :][:3] == ["  l([1, [2, nil]])", "  l([2, nil])", "  l(nil)"]
    assert "?- l(nil). true" in lines


@pytest.mark.parametrize("given", [(), ("--query", "l(X, 3)")], ids=["program's query", "--query"])
def test_the_cli_prints_list_answers_of_queries_as_souffle_writes_them(tmp_path, capsys, given):
    from spark_datalog.cli import main

    path = tmp_path / "q.dl"
    path.write_text(TYPES + ".decl l(x: List, n: number)\nl([1, [2, nil]], 3).\nl(nil, 4).\n?- l(X, 3).\n")
    argv = ["run", str(path), "--dialect", "souffle", "--engine", "reference", "--quiet", *given]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[lines.index("?- l(X, 3). 1 answer") + 1] == "  X = [1, [2, nil]]"


def test_a_checked_query_knows_the_types_of_its_answer_columns():
    from spark_datalog.query import checked_query

    program = sd.Program.parse(TYPES + ".decl l(x: List, n: number)\nl(nil, 4).", dialect="souffle")
    assert checked_query(program.checked, "l(X, N)").types == (LIST, "long")
    assert checked_query(program.checked, "l(_, N)").types == ("long",)


def test_a_record_with_a_list_field_is_a_struct_holding_the_encoding_on_the_kernel_too():
    from kernel.harness import assert_same

    text = TYPES + (
        ".type Pair = [l: List, n: number]\n.decl n(x: number)\n.input n\n.decl p(x: Pair)\n"
        "p([[X, nil], X]) :- n(X).\np([[X, L], X + 1]) :- p([L, X]), X < 3.\n"
        "o(N) :- p([L, N]), L != [1, nil].\n.output o, p\n"
    )
    assert sd.Program.parse(text).relations["p"].types == ("[l: @List[head: long, tail: @List], n: long]",)
    assert sd.reference.evaluate(sd.Program.parse(text), {"n": {(1,), (2,)}})["o"] == {(2,), (3,)}
    assert_same(text, {"n": {(1,), (2,)}})


_EDGE_DOUBLES = [
    0.0,
    -0.0,
    1.5,
    -2.0,
    math.nan,
    math.inf,
    -math.inf,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
]
_EDGE_DOUBLES += [2.225073858507201e-308, 1.7976931348623157e308, 1e20, 0.1, 1 / 3]
_POWERS = [
    v
    for k in range(-1074, 1024)
    for v in (2.0**k, math.nextafter(2.0**k, 0), math.nextafter(2.0**k, math.inf))
]


def _bits(value: float) -> str:
    """IEEE-754 bits as a signed 64-bit integer, -0.0 as 0.0 and every NaN as the quiet one."""
    value = math.nan if math.isnan(value) else value + 0.0
    return str(struct.unpack("<q", struct.pack("<d", value))[0])


def test_a_double_is_encoded_as_its_bits_and_read_back():
    for value in _EDGE_DOUBLES + _POWERS:
        text = double_text(value)
        assert text == _bits(value)
        back = double_of(text)
        assert double_text(back) == text and (math.isnan(value) or back == value)
    assert double_text(-0.0) == double_text(0.0) and double_text(-math.nan) == double_text(math.nan)
    assert encode((1.5, NIL), "") == "19:46094342186137026563:nil"
    assert text_of(encode((-0.0, encode((1e20, NIL), "")), ""), "@L[h: double, t: @L]") == "[0, [1e+20, nil]]"
    assert read_field(encode((0.1, NIL), ""), 0, "double") == 0.1
    with pytest.raises(ValueError):
        double_of(str(2**63))


@given(st.floats(allow_nan=True, allow_infinity=True))
@settings(max_examples=40, deadline=None)
def test_polars_encodes_and_reads_doubles_as_python_does(value):
    import polars as pl

    frame = pl.DataFrame({"x": [value] + _EDGE_DOUBLES}, schema={"x": pl.Float64})
    texts = frame.select(polars_text(pl.col("x"), "double").alias("t"))["t"].to_list()
    assert texts == [double_text(v) for v in frame["x"]]
    back = pl.DataFrame({"t": [f"1:x{len(t)}:{t}" for t in texts]}).select(
        polars_field(pl.col("t"), 1, "double").alias("t")
    )
    assert [double_text(v) for v in back["t"]] == texts


def test_polars_keeps_nulls_apart_from_nan():
    import polars as pl

    frame = pl.DataFrame({"x": [None, math.nan, -0.0]}, schema={"x": pl.Float64})
    texts = frame.select(polars_text(pl.col("x"), "double").alias("t"))["t"].to_list()
    assert texts == [None, double_text(math.nan), "0"]
    back = pl.DataFrame({"t": ["1:x0:", f"1:x{len(texts[1])}:{texts[1]}"]}).select(
        polars_field(pl.col("t"), 1, "double").alias("t")
    )
    assert back["t"][0] is None and math.isnan(back["t"][1])


def test_a_double_conversion_reads_its_input_once():
    """The bits of a double (and back) are one batch function of one input: no expression tree
    that grows with the conversion (nested records repeat it)."""
    import polars as pl

    assert str(polars_text(pl.col("x"), "double")).count('col("x")') == 1
    assert str(polars_field(pl.col("e"), 0, "double")).count("python_udf") == 2  # the text, its bits


# a record of 40 fields (texts with digits and colons, an empty one, a nested encoding) and nil
_WIDE = [encode([f"{i}:{i}" if i % 3 else "" for i in range(39)] + [encode((7, "a:b"), "")], ""), NIL]


def test_a_late_field_is_read_by_an_expression_that_does_not_grow_with_its_position():
    """Reading field n skips the n before it: as one expression each skip held the one before
    three times (a record of 11 fields took 21 s on the kernel, 9 did not finish on Spark)."""
    import polars as pl

    assert str(polars_field(pl.col("e"), 38, "string")).count('col("e")') <= 2
    frame = pl.DataFrame({"e": _WIDE})
    for position in (0, 1, 38):
        got = frame.select(polars_field(pl.col("e"), position, "string").alias("v"))["v"].to_list()
        assert got == [read_field(_WIDE[0], position, "string"), None], position
    nested = frame.select(polars_field(pl.col("e"), 39, "[x: long, s: string]").alias("v"))["v"].to_list()
    assert nested == [{"x": 7, "s": "a:b"}, None]


@pytest.mark.spark
def test_spark_reads_a_late_field_as_python_does(spark):
    from pyspark.sql import functions as F

    frame = spark.createDataFrame([(e,) for e in _WIDE], "e string")
    reads = [spark_field(F.col("e"), p, "string").alias(f"f{p}") for p in (0, 1, 38)]
    nested = spark_field(F.col("e"), 39, "[x: long, s: string]").alias("n")
    rows = {r["e"]: r for r in frame.select("e", *reads, nested).collect()}
    for position in (0, 1, 38):
        assert rows[_WIDE[0]][f"f{position}"] == read_field(_WIDE[0], position, "string")
        assert rows[NIL][f"f{position}"] is None
    assert rows[_WIDE[0]]["n"].asDict() == {"x": 7, "s": "a:b"} and rows[NIL]["n"] is None


def test_polars_encodes_every_power_of_two_as_python_does():
    import polars as pl

    frame = pl.DataFrame({"x": _POWERS}, schema={"x": pl.Float64})
    texts = frame.select(polars_text(pl.col("x"), "double").alias("t"))["t"].to_list()
    assert texts == [_bits(v) for v in _POWERS]


@pytest.mark.spark
def test_spark_encodes_and_reads_doubles_as_python_does(spark):
    from pyspark.sql import functions as F

    values = _EDGE_DOUBLES + _POWERS
    frame = spark.createDataFrame([(v,) for v in values] + [(None,)], "x double")
    rows = frame.select(spark_text(F.col("x"), "double").alias("t")).collect()
    assert [r.t for r in rows] == [_bits(v) for v in values] + [None]  # NaN is not null
    texts = [r.t for r in rows[:-1]]
    encoded_ = spark.createDataFrame([(f"1:x{len(t)}:{t}",) for t in texts] + [("1:x0:",)], "e string")
    back = encoded_.select(spark_field(F.col("e"), 1, "double").alias("d")).collect()
    assert back[-1].d is None and [double_text(r.d) for r in back[:-1]] == texts
