"""Golden tests: every construct of the v1 language parses into the expected AST."""

from __future__ import annotations

import pytest

from spark_datalog.syntax import ast, parse
from spark_datalog.syntax.ast import (
    Aggregate,
    Atom,
    BinaryOp,
    ColumnDecl,
    Comparison,
    Constant,
    Declaration,
    Directive,
    Fact,
    Negation,
    Query,
    Rule,
    Span,
    Variable,
)


def V(name: str) -> Variable:
    return Variable(name)


def A(name: str) -> Variable:
    return Variable(name, anonymous=True)


def C(value, type_=None) -> Constant:
    if type_ is None:
        type_ = {bool: "bool", int: "long", float: "double", str: "string"}[type(value)]
    return Constant(value, type_)


def only_rule(text: str) -> Rule:
    program = parse(text)
    assert len(program.rules) == 1, program
    return program.rules[0]


def body_of(text: str) -> tuple:
    return only_rule(text).body


# ---------------------------------------------------------------------------------------------
# The language block of the architecture document, verbatim


ARCHITECTURE_BLOCK = """\
% comments: '%' or '//' to end of line, '/* ... */' blocks
.decl arc(src: long, dst: long)        % optional; types: int long double string bool
                                       % aliases: number=long, symbol=string, float=double
.input arc                             % relation supplied from outside (DataFrame / table / file)
.output tc                             % relation the job writes; no .output = all IDB relations
arc(1, 2).  arc(2, 3).                 % ground facts
tc(X, Y) :- arc(X, Y).                 % ':-', ':=' and '<-' are all accepted
tc(X, Z) :- tc(X, Y), arc(Y, Z).
sg(X, Y) :- arc(P, X), arc(P, Y), X != Y.
path(X, Y, min<D>) :- arc(X, Y, D).                            % aggregate in the head
path(X, Y, min<D>) :- path(X, Z, D1), arc(Z, Y, D2), D = D1 + D2. % min/max allowed in recursion (PreM)
deg(X, count<Y>) :- arc(X, Y).                                 % count/sum/avg: stratified only
lonely(X) :- node(X), not arc(X, _).                            % negation: 'not', '!' or '~'
?- tc(1, X).                                                    % query
"""


def test_architecture_language_block_parses():
    program = parse(ARCHITECTURE_BLOCK, "architecture.dl")
    assert len(program.declarations) == 1
    assert program.inputs == ("arc",)
    assert program.outputs == ("tc",)
    assert [f.values for f in program.facts] == [(1, 2), (2, 3)]
    assert [r.head.predicate for r in program.rules] == ["tc", "tc", "sg", "path", "path", "deg", "lonely"]
    assert len(program.queries) == 1
    assert program.source == ARCHITECTURE_BLOCK
    assert program.filename == "architecture.dl"


def test_architecture_block_rule_texts_and_spans():
    program = parse(ARCHITECTURE_BLOCK)
    texts = [r.text for r in program.rules]
    assert texts[0] == "tc(X, Y) :- arc(X, Y)."
    assert texts[4] == "path(X, Y, min<D>) :- path(X, Z, D1), arc(Z, Y, D2), D = D1 + D2."
    assert texts[6] == "lonely(X) :- node(X), not arc(X, _)."
    assert [r.span for r in program.rules] == [Span(line, 1) for line in range(7, 14)]
    assert program.queries[0].span == Span(14, 1)
    assert program.facts[1].span == Span(6, 13)


def test_architecture_block_min_rule_ast():
    rule = parse(ARCHITECTURE_BLOCK).rules[4]
    assert rule.head == Atom("path", (V("X"), V("Y"), Aggregate("min", V("D"))))
    assert rule.body == (
        Atom("path", (V("X"), V("Z"), V("D1"))),
        Atom("arc", (V("Z"), V("Y"), V("D2"))),
        Comparison("=", V("D"), BinaryOp("+", V("D1"), V("D2"))),
    )
    assert rule.aggregate == (2, Aggregate("min", V("D")))


# ---------------------------------------------------------------------------------------------
# Declarations and directives


