"""Parse errors: class, position, a message a person can act on, and the caret excerpt."""

from __future__ import annotations

import pytest

from spark_datalog.errors import DatalogError, ParseError
from spark_datalog.syntax import parse


def parse_error(text: str, filename: str | None = None) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(text, filename)
    return info.value


def caret_column(error: ParseError) -> int:
    """The 1-based column the caret in str(error) points at (in the source line above it)."""
    lines = str(error).splitlines()
    source_index = next(i for i, text in enumerate(lines) if text.startswith(f"{error.line:>4} | "))
    gutter = len(f"{error.line:>4} | ")
    return lines[source_index + 1].index("^") - gutter + 1


def assert_error(text: str, line: int, column: int, *fragments: str) -> ParseError:
    error = parse_error(text, "prog.dl")
    assert isinstance(error, DatalogError)
    assert (error.line, error.column) == (line, column), str(error)
    message = str(error)
    assert message.startswith(f"prog.dl:{line}:{column}: parse error: "), message
    for fragment in fragments:
        assert fragment in message, message
    source_line = text.splitlines()[line - 1]
    assert f"{line:>4} | {source_line}" in message
    assert caret_column(error) == column
    return error


# ---------------------------------------------------------------------------------------------
# Syntax errors (every one is reported: parsing resumes at the next statement)


def test_missing_dot_before_the_next_rule_points_after_the_rule():
    assert_error(
        "tc(X, Y) :- arc(X, Y)\ntc(X, Z) :- tc(X, Y), arc(Y, Z).",
        1,
        22,
        "expected '.' at the end of the rule",
        "found name 'tc'",
    )


def test_missing_dot_at_end_of_program():
    assert_error(
        "a(1).\ntc(X, Y) :- arc(X, Y)", 2, 22, "expected '.' at the end of the rule", "the end of the program"
    )


def test_missing_dot_after_fact_and_query():
    assert_error("arc(1, 2)\narc(2, 3).", 1, 10, "expected '.' at the end of the fact")
    assert_error("?- tc(1, X)\n", 1, 12, "expected '.' at the end of the query")


def test_missing_dot_or_comma_on_the_same_line():
    assert_error(
        "p(X) :- q(X) r(X).", 1, 14, "expected ',' between body literals or '.' at the end of the rule"
    )
    assert_error("p(1) q(2).", 1, 6, "expected '.' at the end of the fact")


def test_missing_closing_parenthesis():
    assert_error("p(X) :- q(X), r(X\n", 1, 18, "expected ')'")


def test_empty_body():
    error = assert_error("p(1).\np(X) :- .", 2, 6, "':-' must be followed by at least one body literal")
    assert len(error.errors) == 1


@pytest.mark.parametrize("neck", [":=", "<-"])
def test_empty_body_other_necks(neck):
    assert_error(f"p(X) {neck}\n  .", 1, 6, f"'{neck}' must be followed")


def test_trailing_comma_in_body():
    assert_error("p(X) :- q(X),.", 1, 14, "expected a body literal after ','")


def test_aggregate_in_a_comparison():
    assert_error(
        "p(X, Y) :- q(X), Y = min<X>.",
        1,
        22,
        "aggregate 'min<...>' is only allowed as an argument of a rule head",
    )


def test_unterminated_string():
    assert_error('p(1).\np("abc).\nq(2).', 2, 3, "unterminated string")


def test_unterminated_block_comment():
    assert_error("p(1).\n  /* no end\np(2).", 2, 3, "unterminated comment")
    assert_error("p(X) :- q(X) /* no end", 1, 14, "unterminated comment")


def test_unexpected_character():
    assert_error("p(1) :- q(1) & r.", 1, 14, "unexpected character '&'")


def test_single_quotes_are_not_strings():
    assert_error("p(X) :- q(X), X = 'a'.", 1, 19, "double quotes")


def test_upper_case_predicate_name_needs_parentheses():
    # Soufflé's relation names may start with a capital letter; with parentheses only (a
    # name alone is a variable)
    assert_error("p(1).\nTc :- q(1).", 2, 4, "unexpected ':-'", "expected '('")


