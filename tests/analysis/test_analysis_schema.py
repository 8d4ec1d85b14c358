"""Arity, declarations and directives, EDB/IDB classification, facts, outputs, describe()."""

from __future__ import annotations

import pytest

from spark_datalog.analysis import describe
from spark_datalog.analysis.checked import AggregateSpec
from spark_datalog.errors import (
    DatalogError,
    SafetyError,
    SchemaError,
    StratificationError,
)

from .analysis_helpers import check, errors


def test_arity_mismatch_between_rule_atoms():
    [error] = errors("p(X) :- q(X, Y).\nr(X) :- q(X).\n.input q\n", SchemaError)
    assert (error.line, error.column) == (2, 9)
    assert error.message == "relation 'q' has arity 1 here but arity 2 at its use at 1:9"


def test_arity_mismatch_against_the_declaration():
    [error] = errors(".decl e(a: long, b: long)\np(X) :- e(X).\n", SchemaError)
    assert (error.line, error.column) == (2, 9)
    assert "arity 1 here but arity 2 at its .decl at 1:1" in error.message


def test_arity_checked_in_facts_heads_negations_and_queries():
    text = (
        "e(1, 2).\ne(3).\np(X, Y) :- e(X, Y).\np(X) :- e(X, _).\nr(X) :- e(X, _), not e(X).\n?- p(1, 2, 3).\n"
    )
    found = errors(text, SchemaError)
    assert [(e.line, e.column) for e in found] == [(2, 1), (4, 1), (5, 22), (6, 4)]


def test_duplicate_declaration():
    [error] = errors(".decl e(a: long)\n.decl e(a: long)\np(X) :- e(X).\n", SchemaError)
    assert error.line == 2 and "declared twice" in error.message


def test_duplicate_column_name_in_a_declaration():
    [error] = errors(".decl e(a: long, a: long)\np(X) :- e(X, _).\n", SchemaError)
    assert "column 'a' appears twice" in error.message


def test_directive_naming_an_unknown_relation():
    found = errors(".input e\n.output nothing\np(X) :- e(X).\n.input ghost\n", SchemaError)
    assert [(e.line, e.column) for e in found] == [(2, 1), (4, 1)]
    assert "'nothing'" in found[0].message and "never used" in found[0].message


def test_declared_input_never_used_is_fine():
    checked = check(".decl e(a: long)\n.input e\np(1).\n")
    assert checked.relations["e"].kind == "edb"


def test_input_relation_with_rules_reads_its_input_into_an_edb_relation():
    """As in Soufflé, rules may add to an .input relation: its input is e__input (see
    syntax.input_rules), and e is derived from it and from its rules."""
    checked = check(".input e\ne(X) :- f(X).\n.input f\n")
    kinds = {name: schema.kind for name, schema in checked.relations.items()}
    assert kinds == {"e": "idb", "f": "edb", "e__input": "edb"}
    assert checked.input_relation("e") == "e__input" and checked.input_relation("f") == "f"
    assert [str(rule) for rule in checked.rules] == ["e(X) :- f(X).", "e(X0) :- e__input(X0)."]


def test_edb_and_idb_classification():
    checked = check(
        ".decl d(x: long)\n.input i\nf(1).\ni(2).\np(X) :- i(X), f(X), b(X).\np(7).\n?- q(X).\n.input b, q\n"
    )
    kinds = {name: schema.kind for name, schema in checked.relations.items()}
    assert kinds == {"d": "edb", "i": "edb", "f": "edb", "p": "idb", "b": "edb", "q": "edb"}
    assert list(checked.relations) == ["d", "i", "f", "p", "b", "q"]
    assert checked.edb == ("d", "i", "f", "b", "q") and checked.idb == ("p",)


def test_facts_of_idb_and_edb_relations():
    checked = check('e(1, "a").\ne(2, "b").\ne(1, "a").\np(X) :- e(X, _).\np(9).\n')
    assert checked.facts == {"e": frozenset({(1, "a"), (2, "b")}), "p": frozenset({(9,)})}


def test_outputs_default_to_all_idb_relations():
    checked = check("a(X) :- e(X).\nb(X) :- a(X).\n.input e\n")
    assert checked.outputs == ("a", "b")


def test_outputs_are_the_output_relations():
    checked = check(".output b\na(X) :- e(X).\nb(X) :- a(X).\n.input e\n")
    assert checked.outputs == ("b",)