def test_declaration_with_all_types_and_aliases():
    program = parse(".decl r(a: int, b: long, c: double, d: string, e: bool, f: number, g: symbol, h: float)")
    assert program.declarations == (
        Declaration(
            "r",
            (
                ColumnDecl("a", "int"),
                ColumnDecl("b", "long"),
                ColumnDecl("c", "double"),
                ColumnDecl("d", "string"),
                ColumnDecl("e", "bool"),
                ColumnDecl("f", "long"),
                ColumnDecl("g", "string"),
                ColumnDecl("h", "double"),
            ),
        ),
    )


def test_declaration_spans_and_zero_columns():
    program = parse("\n  .decl flag()\n.decl edge(Src: long,\n           dst: long)")
    flag, edge = program.declarations
    assert flag == Declaration("flag", ())
    assert flag.span == Span(2, 3)
    assert edge.columns == (ColumnDecl("Src", "long"), ColumnDecl("dst", "long"))
    assert [c.span for c in edge.columns] == [Span(3, 12), Span(4, 12)]


def test_directives_single_and_comma_separated():
    program = parse(".input arc\n.input a, b\n.output tc")
    assert program.directives == (
        Directive("input", "arc"),
        Directive("input", "a"),
        Directive("input", "b"),
        Directive("output", "tc"),
    )
    assert [d.span for d in program.directives] == [Span(1, 1), Span(2, 1), Span(2, 11), Span(3, 1)]
    assert program.inputs == ("arc", "a", "b")
    assert program.outputs == ("tc",)


def test_directives_and_declarations_may_end_with_a_dot():
    program = parse(".decl p(x: int).\n.input p.\n.output q.\nq(X) :- p(X).")
    assert program.inputs == ("p",) and program.outputs == ("q",)
    assert len(program.declarations) == 1 and len(program.rules) == 1


# ---------------------------------------------------------------------------------------------
# Facts and rules


def test_ground_facts_of_every_constant_type():
    program = parse('t(1, -3, 2.5, -0.5, 1e3, "s", sym, true, false).')
    assert program.facts == (
        Fact(Atom("t", (C(1), C(-3), C(2.5), C(-0.5), C(1000.0), C("s"), C("sym"), C(True), C(False)))),
    )
    values = program.facts[0].values
    assert values == (1, -3, 2.5, -0.5, 1000.0, "s", "sym", True, False)
    assert [type(v) for v in values[:5]] == [int, int, float, float, float]


def test_constant_spans():
    fact = parse('p(1, -2, "x").').facts[0]
    assert [a.span for a in fact.atom.args] == [Span(1, 3), Span(1, 6), Span(1, 10)]


def test_fact_with_a_variable_is_a_rule_with_empty_body():
    program = parse("p(X, 1).")
    assert program.facts == ()
    assert program.rules == (Rule(Atom("p", (V("X"), C(1))), ()),)
    assert program.rules[0].text == "p(X, 1)."


def test_fact_with_arithmetic_is_a_rule_with_empty_body():
    program = parse("p(1 + 2).")
    assert program.facts == ()
    assert program.rules[0].head.args == (BinaryOp("+", C(1), C(2)),)


@pytest.mark.parametrize("neck", [":-", ":=", "<-"])
def test_every_neck_spelling(neck):
    rule = only_rule(f"tc(X, Y) {neck} arc(X, Y).")
    assert rule == Rule(Atom("tc", (V("X"), V("Y"))), (Atom("arc", (V("X"), V("Y"))),))
    assert rule.text == f"tc(X, Y) {neck} arc(X, Y)."


def test_rule_text_spans_lines_and_excludes_surroundings():
    text = "% lead\n  p(X) :-\n    q(X),   % why\n    r(X) .  % after\n"
    rule = only_rule(text)
    assert rule.text == "p(X) :-\n    q(X),   % why\n    r(X) ."
    assert rule.span == Span(2, 3)


def test_zero_arity_predicates_both_forms():
    program = parse("p.\nq :- p.\nr() :- q().\ns() :- not p, !q(), ~r.")
    assert program.facts == (Fact(Atom("p", ())),)
    assert program.rules[0] == Rule(Atom("q", ()), (Atom("p", ()),))
    assert program.rules[1] == Rule(Atom("r", ()), (Atom("q", ()),))
    assert program.rules[2].body == (
        Negation(Atom("p", ())),
        Negation(Atom("q", ())),
        Negation(Atom("r", ())),
    )