def test_unexpected_token_lists_what_was_expected():
    assert_error(".decl a(x long)", 1, 11, "unexpected name 'long'", "expected ':'")
    error = assert_error("p(X) :- q(X), X ! Y.", 1, 17, "unexpected '!'")
    assert "'!='" in str(error) and "'<='" in str(error)


def test_every_syntax_error_is_reported_in_one_pass():
    error = assert_error("p(X) :- q(X) & r.\np(Y) :- .", 1, 14)
    assert [(e.line, e.column) for e in error.errors] == [(1, 14), (2, 6)]


def test_parsing_resumes_at_the_next_statement_after_each_syntax_error():
    text = (
        "e(1, 2).\n"
        "p(X) :- e(X, Y) Y > 1.\n"  # missing ','
        ".decl q(x long)\n"  # missing ':'
        "r(X) :- e(X, _).\n"
        "s(X) :- e(X, 1.5), X = 'a'.\n"  # single quotes
        "t(X) :- e(X, _)\n"  # missing '.' before the next line's statement
        "u(X :- e(X, _).\n"  # missing ')'
        "v(1).\n"
    )
    error = assert_error(text, 2, 17, "expected ',' between body literals or '.'")
    found = [(e.line, e.column) for e in error.errors]
    assert found == [(2, 17), (3, 11), (5, 24), (6, 16), (7, 5)], str(error)
    assert all(isinstance(e, ParseError) and e.source == text for e in error.errors)
    assert f"({len(found)} errors)" in str(error)


def test_syntax_errors_are_capped(monkeypatch):
    from spark_datalog.syntax import parser

    monkeypatch.setattr(parser, "MAX_SYNTAX_ERRORS", 3)
    error = parse_error("p(.\n" * 10)
    assert [e.line for e in error.errors] == [1, 2, 3]


def test_an_error_at_the_end_stops_the_recovery():
    error = parse_error("p(1).\nq(2")
    assert [(e.line, e.column) for e in error.errors] == [(2, 4)]


def test_error_without_filename_uses_placeholder():
    error = parse_error("p(1)")
    assert str(error).startswith("<program>:1:5: parse error:")
    assert error.filename is None


# ---------------------------------------------------------------------------------------------
# Errors found while building the AST: all of them are collected


def test_unknown_types_are_all_collected():
    text = ".decl arc(a: strin, b: long)\n.decl b(x: lng)"
    error = assert_error(
        text,
        1,
        14,
        "unknown type 'strin'; expected one of int, long, "
        "double, string, bool (aliases number, symbol, float, unsigned)",
    )
    assert [(e.line, e.column) for e in error.errors] == [(1, 14), (2, 12)]
    assert all(isinstance(e, ParseError) for e in error.errors)
    assert "unknown type 'lng'" in str(error) and "(2 errors)" in str(error)


def test_aggregates_outside_a_head_are_all_collected():
    text = "p(X) :- q(X, min<Y>).\n?- r(count<Z>).\np(X) :- q(X), not r(X, sum<W>)."
    error = assert_error(text, 1, 14, "aggregate 'min<Y>' is not allowed in a rule body")
    assert [(e.line, e.column) for e in error.errors] == [(1, 14), (2, 6), (3, 24)]
    assert "not allowed in a query" in error.errors[1].message


def test_unknown_aggregate_function():
    assert_error(
        "p(X, median<Y>) :- q(X, Y).", 1, 6, "unknown aggregate 'median<...>'", "min, max, sum, avg, count"
    )


def test_unknown_string_escape():
    assert_error('p(X) :- q(X), X = "a\\qb".', 1, 21, "unknown escape '\\q'")


def test_integer_out_of_long_range():
    assert_error("p(9223372036854775808).", 1, 3, "does not fit in a 64-bit long")
    assert_error("p(-9223372036854775809).", 1, 3, "does not fit in a 64-bit long")


def test_collected_errors_mix_kinds_in_source_order():
    text = "p(X, foo<Y>) :- q(X, Y).\n.decl r(a: text)\np(X) :- ."
    error = assert_error(text, 1, 6, "unknown aggregate")
    assert [(e.line, e.column) for e in error.errors] == [(1, 6), (2, 12), (3, 6)]
