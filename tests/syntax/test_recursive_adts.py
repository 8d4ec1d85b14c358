"""Soufflé's recursive algebraic data types and mutually recursive record types: their type names
(spark_datalog.recursive_records), the encoding of their values, lowering (a branch pattern is
"tag field == index" plus field reads), errors (class, line, column) and results on the
reference interpreter and the kernel, worked out by hand."""

from __future__ import annotations

import pytest

import spark_datalog as sd
from spark_datalog.errors import ParseError, SchemaError
from spark_datalog.record_text import parse_record
from spark_datalog.recursive_records import (
    decode,
    encode,
    read_field,
    recursive_branches,
    recursive_fields,
    text_of,
)
from spark_datalog.souffle_io import FileFormat, format_value
from spark_datalog.syntax import parse

EXPR = "@Expr|Add[l: @Expr, r: @Expr]|Neg[e: @Expr]|Nil[]|Num[n: long]"
TYPES = (
    ".type Expr = Num {n: number} | Add {l: Expr, r: Expr} | Neg {e: Expr} | Nil {}\n"
    ".type A = [x: number, b: B]\n.type B = [y: symbol, a: A]\n"
)
DECLS = ".decl e(x: Expr)\n.decl o(x: number)\n.decl s(x: symbol)\n.decl a(x: A)\n"


def lowered(rule: str) -> str:
    return str(sd.Program.parse(TYPES + DECLS + rule, dialect="souffle").ast.rules[-1])


def test_a_recursive_adt_names_its_branches_in_its_type():
    program = parse(TYPES + DECLS)
    assert program.declarations[0].columns[0].type == EXPR
    assert recursive_branches(EXPR) == (
        ("Add", (("l", EXPR), ("r", EXPR))),
        ("Neg", (("e", EXPR),)),
        ("Nil", ()),
        ("Num", (("n", "long"),)),
    )
    assert recursive_fields(EXPR) is None


def test_a_recursive_group_names_each_member_with_the_others():
    program = parse(TYPES + DECLS + ".type C = [a: A, c: C]\n.decl c(x: C)\n")
    a = "@A[x: long, b: @B]@B[y: string, a: @A]"
    b = "@B[y: string, a: @A]@A[x: long, b: @B]"
    assert program.declarations[3].columns[0].type == a
    assert recursive_fields(a) == (("x", "long"), ("b", b))
    assert recursive_fields(b) == (("y", "string"), ("a", a))
    c = program.declarations[4].columns[0].type
    assert c == f"@C[a: {a}, c: @C]" and recursive_fields(c) == (("a", a), ("c", c))


def test_an_adt_and_a_list_of_it_are_one_group():
    program = parse(".type L = [h: E, t: L]\n.type E = K {} | Lst {l: L}\n.decl l(x: L)\n.decl e(x: E)")
    assert [d.columns[0].type for d in program.declarations] == [
        "@L[h: @E, t: @L]@E|K[]|Lst[l: @L]",
        "@E|K[]|Lst[l: @L]@L[h: @E, t: @L]",
    ]


@pytest.mark.parametrize(
    "text, values",
    [
        ("$Nil", (2,)),
        ("$Num(-3)", (3, -3)),
        ("$Neg($Num(2))", (1, encode((3, 2), EXPR))),
        ("$Add($Nil, $Neg($Nil))", (0, encode((2,), EXPR), encode((1, encode((2,), EXPR)), EXPR))),
    ],
)
def test_the_encoding_of_an_adt_value_is_its_branch_index_and_fields(text, values):
    encoded = encode(values, EXPR)
    assert decode(encoded, EXPR) == values
    assert text_of(encoded, EXPR) == format_value(encoded, EXPR, FileFormat()) == text
    assert parse_record(text, EXPR) == encoded


def test_fact_file_texts_of_adt_values_are_read_as_souffle_reads_them():
    assert parse_record(" $Nil()", EXPR) == parse_record("$Nil ( )", EXPR) == "1:2"
    assert parse_record("$Neg( $Num( 4 ) )", EXPR) == encode((1, "1:31:4"), EXPR)
    for bad in ("$Num", "$Nil(1)", "$Add($Nil)", "$Other", "$Num(x)", "[1, nil]", "nil"):
        assert parse_record(bad, EXPR) is None, bad
    mutual = "@A[x: long, b: @B]@B[y: string, a: @A]"
    assert text_of(parse_record('[1, ["a, b", [2, nil]]]', mutual), mutual) == "[1, [a, b, [2, nil]]]"


