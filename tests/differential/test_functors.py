"""Soufflé's functors and operators: the reference, the local kernel and Spark agree.

Fixed programs cover every functor and its edge cases (``spark_datalog.functors``); a property
test evaluates random expressions over the operators and functors on the reference and the
kernel, and a smaller one on Spark too.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spark_datalog as sd
from tests.kernel.harness import assert_same, kernel_result, outcome, reference_result

PROGRAM = """
.decl a(x: long, y: long, i: int, d: double, s: symbol)
.input a
arith(X, Y, M, P, N) :- a(X, Y, _, _, _), M = X % Y, P = X ^ Y, N = -Y ^ 2.
ab(X, A) :- a(X, _, _, _, _), A = abs(X).
bits(X, Y, A, O, E, L, R, U, B) :- a(X, Y, _, _, _), A = X band Y, O = X bor Y, E = X bxor Y,
    L = X bshl Y, R = X bshr Y, U = X bshru Y, B = bnot X.
ibits(I, L, U, A) :- a(_, Y, I, _, _), L = I bshl Y, U = I bshru Y, A = abs(I).
logic(X, Y, A, O, E, N) :- a(X, Y, _, _, _), A = X land Y, O = X lor Y, E = X lxor Y, N = lnot X.
prec(X, V) :- a(X, _, _, _, _), V = 1 lor 2 land 0 bor 4 bxor 6 band 3 bshl 1 + 2 * 3 % 4.
strs(S, C, L, T, O) :- a(X, _, _, _, S), C = cat(S, "-", to_string(X)), L = strlen(S),
    T = substr(S, 1, 2), O = ord(S).
num(S, N) :- a(_, _, _, _, S), N = to_number(S).
subs(S, I, N, T) :- a(I, N, _, _, S), T = substr(S, I, N).
conv(X, D, F, I, U, W) :- a(X, _, _, D, _), F = to_float(X), I = ftoi(D), U = to_unsigned(X),
    W = itof(X) + utof(itou(utoi(X))).