def test_statements_are_grouped_in_source_order():
    program = parse("b(1).\nx(X) :- b(X).\n?- x(1).\na(2).\ny(X) :- a(X).\n?- y(X).")
    assert [f.atom.predicate for f in program.facts] == ["b", "a"]
    assert [r.head.predicate for r in program.rules] == ["x", "y"]
    assert [q.atom.predicate for q in program.queries] == ["x", "y"]


def test_several_clauses_on_one_line_without_spaces():
    program = parse("a(1).a(2).b(X):-a(X).")
    assert len(program.facts) == 2 and len(program.rules) == 1


def test_empty_and_comment_only_programs():
    assert parse("") == ast.Program()
    assert parse("  % nothing\n// at all\n/* really\n nothing */\n") == ast.Program()


# ---------------------------------------------------------------------------------------------
# Variables


def test_variable_spellings():
    rule = only_rule("p(X, Foo_1, _X, ?name, ?Other) :- q(X, Foo_1, _X, ?name, ?Other).")
    assert rule.head.args == (V("X"), V("Foo_1"), V("_X"), V("?name"), V("?Other"))
    assert not any(v.anonymous for v in rule.head.args)


def test_anonymous_variables_are_numbered_per_clause():
    program = parse("p(X) :- q(X, _), not r(_, X, _).\ns(Y) :- t(_, Y).\n?- u(_, _).")
    first, second = program.rules
    assert first.body == (
        Atom("q", (V("X"), A("_#1"))),
        Negation(Atom("r", (A("_#2"), V("X"), A("_#3")))),
    )
    assert second.body == (Atom("t", (A("_#1"), V("Y"))),)
    assert program.queries[0].atom.args == (A("_#1"), A("_#2"))
    assert first.body[0].args[1].anonymous
    assert str(first.body[0].args[1]) == "_"


def test_anonymous_numbering_restarts_after_facts_and_empty_body_rules():
    program = parse("p(_).\nq(X) :- r(X, _).")
    assert program.rules[0].head.args == (A("_#1"),)
    assert program.rules[1].body[0].args[1] == A("_#1")


def test_variable_spans():
    rule = only_rule("p(X) :-\n  q(X, _).")
    assert rule.head.args[0].span == Span(1, 3)
    assert [a.span for a in rule.body[0].args] == [Span(2, 5), Span(2, 8)]


# ---------------------------------------------------------------------------------------------
# Constants


def test_string_escapes():
    rule = only_rule(r'p(X) :- q(X), X = "a\"b\\c\nd\te".')
    assert rule.body[1].right == C('a"b\\c\nd\te')


def test_string_may_contain_comment_markers_and_punctuation():
    program = parse('p("% not a comment // nor /* this */", ".", ":-").')
    assert program.facts[0].values == ("% not a comment // nor /* this */", ".", ":-")


def test_symbols_and_keywords_as_constants():
    body = body_of("p(X) :- q(X, foo, bar_Baz9), X != true, X != false.")
    assert body[0].args[1:] == (C("foo"), C("bar_Baz9"))
    assert body[1] == Comparison("!=", V("X"), C(True))
    assert body[2] == Comparison("!=", V("X"), C(False))


def test_keywords_inside_longer_names_are_names():
    program = parse("notable(1). model(2). trueish(3). p(X) :- notable(X), modulo(X).")
    assert [f.atom.predicate for f in program.facts] == ["notable", "model", "trueish"]
    assert [a.predicate for a in program.rules[0].body] == ["notable", "modulo"]


def test_extreme_long_literals():
    fact = parse("p(9223372036854775807, -9223372036854775808).").facts[0]
    assert fact.values == (2**63 - 1, -(2**63))


# ---------------------------------------------------------------------------------------------
# Body literals


@pytest.mark.parametrize("op", ["=", "!=", "<", "<=", ">", ">="])
def test_comparison_operators(op):
    body = body_of(f"p(X) :- q(X, Y), X {op} Y.")
    assert body[1] == Comparison(op, V("X"), V("Y"))


def test_comparison_operators_without_spaces():
    body = body_of("p(X) :- q(X, Y), X<Y, X<=Y, X>=Y, X>Y, X!=Y, X=Y, X<-1.")
    assert [c.op for c in body[1:]] == ["<", "<=", ">=", ">", "!=", "=", "<"]
    assert body[-1] == Comparison("<", V("X"), C(-1))


