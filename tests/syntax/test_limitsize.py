"""``.limitsize r(n=N)``: what the parser and analysis accept, and their errors (class, line,
column); the meaning itself runs on every engine in ``tests/dialect/limitsize``."""

from __future__ import annotations

import pytest
from tests.syntax.test_parse_errors import assert_error, caret_column

import spark_datalog as sd
from spark_datalog.errors import ParseError, SchemaError
from spark_datalog.syntax import parse

RULES = "e(1, 2).\nr(X) :- e(X, _).\ns(Y) :- e(_, Y).\n"


def test_one_directive_limits_each_relation_it_names():
    program = parse(RULES + ".limitsize r, s(n=3)\n.limitsize e2(n=0)\ne2(X, Y) :- e(X, Y).")
    assert program.limits == {"r": 3, "s": 3, "e2": 0}
    assert sd.Program.parse(RULES + ".limitsize r(n=1)").checked.limits == {"r": 1}


def test_a_limited_input_is_derived_from_its_input():
    program = parse(".decl r(x: number)\n.input r\n.limitsize r(n=2)", dialect="souffle")
    assert program.input_aliases == (("r", "r__input"),)
    assert [str(rule) for rule in program.rules] == ["r(X0) :- r__input(X0)."]


@pytest.mark.parametrize(
    "text, line, column, fragment",
    [
        (".limitsize r(n=x)", 4, 14, "n must be a non-negative integer, not 'x'"),
        (".limitsize r(n=1.5)", 4, 14, "not '1.5'"),
        (".limitsize r(m=2)", 4, 14, "takes only n=N, not 'm'"),
        (".limitsize r(n=2, n=3)", 4, 19, "n is given twice"),
        (".limitsize r", 4, 1, "needs the limit"),
        (".limitsize r()", 4, 1, "needs the limit"),
        (".limitsize r(n=2)\n.limitsize s, r(n=3)", 5, 15, "relation 'r' is limited twice (first at line 4)"),
    ],
)
def test_bad_limits_are_parse_errors_at_the_parameter(text, line, column, fragment):
    assert_error(RULES + text, line, column, fragment)


@pytest.mark.parametrize(
    "text, line, column, fragment",
    [
        ("e(2, 3).\n.limitsize e(n=1)", 2, 1, ".limitsize e is not supported: it has no rules"),
        ("m(X, min<Y>) :- e(X, Y).\n.limitsize m(n=1)", 2, 1, "it has a min aggregate"),
        ("n(sum<Y>) :- e(_, Y).\n.limitsize n(n=1)", 2, 1, "it has a sum aggregate"),
        (
            ".decl c(x: number, y: number) choice-domain x\nc(X, Y) :- e(X, Y).\n.limitsize c(n=1)",
            3,
            1,
            "it has a choice-domain",
        ),
        (
            "p(1, 2).\np(X, Y) :- p(Y, X).\np(A, B) <= p(C, D) :- C < A, D < B.\n.limitsize p(n=1)",
            4,
            1,
            "a subsumption removes its facts in each round",
        ),
    ],
)
def test_a_relation_a_limit_cannot_bound_is_refused_at_the_directive(text, line, column, fragment):
    with pytest.raises(ParseError) as info:
        sd.Program.parse("e(1, 2).\n" + text, dialect="souffle")
    error = info.value
    assert (error.line, error.column) == (line + 1, column), str(error)
    assert fragment in str(error)
    assert caret_column(error) == column


def test_an_unknown_relation_is_a_schema_error_at_the_directive():
    with pytest.raises(SchemaError) as info:
        sd.Program.parse(RULES + ".limitsize t(n=2)")
    assert (info.value.line, info.value.column) == (4, 1)
    assert "relation 't' named by .limitsize is never used" in str(info.value)


@pytest.mark.parametrize("bound, outcome", [(5, "full"), (3, "NonTerminationError")])
def test_a_limit_reached_in_the_last_allowed_round_ends_the_stratum_on_every_engine(bound, outcome):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kernel"))
    from harness import kernel_result, reference_result

    program = sd.Program.parse("nat(0).\nnat(X + 1) :- nat(X).\n.limitsize nat(n=5)")
    for run in (reference_result, kernel_result):
        if outcome == "full":  # nat(0) is the first round's, nat(4) the fifth's
            assert run(program, {}, max_iterations=bound)["nat"] == {(i,) for i in range(5)}
        else:
            with pytest.raises(sd.NonTerminationError):
                run(program, {}, max_iterations=bound)
