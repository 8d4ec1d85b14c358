"""The fast parser (issue 19, item 9) against the Lark parser, the specification: on every text
either the fast parser falls back, or Lark accepts the text too and both build the same AST,
compared field by field including the fields equality ignores (spans, rule texts, sources). In
both dialects: in Soufflé's (issue 23) a lower-case name in a term is a variable."""

from __future__ import annotations

import ast as python_ast
import dataclasses
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import programs
from programs import settings
from seed_programs import SEED_PROGRAMS
from spark_datalog.errors import ParseError
from spark_datalog.syntax import ast
from spark_datalog.syntax import parser as lark_parser
from spark_datalog.syntax.fast import Fallback, parse_fast
from spark_datalog.syntax.parser import DIALECTS, MAX_TERM_DEPTH, parse, parse_lark
from syntax.test_fuzz import deep_nesting, mutated_programs, token_soup

ROOT = Path(__file__).resolve().parents[2]


def differences(a, b, path: str = "program") -> list:
    """Where ``a`` and ``b`` differ, comparing every dataclass field (none ignored), the types of
    all values and floats by repr (so -0.0 differs from 0.0). Iterative: terms may be deep."""
    out: list = []
    stack = [(a, b, path)]
    while stack and len(out) < 5:
        x, y, where = stack.pop()
        if type(x) is not type(y):
            out.append(f"{where}: {type(x).__name__} {x!r} != {type(y).__name__} {y!r}")
        elif dataclasses.is_dataclass(x):
            stack.extend(
                (getattr(x, f.name), getattr(y, f.name), f"{where}.{f.name}") for f in dataclasses.fields(x)
            )
        elif isinstance(x, (tuple, list)):
            if len(x) != len(y):
                out.append(f"{where}: {len(x)} items != {len(y)}")
            else:
                stack.extend((p, q, f"{where}[{i}]") for i, (p, q) in enumerate(zip(x, y, strict=True)))
        elif repr(x) != repr(y):
            out.append(f"{where}: {x!r} != {y!r}")
    return out


def _lark(text: str, dialect: str = "datalog"):
    try:
        return parse_lark(text, "f.dl", dialect)
    except ParseError:
        return None


def _fast(text: str, dialect: str = "datalog"):
    try:
        return parse_fast(text, "f.dl", dialect)
    except Fallback:
        return None


def check_same(text: str, must_accept: bool = False, dialect: str = "datalog") -> None:
    """The fast parser falls back on ``text`` (never where ``must_accept``), or Lark accepts it
    and builds the identical AST, both reading ``dialect``."""
    fast = _fast(text, dialect)
    if fast is None:
        assert not must_accept, f"fast parser fell back on {text!r} ({dialect})"
        return
    lark = _lark(text, dialect)
    assert lark is not None, f"fast parser accepted what Lark rejects: {text!r} ({dialect})"
    assert differences(fast, lark) == [], (text, dialect)


# Upper-case variables (not in strings, not a head aggregate's) made lower-case names: Soufflé's
_VARIABLE = re.compile(r'"(?:[^"\\\n]|\\.)*"|(?<![A-Za-z0-9_?<])[A-Z][A-Za-z0-9_]*')


def souffle_names(text: str) -> str:
    """``text`` with its variables written as Soufflé writes them (``X1`` -> ``vX1``)."""
    return _VARIABLE.sub(lambda m: m.group() if m.group()[0] == '"' else "v" + m.group(), text)


# ---------------------------------------------------------------------------------------------
# Every program the tests, examples, benchmarks and notebooks use


def _program_files() -> list:
    files = [
        p for d in ("spark_datalog", "tests", "benchmarks", "notebooks") for p in (ROOT / d).rglob("*.dl")
    ]
    return sorted(files)