def test_equality_is_always_a_comparison():
    body = body_of("p(Z) :- q(X, Y), Z = X + Y, X + 1 = Y, foo = X.")
    assert body[1:] == (
        Comparison("=", V("Z"), BinaryOp("+", V("X"), V("Y"))),
        Comparison("=", BinaryOp("+", V("X"), C(1)), V("Y")),
        Comparison("=", C("foo"), V("X")),
    )


@pytest.mark.parametrize("negation", ["not ", "!", "~", "! ", "not  "])
def test_negation_spellings(negation):
    body = body_of(f"lonely(X) :- node(X), {negation}arc(X, _).")
    assert body == (Atom("node", (V("X"),)), Negation(Atom("arc", (V("X"), A("_#1")))))
    assert body[1].span == Span(1, 23)


def test_bang_negation_versus_not_equal():
    body = body_of("p(X) :- q(X, Y), !r(X), X!=Y, X != Y.")
    assert body[1] == Negation(Atom("r", (V("X"),)))
    assert body[2] == body[3] == Comparison("!=", V("X"), V("Y"))


def test_literal_spans():
    rule = only_rule("p(X) :- q(X),\n   not r(X), X >= 2 + 1.")
    assert [lit.span for lit in rule.body] == [Span(1, 9), Span(2, 4), Span(2, 14)]
    assert rule.body[1].atom.span == Span(2, 8)
    assert rule.body[2].right.span == Span(2, 19)


# ---------------------------------------------------------------------------------------------
# Arithmetic


def arithmetic(expr: str):
    return body_of(f"p(Z) :- q(X, Y, W), Z = {expr}.")[1].right


def test_arithmetic_operators():
    for op in ["+", "-", "*", "/", "mod"]:
        assert arithmetic(f"X {op} Y") == BinaryOp(op, V("X"), V("Y"))


def test_arithmetic_precedence_and_associativity():
    assert arithmetic("X + Y * W") == BinaryOp("+", V("X"), BinaryOp("*", V("Y"), V("W")))
    assert arithmetic("X * Y + W") == BinaryOp("+", BinaryOp("*", V("X"), V("Y")), V("W"))
    assert arithmetic("X - Y - W") == BinaryOp("-", BinaryOp("-", V("X"), V("Y")), V("W"))
    assert arithmetic("X / Y / W") == BinaryOp("/", BinaryOp("/", V("X"), V("Y")), V("W"))
    assert arithmetic("X + Y mod W") == BinaryOp("+", V("X"), BinaryOp("mod", V("Y"), V("W")))
    assert arithmetic("X mod Y * W") == BinaryOp("*", BinaryOp("mod", V("X"), V("Y")), V("W"))


def test_parentheses_override_precedence():
    assert arithmetic("(X + Y) * W") == BinaryOp("*", BinaryOp("+", V("X"), V("Y")), V("W"))
    assert arithmetic("((X))") == V("X")


def test_unary_minus():
    assert arithmetic("-3") == C(-3)
    assert arithmetic("-2.5") == C(-2.5)
    assert arithmetic("-X") == BinaryOp("-", C(0), V("X"))
    assert arithmetic("-(X + Y)") == BinaryOp("-", C(0), BinaryOp("+", V("X"), V("Y")))
    assert arithmetic("X - -3") == BinaryOp("-", V("X"), C(-3))
    assert arithmetic("X-3") == BinaryOp("-", V("X"), C(3))
    assert arithmetic("-X * Y") == BinaryOp("*", BinaryOp("-", C(0), V("X")), V("Y"))


def test_arithmetic_with_constants_of_all_kinds():
    assert arithmetic("X * 2.5 + 1") == BinaryOp("+", BinaryOp("*", V("X"), C(2.5)), C(1))


def test_binary_op_span_is_its_left_operand():
    expr = arithmetic("(X + Y) * W")
    assert expr.span == Span(1, 25)
    assert expr.left.span == Span(1, 26)


def test_mod_as_a_predicate_name_at_literal_start():
    body = body_of("p(X) :- mod(X), X = X mod 2.")
    assert body[0] == Atom("mod", (V("X"),))


# ---------------------------------------------------------------------------------------------
# Heads and aggregates


@pytest.mark.parametrize("func", ["min", "max", "sum", "avg", "count"])
def test_head_aggregates(func):
    rule = only_rule(f"r(X, {func}<Y>) :- q(X, Y).")
    assert rule.head == Atom("r", (V("X"), Aggregate(func, V("Y"))))
    assert rule.aggregate == (1, Aggregate(func, V("Y")))
    assert rule.head.args[1].span == Span(1, 6)


