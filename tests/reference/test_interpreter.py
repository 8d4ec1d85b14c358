"""The reference interpreter's API and the corners of its semantics."""

from __future__ import annotations

import time

import pytest

import spark_datalog as sd
from spark_datalog.reference import evaluate


def run(text, edb=None, **kwargs):
    return evaluate(sd.Program.parse(text), edb, **kwargs)


# -- API ----------------------------------------------------------------------------------------


def test_accepts_a_program_or_a_checked_program_and_nothing_else():
    program = sd.Program.parse("q(X) :- a(X). .input a")
    assert evaluate(program, {"a": {(1,)}}) == evaluate(program.checked, {"a": {(1,)}}) == {"q": {(1,)}}
    with pytest.raises(TypeError):
        evaluate("q(X) :- a(X).")


def test_unknown_strategy():
    with pytest.raises(ValueError, match="strategy"):
        run("q(X) :- a(X). .input a", strategy="magic")


def test_returns_every_idb_relation_and_only_those():
    result = run("q(X) :- a(X). r(X) :- a(X), X > 10. s(X) :- b(X). .input a, b", {"a": {(1,), (2,)}})
    assert result == {"q": {(1,), (2,)}, "r": set(), "s": set()}


def test_inputs_are_unioned_with_facts_and_left_untouched():
    edb = {"a": {(2,)}}
    assert run("a(1). q(X) :- a(X).", edb) == {"q": {(1,), (2,)}}
    assert edb == {"a": {(2,)}}


def test_idb_facts_are_unconditional():
    assert run("q(7). q(X) :- a(X). .input a", {"a": {(1,)}}) == {"q": {(1,), (7,)}}


@pytest.mark.parametrize(
    "edb, message",
    [
        ({"nope": {(1,)}}, "not a relation"),
        ({"q": {(1,)}}, "derived by rules"),
        ({"a": {(1, 2)}}, "arity"),
        ({"a": {("x",)}}, "not a long"),
        ({"a": {(None,)}}, "not a long"),
    ],
)
def test_bad_inputs(edb, message):
    with pytest.raises(sd.InputError, match=message):
        run("q(X) :- a(X). .input a", edb)


def test_integers_given_for_a_double_column_become_floats():
    result = run(".decl a(x: double)\nq(X) :- a(X).", {"a": {(1,), (2.5,)}})
    assert result == {"q": {(1.0,), (2.5,)}}
    assert {type(x) for (x,) in result["q"]} == {float}


# -- bodies -------------------------------------------------------------------------------------


def test_repeated_variables_and_constants_in_atoms():
    edb = {"a": {(1, 1), (1, 2), (3, 3)}}
    assert run("q(X) :- a(X, X). .input a", edb) == {"q": {(1,), (3,)}}
    assert run("q(Y) :- a(1, Y). .input a", edb) == {"q": {(1,), (2,)}}


def test_literals_can_be_written_in_any_order():
    text = "q(X, Y) :- Y > X, Z = X + Y, Z < 5, a(X), a(Y). .input a"
    assert run(text, {"a": {(1,), (2,), (3,)}}) == {"q": {(1, 2), (1, 3)}}


def test_arithmetic_inside_atoms():
    edb = {"a": {(1,), (2,), (3,)}, "b": {(2,), (4,)}}
    assert run("q(X) :- a(X), b(X + 1). .input a, b", edb) == {"q": {(1,), (3,)}}
    assert run("q(X) :- a(X), not b(X * 2). .input a, b", edb) == {"q": {(3,)}}
    assert run("q(X) :- b(X + 1), a(X). .input b, a", edb) == {"q": {(1,), (3,)}}  # X is bound by a(X)
    assert run("q(X) :- c(X, X + 1). .input c", {"c": {(1, 2), (2, 2), (3, 4)}}) == {"q": {(1,), (3,)}}


def test_division_by_zero_fails_the_literal_wherever_it_is():
    edb = {"a": {(0,), (2,)}}
    assert run("q(X, Y) :- a(X), Y = 4 / X. .input a", edb) == {"q": {(2, 2)}}
    assert run("q(X) :- a(X), 4 mod X = 0. .input a", edb) == {"q": {(2,)}}
    assert run("q(X, 4 / X) :- a(X). .input a", edb) == {"q": {(2, 2)}}
    # a negated literal with an undefined argument fails too (it does not hold vacuously)
    assert run("q(X) :- a(X), not b(4 / X). .input a, b", {**edb, "b": {(1,)}}) == {"q": {(2,)}}