def test_reading_a_field_of_another_branch_is_undefined():
    neg = encode((1, encode((2,), EXPR)), EXPR)
    assert read_field(neg, 0, "long") == 1
    assert read_field(encode((2,), EXPR), 1, "long") is None
    assert read_field(neg, 2, "long") is None


@pytest.mark.parametrize(
    "rule, expected",
    [
        ("e(L) :- e($Add(L, _)).", "e(L) :- e(_record1_), (_record1_).$ = 0, L = (_record1_).l."),
        ("o(N) :- e($Neg($Num(N))).", None),
        ("e($Neg(X)) :- e(X), X != $Nil.", "e($Neg(X)) :- e(X), X != $Nil."),
        ("e(X) :- e(X), X = $Neg(_).", "e(X) :- e(X), (X).$ = 1."),
        ("o(1) :- e(X), !e($Neg(X)).", "o(1) :- e(X), not e($Neg(X))."),
    ],
)
def test_branch_patterns_are_a_tag_test_and_field_reads(rule, expected):
    if expected is None:
        expected = (
            "o(N) :- e(_record1_), (_record1_).$ = 1, _record2_ = (_record1_).e, (_record2_).$ = 3, "
            "N = (_record2_).n."
        )
    assert lowered(rule) == expected


PROGRAM = TYPES + (
    ".decl e(x: Expr)\ne($Add($Num(1), $Neg($Num(2)))).\ne($Nil).\ne($Nil()).\n"
    ".decl sub(x: Expr)\nsub(X) :- e(X).\nsub(L) :- sub($Add(L, _)).\nsub(R) :- sub($Add(_, R)).\n"
    "sub(E) :- sub($Neg(E)).\n"
    ".decl val(x: Expr, v: number)\nval($Num(N), N) :- sub($Num(N)).\n"
    "val(X, A + B) :- sub(X), X = $Add(L, R), val(L, A), val(R, B).\n"
    "val(X, -A) :- sub(X), X = $Neg(E), val(E, A).\n"
    ".decl notleft(x: Expr)\nnotleft(X) :- sub(X), !sub($Add(X, _)), X != $Nil.\n"
    ".decl neg(x: Expr)\nneg($Neg(X)) :- sub(X), !sub($Neg(X)).\n"
    '.decl a(x: A)\na([1, ["p", [2, nil]]]).\na(X) :- a([_, [_, X]]), X != nil.\n'
    ".decl ys(y: symbol, x: number)\nys(Y, X) :- a([X, [Y, _]]).\n"
    ".output sub, val, notleft, neg, a, ys\n"
)
EXPECTED = {
    "sub": {"$Add($Num(1), $Neg($Num(2)))", "$Neg($Num(2))", "$Nil", "$Num(1)", "$Num(2)"},
    "val": {
        ("$Add($Num(1), $Neg($Num(2)))", "-1"),
        ("$Neg($Num(2))", "-2"),
        ("$Num(1)", "1"),
        ("$Num(2)", "2"),
    },
    "notleft": {"$Add($Num(1), $Neg($Num(2)))", "$Neg($Num(2))", "$Num(2)"},
    "neg": {"$Neg($Add($Num(1), $Neg($Num(2))))", "$Neg($Neg($Num(2)))", "$Neg($Nil)", "$Neg($Num(1))"},
    "a": {"[1, [p, [2, nil]]]", "[2, nil]"},
    "ys": {("p", "1")},
}


def texts(program, result: dict, names) -> dict:
    """Each relation's rows as Soufflé writes them (one-column rows as their text)."""
    out = {}
    for name in names:
        types = program.relations[name].types
        rows = {
            tuple(format_value(v, t, FileFormat()) for v, t in zip(row, types, strict=True))
            for row in result[name]
        }
        out[name] = {row[0] if len(row) == 1 else row for row in rows}
    return out