def test_aggregate_first_with_spaces_and_question_variable():
    rule = only_rule("r(min < ?d >, X) :- q(X, ?d).")
    assert rule.head.args == (Aggregate("min", V("?d")), V("X"))


def test_head_arithmetic_is_parsed():
    rule = only_rule("r(X + 1, X * 2) :- q(X).")
    assert rule.head.args == (BinaryOp("+", V("X"), C(1)), BinaryOp("*", V("X"), C(2)))


def test_head_constants_in_rules():
    rule = only_rule('num(C, 1, "x", sym) :- coins(C).')
    assert rule.head.args == (V("C"), C(1), C("x"), C("sym"))


# ---------------------------------------------------------------------------------------------
# Queries, comments, whitespace


def test_query():
    program = parse("?- tc(1, X).\n?-p.")
    assert program.queries == (Query(Atom("tc", (C(1), V("X")))), Query(Atom("p", ())))
    assert program.queries[1].span == Span(2, 1)
    assert program.queries[1].atom.span == Span(2, 3)


def test_comments_everywhere():
    text = """
    /* block
       comment */ p(1). % trailing
    // line comment
    q(X) :- /* inline */ p(X), // after a literal
            X > 0. % done
    /**/ r(X) :- q(X). /* a * b / c */
    """
    program = parse(text)
    assert program.facts == (Fact(Atom("p", (C(1),))),)
    assert program.rules[0].body == (Atom("p", (V("X"),)), Comparison(">", V("X"), C(0)))
    assert program.rules[1] == Rule(Atom("r", (V("X"),)), (Atom("q", (V("X"),)),))


def test_division_is_not_a_comment():
    assert arithmetic("X/Y") == BinaryOp("/", V("X"), V("Y"))


def test_whitespace_anywhere():
    program = parse("\t p ( X , Y )\r\n :-\n\n q ( X ) ,\tY = X\n\n.\n")
    assert program.rules[0] == Rule(
        Atom("p", (V("X"), V("Y"))), (Atom("q", (V("X"),)), Comparison("=", V("Y"), V("X")))
    )


# ---------------------------------------------------------------------------------------------
# Seed-style programs


SEED_STYLE = """\
.decl coins(c: long)
.decl num(v: long, n: long)
.input coins
.output num
num(C, 1) :- coins(C).
num(V, min<N>) :- num(V1, N1), coins(C), V = V1 + C, V <= 100, N = N1 + 1.
reach(?x, ?y) <- edge(?x, ?y).
reach(?x, ?z) <- reach(?x, ?y), edge(?y, ?z).
avgsal(D, avg<S>) :- emp(_, D, S).
total(D, sum<S>) := emp(_, D, S), S > 0.
top(D, max<S>) :- emp(E, D, S), ~fired(E).
safe(X) :- node(X), !bad(X).
even(N) :- n(N), N mod 2 = 0.
half(N, H) :- n(N), H = N / 2.
edge(a, b). edge(b, c). edge("c", "d").
emp(alice, sales, 10.5). emp(bob, sales, 20).
?- reach(a, ?w).
?- num(100, N).
"""


def test_seed_style_program_counts():
    program = parse(SEED_STYLE)
    assert len(program.declarations) == 2
    assert program.inputs == ("coins",) and program.outputs == ("num",)
    assert len(program.rules) == 10
    assert len(program.facts) == 5
    assert len(program.queries) == 2
    assert [r.aggregate[1].func for r in program.rules if r.aggregate] == ["min", "avg", "sum", "max"]
    assert program.facts[2].values == ("c", "d")
    assert program.facts[3].values == ("alice", "sales", 10.5)


def test_str_of_parsed_rules_parses_back_to_the_same_ast():
    program = parse(SEED_STYLE + ARCHITECTURE_BLOCK)
    for clause in program.rules + program.facts:
        again = parse(str(clause))
        assert (again.rules + again.facts) == (clause,), str(clause)


def test_parser_is_fast_enough_for_many_programs():
    import time

    start = time.perf_counter()
    for _ in range(100):
        parse(SEED_STYLE)
    assert time.perf_counter() - start < 5.0
