"""A fast parser for valid programs: one compiled regex for the tokens, recursive descent for the
statements, AST records built directly.

``grammar.lark`` stays the specification and the error reporter: this parser accepts exactly
the programs the Lark parser accepts without any error and builds the identical AST for them
(spans, rule texts and anonymous variable numbers included). On anything else (a syntax error,
or a problem the Lark path reports: unknown types or aggregates, misplaced aggregates, bad
escapes, integers out of range, expressions nested too deeply, empty rule bodies), and wherever
Lark's contextual lexer could read the text differently (a keyword used as a name, ``<-``
inside an expression), it raises :class:`Fallback` and :func:`~spark_datalog.syntax.parser.parse`
runs the Lark path, which reports the errors as always. Lark needs about 90 µs per fact and
600 µs per rule; this parser about a tenth of that. ``tests/syntax/test_fast_parser.py`` checks
on every program the tests use, and on random and mutated ones, that both give the same AST.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Callable, Optional, cast

from spark_datalog.syntax import ast

__all__ = ["ESCAPES", "Fallback", "parse_fast", "unescape"]

_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r"}
_KEYWORDS = frozenset(("not", "mod", "true", "false"))
# Parentheses and unary minus signs nested deeper than this are left to the Lark path (no deep
# recursion here; Lark reduces without recursion).
_MAX_NESTING = 200

# Token kinds: the index of the matching group of _TOKEN. Whitespace and comments before a token
# are skipped by the regex itself (possessively: a comment is never read as tokens).
_SKIP = r"(?:[ \t\r\n\f]+|(?:%|//)[^\n]*|/\*(?:.|\n)*?\*/)*+"
_TOKEN = re.compile(
    _SKIP
    + r"""(?:
      (\d+\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)   # 1 DECIMAL
    | (\d+)                                        # 2 INT
    | ([a-z][A-Za-z0-9_]*)                         # 3 NAME
    | ([A-Z_][A-Za-z0-9_]*|\?[A-Za-z_][A-Za-z0-9_]*)  # 4 VAR, QVAR
    | ("(?:[^"\\\n]|\\.)*")                        # 5 STRING
    | (\.decl|\.input|\.output|\?-|:-|:=|<-|!=|<=|>=|[.,:()!~=<>+\-*/])  # 6 punctuation
    | (\Z)                                         # 7 end of text
    | ([\s\S])                                     # 8 anything else
    )""",
    re.VERBOSE,
)
_DECIMAL, _INT, _NAME, _VAR, _STRING, _PUNCT, _END, _BAD = range(1, 9)
_COMPARISONS = frozenset(("=", "!=", "<", "<=", ">", ">="))
_LITERAL_END = frozenset((",", "."))


class Fallback(Exception):
    """The fast parser does not accept the text: the Lark path must parse it."""


def _tokens(text: str) -> tuple[list, list, list]:
    """(kinds, values, start offsets) of the tokens of ``text``, ending with an ``_END`` token."""
    kinds: list = []
    values: list = []
    starts: list = []
    for match in _TOKEN.finditer(text):
        kind = cast(int, match.lastindex)
        if kind == _END:  # twice: the parser looks one token past the current one
            kinds += (_END, _END)
            values += ("", "")
            starts += (len(text), len(text))
            return kinds, values, starts
        if kind == _BAD:
            raise Fallback
        kinds.append(kind)
        values.append(match.group(kind))
        starts.append(match.start(kind))
    raise Fallback  # pragma: no cover - the regex always ends with an end-of-text match


class _Parser:
    """One parse: the token arrays, a position in them, and the clause being built."""

    def __init__(self, text: str):
        self.text = text
        self.kinds, self.values, self.starts = _tokens(text)
        self.pos = 0
        newlines = [-1]
        find = text.find
        at = find("\n")
        while at >= 0:
            newlines.append(at)
            at = find("\n", at + 1)
        self.newlines = newlines
        self.anonymous = 0
        self.nesting = 0
        from spark_datalog.syntax import parser  # (not at import: parser imports this module)

        # a leaf has depth 1; the Lark path reports terms of more than MAX_TERM_DEPTH operations
        self.max_depth = parser.MAX_TERM_DEPTH + 1

    # -- positions ----------------------------------------------------------------------------

    def span(self, index: int) -> ast.Span:
        """The span of token ``index`` (Lark's 1-based line and column, lines counted by '\\n')."""
        start = self.starts[index]
        line = bisect_right(self.newlines, start - 1)
        return ast.Span(line, start - self.newlines[line - 1])

    def expect(self, value: str) -> None:
        if self.values[self.pos] != value or self.kinds[self.pos] != _PUNCT:
            raise Fallback
        self.pos += 1

    def name(self) -> str:
        """A NAME token that no state of Lark's contextual lexer could read as a keyword."""
        if self.kinds[self.pos] != _NAME:
            raise Fallback
        value = self.values[self.pos]
        if value in _KEYWORDS:
            raise Fallback
        self.pos += 1
        return value

    # -- statements ---------------------------------------------------------------------------

    def program(self, filename: Optional[str]) -> ast.Program:
        declarations: list = []
        directives: list = []
        facts: list = []
        rules: list = []
        queries: list = []
        kinds, values = self.kinds, self.values
        while True:
            kind = kinds[self.pos]
            if kind == _NAME:
                clause = self.clause()
                (facts if type(clause) is ast.Fact else rules).append(clause)
            elif kind == _END:
                break
            elif kind != _PUNCT:
                raise Fallback
            elif values[self.pos] == "?-":
                queries.append(self.query())
            elif values[self.pos] == ".decl":
                declarations.append(self.declaration())
            elif values[self.pos] in (".input", ".output"):
                directives.extend(self.directive())
            else:
                raise Fallback
        return ast.Program(
            declarations=tuple(declarations),
            directives=tuple(directives),
            facts=tuple(facts),
            rules=tuple(rules),
            queries=tuple(queries),
            source=self.text,
            filename=filename,
        )

    def clause(self):
        first = self.pos
        self.anonymous = 0
        head = self.atom(head=True)
        kind, value = self.kinds[self.pos], self.values[self.pos]
        if kind != _PUNCT:
            raise Fallback
        if value == ".":
            self.pos += 1
            for arg in head.args:
                if type(arg) is not ast.Constant:
                    return ast.Rule(head, (), head.span, self.clause_text(first))
            return ast.Fact(head, head.span)
        if value not in (":-", ":=", "<-"):
            raise Fallback
        self.pos += 1
        body = [self.literal()]
        while self.kinds[self.pos] == _PUNCT and self.values[self.pos] == ",":
            self.pos += 1
            body.append(self.literal())
        self.expect(".")
        return ast.Rule(head, tuple(body), head.span, self.clause_text(first))

    def clause_text(self, first: int) -> str:
        """The source of the clause from token ``first`` to the '.' just read."""
        return self.text[self.starts[first] : self.starts[self.pos - 1] + 1]

    def query(self) -> ast.Query:
        span = self.span(self.pos)
        self.pos += 1
        self.anonymous = 0
        atom = self.atom(head=False)
        self.expect(".")
        return ast.Query(atom, span)

    def declaration(self) -> ast.Declaration:
        span = self.span(self.pos)
        self.pos += 1
        name = self.name()
        self.expect("(")
        columns = []
        if not (self.kinds[self.pos] == _PUNCT and self.values[self.pos] == ")"):
            columns.append(self.column())
            while self.kinds[self.pos] == _PUNCT and self.values[self.pos] == ",":
                self.pos += 1
                columns.append(self.column())
        self.expect(")")
        if self.kinds[self.pos] == _PUNCT and self.values[self.pos] == ".":
            self.pos += 1
        return ast.Declaration(name, tuple(columns), span)

    def column(self) -> ast.ColumnDecl:
        kind = self.kinds[self.pos]
        if kind == _VAR and self.values[self.pos][0] != "?":
            name = self.values[self.pos]
            span = self.span(self.pos)
            self.pos += 1
        else:
            span = self.span(self.pos)
            name = self.name()
        self.expect(":")
        type_name = self.name()
        type_name = ast.TYPE_ALIASES.get(type_name, type_name)
        if type_name not in ast.TYPES:
            raise Fallback
        return ast.ColumnDecl(name, type_name, span)

    def directive(self) -> list:
        kind = self.values[self.pos][1:]
        spans = [self.span(self.pos)]
        self.pos += 1
        names = [self.name()]
        while self.kinds[self.pos] == _PUNCT and self.values[self.pos] == ",":
            self.pos += 1
            spans.append(self.span(self.pos))
            names.append(self.name())
        if self.kinds[self.pos] == _PUNCT and self.values[self.pos] == ".":
            self.pos += 1
        return [ast.Directive(kind, name, span) for name, span in zip(names, spans, strict=True)]

    # -- literals -----------------------------------------------------------------------------

    def atom(self, head: bool) -> ast.Atom:
        """``name`` or ``name(args)``; aggregates only where ``head``."""
        span = self.span(self.pos)
        name = self.name()
        if not (self.kinds[self.pos] == _PUNCT and self.values[self.pos] == "("):
            return ast.Atom(name, (), span)
        self.pos += 1
        args = []
        if not (self.kinds[self.pos] == _PUNCT and self.values[self.pos] == ")"):
            args.append(self.argument(head))
            while self.kinds[self.pos] == _PUNCT and self.values[self.pos] == ",":
                self.pos += 1
                args.append(self.argument(head))
        self.expect(")")
        return ast.Atom(name, tuple(args), span)

    def argument(self, head: bool):
        kinds, values, pos = self.kinds, self.values, self.pos
        # the common cases first: a lone variable or number followed by ',' or ')'
        follow = values[pos + 1] if kinds[pos + 1] == _PUNCT else None
        kind = kinds[pos]
        if follow == "," or follow == ")":
            if kind == _INT:
                value = values[pos]
                if len(value) < 19:
                    self.pos = pos + 1
                    return ast.Constant(int(value), "long", self.span(pos))
            elif kind == _VAR:
                self.pos = pos + 1
                return self.variable(pos)
        elif follow == "<" and kind == _NAME:
            if not head or values[pos] not in ast.AGGREGATE_FUNCTIONS:
                raise Fallback
            span = self.span(pos)
            self.pos = pos + 2
            if kinds[pos + 2] != _VAR:
                raise Fallback
            variable = self.variable(pos + 2)
            self.pos = pos + 3
            self.expect(">")
            return ast.Aggregate(values[pos], variable, span)
        term, _depth = self.expression()
        return term

    def literal(self):
        kinds, values, pos = self.kinds, self.values, self.pos
        kind, value = kinds[pos], values[pos]
        if kind == _NAME:
            if value == "not":
                return self.negation()
            if kinds[pos + 1] == _PUNCT and (values[pos + 1] == "(" or values[pos + 1] in _LITERAL_END):
                return self.atom(head=False)
        elif kind == _PUNCT and value in ("!", "~"):
            return self.negation()
        left_start = self.starts[pos]
        left, _depth = self.expression()
        if kinds[self.pos] != _PUNCT or values[self.pos] not in _COMPARISONS:
            raise Fallback
        op = values[self.pos]
        self.pos += 1
        right, _depth = self.expression()
        return ast.Comparison(op, left, right, self.span_at(left_start))

    def negation(self) -> ast.Negation:
        span = self.span(self.pos)
        self.pos += 1
        return ast.Negation(self.atom(head=False), span)

    # -- terms --------------------------------------------------------------------------------

    def span_at(self, offset: int) -> ast.Span:
        line = bisect_right(self.newlines, offset - 1)
        return ast.Span(line, offset - self.newlines[line - 1])

    def expression(self) -> tuple:
        """(term, depth) of ``product ((+|-) product)*``; the depth counts nested operations
        from 1 for a leaf, as ``_ToAst._nest`` does."""
        start = self.starts[self.pos]
        left, depth = self.product()
        kinds, values = self.kinds, self.values
        while kinds[self.pos] == _PUNCT and values[self.pos] in ("+", "-"):
            op = values[self.pos]
            self.pos += 1
            right, right_depth = self.product()
            depth = 1 + max(depth, right_depth)
            if depth > self.max_depth:
                raise Fallback
            left = ast.BinaryOp(op, left, right, self.span_at(start))
        return left, depth

    def product(self) -> tuple:
        start = self.starts[self.pos]
        left, depth = self.unary()
        kinds, values = self.kinds, self.values
        while True:
            kind, value = kinds[self.pos], values[self.pos]
            if not ((kind == _PUNCT and value in ("*", "/")) or (kind == _NAME and value == "mod")):
                return left, depth
            self.pos += 1
            right, right_depth = self.unary()
            depth = 1 + max(depth, right_depth)
            if depth > self.max_depth:
                raise Fallback
            left = ast.BinaryOp(value, left, right, self.span_at(start))

    def unary(self, negated: bool = False) -> tuple:
        if not (self.kinds[self.pos] == _PUNCT and self.values[self.pos] == "-"):
            term, depth = self.primary()
            # out of range, unless negated: '-9223372036854775808'
            if not negated and _out_of_range(term):
                raise Fallback
            return term, depth
        span = self.span(self.pos)
        self.pos += 1
        self.nesting += 1
        if self.nesting > _MAX_NESTING:
            raise Fallback
        operand, depth = self.unary(negated=True)
        self.nesting -= 1
        if type(operand) is ast.Constant and operand.type in ("long", "double"):
            value = -cast(float, operand.value)
            if operand.type == "long" and value < _LONG_MIN:
                raise Fallback
            return ast.Constant(value, operand.type, span), 1
        depth += 1
        if depth > self.max_depth:
            raise Fallback
        return ast.BinaryOp("-", ast.Constant(0, "long", span), operand, span), depth

    def primary(self) -> tuple:
        pos = self.pos
        kind, value = self.kinds[pos], self.values[pos]
        self.pos = pos + 1
        if kind == _VAR:
            return self.variable(pos), 1
        if kind == _INT:
            if len(value) > 19:
                raise Fallback
            return ast.Constant(int(value), "long", self.span(pos)), 1
        if kind == _NAME:
            if value == "true" or value == "false":
                return ast.Constant(value == "true", "bool", self.span(pos)), 1
            if value in _KEYWORDS:
                raise Fallback
            return ast.Constant(value, "string", self.span(pos)), 1
        if kind == _STRING:
            return ast.Constant(_unescape(value), "string", self.span(pos)), 1
        if kind == _DECIMAL:
            return ast.Constant(float(value), "double", self.span(pos)), 1
        if kind == _PUNCT and value == "(":
            self.nesting += 1
            if self.nesting > _MAX_NESTING:
                raise Fallback
            inner, depth = self.expression()
            self.nesting -= 1
            self.expect(")")
            if type(inner) is ast.Constant and self.kinds[pos - 1] == _PUNCT and self.values[pos - 1] == "-":
                # '-(5)': the Lark path folds it with bookkeeping keyed by id(); leave it to Lark
                raise Fallback
            return inner, depth
        raise Fallback

    def variable(self, index: int) -> ast.Variable:
        value = self.values[index]
        if value == "_":
            self.anonymous += 1
            return ast.Variable(f"_#{self.anonymous}", self.span(index), True)
        return ast.Variable(value, self.span(index))


def _out_of_range(term) -> bool:
    return type(term) is ast.Constant and term.type == "long" and cast(int, term.value) > _LONG_MAX


def _unescape(token: str) -> str:
    body = token[1:-1]
    return body if "\\" not in body else unescape(body, _give_up)


def _give_up(position: int, escaped: str) -> None:
    raise Fallback


def unescape(body: str, unknown: Callable[[int, str], None]) -> str:
    """The value of a string literal's ``body`` (between the quotes); ``unknown(i, c)`` is called
    for an escape ``\\c`` the language lacks at index ``i`` of ``body`` (which then stands for ``c``).

    Example::

        unescape('a\\tb', print)  # 'a\tb'
    """
    out: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if char == "\\":
            escaped = body[i + 1]
            if escaped not in ESCAPES:
                unknown(i, escaped)
            out.append(ESCAPES.get(escaped, escaped))
            i += 2
        else:
            out.append(char)
            i += 1
    return "".join(out)


def parse_fast(text: str, filename: Optional[str] = None) -> ast.Program:
    """The AST of ``text`` as the Lark path builds it; raises :class:`Fallback` on anything the
    Lark path would report as an error or where it could read the text differently."""
    return _Parser(text).program(filename)