def test_recursive_adts_and_mutual_records_evaluate_on_the_reference_and_the_kernel():
    from kernel.harness import kernel_result

    program = sd.Program.parse(PROGRAM, dialect="souffle")
    assert texts(program, sd.reference.evaluate(program, {}), EXPECTED) == EXPECTED
    assert texts(program, kernel_result(program, {}), EXPECTED) == EXPECTED


HEAD = TYPES + DECLS


@pytest.mark.parametrize(
    "text, kind, line, column, fragment",
    [
        (
            HEAD + "e(nil).",
            ParseError,
            8,
            3,
            "nil needs a record type, but column 1 of 'e' is Expr",
        ),
        (HEAD + "e([1]).", ParseError, 8, 3, "record term [1] needs a record type, but column 1 of 'e' is"),
        (
            HEAD + "e($Num(1, 2)).",
            ParseError,
            8,
            3,
            "$Num(1, 2) has 2 fields, but branch 'Num' of Expr has 1",
        ),
        (HEAD + 'e($Num("a")).', ParseError, 8, 8, "field 'n' of Expr cannot hold \"a\" (string)"),
        (HEAD + "o(1) :- e($Foo(1)).", ParseError, 8, 11, "unknown branch '$Foo'"),
        (HEAD + "o(1) :- e([X, Y]).", ParseError, 8, 11, "record term [X, Y] needs a record type, but"),
        (HEAD + "a([1, [2, nil]]).", ParseError, 8, 8, "field 'y' of B cannot hold 2 (long)"),
        (HEAD + "o(1) :- e(X), e(Y), X < Y.", SchemaError, 8, 21, "records can only be compared with ="),
        (HEAD + "e($Num(X)) :- s(X).", SchemaError, 8, 17, "long (field of $Num(X) at 8:3) vs string"),
        (HEAD + "s(X) :- e(X).", SchemaError, 8, 3, "has type symbol but is given X of type Expr"),
        # what stays unsupported
        (".type A = [b: B]\n.type B = A", ParseError, 1, 7, "through a type that is no record type or ADT"),
    ],
)
def test_recursive_adt_errors(text, kind, line, column, fragment):
    with pytest.raises(kind) as info:
        sd.Program.parse(text, dialect="souffle")
    assert fragment in str(info.value) and (info.value.line, info.value.column) == (line, column)


