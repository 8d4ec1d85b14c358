"""A fast parser for valid programs: one regex split for the tokens, recursive descent for the
statements, AST records built directly.

``grammar.lark`` stays the specification and the error reporter: this parser accepts exactly
the programs the Lark parser accepts without any error and builds the identical AST for them
(spans, rule texts and anonymous variable numbers included). On anything else (a syntax error,
or a problem the Lark path reports: unknown types or aggregates, misplaced aggregates, bad
escapes, integers out of range, expressions nested too deeply, empty rule bodies), and wherever
Lark's contextual lexer could read the text differently (a keyword used as a name, ``<-``
inside an expression), it raises :class:`Fallback` and :func:`~spark_datalog.syntax.parser.parse`
runs the Lark path, which reports the errors as always. Lark needs about 90 µs per fact and
600 µs per rule; this parser about 5 µs per fact and 17 µs per rule (three literals).
``tests/syntax/test_fast_parser.py`` checks on every program the tests use, and on random and
mutated ones, that both give the same AST.

Speed: the tokens come from one C-level ``re.split`` (a token's kind is read off its first
character, its offset from the lengths of the pieces: about half of the time), lines and
columns from a cursor that moves from line to line (no search per span), and the hot records
(spans, variables, constants, atoms, rules) are built without their frozen dataclass
``__init__``, in mutable twins given their class afterwards (see ``_twin``).
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from itertools import accumulate, chain
from operator import add
from typing import Any, Callable, Optional, cast

from spark_datalog.functors import CONSTRAINTS, NAMED
from spark_datalog.syntax.input_rules import lower_input_rules
from spark_datalog.records import twin as _twin
from spark_datalog.syntax import ast

__all__ = ["ESCAPES", "Fallback", "parse_fast", "unescape"]

_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r"}
# Words the Lark path may read as keywords where a name is expected (prefix operators), and
# names it reads as functors before a '(' (a call, or a constraint literal): left to Lark.
_KEYWORDS = frozenset(("not", "mod", "true", "false", "bnot", "lnot"))
_FUNCTORS = frozenset((*NAMED, *CONSTRAINTS, "as"))
# The last character of a token after which a '%' would be the modulo operator
_TERM_END = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_\"')")
# Names Lark reads as a body aggregate's (``count : {...}``) unless one of ( < , ) . follows
_QUALIFIED_FIRST = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_AGGREGATORS = frozenset(("count", "sum", "min", "max", "mean"))
# Lower-case names ``leaf`` does not read as Soufflé's variables (``primary`` decides for them)
# Soufflé's empty record: the Lark path reads it
_NIL = frozenset(("nil",))
_NOT_NAME_LEAVES = _KEYWORDS | _AGGREGATORS | _NIL
_NOT_AGGREGATOR = re.compile(r"\s*[(<,).]")
# Parentheses and unary minus signs nested deeper than this are left to the Lark path (no deep
# recursion here; Lark reduces without recursion).
_MAX_NESTING = 200

# Every token, captured whole: ``_TOKEN.split(text)`` is [gap, token, gap, ..., token, gap], and
# the gaps must be whitespace (anything else is a character no token starts with). Comments are
# tokens here, dropped afterwards. Alternatives sharing a first character keep the order of the
# grammar (longest first); the most frequent tokens come first.
_TOKEN = re.compile(
    r"""(
      [(),]
    | [A-Za-z_][A-Za-z0-9_]*                        # NAME (a-z first) or VAR
    | \d+(?:\.\d+(?:[eE][+-]?\d+)?|[eE][+-]?\d+)?   # INT or DECIMAL
    | :-|!=|\.(?:decl|input|output|printsize)?
    | "(?:[^"\\\n]|\\.)*"                           # STRING
    | \?[A-Za-z_][A-Za-z0-9_]*                      # QVAR
    | (?:%|//)[^\n]*|/\*(?:.|\n)*?\*/               # comments
    | \?-|:=|<-|<=|>=|[:!~=<>+\-*/]
    )""",
    re.VERBOSE,
)
_WHITESPACE = " \t\r\n\f"
_END = "\x00"  # after the last token (twice): no token is, or starts with, this character
_NAME_FIRST = frozenset("abcdefghijklmnopqrstuvwxyz")
_VAR_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_ASCII_DIGITS = frozenset("0123456789")
_ARGUMENT_END = frozenset((",", ")"))
_COMPARISONS = {op: op for op in ("=", "!=", "<", "<=", ">", ">=")}  # (a dict: op -> a shared string)
_LITERAL_END = frozenset((",", "."))


class Fallback(Exception):
    """The fast parser does not accept the text: the Lark path must parse it."""


def _tokens(text: str) -> tuple[list, array, frozenset]:
    """(values, start offsets, :func:`_after_percent`) of the tokens of ``text``, ending with two
    ``_END`` tokens."""
    parts = _TOKEN.split(text)
    gaps = parts[0::2]
    if "".join(gaps).strip(_WHITESPACE):
        raise Fallback
    values = parts[1::2]
    del parts
    # token i starts after gaps 0..i and tokens 0..i-1; one more: len(text). The offsets are kept
    # as machine integers (a quarter of the memory of a list of ints, far fewer page faults).
    starts = array("q", accumulate(map(add, map(len, gaps), map(len, chain(("",), values)))))
    del gaps
    if _QUALIFIED.search(text) and _has_qualified_name(values, starts):
        raise Fallback  # Lark reads `a.b` as one name (a component instance's relation)
    percent: frozenset = frozenset()
    if "%" in text or "//" in text or "/*" in text:
        if "%" in text:
            percent = _after_percent(values)
        values, starts = _without_comments(values, starts)
    values += (_END, _END)
    starts.append(len(text))
    return values, starts, percent


_QUALIFIED = re.compile(r"[A-Za-z0-9_]\.[A-Za-z_]")


def _has_qualified_name(values: list, starts: array) -> bool:
    """Whether a name, a '.' and a name follow each other with no space between (``a.b``, also
    ``a.decl``, which Lark reads as one qualified name)."""
    first = _QUALIFIED_FIRST
    for i in range(1, len(values) - 1):
        value = values[i]
        if (
            value[0] != "."
            or values[i - 1][0] not in first
            or starts[i] != starts[i - 1] + len(values[i - 1])
        ):
            continue
        if value != "." or (values[i + 1][0] in first and starts[i + 1] == starts[i] + 1):
            return True  # `a.b`, or `a.decl`
    return False


def _without_comments(values: list, starts: array) -> tuple[list, array]:
    """``values`` and ``starts`` (which has one more item, kept) without the comments."""
    kept = [i for i, value in enumerate(values) if value[0] != "%" and value[:2] not in ("//", "/*")]
    return [values[i] for i in kept], array("q", [starts[i] for i in kept] + [starts[-1]])


def _is_identifier(value: str) -> bool:
    """A NAME or VAR token no state of Lark's contextual lexer could read as ``not``/``mod``."""
    return (value[0] in _NAME_FIRST or value[0] in _VAR_FIRST) and value not in ("not", "mod")