dbl(D, P, A, M, N) :- a(X, _, _, D, _), P = D ^ 2, A = abs(D), M = max(D, X, 0.5), N = min(D, X).
mm(X, Y, M, N, S) :- a(X, Y, _, _, T), M = max(X, Y, 3), N = min(X, Y), S = max(T, "m").
matched(S) :- a(_, _, _, _, S), match("[a-z]+[0-9]*", S).
unmatched(S) :- a(_, _, _, _, S), !match("[a-z]+[0-9]*", S).
has(S) :- a(_, _, _, _, S), contains("b", S), !contains("z", S).
lits(V) :- a(_, _, _, _, _), V = 0x1F + 0b101 + 12u.
nanmax(D, M) :- a(_, _, _, D, S), M = max(D, to_float(to_number(S))).
nested(X, V) :- a(X, Y, _, _, _), V = max(abs(Y - 3), strlen(cat(to_string(X), "ab"))) ^ 2 + 1.
"""

INF, NAN = float("inf"), float("nan")
ROWS = {
    (7, 2, 3, 2.5, "abc"),
    (-7, 3, -2147483648, -0.0, "b2"),
    (2, 63, 2147483647, NAN, "12"),
    (-1, -1, 1, INF, ""),
    (0, -2, 0, -INF, "-0012"),
    (3, 64, -1, 1.0e19, "héllo"),
    (-9223372036854775808, 1, 5, -9.5, "+5"),
    (9223372036854775807, 0, 40, 3.0, "z9"),
    (5, 5, 5, 1.5, "😀x"),
}
EDB = {"a": ROWS}


def test_the_reference_computes_soufflés_functors():
    result = reference_result(sd.Program.parse(PROGRAM), EDB)
    assert (7, 2, 1, 49, 4) in result["arith"]
    assert (-7, 3, -1, -343, 9) in result["arith"]
    assert (-9223372036854775808,) not in {r[:1] for r in result["ab"]}  # abs(-2^63)
    assert not any(row[0] == 2 for row in result["arith"])  # 2 ^ 63 does not fit long
    assert (0, -2, 0, 0) not in {r[:4] for r in result["arith"]}  # 0 ^ -2 is undefined
    assert (-1, -1, 0, -1) in {r[:4] for r in result["arith"]}  # -1 ^ -1
    assert (7, 2, 2, 7, 5, 28, 1, 1, -8) in result["bits"]
    assert (-1, -1, -1, -1, 0, -9223372036854775808, -1, 1, 0) in result["bits"]
    assert (7, 2, 1, 1, 0, 0) in result["logic"]
    assert result["prec"] >= {(7, 1)}
    assert next(r for r in result["strs"] if r[0] == "abc")[:5] == ("abc", "abc-7", 3, "bc", 97)
    assert result["num"] == {("-0012", -12), ("12", 12), ("+5", 5)}  # to_number("abc") is undefined
    assert ("", 0) in {(r[0], r[4]) for r in result["strs"]}  # ord("") is 0
    assert ("héllo", 104) in {(r[0], r[4]) for r in result["strs"]}
    assert ("b2", "") in {(r[0], r[3]) for r in result["subs"]}  # a negative index gives ""
    assert ("héllo", 3, 64, "lo") in result["subs"]  # a length past the end is cut
    assert result["matched"] == {("abc",), ("b2",), ("héllo",), ("z9",)} - {("héllo",)}
    assert result["has"] == {("abc",), ("b2",)}
    assert result["lits"] == {(48,)}
    assert (3, 1.0e19) not in {(r[0], r[1]) for r in result["conv"]}  # ftoi(1e19) is undefined


def test_the_kernel_agrees_with_the_reference():
    assert_same(PROGRAM, EDB)


BAD_PATTERN = """
.decl p(pat: symbol)
.decl w(s: symbol)
.input p
.input w
hit(P, S) :- p(P), w(S), match(P, S).
miss(P, S) :- p(P), w(S), !match(P, S).
lit(S) :- w(S), !match("x[", S).
"""
BAD_EDB = {"p": {("a.*",), ("x[",)}, "w": {("ab",), ("x[",)}}


def test_a_text_that_is_not_a_pattern_matches_nothing():
    result = reference_result(sd.Program.parse(BAD_PATTERN), BAD_EDB)
    assert result["hit"] == {("a.*", "ab")}
    assert result["miss"] == {("a.*", "x["), ("x[", "ab"), ("x[", "x[")}
    assert result["lit"] == {("ab",), ("x[",)}
    assert_same(BAD_PATTERN, BAD_EDB)


@pytest.mark.parametrize("decompose", [True, False], ids=["partition-local", "rounds"])
def test_spark_agrees_with_the_reference(spark, decompose):
    _assert_spark_same(spark, PROGRAM, EDB, decompose)


STRINGS = r"""
.decl t(s: symbol)
.decl f(x: double)
.decl p(pat: symbol)
.input t, f, p
joined(S, C) :- t(S), C = "<" + S + ">" + S.
num(S, N) :- t(S), N = to_number(S).
text(X, T) :- f(X), T = to_string(X).
inf(T) :- f(X), X > 1e307, T = to_string(X * 10.0).
nan(T) :- f(X), X > 1e307, T = to_string(X * 10.0 - X * 10.0).
hit(P, S) :- p(P), t(S), match(P, S).
miss(P, S) :- p(P), t(S), !match(P, S).
lit(S) :- t(S), match("[[:xdigit:]]+|[^[:print:]_]", S).
never(S) :- t(S), !match("[[:nope:]]|x", S), !match("x(", S).
"""
_TEXTS = ["0xcafe", "-0xBEEF", "0b101", "-0b1", "0x", "0X1f", "+0x1", "-0x8000000000000000"]
_TEXTS += ["0x8000000000000000", "0x000000000000000000000ff", "0b" + "1" * 63, "0b" + "1" * 64]
_TEXTS += ["12", "+12", " 1", "a1", "_", "é", "\t", ":", "[", "", "x"]
_DOUBLES = [3.14, 5e-07, 0.0000015, 1e300, 2.5e-7, 123456789.1234565, -2.5, 1e308, -1e-9, 2.0**60]
_PATTERNS = ["[[:digit:]]+", "[[:alpha:]][[:digit:]]", "[^[:alnum:]]", "[[:w:]]", "[[:SPACE:]]"]
# (not "x(": a pattern from the data that is not one stops a Spark run, BAD_PATTERN)
_PATTERNS += ["[[:foo:]]", "[:digit:]", "[]:[:punct:]]", r"\[[:digit:]]", "0x[[:xdigit:]]*"]
STRINGS_EDB = {"t": {(s,) for s in _TEXTS}, "f": {(x,) for x in _DOUBLES}, "p": {(p,) for p in _PATTERNS}}
STRINGS_SCHEMAS = {"t": "s string", "f": "x double", "p": "pat string"}


def test_the_reference_computes_soufflés_string_operations():
    result = reference_result(sd.Program.parse(STRINGS), STRINGS_EDB)
    assert ("a1", "<a1>a1") in result["joined"]
    # hexadecimal and binary texts with a minus, as Soufflé's to_number; the whole text a number
    assert result["num"] == {
        ("0xcafe", 51966), ("-0xBEEF", -48879), ("0b101", 5), ("-0b1", -1), ("12", 12), ("+12", 12),
        ("-0x8000000000000000", -(2**63)), ("0x000000000000000000000ff", 255), ("0b" + "1" * 63, 2**63 - 1),
    }  # fmt: skip
    # C's %f (Java's %f rounds 123456789.1234565 up, 5e-07 to 0.000001)
    texts = dict(result["text"])
    assert texts[123456789.1234565] == "123456789.123456"
    assert (texts[5e-07], texts[0.0000015], texts[2.5e-7], texts[-1e-9]) == (
        "0.000000",
        "0.000002",
        "0.000000",
        "-0.000000",
    )
    assert texts[1e300].startswith("1000000000000000052504760255204420248704468581108159154915854115")
    assert result["inf"] == {("inf",)} and result["nan"] == {("nan",)}
    hits = {(p, s) for p, s in result["hit"]}
    assert {("[[:digit:]]+", "12"), ("[[:alpha:]][[:digit:]]", "a1"), ("[[:SPACE:]]", "\t")} <= hits
    assert {("[^[:alnum:]]", "é"), ("[[:w:]]", "_"), ("[:digit:]", ":")} <= hits  # [:digit:]: : d i g t
    assert "[[:foo:]]" not in {p for p, _ in hits}  # an unknown class: not a pattern, false
    assert ("[[:foo:]]", "x") in result["miss"]
    assert result["never"] == {(s,) for s in _TEXTS}  # the whole pattern is not one, x too
    assert ("é",) in result["lit"] and ("_",) not in result["lit"]


def test_the_kernel_agrees_on_string_operations():
    assert_same(STRINGS, STRINGS_EDB)


def test_spark_agrees_on_string_operations(spark):
    _assert_spark_same(spark, STRINGS, STRINGS_EDB, False, STRINGS_SCHEMAS)


def _key(value):
    return "NaN" if isinstance(value, float) and math.isnan(value) else value


def _assert_spark_same(spark, text: str, edb: dict, decompose: bool, schemas=None) -> None:
    program = sd.Program.parse(text)
    expected = outcome(lambda: reference_result(program, edb))

    def on_spark():
        inputs = {
            name: spark.createDataFrame(sorted(rows, key=repr), (schemas or {"a": _SCHEMA})[name])
            for name, rows in edb.items()
        }
        result = program.materialize(spark, inputs=inputs, decompose=decompose)
        return {
            name: {tuple(_key(v) for v in row) for row in frame.collect()} for name, frame in result.items()
        }

    actual = outcome(on_spark)
    if expected[0] == "ok":
        actual = (actual[0], {name: rows for name, rows in actual[1].items() if name in expected[1]})
    assert actual == expected, text


_SCHEMA = "x long, y long, i int, d double, s string"


# ---------------------------------------------------------------------------------------------
# Random expressions


_INTEGER_LEAVES = st.sampled_from(["X", "Y", "I", "0", "1", "-1", "2", "3", "63", "64", "0x7F", "0b11", "5u"])
_DOUBLE_LEAVES = st.sampled_from(["D", "0.5", "-2.0", "1.0e300"])
_STRING_LEAVES = st.sampled_from(["S", '"ab"', '""', '"12"', '"-3"', '"-0x1F"', '"0b11"', '"[[:alpha:]]+"'])
_BINARY = ["^", "band", "bor", "bxor", "bshl", "bshr", "bshru", "land", "lor", "lxor", "%"]


def _integer(depth: int):
    if depth == 0:
        return _INTEGER_LEAVES
    smaller = _integer(depth - 1)
    return st.one_of(
        _INTEGER_LEAVES,
        st.tuples(smaller, st.sampled_from(_BINARY), smaller).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(st.sampled_from(["bnot", "lnot", "-"]), smaller).map(lambda t: f"({t[0]} {t[1]})"),
        st.tuples(st.sampled_from(["abs", "itou", "utoi", "to_unsigned"]), smaller).map(
            lambda t: f"{t[0]}({t[1]})"
        ),
        st.lists(smaller, min_size=1, max_size=3).map(
            lambda a: f"{'max' if len(a) % 2 else 'min'}({', '.join(a)})"
        ),
        _string(depth - 1).map(lambda s: f"strlen({s})"),
        _string(depth - 1).map(lambda s: f"ord({s})"),
        _string(depth - 1).map(lambda s: f"to_number({s})"),
        _double(depth - 1).map(lambda d: f"ftoi({d})"),
    )


def _double(depth: int):
    if depth == 0:
        return _DOUBLE_LEAVES
    return st.one_of(
        _DOUBLE_LEAVES,
        _integer(depth - 1).map(lambda i: f"itof({i})"),
        st.tuples(_double(depth - 1), st.sampled_from(["max", "min"]), _integer(depth - 1)).map(
            lambda t: f"{t[1]}({t[0]}, {t[2]})"
        ),
        _double(depth - 1).map(lambda d: f"abs({d})"),
        _string(depth - 1).map(lambda s: f"to_float(to_number({s}))"),
        st.tuples(_double(depth - 1), _double(depth - 1)).map(lambda t: f"({t[0]} ^ {t[1]})"),
    )


def _string(depth: int):
    if depth == 0:
        return _STRING_LEAVES
    smaller = _string(depth - 1)
    return st.one_of(
        _STRING_LEAVES,
        st.lists(smaller, min_size=1, max_size=3).map(lambda a: f"cat({', '.join(a)})"),
        _integer(depth - 1).map(lambda i: f"to_string({i})"),
        _double(depth - 1).map(lambda d: f"to_string({d})"),
        st.tuples(smaller, smaller).map(lambda t: f"({t[0]} + {t[1]})"),
        st.tuples(smaller, _integer(depth - 1), _integer(depth - 1)).map(
            lambda t: f"substr({t[0]}, {t[1]}, {t[2]})"
        ),
    )


_EXPRESSIONS = st.one_of(_integer(3), _double(2), _string(3))
_CONSTRAINTS = st.tuples(
    st.sampled_from(["match", "!match", "contains", "!contains"]), _string(2), _string(2)
)
_SMALL = st.integers(-70, 70)
_ROWS = st.sets(
    st.tuples(
        _SMALL,
        _SMALL,
        st.integers(-(2**31), 2**31 - 1),
        st.sampled_from([0.5, -0.0, NAN, INF, 2.5e18, -3.0]),
        st.sampled_from(["", "ab", "a1", "12", "-3", "x9y"]),
    ),
    max_size=4,
)


def _program(expressions: list, constraint) -> str:
    lines = [".decl a(x: long, y: long, i: int, d: double, s: symbol)", ".input a"]
    for k, expression in enumerate(expressions):
        lines.append(f"r{k}(X, V) :- a(X, Y, I, D, S), V = {expression}.")
    name, pattern, text = constraint
    lines.append(f"c(X) :- a(X, Y, I, D, S), {name}({pattern.replace('S', 'S')}, {text}).")
    return "\n".join(lines)


_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


@_SETTINGS
@given(expressions=st.lists(_EXPRESSIONS, min_size=1, max_size=3), constraint=_CONSTRAINTS, rows=_ROWS)
def test_random_expressions_agree_on_the_kernel(expressions, constraint, rows):
    assert_same(_program(expressions, constraint), {"a": rows})


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(expressions=st.lists(_EXPRESSIONS, min_size=4, max_size=6), constraint=_CONSTRAINTS, rows=_ROWS)
def test_random_expressions_agree_on_spark(spark, expressions, constraint, rows):
    _assert_spark_same(spark, _program(expressions, constraint), {"a": rows}, decompose=False)


def test_kernel_results_are_typed():
    program = sd.Program.parse(PROGRAM)
    assert program.relations["strs"].types == ("string", "string", "long", "string", "long")
    assert kernel_result(program, EDB)["lits"] == {(48,)}


UPDATED = """
.decl e(x: long, y: long)
.input e
lab(X, V) :- e(X, Y), V = cat(to_string(X), ":", to_string(Y bshl 2)), !match(".*:0", V).
r(X, Y) :- e(X, Y).
r(X, W) :- r(X, Y), e(Y, Z), W = max(Z, Y ^ 2) band 7.
"""


def test_update_maintains_functor_rules(spark, tmp_path):
    from spark_datalog.reference import evaluate as reference
    from spark_datalog.storage.warehouse import Warehouse

    program = sd.Program.parse(UPDATED)
    warehouse = Warehouse(spark, str(tmp_path / "wh"))
    edb = {(1, 2), (2, 3), (3, 0), (0, 5)}
    program.materialize(
        spark, inputs={"e": spark.createDataFrame(sorted(edb), "x long, y long")}, warehouse=warehouse
    )
    inserts, deletes = [(5, 1), (3, 6)], [(2, 3)]
    rows = [r + (1,) for r in inserts] + [r + (-1,) for r in deletes]
    change = spark.createDataFrame(rows, "x long, y long, _count long")
    report = program.update(spark, warehouse, changes={"e": change})
    assert {s.relations: s.method for s in report.strata} == {("lab",): "counting", ("r",): "dred"}
    expected = reference(program.checked, {"e": (edb | set(inserts)) - set(deletes)})
    for name in ("lab", "r"):
        assert {tuple(r) for r in warehouse.read(name).collect()} == expected[name], name