def _string_literals() -> list:
    """Every string constant of the test suite's Python files and of the notebooks' cells that
    Lark parses (program texts, and many other strings, which Lark rejects)."""
    texts: set = set()
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in python_ast.walk(python_ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, python_ast.Constant) and isinstance(node.value, str):
                texts.add(node.value)
    for path in sorted((ROOT / "notebooks").rglob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8")).get("cells", []):
            source = "".join(cell.get("source", []))
            texts.add(source)
            for node in python_ast.walk(_python_or_empty(source)):
                if isinstance(node, python_ast.Constant) and isinstance(node.value, str):
                    texts.add(node.value)
    return sorted(texts)


def _python_or_empty(source: str) -> python_ast.AST:
    try:
        return python_ast.parse(source)
    except SyntaxError:
        return python_ast.Module(body=[], type_ignores=[])


def test_the_corpus_is_there():
    assert len(_program_files()) >= 5
    assert len(_string_literals()) > 500


@pytest.mark.parametrize("path", _program_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_program_files_give_the_same_ast(path):
    # Soufflé's programs (tests/dialect) often use syntax only the Lark path reads
    text = path.read_text(encoding="utf-8")
    check_same(text, must_accept="dialect" not in path.relative_to(ROOT).parts)
    check_same(text, dialect="souffle")


def test_every_string_of_the_test_suite_gives_the_same_ast_or_falls_back():
    accepted = {dialect: 0 for dialect in DIALECTS}
    for text in _string_literals():
        for dialect in DIALECTS:
            check_same(text, dialect=dialect)
            accepted[dialect] += _fast(text, dialect) is not None and bool(text.strip())
    assert min(accepted.values()) > 100  # the fast path does take the programs of the tests


@pytest.mark.parametrize("seed", SEED_PROGRAMS, ids=lambda s: s.name if hasattr(s, "name") else None)
def test_seed_programs_take_the_fast_path(seed):
    check_same(seed.text, must_accept=True)


@settings(default=100)
@given(programs.any_program(), st.sampled_from(DIALECTS))
def test_random_programs_give_the_same_ast(drawn, dialect):
    check_same(drawn[0], must_accept=True, dialect=dialect)


@settings(default=100)
@given(programs.any_program())
def test_random_programs_in_souffles_names_give_the_same_ast(drawn):
    text = souffle_names(drawn[0])
    check_same(text, must_accept=True, dialect="souffle")
    assert not any(v.name[0].isupper() for v in _variables(_fast(text, "souffle")))


def _variables(program: ast.Program) -> list:
    """The variables of ``program``'s rules and queries (not in nested terms: enough here)."""
    atoms = [a for r in program.rules for a in (r.head, *r.body) if isinstance(a, ast.Atom)]
    atoms += [q.atom for q in program.queries]
    return [arg for a in atoms for arg in a.args if isinstance(arg, ast.Variable) and not arg.anonymous]


@settings(default=300)
@given(
    st.one_of(mutated_programs(), token_soup(), deep_nesting(), st.text(max_size=60)),
    st.sampled_from(DIALECTS),
)
def test_mutated_texts_fall_back_or_give_the_same_ast(text, dialect):
    check_same(text, dialect=dialect)


# Texts from the grammar itself, with keywords, odd spacing and comments in every position, so
# that Lark's contextual lexer (keywords only where the parser accepts them) is put to the test.
NAMES = (
    "p", "q", "e", "x", "y", "not", "mod", "true", "false", "count", "min", "mean", "nota", "x_1", "long",
    "number", "cat", "band", "lnot", "match",
)  # fmt: skip
VARIABLES = ("X", "Y", "_", "_Z", "_x", "?x", "Xmod")
# Soufflé's syntax, which the fast parser leaves to Lark in either dialect
SOUFFLE_ONLY = (
    ".type T <: number", ".type U = T | symbol", ".decl b(x: number) btree", "p(x; y) :- q(x).",
    "p(x), q(x) :- r(x).", "p(x) :- q(x) ; r(x).", "p(n) :- n = count : { q(_) }.",
    "p(s) :- s = sum y : q(y).", "p(x) :- q(x), (r(x) ; s(x)).", "p(x) <= p(y) :- x < y.",
    ".decl c(x: number, y: number) choice-domain x", ".comp C { .decl r(x: number) }", ".init c = C",
    "p(x) :- q(y), x = cat(y, y).", "p(x) :- q(y), x = y ^ 2.", "p(x) :- q(y), x = y band 1.",
    "p(0x1F, 12u, 0b101).", "p(x) :- c.r(x).", '.pragma "a" "b"', "p(x) :- q(y), x = bnot y.",
    "p(x) :- q(x), match(x, x).",
)  # fmt: skip
GAPS = ("", " ", "\n", "\t", "\r\n", " % c\n", "/* c */", "//c\n")


@st.composite
def _term(draw, depth: int = 0) -> str:
    gap = draw(st.sampled_from(GAPS))
    leaf = st.one_of(
        st.sampled_from(NAMES + VARIABLES),
        st.sampled_from(("0", "7", "1.5", "2e3", '"s"', '"a\\"b"', "9223372036854775808")),
    )
    if depth > 3 or draw(st.integers(0, 2)) == 0:
        return draw(leaf)
    kind = draw(st.sampled_from(("op", "neg", "par")))
    if kind == "op":
        op = draw(st.sampled_from(("+", "-", "*", "/", "mod", " mod ")))
        return f"{draw(_term(depth + 1))}{gap}{op}{gap}{draw(_term(depth + 1))}"
    if kind == "neg":
        return f"-{gap}{draw(_term(depth + 1))}"
    return f"({gap}{draw(_term(depth + 1))}{gap})"


@st.composite
def _atom(draw, head: bool = False) -> str:
    name = draw(st.sampled_from(NAMES))
    if draw(st.booleans()):
        return name
    args = draw(st.lists(_term(), max_size=3))
    if head and draw(st.booleans()):
        args.append(f"{draw(st.sampled_from(NAMES))}<{draw(st.sampled_from(VARIABLES))}>")
    return f"{name}({', '.join(args)})"


@st.composite
def _literal(draw) -> str:
    kind = draw(st.sampled_from(("atom", "neg", "cmp")))
    if kind == "atom":
        return draw(_atom())
    if kind == "neg":
        return draw(st.sampled_from(("not ", "!", "~", "not", "! "))) + draw(_atom())
    op = draw(st.sampled_from(("=", "!=", "<", "<=", ">", ">=", "<-")))
    return f"{draw(_term())} {op} {draw(_term())}"


@st.composite
def _statement(draw) -> str:
    kind = draw(st.sampled_from(("fact", "rule", "rule", "query", "decl", "directive")))
    if kind == "fact":
        return draw(_atom(head=True)) + "."
    if kind == "rule":
        neck = draw(st.sampled_from((":-", ":=", "<-")))
        body = draw(st.lists(_literal(), min_size=1, max_size=3))
        return f"{draw(_atom(head=True))} {neck} {', '.join(body)}."
    if kind == "query":
        return f"?- {draw(_atom())}."
    names = st.sampled_from(NAMES + VARIABLES)
    if kind == "decl":
        columns = draw(st.lists(st.tuples(names, st.sampled_from(NAMES)), max_size=3))
        cols = ", ".join(f"{n}: {t}" for n, t in columns)
        return f".decl {draw(st.sampled_from(NAMES))}({cols})" + draw(st.sampled_from(("", ".")))
    directive = draw(st.sampled_from((".input", ".output")))
    return f"{directive} {', '.join(draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3)))}"


@st.composite
def grammar_texts(draw) -> str:
    statements = draw(
        st.lists(st.one_of(_statement(), _statement(), st.sampled_from(SOUFFLE_ONLY)), max_size=4)
    )
    return "".join(s + draw(st.sampled_from(GAPS + ("\n",))) for s in statements)


@settings(default=500)
@given(grammar_texts())
@pytest.mark.parametrize("dialect", DIALECTS)
def test_texts_from_the_grammar_fall_back_or_give_the_same_ast(dialect, text):
    check_same(text, dialect=dialect)


# Soufflé's programs as the fast parser takes them: lower-case variables everywhere, no keyword
# where a name is read, no '%' (modulo or comment: Lark's lexer decides), so never a fallback.
SOUFFLE_LEAVES = ("x", "y", "z", "a_1", "node", "notx", "_x", "_", "?q", "X", "0", "7", "1.5", '"s"', "true")
SOUFFLE_GAPS = ("", " ", "\n", "/* c */", "//c\n")


@st.composite
def _souffle_term(draw, depth: int = 0) -> str:
    gap = draw(st.sampled_from(SOUFFLE_GAPS))
    if depth > 2 or draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from(("", "-"))) + draw(st.sampled_from(SOUFFLE_LEAVES))
    op = draw(st.sampled_from(("+", "-", "*", " / ", " mod ")))  # ('//' would start a comment)
    term = f"{draw(_souffle_term(depth + 1))}{gap}{op}{gap}{draw(_souffle_term(depth + 1))}"
    # (a parenthesised constant after a '-' is left to Lark: '-(5)')
    return f"({gap}{term})" if draw(st.booleans()) else term


@st.composite
def _souffle_atom(draw) -> str:
    name = draw(st.sampled_from(("p", "edge", "x", "path_2")))
    return f"{name}({', '.join(draw(st.lists(_souffle_term(), min_size=1, max_size=3)))})"


@st.composite
def _souffle_clause(draw) -> str:
    head = draw(_souffle_atom())
    literals = st.one_of(
        _souffle_atom(),
        _souffle_atom().map(lambda atom: "!" + atom),
        st.tuples(_souffle_term(), st.sampled_from(("=", "!=", "<", "<=", ">", ">=")), _souffle_term()).map(
            " ".join
        ),
    )
    body = draw(st.lists(literals, max_size=3))
    return f"{head} :- {', '.join(body)}." if body else f"{head}."


@settings(default=80)
@given(st.lists(_souffle_clause(), max_size=4).map("\n".join))
def test_souffle_texts_take_the_fast_path_and_give_the_same_ast(text):
    check_same(text, must_accept=True, dialect="souffle")


# ---------------------------------------------------------------------------------------------
# Targeted cases

ACCEPTED = {
    "empty": "",
    "blank": " \n\t\n",
    "no_trailing_newline": "p(1).",
    "comments_everywhere": (
        "% line\n// line\n/* block\n over lines */ p /* a */ ( % c\n /* b */ 1 , // d\n 2 /**/ ) /* e */ . %"
        "\nq(X) /*x*/ :- /*y*/ p(X, _) /* z */, X /**/ != /**/ 2 /* end */ . // tail"
    ),
    "strings": r'p("", "a\"b", "back\\slash", "tab\tnl\nret\r", "ünïcødé ✓", "% not a comment").',
    "negative_literals": "p(-1, - 2, -1.5, --3, -9223372036854775808, 9223372036854775807, -0).",
    "decimals": "p(1.5, 1e3, 1E-3, 2.5e+10, 0.0, 12.75E2, -1e308).",
    "anonymous": "p(X) :- q(X, _, _), not r(_).\np(X) :- q(_, X, _).\n?- p(_).\nr(_, Y) :- q(Y, _, _).",
    "parentheses": "p(Z) :- q(X, Y), Z = ((X) + (Y * 2)) * -(X - 1), (X) < (Y + 1) mod 3.",
    "operators": "p(Z) :- q(X, Y), Z = X + Y - X * Y / 2 mod 3 - -X, X <= Y, X >= Y, X > Y, X = Y, X != Y.",
    "unary_minus_on_terms": 'p(Z) :- q(X), Z = -X + -(X * 2) - -"s" + -true.',
    "necks": "p(X) :- q(X).\np(X) := q(X).\np(X) <- q(X).\np(X):-q(X).",
    "negations": "p(X) :- q(X), not r(X), !s(X), ~t(X), notx(X), ! u, ~v.",
    "declarations": (
        ".decl e(a: int, b: long, c: double, d: string, e: bool, f: number, g: symbol, h: float)\n"
        ".decl nothing()\n.decl z(_: long, X: symbol).\n.decl w(x:long)."
    ),
    "directives": ".input a, b\n.output c.\n.input d .output e, f\n.inputg\n.output h,i.",
    "queries": '?- p(X, 1, _).\n?- q.\n?-r(a, "s", true).',
    "aggregates": (
        "s(G, sum<V>) :- v(G, V).\nc(count<X>) :- v(X, _).\nm(min<?x>, max<Y>) :- v(?x, Y).\n"
        "a(avg<_>, G) :- v(G, _).\nk(count<X>)."
    ),
    "facts_and_rule_heads": 'p.\np().\np(a, "b", 1, 2.5, true, false).\np(1 + 2).\np(X).\np(-(X)).',
    "booleans": "p(X) :- q(X), X = true, false != X.",
    "keywords_inside_names": "note(modal, trueish, falsey, notmod) :- mod_x(nota), truex(X, Y), Y = X mod 2.",
    "qvars": "p(?x, ?_y) :- q(?x, ?_y), ?x != ?_y.",
    "crlf": "p(1).\r\nq(X) :-\r\n  p(X),\r\n  X > 0.\r\n",
    "tabs": "\tp(\t1,\t2).\n\t\tq(X)\t:-\tp(X,\t_).",
    "form_feed": "p(1).\f\nq(2).",
    "names_and_symbols": "edge(a, b). edge(b, c_1). e(aB9_, zZ).",
    "rule_text_spans_lines": "p(X,\n  Y) :-\n  q(X),\n  r(Y) .",
    "constants_compared": 'p :- a < b, "x" = "y", 1 < 2.5, (1) = 1.',
    "deep_sum": "p(Y) :- e(X), Y = " + " + ".join(["X"] * 500) + ".",
    "deep_product": "p(Y) :- e(X), Y = " + " * ".join(["X"] * (MAX_TERM_DEPTH + 1)) + ".",
    "deep_parentheses": "p(Y) :- e(X), Y = " + "(" * 150 + "X" + ")" * 150 + ".",
    "unicode_digits": "p(\u0663, \u0661.\u0665).",
    # the tokenizer (one re.split, offsets from the pieces' lengths) and the line cursor
    "comment_at_the_end_without_newline": "p(1). % c",
    "comment_markers_in_strings": 'p("a%b", "//c", "/*d*/", "e\\"f%").\nq(X) :- p(X, _, _, _), X != "%".',
    "block_comment_across_lines_inside_a_clause": "p(/*a\n\n*/X) :- q(\nX\n) /* b */.",
    "crlf_clause_split_across_lines": "p(X) :-\r\n q(X),\r\n\r\n X != 1.\r\nr(2).",
    "token_at_the_last_column": "p(X) :- q(X).",
    "dot_alone_on_the_last_line": "p(X) :-\n  q(X)\n.",
    "blank_lines_first": "\n\n\np(X) :- q(X).\n\n  r(Y) :- q(Y), Y > 1.\n\n",
    "spans_of_operations_on_earlier_lines": "p(Z) :- q(X),\n Z = X\n + 1\n * 2,\n Z\n >\n -X.",
    "division_and_line_comment": "p(Z) :- q(X), Z = X / 2 // c\n + X/2.",
    "plain_and_other_arguments": 'p(X, _, _Y, 1, a, "s", 2.5, X + 1, -3, ?q) :- q(X, _Y, ?q).\ne(1, 2).',
    "query_decl_and_directive_spans": "  ?- p(X).\n\t.decl p(x: long)\n .input p, q\n.output p",
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_targeted_programs_take_the_fast_path_and_give_the_same_ast(name):
    check_same(ACCEPTED[name], must_accept=True)


def test_targeted_details():
    program = parse_fast(ACCEPTED["anonymous"])
    assert [str(v.name) for v in program.rules[0].body[0].args[1:]] == ["_#1", "_#2"]
    assert program.rules[0].body[1].atom.args[0].name == "_#3"
    assert program.rules[1].body[0].args[0].name == "_#1"
    assert program.queries[0].atom.args[0].name == "_#1"
    negative = parse_fast(ACCEPTED["negative_literals"]).facts[0].atom.args
    assert [a.value for a in negative] == [-1, -2, -1.5, 3, -(2**63), 2**63 - 1, 0]
    assert negative[1].span == ast.Span(1, 7)
    rule = parse_fast("x.\n  p(Y) :- q(Y) . % c").rules[0]
    assert rule.text == "p(Y) :- q(Y) ." and rule.span == ast.Span(2, 3)
    text = ACCEPTED["parentheses"]
    comparison = parse_fast(text).rules[0].body[2]
    at = text.index("(X) <") + 1
    assert comparison.span == ast.Span(1, at) and comparison.right.span == ast.Span(1, at + 6)
    assert parse_fast(text).rules[0].body[1].right.span == ast.Span(1, text.index("((X)") + 1)
    directives = parse_fast(".input a, b").directives
    assert [(d.name, d.span) for d in directives] == [("a", ast.Span(1, 1)), ("b", ast.Span(1, 11))]


FALLS_BACK = {
    "syntax_error": "p(1)",
    "empty_body": "p(X) :- .",
    "unknown_type": ".decl p(x: text)",
    "unknown_aggregate": "p(median<X>) :- q(X).",
    "aggregate_in_body": "p(X) :- q(count<X>).",
    "aggregate_in_query": "?- q(count<X>).",
    "aggregate_in_negation": "p(X) :- q(X), not r(min<X>).",
    "bad_escape": r'p("\q").',
    "integer_too_large": "p(9223372036854775808).",
    "integer_too_small": "p(-9223372036854775809).",
    "integer_too_large_subtracted": "p(X) :- q(X), X = 1 - 9223372036854775808.",
    "too_deep": "p(Y) :- e(X), Y = " + " + ".join(["X"] * (MAX_TERM_DEPTH + 2)) + ".",
    "unterminated_string": 'p("abc).',
    "unterminated_comment": "p(1). /* no end",
    "bad_character": "p(1) @",
    "keyword_relation_not": "not(1).",
    "keyword_relation_true": "p(X) :- true(X).",
    "keyword_constant_mod": "p(mod).",
    "keyword_constant_not": "p(X) :- q(X), X = not.",
    "keyword_directive": ".input true",
    "neck_in_expression": "p(X) :- q(X), X<-1.",
    "negated_parenthesised_constant": "p(-(5)).",
    "chained_comparison": "p(X) :- q(X), 1 < X < 3.",
    "true_as_literal": "p :- true.",
    "decl_after_fact_without_space": "p(1).decl q(x: long)",
    "variable_head": "X(1).",
    "vertical_tab": "p(1).\v",
    "no_break_space": "p(1).\u00a0q(2).",
    "superscript_digit": "p(\u00b2).",
    "nul_character": "p(1)\x00.",
    "lone_quote_at_the_end": 'p(1). "',
}


def _falls_back(text: str, dialect: str) -> None:
    """The fast parser falls back on ``text``, and ``parse`` answers as the Lark path does: the
    same AST, or the same errors."""
    with pytest.raises(Fallback):
        parse_fast(text, dialect=dialect)
    try:
        expected = parse_lark(text, dialect=dialect)
    except ParseError as error:
        with pytest.raises(ParseError) as raised:
            parse(text, dialect=dialect)
        assert [str(e) for e in raised.value.errors] == [str(e) for e in error.errors]
    else:
        assert differences(parse(text, dialect=dialect), expected) == []


# Soufflé's dialect: the same texts, lower-case names in terms read as variables
ACCEPTED_SOUFFLE = {
    "names_are_variables": "path(x, y) :- edge(x, y).\npath(x, z) :- path(x, y), edge(y, z).",
    "facts_of_constants": 'edge(1, 2).\nlabel(1, "a", true, false, -2.5).\np.\np().',
    "a_fact_with_a_name_is_a_rule": "p(x).\np(1, x, 2).\np(_).\np(x + 1).",
    "underscores_and_qvars": "p(x, _x, _X) :- q(x, _, _x, _, _X, ?y), r(_, ?y).\n?- p(_, a, _).",
    "keywords_inside_names": "p(note, modal, trueish) :- q(note, modal, trueish, falsey), note = mod_x.",
    "booleans": "p(x) :- q(x, y), y = true, false != x.",
    "comparisons_and_expressions": "p(z) :- q(x, y), z = (x + y) * 2 - -x mod 3, x < y, a >= b, c = 1.",
    "aggregate_names_as_variables": "p(count, sum, mean) :- q(count, min, max), sum < mean, x = (max).",
    "names_and_uppercase_mixed": "p(X, y) :- q(X, y), not r(y), !s(X), X != y.",
    "relation_names_stay_names": "edge(a, b) :- edge(b, a), node, node(a).",
    "comments_and_lines": "p(x, /* c */ y) :- % c\n q(x,\n y), // d\n x\n <\n y.",
    "query_decl_directive": '.decl edge(x: number, y: symbol)\n.input edge\n?- edge(x, "s").\n.output edge',
    "head_aggregate_of_a_variable": "s(g, sum<V>) :- v(g, V).",
}


@pytest.mark.parametrize("name", sorted(ACCEPTED_SOUFFLE))
def test_targeted_souffle_programs_take_the_fast_path_and_give_the_same_ast(name):
    check_same(ACCEPTED_SOUFFLE[name], must_accept=True, dialect="souffle")


def test_souffle_details():
    program = parse_fast(ACCEPTED_SOUFFLE["a_fact_with_a_name_is_a_rule"], dialect="souffle")
    assert program.facts == () and [r.text for r in program.rules[:2]] == ["p(x).", "p(1, x, 2)."]
    assert program.rules[1].head.args[1] == ast.Variable("x") and program.rules[1].body == ()
    assert parse_fast("p(x).").facts[0].atom.args[0] == ast.Constant("x", "string")
    rule = parse_fast(ACCEPTED_SOUFFLE["underscores_and_qvars"], dialect="souffle").rules[0]
    assert [(v.name, v.anonymous) for v in rule.body[0].args] == [
        ("x", False), ("_#1", True), ("_x", False), ("_#2", True), ("_X", False), ("?y", False)
    ]  # fmt: skip
    assert rule.body[1].args[0].name == "_#3"
    booleans = parse_fast(ACCEPTED_SOUFFLE["booleans"], dialect="souffle").rules[0].body[1]
    assert booleans.right == ast.Constant(True, "bool")


FALLS_BACK_SOUFFLE = {
    "syntax_error": "p(x)",
    "type": ".type T <: number\n.decl p(x: T)\np(1).",
    "body_aggregate": "p(n) :- n = count : { q(_) }.",
    "body_aggregate_of_an_atom": "p(n) :- n = count : q(_).",
    "disjunction": "p(x) :- q(x) ; r(x).",
    "two_heads": "p(x), q(x) :- r(x).",
    "subsumption": "p(x) <= p(y) :- x < y.",
    "qualifier": ".decl p(x: number) btree",
    "choice_domain": ".decl p(x: number, y: number) choice-domain x",
    "functor": "p(x) :- q(y), x = cat(y, y).",
    "infix_functor": "p(x) :- q(y), x = y band 1.",
    "component": ".comp C { .decl r(x: number) }\n.init c = C\np(x) :- c.r(x).",
    "radix": "p(0x1F).",
    "keyword_as_a_term": "p(x) :- q(x), x = not.",
    "keyword_mod_as_a_term": "p(mod).",
    "percent_after_a_name": "p(z) :- q(x), z = x % 3.",  # modulo or a comment: Lark's lexer decides
    "aggregate_name_before_an_operator": "p(count) :- q(count), count = 1.",
    "lower_case_head_aggregate": "p(count<x>) :- q(x).",
    "empty_body": "p(x) :- .",
    "unknown_type": ".decl p(x: text)",
}


@pytest.mark.parametrize(
    "dialect, name",
    [("datalog", name) for name in sorted(FALLS_BACK)]
    + [("souffle", name) for name in sorted(FALLS_BACK_SOUFFLE)],
)
def test_targeted_texts_fall_back(dialect, name):
    _falls_back((FALLS_BACK if dialect == "datalog" else FALLS_BACK_SOUFFLE)[name], dialect)


def test_records_are_the_dataclasses_frozen_and_hashable():
    # the fast parser builds its records in mutable twins whose class it then sets
    program = parse_fast(ACCEPTED["plain_and_other_arguments"])
    rule = program.rules[0]
    for node in (rule, rule.head, rule.head.args[0], rule.head.args[3], rule.span, program.facts[0]):
        assert type(node).__module__ == "spark_datalog.syntax.ast"
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(node, dataclasses.fields(node)[0].name, None)
        assert hash(node) == hash(dataclasses.replace(node)) and node == dataclasses.replace(node)
    assert rule.head.args[0] == ast.Variable("X", ast.Span(1, 3)) and rule.head.args[0].span == ast.Span(1, 3)
    assert rule.head.args[3] == ast.Constant(1, "long") and rule.head.args[3].span.column == 13


def test_keyword_names_that_lark_accepts_still_parse():
    # Lark's contextual lexer reads these as names; the fast parser leaves them to it
    program = parse("not(1).\np(X) :- q(X), X = not.\n.input true")
    assert [f.atom.predicate for f in program.facts] == ["not"]
    assert program.rules[0].body[1].right == ast.Constant("not", "string")


def test_beyond_max_term_depth_is_the_lark_parse_error():
    with pytest.raises(ParseError, match=f"deeper than {MAX_TERM_DEPTH}"):
        parse(FALLS_BACK["too_deep"])


# ---------------------------------------------------------------------------------------------
# parse() takes the fast path, and errors still come from Lark


def _no_lark(*args, **kwargs):
    raise AssertionError("the Lark path was used")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_parse_takes_the_fast_path_for_the_benchmark_programs(monkeypatch, dialect):
    from benchmarks.parse import facts, rules

    monkeypatch.setattr(lark_parser, "parse_lark", _no_lark)
    assert len(parse(facts(1000, dialect), dialect=dialect).facts) == 1000
    assert len(parse(rules(1000, dialect), dialect=dialect).rules) == 1000


@pytest.mark.parametrize("dialect", DIALECTS)
def test_parse_falls_back_to_lark_for_errors_and_souffle_syntax(monkeypatch, dialect):
    monkeypatch.setattr(lark_parser, "parse_lark", _no_lark)
    for text in ("p(1)", "p(n) :- n = count : { q(_) }."):
        with pytest.raises(AssertionError, match="Lark path"):
            parse(text, dialect=dialect)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_benchmark_programs_give_the_same_ast(dialect):
    from benchmarks.parse import facts, rules

    check_same(facts(300, dialect), must_accept=True, dialect=dialect)
    check_same(rules(300, dialect), must_accept=True, dialect=dialect)