def _after_percent(values: list) -> frozenset:
    """Indexes, among the tokens without comments, of the tokens a '%' comment right after a
    term-like token precedes: there Lark reads the '%' as modulo if a term ends before it."""
    found, kept = set(), 0
    for i, value in enumerate(values):
        if value[0] == "%" and i and values[i - 1][-1] in _TERM_END:
            found.add(kept)
        elif value[0] != "%" and value[:2] not in ("//", "/*"):
            kept += 1
    return frozenset(found)


def _is_variable(value: str) -> bool:
    return value[0] in _VAR_FIRST or (value[0] == "?" and value != "?-")


# -- records without their __init__ (see :mod:`spark_datalog.records`) --------------------------

_MutableSpan = _twin(ast.Span)
_MutableVariable = _twin(ast.Variable)
_MutableConstant = _twin(ast.Constant)
_MutableAtom = _twin(ast.Atom)
_MutableRule = _twin(ast.Rule)
_MutableFact = _twin(ast.Fact)
_MutableComparison = _twin(ast.Comparison)


def _span(line: int, column: int) -> ast.Span:
    """``ast.Span(line, column)``, built faster (as are the records below)."""
    span = _MutableSpan()
    span.line = line
    span.column = column
    span.__class__ = ast.Span
    return span


def _variable(name: str, span: ast.Span, anonymous: bool) -> ast.Variable:
    variable = _MutableVariable()
    variable.name = name
    variable.span = span
    variable.anonymous = anonymous
    variable.__class__ = ast.Variable
    return variable