def test_queries_are_kept():
    checked = check("a(X) :- e(X).\n?- a(1).\n.input e\n")
    assert [str(q) for q in checked.queries] == ["?- a(1)."]


def test_aggregate_spec_of_a_relation():
    checked = check("d(X, count<Y>) :- e(X, Y). .input e")
    assert checked.relations["d"].aggregate == AggregateSpec(1, "count")
    assert checked.relations["e"].aggregate is None


def test_describe_lists_relations_and_strata():
    checked = check(
        ".decl arc(src: long, dst: long)\n"
        "tc(X, Y) :- arc(X, Y).\ntc(X, Z) :- tc(X, Y), arc(Y, Z).\n"
        "sp(X, Y, min<D>) :- arc(X, Y), D = 1.\n"
        "sp(X, Y, min<D>) :- sp(X, Z, D1), arc(Z, Y), D = D1 + 1.\n"
        "out(X, count<Y>) :- tc(X, Y).\n"
    )
    assert describe(checked) == "\n".join(
        [
            "relations:",
            "  EDB arc(src: long, dst: long)",
            "  IDB tc(X: long, Y: long)",
            "  IDB sp(X: long, Y: long, min_D: long) [min on column 2]",
            "  IDB out(X: long, count_Y: long) [count on column 1]",
            "strata:",
            "  stratum 0: tc (recursive)",
            "  stratum 1: sp (recursive, min/max in recursion (PreM))",
            "  stratum 2: out",
            "outputs: tc, sp, out",
        ]
    )


def test_errors_of_every_pass_are_collected_and_sorted():
    text = (
        "p(X, Y) :- q(X).\n"  # safety
        "r(X) :- s(X), not r(X).\n"  # stratification
        "t(X) :- q(X, X).\n"  # arity
        ".input q, s\n"
    )
    with pytest.raises(DatalogError) as caught:
        check(text)
    found = caught.value.errors
    assert [(type(e), e.line, e.column) for e in found] == [
        (SafetyError, 1, 6),
        (StratificationError, 2, 15),
        (SchemaError, 3, 9),
    ]
    assert isinstance(caught.value, SafetyError)
    assert "(3 errors)" in str(caught.value)


def test_error_message_shows_the_source_line():
    with pytest.raises(SafetyError) as caught:
        check("p(X, Y) :- q(X).\n.input q")
    assert str(caught.value).splitlines()[1:] == ["   1 | p(X, Y) :- q(X).", "            ^"]


def test_zero_arity_relations():
    checked = check("go.\nready :- go, not stop.\n.input stop\n")
    assert checked.relations["ready"].columns == () and checked.facts["go"] == frozenset({()})
    assert [s.relations for s in checked.strata] == [("ready",)]


def test_comparison_constrains_kind_not_precision():
    checked = check("p(-1).\nq(X) :- p(X), X < -0.5.\n")
    assert checked.facts["p"] == frozenset({(-1,)})
    assert checked.relations["p"].types == ("long",)


# -- relations nothing defines (issue 19, item 18) -----------------------------------------------


def test_atom_over_a_relation_nothing_defines_is_an_error_at_the_atom():
    text = ".input contain\nhit(X) :- contain(X, 1).\nmiss(X) :- contain(X, _), containz(X, 2).\n"
    [error] = errors(text, SchemaError)
    assert (error.line, error.column) == (3, 27)
    assert error.message.startswith("relation 'containz' is never defined")
    assert error.message.endswith("did you mean 'contain'?")
    assert str(error).splitlines()[-1].endswith(" " * 26 + "^")


def test_each_undefined_relation_is_reported_once_at_its_first_use():
    text = "a(1).\np(X) :- a(X), not zzz(X).\nq(X) :- zzz(X).\n?- yyy(1).\n"
    found = errors(text, SchemaError)
    assert [(e.line, e.column) for e in found] == [(2, 19), (4, 4)]
    assert "'zzz' is never defined" in found[0].message and "did you mean" not in found[0].message
    assert "'yyy' is never defined" in found[1].message


@pytest.mark.parametrize(
    "definition",
    [".decl e(x: long)\n", ".input e\n", "e(7).\n", "e(X) :- f(X).\nf(1).\n"],
)
def test_a_rule_a_fact_a_decl_or_an_input_defines_a_relation(definition):
    checked = check(definition + "p(X) :- e(X).\n")
    assert "e" in checked.relations
