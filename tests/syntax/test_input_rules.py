"""Rules and facts adding to an ``.input`` relation (Soufflé allows it): the input is read into
``<r>__input`` and ``r`` is derived from it; users keep naming ``r`` (syntax.input_rules)."""

from __future__ import annotations

import pytest

import spark_datalog as sd
from spark_datalog.syntax import parse

PROGRAM = """\
.decl r(x: number, y: number)
.input r(delimiter=",")
r(Y, X) :- r(X, Y).
r(0, 1).
"""


@pytest.mark.parametrize("dialect", ["datalog", "souffle"])
def test_the_input_is_read_into_an_edb_relation_and_r_derived_from_it(dialect):
    program = parse(PROGRAM, dialect=dialect)
    assert program.input_aliases == (("r", "r__input"),)
    assert [str(rule) for rule in program.rules] == ["r(Y, X) :- r(X, Y).", "r(X0, X1) :- r__input(X0, X1)."]
    assert [str(d) for d in program.directives] == [".input r__input(delimiter=',', filename='r.facts')"]
    assert [str(d) for d in program.declarations] == [
        ".decl r(x: long, y: long)",
        ".decl r__input(x: long, y: long)",
    ]
    assert [str(f) for f in program.facts] == ["r(0, 1)."]  # the program's facts stay r's
    assert program.rules[1].head.span.line == 2  # at the .input directive


def test_an_input_relation_without_rules_is_not_changed():
    program = parse(".decl r(x: number)\n.input r\nr(1).\nq(X) :- r(X).")
    assert program.input_aliases == () and program.inputs == ("r",)


def test_a_name_already_taken_is_not_reused():
    program = parse(".input r\nr(X) :- s(X).\ns(X) :- r__input(X).\n.input r__input")
    assert program.input_aliases == (("r", "r__input2"),)


def test_an_undeclared_input_relation_takes_its_arity_from_its_rules():
    program = parse(".input e\ne(X, Y) :- f(X, Y).\n.input f")
    assert str(program.rules[-1]) == "e(X0, X1) :- e__input(X0, X1)."


def test_every_evaluator_takes_the_input_by_the_relation_s_name():
    program = sd.Program.parse(PROGRAM)
    edb = {"r": {(1, 2), (2, 3)}}
    expected = {(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2)}  # the input, the fact, reversed
    assert sd.reference.evaluate(program, edb)["r"] == expected
    assert sd.reference.answer(program, "r(X, 1)", edb) == {(0,), (2,)}
    assert program.checked.input_relation("r") == "r__input"
    assert program.checked.bound_inputs({"r": 1, "s": 2}) == {"r__input": 1, "s": 2}


def test_an_eqrel_input_relation_is_closed_over_its_input():
    program = sd.Program.parse(
        '.decl same(x: symbol, y: symbol) eqrel\n.input same\nsame("c", "d").', dialect="souffle"
    )
    found = sd.reference.evaluate(program, {"same": {("a", "b")}})["same"]
    assert found == {(x, y) for group in ("ab", "cd") for x in group for y in group}