def _constant(value, type_name: str, span: ast.Span) -> ast.Constant:
    constant = _MutableConstant()
    constant.value = value
    constant.type = type_name
    constant.span = span
    constant.__class__ = ast.Constant
    return constant


def _rule(head: ast.Atom, body: tuple, text: str) -> ast.Rule:
    rule = _MutableRule()
    rule.head = head
    rule.body = body
    rule.span = head.span
    rule.text = text
    rule.__class__ = ast.Rule
    return rule


class _Parser:
    """One parse: the token arrays, a position in them, and the clause being built. Where
    ``names_are_variables`` (Soufflé's dialect) a lower-case name in a term is a variable, as
    ``_ToAst.constant`` reads it; the texts accepted are the same (one grammar)."""

    def __init__(self, text: str, names_are_variables: bool = False):
        self.text = text
        self.names_are_variables = names_are_variables
        # the first characters of the arguments ``arguments`` reads as variables itself
        self.variable_first = _UPPER | _NAME_FIRST if names_are_variables else _UPPER
        self.values, self.starts, self.percent = _tokens(text)
        self.pos = 0
        newlines = [-1]
        find = text.find
        at = find("\n")
        while at >= 0:
            newlines.append(at)
            at = find("\n", at + 1)
        newlines.append(len(text) + 1)  # the end of the last line
        self.newlines = newlines
        self.cursor = (1, -1, newlines[1])
        self.anonymous = 0
        self.nesting = 0
        self.names: dict = {}  # predicate name -> its first token: atoms share one string each
        from spark_datalog.syntax import parser  # (not at import: parser imports this module)

        # a leaf has depth 1; the Lark path reports terms of more than MAX_TERM_DEPTH operations
        self.max_depth = parser.MAX_TERM_DEPTH + 1

    # -- positions ----------------------------------------------------------------------------

    def locate(self, offset: int) -> tuple:
        """The cursor for ``offset``: (line, offset of the '\\n' before it or -1, offset of its
        end), Lark's 1-based line with lines counted by '\\n'. The parser mostly moves forward, so
        the cursor is kept and only moved when ``offset`` lies beyond it."""
        newlines = self.newlines
        line = bisect_right(newlines, offset - 1)
        self.cursor = cursor = (line, newlines[line - 1], newlines[line])
        return cursor

    def span_at(self, offset: int) -> ast.Span:
        line, base, end = self.cursor
        if not base < offset <= end:
            line, base, end = self.locate(offset)
        span = _MutableSpan()
        span.line = line
        span.column = offset - base
        span.__class__ = ast.Span
        return span

    def span(self, index: int) -> ast.Span:
        """The span of token ``index`` (Lark's 1-based line and column)."""
        offset = self.starts[index]
        line, base, end = self.cursor
        if not base < offset <= end:
            line, base, end = self.locate(offset)
        span = _MutableSpan()
        span.line = line
        span.column = offset - base
        span.__class__ = ast.Span
        return span

    def expect(self, value: str) -> None:
        if self.values[self.pos] != value:
            raise Fallback
        self.pos += 1

    def name(self) -> str:
        """A NAME token that no state of Lark's contextual lexer could read as a keyword."""
        value = self.values[self.pos]
        if value[0] not in _NAME_FIRST or value in _KEYWORDS:
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
        values = self.values
        while True:
            value = values[self.pos]
            if value[0] in _NAME_FIRST:
                clause = self.clause()
                (facts if type(clause) is ast.Fact else rules).append(clause)
            elif value == _END:
                break
            elif value == "?-":
                queries.append(self.query())
            elif value == ".decl":
                declarations.append(self.declaration())
            elif value in (".input", ".output", ".printsize"):
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
        value = self.values[self.pos]
        if value == ".":
            self.pos += 1
            return self.bodiless(head, first)
        if value not in (":-", ":=", "<-"):
            raise Fallback
        return _rule(head, self.body(self.pos + 1), self.clause_text(first))

    def bodiless(self, head: ast.Atom, first: int):
        """The fact, or rule without a body (with a variable), that ``head`` is."""
        for arg in head.args:
            if type(arg) is not ast.Constant:
                return _rule(head, (), self.clause_text(first))
        fact = _MutableFact()
        fact.atom = head
        fact.span = head.span
        fact.__class__ = ast.Fact
        return fact

    def body(self, pos: int) -> tuple:
        """The literals from token ``pos`` to the '.', which is read too."""
        values = self.values
        body = []
        while True:
            self.pos = pos
            if values[pos + 1] == "(" and values[pos][0] in _NAME_FIRST:
                body.append(self.atom(head=False))  # (a keyword falls back, as in literal)
            else:
                body.append(self.literal())
            pos = self.pos
            if values[pos] != ",":
                break
            pos += 1
        if values[pos] != ".":
            raise Fallback
        self.pos = pos + 1
        return tuple(body)

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
        if self.values[self.pos] != ")":
            columns.append(self.column())
            while self.values[self.pos] == ",":
                self.pos += 1
                columns.append(self.column())
        self.expect(")")
        if self.values[self.pos] == ".":
            self.pos += 1
        return ast.Declaration(name, tuple(columns), span)

    def column(self) -> ast.ColumnDecl:
        value = self.values[self.pos]
        span = self.span(self.pos)
        if value[0] in _VAR_FIRST or (value[0] == "?" and value != "?-"):  # Soufflé's ?name too
            name = value
            self.pos += 1
        else:
            name = self.name()
        self.expect(":")
        type_name = self.name()
        type_name = ast.TYPE_ALIASES.get(type_name, type_name)
        if type_name not in ast.TYPES:
            raise Fallback
        return ast.ColumnDecl(name, type_name, span, declared=type_name)

    def directive(self) -> list:
        kind = self.values[self.pos][1:]
        spans = [self.span(self.pos)]
        self.pos += 1
        names = [self.name()]
        while self.values[self.pos] == ",":
            self.pos += 1
            spans.append(self.span(self.pos))
            names.append(self.name())
        params: tuple = ()
        if self.values[self.pos] == "(":
            self.pos += 1
            params = self.io_params()
        if self.values[self.pos] == ".":
            self.pos += 1
        return [ast.Directive(kind, name, span, params) for name, span in zip(names, spans, strict=True)]

    def io_params(self) -> tuple:
        """``key=value, ...)`` of a directive, the ')' read too: (key, value) text pairs."""
        values = self.values
        params = []
        if values[self.pos] != ")":
            while True:
                window = values[self.pos : self.pos + 3]
                if len(window) < 3:
                    raise Fallback  # the text ends inside the parameters
                key, equals, value = window
                if not _is_identifier(key) or equals != "=":
                    raise Fallback
                if value[0] == '"':
                    value = _unescape(value)
                elif not (_is_identifier(value) or value[0] in _ASCII_DIGITS):
                    raise Fallback
                params.append((key, value))
                self.pos += 3
                if values[self.pos] != ",":
                    break
                self.pos += 1
        self.expect(")")
        return tuple(params)

    # -- literals -----------------------------------------------------------------------------

    def atom(self, head: bool) -> ast.Atom:
        """``name`` or ``name(args)``; aggregates only where ``head``."""
        pos = self.pos
        name = self.values[pos]
        if name[0] not in _NAME_FIRST or name in _KEYWORDS or name in _FUNCTORS:
            raise Fallback
        offset = self.starts[pos]
        line, base, end = self.cursor
        if not base < offset <= end:
            line, base, end = self.locate(offset)
        span = _MutableSpan()
        span.line = line
        span.column = offset - base
        span.__class__ = ast.Span
        args: tuple = ()
        if self.values[pos + 1] == "(":
            args = self.arguments(pos + 2, head)
        else:
            self.pos = pos + 1
        atom = _MutableAtom()
        atom.predicate = self.names.setdefault(name, name)  # one string per predicate: less memory
        atom.args = args
        atom.span = span
        atom.__class__ = ast.Atom
        return atom

    def arguments(self, pos: int, head: bool) -> tuple:
        """The arguments from token ``pos`` (after '(') to the ')', which is read too. Variables
        followed by ',' or ')', the most frequent arguments, are read here."""
        values, starts = self.values, self.starts
        line, base, end = self.cursor
        args = []
        percent = self.percent
        variable_first = self.variable_first
        if values[pos] != ")":
            while True:
                value = values[pos]
                if (
                    value[0] in variable_first
                    and values[pos + 1] in _ARGUMENT_END
                    and pos + 1 not in percent
                    and (value[0] in _UPPER or value not in _NOT_NAME_LEAVES)
                ):
                    offset = starts[pos]
                    if not base < offset <= end:
                        line, base, end = self.locate(offset)
                    span = _MutableSpan()
                    span.line = line
                    span.column = offset - base
                    span.__class__ = ast.Span
                    node = _MutableVariable()
                    node.name = value
                    node.span = span
                    node.anonymous = False
                    node.__class__ = ast.Variable
                    pos += 1
                else:
                    node = self.other_argument(pos, head)
                    pos = self.pos
                args.append(node)
                if values[pos] != ",":
                    break
                pos += 1
        if values[pos] != ")":
            raise Fallback
        self.pos = pos + 1
        return tuple(args)

    def other_argument(self, pos: int, head: bool):
        """The argument at token ``pos`` that ``arguments`` does not read itself; moves past it."""
        follow = self.values[pos + 1]
        node = self.leaf(pos) if follow == "," or follow == ")" else None
        if node is None:
            self.pos = pos
            return self.argument(head)
        self.pos = pos + 1
        return node

    def leaf(self, pos: int):
        """The variable or (short) integer that token ``pos`` is, or None: the most frequent
        arguments, read here without ``argument``'s generality (nor its calls)."""
        if self.percent and pos + 1 in self.percent:
            return None  # a '%' follows: perhaps a modulo
        value = self.values[pos]
        first = value[0]
        node: Any
        if first in _VAR_FIRST:
            node = _MutableVariable()
            if value == "_":
                self.anonymous += 1
                node.name = f"_#{self.anonymous}"
                node.anonymous = True
            else:
                node.name = value
                node.anonymous = False
            cls: type = ast.Variable
        elif first in _ASCII_DIGITS and len(value) < 19 and value.isdigit():
            node = _MutableConstant()
            node.value = int(value)
            node.type = "long"
            cls = ast.Constant
        elif self.names_are_variables and first in _NAME_FIRST and value not in _NOT_NAME_LEAVES:
            node = _MutableVariable()
            node.name = value
            node.anonymous = False
            cls = ast.Variable
        else:
            return None
        offset = self.starts[pos]
        line, base, end = self.cursor
        if not base < offset <= end:
            line, base, end = self.locate(offset)
        span = _MutableSpan()
        span.line = line
        span.column = offset - base
        span.__class__ = ast.Span
        node.span = span
        node.__class__ = cls
        return node

    def argument(self, head: bool):
        values, pos = self.values, self.pos
        if values[pos + 1] == "<" and values[pos][0] in _NAME_FIRST:
            if not head or values[pos] not in ast.AGGREGATE_FUNCTIONS:
                raise Fallback
            span = self.span(pos)
            self.pos = pos + 2
            if not _is_variable(values[pos + 2]):
                raise Fallback
            variable = self.variable(pos + 2)
            self.pos = pos + 3
            self.expect(">")
            return ast.Aggregate(values[pos], variable, span)
        term, _depth = self.expression()
        return term

    def literal(self):
        values, pos = self.values, self.pos
        value = values[pos]
        if value[0] in _NAME_FIRST:
            if value == "not":
                return self.negation()
            if values[pos + 1] == "(" or values[pos + 1] in _LITERAL_END:
                return self.atom(head=False)
        elif value in ("!", "~"):
            return self.negation()
        return self.comparison(pos)

    def comparison(self, pos: int) -> ast.Comparison:
        """``left op right`` from token ``pos``; lone variables and integers read by ``leaf``."""
        values = self.values
        left = self.leaf(pos) if values[pos + 1] in _COMPARISONS else None
        if left is None:
            span = self.span(pos)
            left, _depth = self.expression()
        else:
            span = left.span
            self.pos = pos + 1
        op = values[self.pos]
        if op not in _COMPARISONS:
            raise Fallback
        pos = self.pos = self.pos + 1
        right = self.leaf(pos) if values[pos + 1] in _LITERAL_END else None
        if right is None:
            right, _depth = self.expression()
        else:
            self.pos = pos + 1
        node = _MutableComparison()
        node.op = _COMPARISONS[op]  # the shared string
        node.left = left
        node.right = right
        node.span = span
        node.__class__ = ast.Comparison
        return node

    def negation(self) -> ast.Negation:
        span = self.span(self.pos)
        self.pos += 1
        return ast.Negation(self.atom(head=False), span)

    # -- terms --------------------------------------------------------------------------------

    def expression(self) -> tuple:
        """(term, depth) of ``product ((+|-) product)*``; the depth counts nested operations
        from 1 for a leaf, as ``_ToAst._nest`` does."""
        start = self.starts[self.pos]
        left, depth = self.product()
        values = self.values
        while values[self.pos] in ("+", "-"):
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
        values = self.values
        while True:
            if self.percent and self.pos in self.percent:
                raise Fallback  # a '%' after a term: Lark reads it as modulo
            value = values[self.pos]
            if value not in ("*", "/", "mod"):
                return left, depth
            self.pos += 1
            right, right_depth = self.unary()
            depth = 1 + max(depth, right_depth)
            if depth > self.max_depth:
                raise Fallback
            left = ast.BinaryOp(value, left, right, self.span_at(start))

    def unary(self, negated: bool = False) -> tuple:
        if self.values[self.pos] != "-":
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
        value = self.values[pos]
        first = value[0]
        self.pos = pos + 1
        if _is_variable(value):
            return self.variable(pos), 1
        if first.isdecimal():
            return self.number(pos), 1
        if first in _NAME_FIRST:
            if value == "true" or value == "false":
                return _constant(value == "true", "bool", self.span(pos)), 1
            if value in _KEYWORDS or self.values[pos + 1] == "(":
                raise Fallback
            if value in _AGGREGATORS and not _NOT_AGGREGATOR.match(self.text, self.starts[pos] + len(value)):
                raise Fallback
            if self.names_are_variables and value in _NIL:
                raise Fallback  # Soufflé's empty record: the Lark path reads it
            if self.names_are_variables:  # Soufflé's dialect: `x` is a variable
                return _variable(value, self.span(pos), False), 1
            return _constant(value, "string", self.span(pos)), 1
        if first == '"':
            return _constant(_unescape(value), "string", self.span(pos)), 1
        if value == "(":
            return self.parenthesised(pos)
        raise Fallback

    def number(self, pos: int) -> ast.Constant:
        value = self.values[pos]
        if not value.isdecimal():
            return _constant(float(value), "double", self.span(pos))
        if len(value) > 19:
            raise Fallback
        return _constant(int(value), "long", self.span(pos))

    def parenthesised(self, pos: int) -> tuple:
        """(term, depth) of '(' expression ')', the '(' being token ``pos``."""
        self.nesting += 1
        if self.nesting > _MAX_NESTING:
            raise Fallback
        inner, depth = self.expression()
        self.nesting -= 1
        self.expect(")")
        if type(inner) is ast.Constant and self.values[pos - 1] == "-":
            # '-(5)': the Lark path folds it with bookkeeping keyed by id(); leave it to Lark
            raise Fallback
        return inner, depth

    def variable(self, index: int) -> ast.Variable:
        value = self.values[index]
        if value == "_":
            self.anonymous += 1
            return _variable(f"_#{self.anonymous}", self.span(index), True)
        return _variable(value, self.span(index), False)


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


def parse_fast(text: str, filename: Optional[str] = None, dialect: str = "datalog") -> ast.Program:
    """The AST of ``text`` as the Lark path builds it in ``dialect`` (``datalog``, or ``souffle``:
    a lower-case name in a term is a variable); raises :class:`Fallback` on anything the Lark
    path would report as an error or where it could read the text differently.

    Example::

        >>> print(parse_fast("p(X) :- q(X, x).").rules[0])
        p(X) :- q(X, "x").
        >>> print(parse_fast("p(X) :- q(X, x).", dialect="souffle").rules[0])
        p(X) :- q(X, x).
    """
    program = _Parser(text, names_are_variables=dialect == "souffle").program(filename)
    return lower_input_rules(program)  # the one lowering of the core language
