"""Integer overflow without Spark: the reference and the kernel raise the same
ArithmeticOverflowError (naming the rule, at the expression's position); results at the bounds
stay exact; integer literals and CSV values out of their column's range are refused."""

from __future__ import annotations

import pytest

import spark_datalog as sd
from spark_datalog.cli import read_csv_facts
from spark_datalog.kernel.checks import collect_all
from spark_datalog.kernel.compile import compile_node
from spark_datalog.kernel.frames import facts_table
from spark_datalog.overflow import located

LONG_MAX, LONG_MIN = 2**63 - 1, -(2**63)
INT_MAX = 2**31 - 1

# (program, input rows of a(x, y), expected error position or None)
OVERFLOWS = [
    ("b(Z) :- a(X, Y), Z = X + Y.", "long", [(LONG_MAX, 1)], (3, 22)),
    ("b(Z) :- a(X, Y), Z = X - Y.", "long", [(LONG_MIN, 1)], (3, 22)),
    ("b(Z) :- a(X, Y), Z = X * Y.", "long", [(2**32, 2**31)], (3, 22)),
    ("b(Z) :- a(X, Y), Z = X / Y.", "long", [(LONG_MIN, -1)], (3, 22)),
    ("b(X * Y) :- a(X, Y).", "int", [(65536, 65536)], (3, 3)),
    ("b(X) :- a(X, Y), X + Y > 0.", "int", [(INT_MAX, 1)], (3, 18)),
    ("b(Z) :- a(X, Y), Z = (X + Y) - Y.", "long", [(LONG_MAX, 1)], (3, 23)),
]

# results at the bounds, which must stay exact
EXACT = [
    ("b(Z) :- a(X, Y), Z = X + Y.", "long", [(LONG_MAX - 1, 1), (LONG_MIN + 1, -1)]),
    ("b(Z) :- a(X, Y), Z = X mod Y.", "long", [(LONG_MIN, -1)]),
    ("b(Z) :- a(X, Y), Z = X / Y.", "long", [(LONG_MIN, 1), (LONG_MAX, -1)]),
    ("b(X * Y) :- a(X, Y).", "int", [(46340, 46340), (-65536, 32768)]),
    ("b(Z) :- a(X, Y), Z = X * Y.", "long", [(65536, 65536)]),  # int values in long: no int bound
]


def _program(rule: str, type_: str) -> sd.Program:
    return sd.Program.parse(f".decl a(x: {type_}, y: {type_})\n.input a\n{rule}\n")


def _reference(program, rows):
    return sd.reference.evaluate(program, {"a": set(rows)})


def _kernel(program, rows) -> set:
    """The rules' rows computed by the kernel (one non-recursive stratum)."""
    (plan,) = program.plans
    schema = program.checked.relations["a"]
    frames = {("a", "full"): facts_table(schema.column_names, schema.types, rows)}
    computed = collect_all([compile_node(rule_plan.plan, frames).frame for rule_plan in plan.rules])
    return {row for frame in computed for row in frame.rows()}


@pytest.mark.parametrize("rule, type_, rows, position", OVERFLOWS)
def test_the_reference_reports_an_overflow_at_the_expression(rule, type_, rows, position):
    program = _program(rule, type_)
    with pytest.raises(sd.ArithmeticOverflowError) as raised:
        _reference(program, rows)
    error = raised.value
    assert (error.line, error.column) == position
    assert f"does not fit {type_}" in error.message and rule in error.message
    assert "^" in str(error)  # the program line with a caret


@pytest.mark.parametrize("rule, type_, rows, position", OVERFLOWS)
def test_the_kernel_reports_the_same_overflow(rule, type_, rows, position):
    program = _program(rule, type_)
    with pytest.raises(sd.ArithmeticOverflowError) as expected:
        _reference(program, rows)
    with pytest.raises(ArithmeticError) as raised:
        _kernel(program, rows)
    assert str(located(raised.value, program.checked)) == str(expected.value)


@pytest.mark.parametrize("rule, type_, rows", EXACT)
def test_results_at_the_bounds_are_exact(rule, type_, rows):
    program = _program(rule, type_)
    expected = _reference(program, rows)["b"]
    assert _kernel(program, rows) == expected
    assert expected  # something was derived


def test_bound_results_are_the_true_values():
    program = _program("b(Z) :- a(X, Y), Z = X + Y.", "long")
    assert _reference(program, [(LONG_MAX - 1, 1), (LONG_MIN + 1, -1)])["b"] == {(LONG_MAX,), (LONG_MIN,)}
    literal = sd.Program.parse("p(-9223372036854775808).\nq(X) :- p(X), Y = X + 0, Y = X.")
    assert sd.reference.evaluate(literal, {})["q"] == {(LONG_MIN,)}


def test_an_integer_sum_beyond_long_is_an_overflow_of_the_relation():
    program = sd.Program.parse(".decl a(x: long, y: long)\n.input a\ns(X, sum<Y>) :- a(X, Y).")
    with pytest.raises(sd.ArithmeticOverflowError) as raised:
        sd.reference.evaluate(program, {"a": {(1, 2**62), (1, 2**62 + 1)}})
    assert (raised.value.line, raised.value.column) == (3, 6) and "'s'" in raised.value.message
    # exactly at the bound it is the sum
    result = sd.reference.evaluate(program, {"a": {(1, 2**62), (1, 2**62 - 1)}})
    assert result["s"] == {(1, LONG_MAX)}


@pytest.mark.parametrize(
    "text, position",
    [
        (".decl q(x: int)\nq(3000000000).", (2, 3)),
        (".decl a(x: int)\n.input a\nb(X) :- a(X), a(2147483648).", (3, 17)),
        (".decl b(x: int)\n.decl a(x: int)\n.input a\nb(-2147483649) :- a(_).", (4, 3)),
    ],
)
def test_integer_literals_out_of_the_column_range_are_schema_errors(text, position):
    with pytest.raises(sd.SchemaError) as raised:
        sd.Program.parse(text)
    assert (raised.value.line, raised.value.column) == position
    assert "out of the range of int" in raised.value.message


def test_integer_literals_at_the_bounds_are_accepted():
    program = sd.Program.parse(".decl q(x: int)\nq(2147483647). q(-2147483648).\np(X) :- q(X).")
    assert sd.reference.evaluate(program, {})["p"] == {(INT_MAX,), (-(2**31),)}


def test_reference_inputs_out_of_range_are_input_errors():
    program = _program("b(X) :- a(X, _).", "int")
    with pytest.raises(sd.InputError, match="out of the range of int"):
        sd.reference.evaluate(program, {"a": {(2**31, 1)}})


def test_csv_values_out_of_range_are_input_errors_with_their_line(tmp_path):
    program = _program("b(X) :- a(X, _).", "int")
    path = tmp_path / "a.csv"
    path.write_text("x,y\n1,2\n2147483648,3\n")
    with pytest.raises(sd.InputError, match=r"a\.csv:3: column x \(int\).*out of the range"):
        read_csv_facts(str(path), program.checked.relations["a"])