def test_the_cli_prints_adt_values_as_souffle_writes_them(tmp_path, capsys):
    from spark_datalog.cli import main

    path = tmp_path / "e.dl"
    path.write_text(TYPES + ".decl e(x: Expr)\ne($Neg($Num(2))).\ne(X) :- e($Neg(X)).\n.output e\n")
    assert main(["run", str(path), "--dialect", "souffle", "--engine", "reference", "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sorted(lines[lines.index("e: 2 facts") + 1 :][:2]) == ["  e($Neg($Num(2)))", "  e($Num(2))"]


def test_an_adt_with_fields_of_recursive_types_holds_nil_in_the_other_branches():
    from kernel.harness import kernel_result

    text = TYPES + (
        ".type L = [h: number, t: L]\n.type S = A {l: L} | B {n: number} | C {e: Expr}\n.decl s(x: S)\n"
        "s($B(1)).\ns($A([1, nil])).\ns($C($Neg($Num(2)))).\n.decl t(x: S)\nt($B(N + 1)) :- s($B(N)).\n"
        "t($C(X)) :- s($C($Neg(X))).\nt($A(T)) :- s($A([_, T])).\n.output t\n"
    )
    program = sd.Program.parse(text, dialect="souffle")
    s_type = program.relations["t"].types[0]
    assert s_type.startswith("[$S|A|B|C: long, A: [l: @L[h: long, t: @L]], B: [n: long], C: [e: @Expr|")
    expected = {"$A(nil)", "$B(2)", "$C($Num(2))"}
    for result in (sd.reference.evaluate(program, {}), kernel_result(program, {})):
        assert {format_value(row[0], s_type, FileFormat()) for row in result["t"]} == expected
    assert parse_record("$B(3)", s_type) == (1, ("nil",), (3,), ("nil",))


NESTED = (
    ".type P = [x: number, s: symbol]\n.type Sh = Circle {r: number} | Dot {} | Lbl {p: P}\n"
    ".type L = [p: P, sh: Sh, t: L]\n.type E = Leaf {p: P} | Node {l: E, s: Sh}\n"
    '.decl l(x: L)\nl([[1, "a"], $Circle(3), [[2, "b"], $Lbl([5, "q"]), nil]]).\n'
)
NESTED_RULES = (
    ".decl sub(x: L)\nsub(X) :- l(X).\nsub(T) :- sub([_, _, T]), T != nil.\n"
    ".decl xs(x: number, s: symbol)\nxs(X, S) :- sub([[X, S], _, _]).\n"
    ".decl ps(p: P)\nps(P) :- sub([_, $Lbl(P), _]).\nps(P) :- sub([P, $Circle(_), _]).\n"
    ".decl e(x: E)\ne($Leaf(P)) :- ps(P).\ne($Node(X, $Dot)) :- e(X), X = $Leaf([N, _]), N < 3.\n"
    ".decl back(x: number)\nback(N) :- e($Node($Leaf([N, _]), $Dot())).\n"
    ".output sub, xs, ps, e, back\n"
)


def test_record_and_adt_fields_of_recursive_types_are_nested_texts():
    from kernel.harness import kernel_result

    program = sd.Program.parse(NESTED + NESTED_RULES, dialect="souffle")
    l_type = program.relations["l"].types[0]
    assert l_type.startswith("@L[p: [x: long, s: string], sh: [$Sh|Circle|Dot|Lbl: long, ")
    second = encode(((2, "b"), (2, (0,), ((5, "q"),)), "nil"), l_type)
    assert decode(second, l_type) == ((2, "b"), (2, (0,), ((5, "q"),)), "nil")
    assert (
        text_of(second, l_type) == "[[2, b], $Lbl([5, q]), nil]" == format_value(second, l_type, FileFormat())
    )
    assert parse_record("[ [2, b], $Lbl([5, q]), nil]", l_type) == second
    expected = {
        "sub": {"[[1, a], $Circle(3), [[2, b], $Lbl([5, q]), nil]]", "[[2, b], $Lbl([5, q]), nil]"},
        "xs": {("1", "a"), ("2", "b")},
        "ps": {"[5, q]", "[1, a]"},
        "e": {"$Leaf([5, q])", "$Leaf([1, a])", "$Node($Leaf([1, a]), $Dot)"},
        "back": {"1"},
    }
    for result in (sd.reference.evaluate(program, {}), kernel_result(program, {})):
        assert texts(program, result, expected) == expected


@pytest.mark.parametrize(
    "rule, column, fragment",
    [
        (".decl o(x: number)\nl([X, $Dot, nil]) :- o(X).", 24, "type conflict for variable X"),
        ('l([[1, "a"], [1], nil]).', 14, "record term [1] needs a record type, but field 'sh' is Sh"),
    ],
)
def test_nested_field_errors(rule, column, fragment):
    with pytest.raises((ParseError, SchemaError)) as info:
        sd.Program.parse(NESTED + rule, dialect="souffle")
    assert fragment in str(info.value) and info.value.column == column


def test_a_pattern_of_one_branch_never_matches_a_value_of_another():
    from kernel.harness import kernel_result

    text = (
        ".type P = [x: number, s: symbol]\n.type Q = [s: symbol, x: number]\n"
        ".type E = A {p: P} | B {q: Q} | W {e: E}\n.decl e(x: E)\n"
        'e($B(["zz", 1])).\ne($A([2, "y"])).\ne($W($B(["k", 3]))).\ne($W($A([4, "k"]))).\n'
        ".decl xs(x: number)\nxs(X) :- e($A([X, _])).\nxs(X) :- e($W($A([X, _]))).\n"
        "xs(X) :- e(E), E = $B([_, X]).\n.output xs\n"
    )
    program = sd.Program.parse(text, dialect="souffle")
    assert sd.reference.evaluate(program, {})["xs"] == kernel_result(program, {})["xs"] == {(1,), (2,), (4,)}