def test_anonymous_variables_in_negation_mean_any_value():
    edb = {"n": {(1,), (2,), (3,)}, "e": {(1, 2), (2, 2)}}
    assert run("q(X) :- n(X), not e(X, _). .input n, e", edb) == {"q": {(3,)}}
    assert run("q(X) :- n(X), not e(_, X). .input n, e", edb) == {"q": {(1,), (3,)}}


def test_an_equality_between_bound_variables_is_a_test():
    assert run("q(X, Y) :- a(X), a(Y), X = Y + 1. .input a", {"a": {(1,), (2,), (3,)}}) == {
        "q": {(2, 1), (3, 2)}
    }


def test_strings_and_bools():
    text = '.decl person(name: symbol, adult: bool)\nq(N) :- person(N, true), N >= "b".'
    edb = {"person": {("ann", True), ("bob", True), ("cid", False)}}
    assert run(text, edb) == {"q": {("bob",)}}


# -- aggregates ---------------------------------------------------------------------------------


def test_min_relation_with_plain_rules_keeps_the_best_candidate():
    text = "best(X, min<Y>) :- a(X, Y).  best(X, 0) :- b(X).  best(9, 9). .input a, b"
    result = run(text, {"a": {(1, 5), (1, 3), (2, 4)}, "b": {(2,), (3,)}})
    assert result == {"best": {(1, 3), (2, 0), (3, 0), (9, 9)}}


def test_aggregate_without_contributions_has_no_group():
    result = run("total(sum<X>) :- a(X). n(count<X>) :- a(X). .input a", {"a": set()})
    assert result == {"total": set(), "n": set()}


def test_avg_is_a_float_and_sum_of_doubles_is_exact():
    result = run(
        ".decl a(k: long, x: double)\nm(K, avg<X>) :- a(K, X).  s(K, sum<X>) :- a(K, X).",
        {"a": {(1, 0.1), (1, 0.2), (1, 0.3), (2, 1.0)}},
    )
    assert dict(result["m"]) == {1: pytest.approx(0.2), 2: 1.0}
    assert result["s"] == {(1, 0.6), (2, 1.0)}  # math.fsum: exactly rounded, order-independent
    assert run("m(avg<X>) :- a(X). .input a", {"a": {(1,), (2,)}}) == {"m": {(1.5,)}}


def test_count_counts_distinct_values():
    result = run("c(K, count<V>) :- a(K, I, V). .input a", {"a": {(1, 1, 7), (1, 2, 7), (1, 3, 8)}})
    assert result == {"c": {(1, 2)}}


def test_max_in_recursion_and_a_count_above_it():
    text = """
        label(X, X) :- node(X).
        label(Y, max<L>) :- label(X, L), edge(X, Y).
        size(L, count<X>) :- label(X, L).
        .input node, edge
    """
    edb = {"node": {(1,), (2,), (3,), (4,)}, "edge": {(1, 2), (2, 1), (2, 3), (4, 4)}}
    for strategy in ("naive", "seminaive"):
        result = run(text, edb, strategy=strategy)
        assert result == {"label": {(1, 2), (2, 2), (3, 3), (4, 4)}, "size": {(2, 2), (3, 1), (4, 1)}}


def test_prem_with_a_negative_cycle_is_stopped():
    text = "d(X, Y, min<D>) :- e(X, Y, D).  d(X, Y, min<D>) :- d(X, Z, A), e(Z, Y, B), D = A + B. .input e"
    with pytest.raises(sd.NonTerminationError):
        run(text, {"e": {(1, 2, 1), (2, 1, -2)}}, max_iterations=200)


# -- size ---------------------------------------------------------------------------------------


def test_a_few_thousand_facts_take_well_under_a_second():
    chain = {"arc": {(i, i + 1) for i in range(80)}}
    start = time.perf_counter()
    result = run("tc(X, Y) :- arc(X, Y).  tc(X, Z) :- tc(X, Y), arc(Y, Z). .input arc", chain)
    elapsed = time.perf_counter() - start
    assert len(result["tc"]) == 80 * 81 // 2
    assert elapsed < 2.0, elapsed
