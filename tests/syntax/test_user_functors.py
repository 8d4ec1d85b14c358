"""Soufflé's user-defined functors (``.functor``, ``@f(...)``): what they parse to, their errors
(class, line, column), their bindings, and their evaluation on the reference and the kernel."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tests.syntax.test_parse_errors import assert_error

import spark_datalog as sd
from hypothesis import given
from programs import settings
from spark_datalog.record_types import Record
from spark_datalog.recursive_records import text_of
from spark_datalog.syntax import parse
from user_functor_cases import user_functor_cases

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kernel"))
from harness import assert_same, kernel_result, reference_result  # noqa: E402

DECLARED = ".type Node <: number\n.functor f(x: Node, s: symbol): float\n"


def test_a_declaration_resolves_its_types_and_calls_get_its_entry():
    program = parse(DECLARED + 'p(V) :- q(X, S), V = @f(X + 1, cat(S, "a")).\n.decl q(x: Node, s: symbol)')
    (declared,) = program.functors
    assert [p.type for p in declared.params] == ["long", "string"] and declared.result == "double"
    assert str(declared) == ".functor f(x: long, s: string): double"
    call = program.rules[0].body[-1].right
    assert call.name == "@f" and call.functor is declared.functor
    assert (call.functor.least, call.functor.operands, call.functor.result) == (
        1 + 1,
        ("integer", "string"),
        "double",
    )
    assert str(program.rules[0]) == 'p(V) :- q(X, S), V = @f((X + 1), cat(S, "a")).'
    assert str(parse(DECLARED + str(program.rules[0])).rules[0]) == str(program.rules[0])  # prints back


def test_stateful_and_parameterless_declarations_parse_and_print_back():
    program = parse('.functor f(): number\n.functor g(s: symbol): symbol stateful\np(@f(), @g("a")).')
    assert [str(f) for f in program.functors] == [
        ".functor f(): long",
        ".functor g(s: string): string stateful",
    ]
    assert [f.stateful for f in program.functors] == [False, True]
    assert program.functors[0].functor.least == program.functors[0].functor.most == 0


def test_parameters_may_be_unnamed_and_types_are_checked():
    program = sd.Program.parse(
        '.functor g(number, symbol): symbol\n.decl q(x: number)\np(S) :- q(X), S = @g(X, "a").'
    )
    assert program.relations["p"].types == ("string",)
    assert program.ast.functors[0].params[1].type == "string"


@pytest.mark.parametrize(
    "text, line, column, fragment",
    [
        ("q(1).\np(Y) :- q(X), Y = @g(X).", 2, 19, "functor '@g' is not declared"),
        (
            ".functor g(x: number): number\nq(1).\np(Y) :- q(X), Y = @g(X, X).",
            3,
            19,
            "takes 1 argument, given 2",
        ),
        (".type L = [h: number, t: L]\n.functor g(x: L): number", 2, 15, "only a stateful functor may"),
        (".type P = [a: number]\n.functor g(x: number): P", 2, 10, "only a stateful functor may"),
        (".functor g(x: Nope): number", 1, 15, "unknown type 'Nope'"),
        (".functor g(x: number): Nope", 1, 24, "unknown type 'Nope'"),
        (".functor g(x: number): number\n.functor g(y: symbol): number", 2, 10, "declared twice"),
    ],
)
def test_errors(text, line, column, fragment):
    assert_error(text, line, column, fragment)


@pytest.mark.parametrize(
    "body, line, column, fragment",
    [
        ('Y = @inc("a")', 3, 24, "type conflict"),
        ("Y = @inc(D)", 3, 24, "must be an integer"),
        ('Y = @inc(1), Y = "b"', 3, 28, "type conflict"),
    ],
)
def test_argument_and_result_types_follow_the_declaration(body, line, column, fragment):
    text = f".functor inc(x: number): number\n.decl q(d: float)\np(Y) :- q(D), {body}."
    with pytest.raises(sd.SchemaError) as info:
        sd.Program.parse(text)
    assert (info.value.line, info.value.column) == (line, column), str(info.value)
    assert fragment in info.value.message


TEXT = """.functor inc(x: number): number
.decl e(x: number)
e(1). e(2). e(0).
q(Y) :- e(X), X != 0, Y = @inc(X).
"""


def test_bindings_by_keyword_and_by_method():
    assert sd.reference.evaluate(sd.Program.parse(TEXT, functors={"inc": lambda x: x + 1}), {})["q"] == {
        (2,),
        (3,),
    }
    program = sd.Program.parse(TEXT).functor("inc", lambda x: None if x == 1 else 10 * x)
    assert sd.reference.evaluate(program, {})["q"] == {(20,)}  # None: undefined, the literal fails
    assert kernel_result(program, {})["q"] == {(20,)}
    with pytest.raises(sd.FunctorError, match="declares no functor 'dec'"):
        program.functor("dec", abs)


def test_a_vectorized_function_gets_series():
    program = sd.Program.parse(TEXT).functor("inc", lambda s: s * 3 + s.index.size * 0, vectorized=True)
    assert reference_result(program, {})["q"] == kernel_result(program, {})["q"] == {(3,), (6,)}
    program = sd.Program.parse(TEXT, functors={"inc": sd.vectorized(lambda s: list(s + 1))})
    assert reference_result(program, {})["q"] == kernel_result(program, {})["q"] == {(2,), (3,)}


@pytest.mark.parametrize("engine", [reference_result, kernel_result], ids=["reference", "kernel"])
def test_an_unbound_functor_is_an_error_at_its_declaration(engine):
    with pytest.raises(sd.FunctorError) as info:
        engine(sd.Program.parse(TEXT), {})
    assert (info.value.line, info.value.column) == (1, 10)
    assert "functor @inc is declared but bound to no function" in str(info.value)
    assert "   1 | .functor inc" in str(info.value)
    with pytest.raises(sd.FunctorError) as info:
        sd.Program.parse(TEXT).require_functors()
    assert info.value.line == 1


@pytest.mark.parametrize("engine", [reference_result, kernel_result], ids=["reference", "kernel"])
@pytest.mark.parametrize(
    "function, fragment",
    [
        (
            lambda x: 12 // (x - 1),
            "functor @inc raised ZeroDivisionError: integer division or modulo by zero",
        ),
        (lambda x: "one", "functor @inc raised TypeError: returned 'one', not an integer"),
    ],
    ids=["raises", "wrong-type"],
)
def test_a_failing_function_is_a_functor_error(engine, function, fragment):
    with pytest.raises(sd.FunctorError) as info:
        engine(sd.Program.parse(TEXT, functors={"inc": function}), {})
    assert fragment in info.value.message and info.value.line == 1


@settings(default=60)
@given(case=user_functor_cases())
def test_random_user_functors_on_the_kernel_equal_the_reference(case):
    text, edb, functors = case
    assert_same(text, edb, functors=functors)


RECORDS = """.type P = [x: number, y: symbol]
.type S = Dot {} | Box {p: P}
.functor f(p: P): S stateful
.decl e(p: P)
e([1, "a"]).
q(S) :- e(P), S = @f(P).
"""


@pytest.mark.parametrize("engine", [reference_result, kernel_result], ids=["reference", "kernel"])
@pytest.mark.parametrize(
    "function, fragment",
    [
        (lambda p: p, "returned Record((1, 'a')), not a branch of S"),
        (lambda p: ("Box", (1,)), "returned (1,), not the 2 field values of [x: long, y: string]"),
        (lambda p: ("Box", (1, 2)), "returned a field 2, not a string value"),
        (lambda p: ("Dot", p), "branch Dot has no fields"),
    ],
    ids=["record-for-adt", "arity", "field-type", "fields-of-an-empty-branch"],
)
def test_a_record_or_adt_value_of_the_wrong_shape_is_a_functor_error(engine, function, fragment):
    with pytest.raises(sd.FunctorError) as info:
        engine(sd.Program.parse(RECORDS, functors={"f": function}), {})
    assert fragment in info.value.message and info.value.line == 3


@pytest.mark.parametrize("engine", [reference_result, kernel_result], ids=["reference", "kernel"])
def test_a_record_is_given_as_a_record_and_an_adt_as_its_branch_and_fields(engine):
    seen = []
    program = sd.Program.parse(RECORDS, functors={"f": lambda p: seen.append(p) or ("Box", p)})
    # Box (index 0 by name) holds [1, "a"]; Dot (index 1) has no struct
    assert engine(program, {})["q"] == {((0, ((1, "a"),)),)}
    assert seen == [(1, "a")] and all(isinstance(p, Record) for p in seen)


LISTS = """
.type L = [h: number, t: L]
.type A = [a: number]
.type W = [name: symbol, l: L, p: A]
.type E = Lit {n: number} | Pair {l: E, r: E}
.functor f(l: L): W stateful
.functor g(w: W): E stateful
.decl e(l: L)
e([1, [2, nil]]). e(nil).
q(W) :- e(L), W = @f(L).
r(E) :- q(W), E = @g(W).
"""


@pytest.mark.parametrize("engine", [reference_result, kernel_result], ids=["reference", "kernel"])
def test_recursive_values_are_given_nested_with_nil_as_none_and_taken_back(engine):
    seen: list = []

    def f(items):
        seen.append(items)
        return ("w", items, None if items is None else (items[0],))  # None: a record field's nil

    def g(w):
        items, out = w[1], ("Lit", 0)
        while items is not None:
            out = ("Pair", ("Lit", items[0]), out)
            items = items[1]
        return out

    program = sd.Program.parse(LISTS, dialect="souffle", functors={"f": f, "g": g})
    result = engine(program, {})
    assert sorted(seen, key=repr) == [None, (1, (2, None))]
    assert all(isinstance(v, Record) for v in seen if v is not None)
    list_type, expr_type = program.relations["e"].types[0], program.relations["r"].types[0]
    assert {(w[0][0], text_of(w[0][1], list_type), w[0][2][0]) for w in result["q"]} == {
        ("w", "[1, [2, nil]]", 1),
        ("w", "nil", None),  # the nil of the record type A: its field is null
    }
    assert {text_of(e, expr_type) for (e,) in result["r"]} == {
        "$Lit(0)",
        "$Pair($Lit(2), $Pair($Lit(1), $Lit(0)))",
    }


@pytest.mark.parametrize(
    "function, fragment",
    [
        (lambda items: ("w", (1, 2, 3), None), "returned (1, 2, 3), not the 2 field values of"),
        (lambda items: ("w", ("x", None), None), "returned a field 'x', not a long value"),
    ],
    ids=["arity", "field-type"],
)
def test_a_recursive_value_of_the_wrong_shape_is_a_functor_error(function, fragment):
    program = sd.Program.parse(LISTS, dialect="souffle", functors={"f": function, "g": lambda w: ("Lit", 1)})
    with pytest.raises(sd.FunctorError) as info:
        reference_result(program, {})
    assert fragment in info.value.message and info.value.line == 6


@pytest.mark.parametrize("engine", [reference_result, kernel_result], ids=["reference", "kernel"])
def test_a_spark_sql_function_runs_its_python_twin_off_spark_and_is_refused_without_one(engine):
    twin = sd.spark_function("abs", python=lambda x: 10 * x)
    assert engine(sd.Program.parse(TEXT, functors={"inc": twin}), {})["q"] == {(10,), (20,)}
    with pytest.raises(sd.FunctorError) as info:
        engine(sd.Program.parse(TEXT, functors={"inc": sd.spark_function("abs")}), {})
    assert (info.value.line, info.value.column) == (1, 10)
    assert "functor @inc is bound to the Spark SQL function 'abs', which only the Spark engine runs" in str(
        info.value
    )
    assert "   1 | .functor inc" in str(info.value)


def test_a_spark_sql_binding_is_bound_and_a_python_one_replaces_it():
    program = sd.Program.parse(TEXT, functors={"inc": sd.spark_function("abs")})
    program.require_functors()  # bound: no Spark session to ask whether it knows "abs"
    (binding,) = [d.functor.binding for d in program.ast.functors]
    assert (binding.spark_name, binding.function) == ("abs", None)
    program.functor("inc", lambda x: x + 1)
    assert binding.spark_name is None and reference_result(program, {})["q"] == {(2,), (3,)}


def test_a_spark_sql_binding_needs_a_name_primitive_types_and_a_callable_twin():
    for name in ("", "  ", None):
        with pytest.raises(TypeError, match="is not a function name"):
            sd.spark_function(name)
    with pytest.raises(TypeError, match="python=3 is not callable"):
        sd.spark_function("abs", python=3)
    text = ".type P = [x: number, y: number]\n.functor swap(p: P): P stateful\n.decl q(p: P)\n"
    with pytest.raises(sd.FunctorError) as info:
        sd.Program.parse(text).functor("swap", sd.spark_function("reverse"))
    assert "takes or returns a record or ADT" in info.value.message and info.value.line == 2


def test_spark_references_bind_spark_sql_functions():
    from spark_datalog.job import bind_functors
    from spark_datalog.user_functors import SparkFunction, load_binding

    assert load_binding("spark:db.my_fn") == SparkFunction("db.my_fn")
    with pytest.raises(ValueError, match="is not a function name"):
        load_binding("spark:")
    program = sd.Program.parse(TEXT)
    bind_functors(program, {"inc": "spark:abs"})
    assert [d.functor.binding.spark_name for d in program.ast.functors] == ["abs"]
