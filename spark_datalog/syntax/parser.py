"""Program text -> :class:`~spark_datalog.syntax.ast.Program`.

Two parsers, one language. The grammar lives in ``grammar.lark`` next to this module (package
data): it is the specification and the error reporter. :func:`parse` first tries the fast
hand-written parser of :mod:`spark_datalog.syntax.fast` (one regex for the tokens, recursive
descent), which accepts only valid programs of the core language (in either dialect) and builds
the same AST the Lark path builds; on
anything else it gives up and :func:`parse_lark` parses the text. The reason is speed: Lark
costs about 90 µs per fact and 600 µs per rule (its ``feed_token`` and lexer are two thirds of
it; lark-cython only halves it), too slow for 100,000 clauses in 5 s (issue 19, item 9). The
differential tests (``tests/syntax/test_fast_parser.py``) check on every program the tests use
and on random and mutated texts that the fast parser falls back or builds the identical AST,
spans and rule texts included.

The Lark path compiles the grammar once, lazily, into an LALR(1) parser that calls
:class:`_ToAst` at every reduction to build the AST records directly (no parse tree, no
recursion). Problems it finds (unknown types, misplaced aggregates, bad escapes) are collected and
raised together. After a syntax error parsing starts again at the next statement, so every syntax
error is reported, each reworded for people.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
from pathlib import Path
from typing import Mapping, Optional, Sequence, cast

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from spark_datalog import functors
from spark_datalog.errors import ParseError, raise_collected
from spark_datalog.syntax import ast
from spark_datalog.syntax.fast import Fallback, parse_fast, unescape
from spark_datalog.syntax.lowering import lower
from spark_datalog.syntax.preprocess import has_directives, preprocess

__all__ = ["DIALECTS", "parse", "parse_lark"]

DIALECTS = ast.DIALECTS

_GRAMMAR_PATH = Path(__file__).parent / "grammar.lark"
_LOCK = threading.Lock()
_PARSER: Optional[Lark] = None

_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
# The deepest expression accepted (a sum of MAX_TERM_DEPTH terms, or as many nested operations);
# the passes after parsing walk terms recursively, and RECURSION_LIMIT frames are enough for them.
MAX_TERM_DEPTH = 1000
RECURSION_LIMIT = 12 * MAX_TERM_DEPTH
_LOG = logging.getLogger("spark_datalog")


def _parser() -> Lark:
    """The LALR parser, built once. It calls :class:`_ToAst` at every reduction (no parse tree,
    no recursion: a deeply nested expression costs no stack)."""
    global _PARSER
    if _PARSER is None:
        with _LOCK:
            if _PARSER is None:
                _PARSER = Lark(
                    _GRAMMAR_PATH.read_text(encoding="utf-8"),
                    parser="lalr",
                    lexer="contextual",
                    transformer=_Callbacks(),
                    maybe_placeholders=False,
                    cache=False,
                )
    return _PARSER


def parse(
    text: str,
    filename: Optional[str] = None,
    dialect: str = "datalog",
    include_dirs: Sequence[str] = (),
    macros: Optional[Mapping[str, str]] = None,
) -> ast.Program:
    """Parse a Datalog program. Raises :class:`ParseError` (with line, column and a caret excerpt);
    every syntax error of the text, or else every problem found while building the AST (unknown
    types, misplaced aggregates, bad escapes), is in ``.errors``. ``dialect`` is ``datalog`` (a
    lower-case name in a term is a symbol: ``p(lis)``) or ``souffle`` (it is a variable, as in
    Soufflé: ``path(x, y) :- edge(x, y).``); they read every other construct alike.

    A text with preprocessor directives (``#include``, ``#define``, ``#ifdef``, ...: a line
    starting with ``#``) is preprocessed first (:mod:`spark_datalog.syntax.preprocess`; included
    files are found relative to ``filename``'s directory, then in ``include_dirs``); the
    program's ``source`` is then the preprocessed text, and errors point into the files.
    ``macros`` (Soufflé's ``-M``) are defined first: ``{"N": "10"}`` is ``#define N 10``."""
    _allow_deep_terms()
    if dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}; expected one of {', '.join(DIALECTS)}")
    if macros or has_directives(text):
        text = preprocess(text, filename, include_dirs, macros)
    try:
        return parse_fast(text, filename, dialect)
    except (Fallback, RecursionError):
        pass  # not a valid program, or one the fast parser leaves to Lark: Lark decides
    return parse_lark(text, filename, dialect)


def parse_lark(text: str, filename: Optional[str] = None, dialect: str = "datalog") -> ast.Program:
    """:func:`parse` by the Lark parser alone: the specification, and the error reporter."""
    _allow_deep_terms()
    builder = _ToAst(text, names_are_variables=dialect == "souffle")
    with _building(builder):
        statements, syntax_errors = _parse_recovering(text, filename, builder)
    program = _program(statements, text, filename)
    program, lowering_errors = lower(
        program, builder.type_spans, complete=not (syntax_errors or builder.errors)
    )
    raise_collected(syntax_errors + builder.errors + lowering_errors, text, filename)
    _warn_of_symbol_names(builder, filename)
    return program


def _warn_of_symbol_names(builder: "_ToAst", filename: Optional[str]) -> None:
    """Log that a program written in Soufflé's syntax reads lower-case names as symbols."""
    token = builder.first_symbol_name
    if builder.souffle_syntax and token is not None:
        _LOG.warning(
            "%s:%s:%s: '%s' reads as a symbol (dialect datalog); in Soufflé it is a variable: "
            "parse with dialect='souffle' (--dialect souffle) to read lower-case names as variables",
            filename or "<program>",
            token.line,
            token.column,
            token,
        )


def _allow_deep_terms() -> None:
    """Raise the interpreter's recursion limit (never lower it) so that analysis, translation,
    explain and evaluation, which walk terms recursively, handle terms up to MAX_TERM_DEPTH."""
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)


_allow_deep_terms()  # at import too, so that it never changes in the middle of a caller's work


def _program(statements, text: str, filename: Optional[str]) -> ast.Program:
    groups: dict[type, list] = {
        kind: []
        for kind in (
            ast.Declaration,
            ast.Directive,
            ast.Fact,
            ast.Rule,
            ast.Query,
            ast.TypeDecl,
            ast.Component,
            ast.Subsumption,
            ast.FunctorDecl,
        )
    }
    for statement in statements:
        for node in statement if isinstance(statement, list) else [statement]:
            if node is not None:
                groups[ast.Component if isinstance(node, ast.Init) else type(node)].append(node)
    return ast.Program(
        declarations=tuple(groups[ast.Declaration]),
        directives=tuple(groups[ast.Directive]),
        facts=tuple(groups[ast.Fact]),
        rules=tuple(groups[ast.Rule]),
        queries=tuple(groups[ast.Query]),
        types=tuple(groups[ast.TypeDecl]),
        components=tuple(groups[ast.Component]),
        subsumptions=tuple(groups[ast.Subsumption]),
        functors=tuple(groups[ast.FunctorDecl]),
        source=text,
        filename=filename,
    )


# ---------------------------------------------------------------------------------------------
# Parse tree -> AST


class _ChoiceDomain:
    """The keys of a ``choice-domain`` qualifier (column names) and their tokens."""

    def __init__(self, keys: tuple, tokens: list):
        self.keys = keys
        self.tokens = tokens


class _Nested:
    """A parenthesised disjunction in a body, until its conjunction multiplies it out."""

    def __init__(self, alternatives: list):
        self.alternatives = alternatives


def _alternatives(literals: list) -> list[tuple]:
    """The conjunctions ``literals`` stands for once each nested disjunction in it is multiplied
    out: ``a, (b ; c), d`` is ``[(a, b, d), (a, c, d)]``."""
    alternatives: list[tuple] = [()]
    for literal in literals:
        choices = literal.alternatives if isinstance(literal, _Nested) else [(literal,)]
        alternatives = [done + choice for done in alternatives for choice in choices]
    return alternatives


def _span(token) -> ast.Span:
    return ast.Span(token.line, token.column)


def _tokens(children) -> list[Token]:
    return [c for c in children if isinstance(c, Token)]


def _ground(term) -> bool:
    """Whether ``term`` is a constant or a record term of constants (a fact's argument)."""
    if isinstance(term, ast.RecordTerm):
        return all(_ground(arg) for arg in term.args)
    return isinstance(term, ast.Constant)


def _values(children) -> list:
    return [c for c in children if not isinstance(c, Token)]


_CURRENT = threading.local()


class _building:
    """Makes ``builder`` the :class:`_ToAst` the shared parser's callbacks use in this thread."""

    def __init__(self, builder: "_ToAst"):
        self.builder = builder

    def __enter__(self):
        self.previous = getattr(_CURRENT, "builder", None)
        _CURRENT.builder = self.builder

    def __exit__(self, *exc):
        _CURRENT.builder = self.previous


class _Callbacks:
    """What the parser calls at each reduction: forwards to this thread's :class:`_ToAst`."""

    def __getattr__(self, name: str):
        if name.startswith("_") or not hasattr(_ToAst, name):
            raise AttributeError(name)

        def callback(children):
            return getattr(_CURRENT.builder, name)(children)

        callback.__name__ = name
        return callback


# Soufflé's lattice qualifiers that are parsed so that the error names them (``btree_max`` and
# ``btree_min`` are lowered to subsumption: ``syntax.subsumption.lattice_subsumptions``)
_REFUSED_QUALIFIERS = ("btree_sum",)


class _ToAst:
    """Builds AST nodes bottom-up, one reduction at a time. One instance per parse: it numbers
    anonymous variables per clause (the parser reduces a clause's children in source order, the
    clause after all of them)."""

    def __init__(self, source: str, names_are_variables: bool = False):
        self.source = source
        self.names_are_variables = names_are_variables  # Soufflé: `x` in a term is a variable
        self.first_symbol_name: Optional[Token] = None  # the first lower-case name read as a symbol
        self.souffle_syntax = False  # whether the text uses a construct only Soufflé's dialect has
        self.errors: list[ParseError] = []
        self._anonymous = 0
        # id(node) -> first token of the node, where it is not the node's own span: an atom's
        # name token (for rule texts) and a parenthesised term's '(' (for spans of the enclosing)
        self._first: dict = {}
        self._depth: dict = {}  # id(term) -> nesting depth of the clause's operations
        self.type_spans: dict = {}  # id(ColumnDecl) -> the span of its type's name
        self.plans = 0  # Soufflé's `.plan` clauses read (checked, then ignored)
        self._param_tokens: dict = {}  # id(directive parameter) -> its key's token
        self._limited: dict = {}  # relation -> the name token of its .limitsize

    def _error(self, message: str, where) -> None:
        self.errors.append(ParseError(message, where.line, where.column))

    def restart(self) -> None:
        """Forget the clause a syntax error interrupted (parsing starts again at a statement)."""
        self._end_clause()

    def _start(self, node) -> ast.Span:
        token = self._first.get(id(node))
        return _span(token) if token is not None else node.span

    # -- statements ---------------------------------------------------------------------------

    def start(self, children):
        if self.plans:
            _LOG.warning("%d .plan clause(s) ignored: the planner orders each rule's joins", self.plans)
        return children

    def _end_clause(self) -> None:
        self._anonymous = 0
        self._first.clear()
        self._depth.clear()

    def fact_or_rule(self, children):
        head, dot = children
        text = self._text(head, dot)
        self._end_clause()
        if all(_ground(arg) for arg in head.args):
            return ast.Fact(head, span=head.span)
        return ast.Rule(head, (), span=head.span, text=text)

    def rule(self, children):
        heads, body, dot = children[0], children[2], children[3]
        text = self._text(heads[0], dot)
        self._end_clause()
        for literal in (literal for alternative in body for literal in alternative):
            atom = literal.atom if isinstance(literal, ast.Negation) else literal
            if isinstance(atom, ast.Atom):
                self._no_aggregate_outside_head(atom, "rule body")
        if len(children) > 4:
            self._check_plan(children[4], body)
        return [
            ast.Rule(head, alternative, span=head.span, text=text) for head in heads for alternative in body
        ]

    def subsumption(self, children):
        """``r(X, A) <= r(X, B) :- B < A.``: one subsumptive clause per alternative of the body."""
        self.souffle_syntax = True
        dominated, _le, dominating, _neck, body, dot = children
        text = self._text(dominated, dot)
        self._end_clause()
        for atom in (dominated, dominating):
            self._no_aggregate_outside_head(atom, "subsumptive clause")
        return [
            ast.Subsumption(dominated, dominating, alternative, span=dominated.span, text=text)
            for alternative in body
        ]

    def query_plan(self, children):
        self.souffle_syntax = True
        self.plans += 1
        return [c for c in children if isinstance(c, tuple)]

    def plan_version(self, children):
        """``0:(2, 1)``: (the version's token, the order of the body's atoms)."""
        version, *order = [t for t in _tokens(children) if t.type == "INT"]
        return version, tuple(int(t) for t in order)

    def _check_plan(self, versions: list, body: list) -> None:
        """Each version of a ``.plan`` orders every atom of the rule's body once (Soufflé's check:
        a permutation of 1..n, n the body's positive atoms)."""
        for alternative in body:
            atoms = sum(isinstance(literal, ast.Atom) for literal in alternative)
            for version, order in versions:
                if sorted(order) != list(range(1, atoms + 1)):
                    self._error(
                        f".plan version {version} orders ({', '.join(map(str, order))}): the rule's "
                        f"body has {atoms} atom(s), so a permutation of 1..{atoms} is expected",
                        version,
                    )
                    return

    def heads(self, children):
        heads = _values(children)
        self.souffle_syntax |= len(heads) > 1
        return heads

    def body(self, children):
        """The body's alternatives, each a tuple of literals (disjunctions multiplied out)."""
        self.souffle_syntax |= len(children) > 1
        return [alternative for conjunction in _values(children) for alternative in conjunction]

    def conjunction(self, children):
        return _alternatives(_values(children))

    def nested_body(self, children):
        self.souffle_syntax = True
        groups: list[list] = [[]]
        for child in children[1:-1]:
            if isinstance(child, Token):
                if child.type == "SEMI":
                    groups.append([])
            else:
                groups[-1].append(child)
        return _Nested([alternative for group in groups for alternative in _alternatives(group)])

    def empty_body(self, children):
        neck = [t for t in _tokens(children) if t.type == "NECK"][0]
        self._end_clause()
        self._error(
            f"'{neck}' must be followed by at least one body literal (write 'head.' for a fact)", neck
        )
        return []

    def query(self, children):
        atom = _values(children)[0]
        self._end_clause()
        self._no_aggregate_outside_head(atom, "query")
        return ast.Query(atom, span=_span(children[0]))

    def declaration(self, children):
        name = children[1]
        values = [c for c in _values(children) if c is not None]
        columns = tuple(c for c in values if isinstance(c, ast.ColumnDecl))
        qualifiers = tuple(c for c in values if isinstance(c, str))
        domains = tuple(key for c in values if isinstance(c, _ChoiceDomain) for key in c.keys)
        self._check_choice_domains(str(name), columns, [c for c in values if isinstance(c, _ChoiceDomain)])
        return ast.Declaration(
            str(name), columns, span=_span(children[0]), qualifiers=qualifiers, choice_domains=domains
        )

    def _check_choice_domains(self, name: str, columns: tuple, domains: list) -> None:
        """Every column a ``choice-domain`` names is a column of the relation, once per key."""
        known = {column.name for column in columns}
        for domain in domains:
            for key, tokens in zip(domain.keys, domain.tokens, strict=True):
                for column, token in zip(key, tokens, strict=True):
                    if column not in known:
                        self._error(
                            f"choice-domain of '{name}' names '{column}', not one of its columns", token
                        )
                if len(set(key)) < len(key):
                    self._error(f"choice-domain of '{name}' names a column twice in one key", tokens[0])

    def column(self, children):
        name, _colon, type_token, *lattice = children
        if lattice:
            self._error(
                f"the lattice column type '{type_token}<>' is not supported (nor are .lattice "
                "declarations): aggregate in a rule, or use subsumption (<=)",
                lattice[0],
            )
        type_name = ast.TYPE_ALIASES.get(str(type_token), str(type_token))
        column = ast.ColumnDecl(str(name), type_name, span=_span(name))
        self.type_spans[id(column)] = _span(type_token)  # where lowering reports an unknown type
        return column

    def qualifier(self, children):
        self.souffle_syntax = True
        token = children[0]
        if str(token) in _REFUSED_QUALIFIERS:
            self._error(
                f"the qualifier '{token}' (a relation keeping the sum of its last column per key, "
                "in an order Soufflé does not document) is not supported: aggregate in a rule "
                "(sum : {...})",
                token,
            )
        return str(token)

    def choice_domain(self, children):
        self.souffle_syntax = True
        keys = [c for c in children if isinstance(c, list)]
        return _ChoiceDomain(tuple(tuple(str(t) for t in key) for key in keys), keys)

    def choice_key(self, children):
        return [t for t in _tokens(children) if t.type in ("NAME", "VAR")]

    def type_declaration(self, children):
        self.souffle_syntax = True
        keyword, name, *rest = children
        names = [str(t) for t in rest if t.type in ("NAME", "VAR", "QNAME")]
        if not rest:  # `.type T`: Soufflé's old spelling of a symbol type
            kind, names = "subtype", ["symbol"]
        else:
            kind = "subtype" if rest[0].type == "SUBTYPE" else "union" if len(names) > 1 else "equivalent"
        return ast.TypeDecl(str(name), kind, tuple(names), span=_span(name))

    def legacy_type(self, children):
        self.souffle_syntax = True
        keyword, name = children
        base = "number" if keyword.type == "NUMBER_TYPE" else "symbol"
        return ast.TypeDecl(str(name), "subtype", (base,), span=_span(name))

    def record_type(self, children):
        self.souffle_syntax = True
        name = children[1]
        columns = [c for c in children if isinstance(c, ast.ColumnDecl)]
        bases = tuple(c.type for c in columns)
        fields = tuple(c.name for c in columns)
        if len(set(fields)) < len(fields):
            self._error(f"record type '{name}' has two fields of one name", name)
        return ast.TypeDecl(str(name), "record", bases, span=_span(name), fields=fields)

    def adt_type(self, children):
        """``.type Shape = Circle {r: number} | Dot {}``: an algebraic data type."""
        self.souffle_syntax = True
        name = children[1]
        branches = tuple(c for c in children if isinstance(c, tuple))
        seen: set = set()
        for branch, names, _ in branches:
            if branch in seen:
                self._error(f"type '{name}' has two branches named '{branch}'", name)
            seen.add(branch)
            if len(set(names)) < len(names):
                self._error(f"branch '{branch}' of '{name}' has two fields of one name", name)
        return ast.TypeDecl(str(name), "adt", (), span=_span(name), branches=branches)

    def adt_branch(self, children):
        columns = [c for c in children if isinstance(c, ast.ColumnDecl)]
        return (str(children[0]), tuple(c.name for c in columns), tuple(c.type for c in columns))

    def component(self, children):
        self.souffle_syntax = True
        signature, *bases = [c for c in children if isinstance(c, ast.ComponentType)]
        items = [
            node
            for child in children
            if not isinstance(child, (Token, ast.ComponentType))
            for node in (child if isinstance(child, list) else [child])
            if node is not None
        ]
        return ast.Component(signature, tuple(bases), tuple(items), span=_span(children[0]))

    def component_type(self, children):
        name, *rest = children
        args = tuple(str(t) for t in rest if t.type in ("NAME", "VAR"))
        return ast.ComponentType(str(name), args, span=_span(name))

    def init(self, children):
        self.souffle_syntax = True
        keyword, name, _eq, component = children
        return ast.Init(str(name), component, span=_span(name))

    def override(self, children):
        return ast.Override(str(children[1]), span=_span(children[1]))

    def functor_declaration(self, children):
        """``.functor f(x: number): number``, optionally ``stateful``."""
        self.souffle_syntax = True
        name = children[1]
        params = tuple(c for c in children if isinstance(c, ast.ColumnDecl))
        stateful = any(t.type == "STATEFUL" for t in _tokens(children))
        result = [t for t in _tokens(children) if t.type == "COLON"][-1]
        type_token = children[children.index(result) + 1]
        declared = ast.FunctorDecl(
            str(name), params, self._type_name(type_token), span=_span(name), stateful=stateful
        )
        self.type_spans[id(declared)] = _span(type_token)
        return declared

    def functor_param(self, children):
        *name, type_token = children
        column = ast.ColumnDecl(str(name[0]) if name else "", self._type_name(type_token), _span(type_token))
        self.type_spans[id(column)] = _span(type_token)
        return column

    @staticmethod
    def _type_name(token) -> str:
        return ast.TYPE_ALIASES.get(str(token), str(token))

    def lattice_declaration(self, children):
        self.souffle_syntax = True
        self._error(
            ".lattice declarations (a type's Bottom, Lub, ... for relations that merge values) "
            "are not supported: aggregate in a rule, or use subsumption (<=)",
            children[0],
        )
        return []

    def pragma(self, children):
        values = [self._unescape(t) for t in children[1:]]
        _LOG.warning("line %s: .pragma %s ignored", children[0].line, " ".join(map(repr, values)))
        return []

    def directive(self, children):
        keyword, *rest = children
        kind = keyword.type.lower()
        names = []
        for token in rest:  # the relations, up to the '(' of the parameters
            if not isinstance(token, Token) or token.type == "LPAR":
                break
            if token.type in ("NAME", "VAR", "QNAME"):
                names.append(token)
        params = tuple(p for p in rest if isinstance(p, tuple))
        if kind == "limitsize" and not self._limits(keyword, names, params):
            return []
        return [
            ast.Directive(kind, str(n), span=_span(keyword if i == 0 else n), params=params)
            for i, n in enumerate(names)
        ]

    def _limits(self, keyword, names: list, params: tuple) -> bool:
        """Whether ``.limitsize names(n=N)`` is well-formed: one ``n``, a non-negative integer,
        and no relation limited twice (errors at the parameter or the name otherwise)."""
        errors = len(self.errors)
        given = [p for p in params if p[0] == "n"]
        for param in params:
            token = self._param_tokens.get(id(param), keyword)
            if param[0] != "n":
                self._error(f".limitsize takes only n=N, not '{param[0]}'", token)
            elif param is not given[0]:
                self._error(".limitsize: n is given twice", token)
            elif not param[1].isdigit():
                self._error(f".limitsize: n must be a non-negative integer, not '{param[1]}'", token)
        if not params:
            self._error(".limitsize needs the limit: .limitsize r(n=N)", keyword)
        for name in names:
            if str(name) in self._limited:
                first = self._limited[str(name)]
                self._error(f"relation '{name}' is limited twice (first at line {first.line})", name)
            self._limited.setdefault(str(name), name)
        return len(self.errors) == errors

    def io_param(self, children):
        key, _eq, value = children
        param = (str(key), self._unescape(value) if value.type == "STRING" else str(value))
        self._param_tokens[id(param)] = key
        return param

    # -- literals -----------------------------------------------------------------------------

    def atom(self, children):
        name = children[0]
        atom = ast.Atom(str(name), tuple(_values(children)), span=_span(name))
        self._first[id(atom)] = name
        return atom

    def aggregate(self, children):
        func, _lt, variable, _gt = children
        if str(func) not in ast.AGGREGATE_FUNCTIONS:
            self._error(
                f"unknown aggregate '{func}<...>'; expected one of {', '.join(ast.AGGREGATE_FUNCTIONS)}", func
            )
        return ast.Aggregate(str(func), variable, span=_span(func))

    def body_aggregate(self, children):
        self.souffle_syntax = True
        func, *rest = children
        values = _values(rest)
        body = values[-1]
        if isinstance(body, ast.Atom):
            body = [(body,)]
        target = values[0] if len(values) == 2 else None
        if str(func) not in ast.BODY_AGGREGATE_FUNCTIONS:
            known = ", ".join(ast.BODY_AGGREGATE_FUNCTIONS)
            self._error(f"unknown aggregate '{func}'; expected one of {known}", func)
        elif (target is None) != (str(func) == "count"):
            needs = (
                "takes no target" if str(func) == "count" else "needs a target: '" + str(func) + " V : ...'"
            )
            self._error(f"aggregate '{func}' {needs}", func)
        if len(body) != 1:
            self._error("a disjunction inside an aggregate's body is not supported; use a relation", func)
        node = ast.BodyAggregate(str(func), target, body[0], span=_span(func))
        self._first[id(node)] = func
        return node

    def bool_literal(self, children):
        """``true`` / ``false`` as a body literal: a constraint on constants."""
        self.souffle_syntax = True
        token = children[0]
        value = ast.Constant(token.type == "TRUE", "bool", span=_span(token))
        return ast.Comparison("=", value, ast.Constant(True, "bool", span=_span(token)), span=_span(token))

    def negation(self, children):
        keyword, atom = children
        if isinstance(atom, ast.Comparison):  # a negated constraint: !match(P, S)
            return ast.Comparison(
                "=", atom.left, ast.Constant(False, "bool", span=atom.span), span=_span(keyword)
            )
        return ast.Negation(atom, span=_span(keyword))

    def constraint(self, children):
        call = self.call(children)
        return ast.Comparison("=", call, ast.Constant(True, "bool", span=call.span), span=call.span)

    def comparison(self, children):
        left, op, right = children
        return ast.Comparison(str(op), left, right, span=self._start(left))

    # -- terms --------------------------------------------------------------------------------

    def binop(self, children):
        left, op, right = children
        name = "mod" if op.type == "PERCENT" else str(op)
        node = ast.BinaryOp(name, left, right, span=self._start(left))
        first = self._first.get(id(left))
        if first is not None:
            self._first[id(node)] = first
        self._nest(node, op, left, right)
        return node

    def _nest(self, node, op: Token, *operands) -> None:
        """Record the depth of a new operation; deeper than MAX_TERM_DEPTH is an error at ``op``."""
        depth = 1 + max(self._depth.get(id(o), 1) for o in operands)
        self._depth[id(node)] = depth
        if depth == MAX_TERM_DEPTH + 2:  # a leaf has depth 1
            self._error(
                f"expression nested deeper than {MAX_TERM_DEPTH} operations; split it with "
                f"assignments (V = ..., W = V + ...)",
                op,
            )

    def operator(self, children):
        """An infix functor (``X ^ Y``, ``X band Y``, ...): an ``ast.Call`` named by its word."""
        left, op, right = children
        node = ast.Call(functors.OPERATORS[str(op)], (left, right), span=self._start(left))
        first = self._first.get(id(left))
        if first is not None:
            self._first[id(node)] = first
        self._nest(node, op, left, right)
        return node

    def prefix(self, children):
        op, operand = children
        node = ast.Call(str(op), (operand,), span=_span(op))
        self._nest(node, op, operand)
        return node

    def call(self, children):
        name, *rest = children
        args = tuple(_values(rest))
        spec = functors.functor(str(name))
        if len(args) < spec.least or (spec.most is not None and len(args) > spec.most):
            self._error(f"functor '{name}' takes {spec.arity_text()}, given {len(args)}", name)
        node = ast.Call(str(name), args, span=_span(name))
        if args:
            self._nest(node, name, *args)
        return node

    def cast(self, children):
        """Soufflé's ``as(expr, Type)``: an ``ast.Call`` named ``as`` whose second argument is
        the type's name (lowering checks it and keeps the expression)."""
        self.souffle_syntax = True
        keyword, *rest = children
        (expr,) = _values(rest)
        type_token = [t for t in rest if isinstance(t, Token) and t.type in ("NAME", "VAR", "QNAME")][-1]
        type_name = ast.Constant(str(type_token), "string", span=_span(type_token))
        node = ast.Call(ast.CAST, (expr, type_name), span=_span(keyword))
        self._nest(node, keyword, expr)
        return node

    def user_call(self, children):
        """``@f(X, ...)``: a user-defined functor, checked against its ``.functor`` by lowering."""
        self.souffle_syntax = True
        name, *rest = children
        args = tuple(_values(rest))
        node = ast.Call(str(name), args, span=_span(name))
        if args:
            self._nest(node, name, *args)
        return node

    def record(self, children):
        """A record term ``[X, 1]`` (``[]`` has no fields)."""
        self.souffle_syntax = True
        args = tuple(c for c in _values(children[1:-1]) if c is not None)
        node = ast.RecordTerm(args, span=_span(children[0]))
        if args:
            self._nest(node, children[0], *args)
        return node

    def branch_term(self, children):
        """An algebraic data type's term ``$Circle(R)`` (``$Dot`` and ``$Dot()`` have no fields)."""
        self.souffle_syntax = True
        args = tuple(c for c in _values(children[1:]) if c is not None)
        node = ast.RecordTerm(args, span=_span(children[0]), branch=str(children[0])[1:])
        if args:
            self._nest(node, children[0], *args)
        return node

    def negate(self, children):
        minus, operand = children
        if isinstance(operand, ast.Constant) and operand.type in ("long", "double"):
            value = -operand.value
            if operand.type == "long" and operand.value > _LONG_MAX:
                self.errors = [
                    e for e in self.errors if (e.line, e.column) != (operand.span.line, operand.span.column)
                ]
                if value < _LONG_MIN:
                    self._error(f"integer {value} does not fit in a 64-bit long", minus)
            return ast.Constant(value, operand.type, span=_span(minus))
        node = ast.BinaryOp("-", ast.Constant(0, "long", span=_span(minus)), operand, span=_span(minus))
        self._nest(node, minus, operand)
        return node

    def parenthesised(self, children):
        inner = children[1]
        self._first[id(inner)] = children[0]
        return inner

    def variable(self, children):
        token = children[0]
        if str(token) == "_":
            self._anonymous += 1
            return ast.Variable(f"_#{self._anonymous}", span=_span(token), anonymous=True)
        return ast.Variable(str(token), span=_span(token))

    def constant(self, children):
        token = children[0]
        span = _span(token)
        kind = token.type
        if kind == "INT":
            value = int(token)
            if value > _LONG_MAX:  # withdrawn by negate() for -9223372036854775808
                self._error(f"integer {token} does not fit in a 64-bit long", token)
            return ast.Constant(value, "long", span=span)
        if kind in ("RADIX", "UNSIGNED"):
            return self._radix(token, span)
        if kind == "DECIMAL":
            return ast.Constant(float(token), "double", span=span)
        if kind == "STRING":
            return ast.Constant(self._unescape(token), "string", span=span)
        if kind in ("TRUE", "FALSE"):
            return ast.Constant(kind == "TRUE", "bool", span=span)
        if self.names_are_variables and str(token) == "nil":  # typed by lowering (syntax.records)
            return ast.Constant("nil", "nil", span=span)
        if self.names_are_variables:
            return ast.Variable(str(token), span=span)
        if self.first_symbol_name is None and str(token) != "nil":  # nil: a recursive record's maybe
            self.first_symbol_name = token
        return ast.Constant(str(token), "string", span=span)

    def _radix(self, token: Token, span: ast.Span) -> ast.Constant:
        """``0x1F``, ``0b101``, ``12u``: a long (Soufflé's unsigned values are longs here)."""
        text = str(token).rstrip("u")
        base = {"0x": 16, "0b": 2}.get(text[:2], 10)
        value = int(text[2:] if base != 10 else text, base)
        if value > _LONG_MAX:
            self._error(f"integer {token} does not fit in a 64-bit long", token)
        return ast.Constant(value, "long", span=span)

    # -- helpers ------------------------------------------------------------------------------

    def _text(self, head: ast.Atom, dot: Token) -> str:
        return self.source[self._first[id(head)].start_pos : dot.end_pos]

    def _no_aggregate_outside_head(self, atom: ast.Atom, where: str) -> None:
        for arg in atom.args:
            if isinstance(arg, ast.Aggregate):
                self.errors.append(
                    ParseError(
                        f"aggregate '{arg}' is not allowed in a {where}; aggregates "
                        f"(min/max/sum/avg/count<V>) may only be arguments of a rule head",
                        arg.span.line,
                        arg.span.column,
                    )
                )

    def _unescape(self, token: Token) -> str:
        def unknown(position: int, escaped: str) -> None:
            self.errors.append(
                ParseError(
                    f"unknown escape '\\{escaped}' in string; use \\\" \\\\ \\n \\t or \\r",
                    token.line,
                    None if token.column is None else token.column + 1 + position,
                )
            )

        return unescape(str(token)[1:-1], unknown)


# ---------------------------------------------------------------------------------------------
# Syntax errors


_DESCRIBE = {
    "DECL": "'.decl'",
    "TYPE": "'.type'",
    "NUMBER_TYPE": "'.number_type'",
    "SYMBOL_TYPE": "'.symbol_type'",
    "PRAGMA": "'.pragma'",
    "LATTICE_DECL": "'.lattice'",
    "LIMITSIZE": "'.limitsize'",
    "PLAN": "'.plan'",
    "FUNCTOR_DECL": "'.functor'",
    "STATEFUL": "'stateful'",
    "USER_FUNCTOR": "a user-defined functor (@name)",
    "SUBTYPE": "'<:'",
    "BAR": "'|'",
    "SEMI": "';'",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "LSQB": "'['",
    "RSQB": "']'",
    "CHOICE_DOMAIN": "'choice-domain'",
    "QUALIFIER": "a qualifier (btree, eqrel, ...)",
    "COMP": "'.comp'",
    "INIT": "'.init'",
    "OVERRIDE": "'.override'",
    "QNAME": "a qualified name",
    "AGGREGATOR": "an aggregate (count, sum, min, max, mean)",
    "INPUT": "'.input'",
    "OUTPUT": "'.output'",
    "PRINTSIZE": "'.printsize'",
    "QUERY": "'?-'",
    "NECK": "':-'",
    "DOT": "'.'",
    "COMMA": "','",
    "COLON": "':'",
    "LPAR": "'('",
    "RPAR": "')'",
    "NOT": "'not'",
    "BANG": "'!'",
    "TILDE": "'~'",
    "EQ": "'='",
    "NE": "'!='",
    "LE": "'<='",
    "GE": "'>='",
    "LT": "'<'",
    "GT": "'>'",
    "PLUS": "'+'",
    "MINUS": "'-'",
    "STAR": "'*'",
    "SLASH": "'/'",
    "MOD": "'mod'",
    "PERCENT": "'%'",
    "CARET": "'^'",
    "FUNCTOR": "a functor",
    "AS": "'as'",
    "CONSTRAINT": "a constraint",
    "RADIX": "a number",
    "UNSIGNED": "a number",
    "TRUE": "'true'",
    "FALSE": "'false'",
    "LOR": "'lor'",
    "LXOR": "'lxor'",
    "LAND": "'land'",
    "BOR": "'bor'",
    "BXOR": "'bxor'",
    "BAND": "'band'",
    "BSHL": "'bshl'",
    "BSHR": "'bshr'",
    "BSHRU": "'bshru'",
    "BNOT": "'bnot'",
    "LNOT": "'lnot'",
    "NAME": "a name",
    "VAR": "a variable",
    "QVAR": "a variable",
    "DECIMAL": "a number",
    "INT": "a number",
    "STRING": "a string",
    "$END": "the end of the program",
}
_STARTS_STATEMENT = {"NAME", "VAR", "QUERY", "DECL", "INPUT", "OUTPUT", "PRINTSIZE", "LIMITSIZE"}


# At most this many syntax errors are reported (each costs a parse of the rest of the text).
MAX_SYNTAX_ERRORS = 100
_NOT_NEWLINE = re.compile(r"[^\n]")
# Where a statement ends ('.') or starts ('.decl', '.input', '.output', '.printsize',
# '.limitsize', '?-'), skipping strings, comments and decimals, whose dots end nothing.
_STATEMENT_BOUNDARY = re.compile(
    r'"(?:[^"\\\n]|\\.)*"|%[^\n]*|//[^\n]*|/\*(?:.|\n)*?\*/|\d+\.\d+'
    r"|(?P<start>\.(?:decl|input|output|printsize|limitsize)\b|\?-)|(?P<end>\.)"
)


def _parse_recovering(text: str, filename: Optional[str], builder: "_ToAst") -> tuple:
    """(statements, syntax errors) of ``text``. After a syntax error, parsing starts again at the
    next statement (the text before it blanked out, so positions stay those of ``text``), until
    the end of the text or :data:`MAX_SYNTAX_ERRORS` errors."""
    errors: list = []
    seen, resume = text, 0
    while True:
        try:
            statements = _parser().parse(seen)
            return (statements if not errors else []), errors
        except UnexpectedInput as error:
            errors.append(_syntax_error(error, seen, filename, source=text))
            builder.restart()
            after = _resume_position(seen, error)
        if after is None or after <= resume or len(errors) >= MAX_SYNTAX_ERRORS:
            return [], errors
        resume = after
        seen = _NOT_NEWLINE.sub(" ", text[:resume]) + text[resume:]


def _resume_position(text: str, error: UnexpectedInput) -> Optional[int]:
    """Where the statement after the one holding ``error`` starts, or None at the end."""
    if isinstance(error, UnexpectedToken):
        token = error.token
        if token.type == "$END":
            return None
        line_start = text.rfind("\n", 0, token.start_pos) + 1
        if token.type in _STARTS_STATEMENT and not text[line_start : token.start_pos].strip():
            return token.start_pos  # a statement starting its own line: the '.' before it is missing
        position = token.start_pos
    else:
        # lark declares ``pos_in_stream = None`` on the base class; UnexpectedCharacters and
        # UnexpectedEOF (the other errors the parser raises) set it to an int
        position = cast(int, error.pos_in_stream) + 1
    for match in _STATEMENT_BOUNDARY.finditer(text, position):
        if match.group("start"):
            return match.start()
        if match.group("end"):
            return match.end()
    return None


def _syntax_error(
    error: UnexpectedInput, text: str, filename: Optional[str], source: Optional[str] = None
) -> ParseError:
    if isinstance(error, UnexpectedCharacters):
        message, line, column = _bad_character(error, text)
    elif isinstance(error, UnexpectedToken):
        message, line, column = _bad_token(error, text)
    else:  # pragma: no cover - LALR raises only the two above
        message, line, column = str(error), getattr(error, "line", None), getattr(error, "column", None)
    return ParseError(message, line, column, source=source or text, filename=filename)


def _bad_character(error: UnexpectedCharacters, text: str):
    char = error.char
    rest = text[error.pos_in_stream :]
    if char == '"':
        message = "unterminated string: a '\"' has no closing '\"' on the same line"
    elif rest.startswith("/*"):
        message = "unterminated comment: '/*' has no closing '*/'"
    elif char == "'":
        message = 'unexpected character "\'"; strings are written in double quotes'
    elif char.isspace() or not char.isprintable():
        message = f"unexpected character {char!r}"
    else:
        message = f"unexpected character '{char}'"
    return message, error.line, error.column


def _bad_token(error: UnexpectedToken, text: str):
    token = error.token
    expected = _accepted(error)
    previous = _previous_token(text, token)
    found = _describe_token(token)

    if token.type != "$END" and text.startswith("/*", token.start_pos):
        return "unterminated comment: '/*' has no closing '*/'", token.line, token.column

    if token.type == "LT" and previous is not None and str(previous) in ast.AGGREGATE_FUNCTIONS:
        return (
            f"aggregate '{previous}<...>' is only allowed as an argument of a rule head",
            previous.line,
            previous.column,
        )
    if (
        "DOT" in expected
        and previous is not None
        and (token.type == "$END" or token.line > previous.end_line)
    ):
        # The clause ended on an earlier line: point just after it, where the '.' belongs.
        what = _clause_kind(text, previous)
        return (
            f"expected '.' at the end of the {what}, found {found}",
            previous.end_line,
            previous.end_column,
        )
    if "DOT" in expected and token.type in _STARTS_STATEMENT:
        what = _clause_kind(text, previous)
        between = "',' between body literals or " if "COMMA" in expected and what == "rule" else ""
        return (f"expected {between}'.' at the end of the {what}, found {found}", token.line, token.column)
    if (
        "RPAR" in expected
        and previous is not None
        and (token.type == "$END" or token.line > previous.end_line)
    ):
        return (
            f"expected ')' to close the argument list, found {found}",
            previous.end_line,
            previous.end_column,
        )
    if token.type == "$END":
        line, column = _end_position(text, previous)
        return f"unexpected end of the program; expected {_describe_set(expected)}", line, column
    if token.type == "DOT" and previous is not None and previous.type == "COMMA":
        return "expected a body literal after ',' (remove the trailing ',')", token.line, token.column
    return (f"unexpected {found}; expected {_describe_set(expected)}", token.line, token.column)


def _accepted(error: UnexpectedToken) -> set:
    """The terminals the parser would really accept here. ``error.expected`` comes from the LALR
    table, whose merged states can list terminals (such as '.') that would fail a step later."""
    try:
        accepted = set(error.interactive_parser.accepts()) - {"$END"}
    except Exception:  # noqa: BLE001 - fall back to the table's view
        accepted = set()
    return accepted or set(error.expected)


def _describe_token(token: Token) -> str:
    if token.type == "$END":
        return "the end of the program"
    kind = _DESCRIBE.get(token.type, token.type)
    if kind.startswith("'"):
        return kind
    return f"{kind.split(' ', 1)[-1]} '{token}'"


def _describe_set(expected: set) -> str:
    names = sorted({_DESCRIBE.get(t, t) for t in expected})
    if len(names) == 1:
        return names[0]
    return "one of " + ", ".join(names)


def _previous_token(text: str, token: Token) -> Optional[Token]:
    """The last token before ``token`` (re-lexed; only used to word error messages)."""
    limit = token.start_pos if token.type != "$END" and token.start_pos is not None else len(text)
    previous = None
    try:
        for candidate in _parser().lex(text[:limit]):
            previous = candidate
    except UnexpectedInput:
        pass
    return previous


def _clause_kind(text: str, previous: Optional[Token]) -> str:
    """'rule', 'fact', 'query' or 'declaration': what the statement ending at ``previous`` is
    (a fact when no token precedes)."""
    kind = "fact"
    if previous is None:
        return kind
    try:
        for candidate in _parser().lex(text[: previous.end_pos]):
            if candidate.type == "DOT":
                kind = "fact"
            elif candidate.type == "NECK":
                kind = "rule"
            elif candidate.type == "QUERY":
                kind = "query"
    except UnexpectedInput:
        pass
    return kind


def _end_position(text: str, previous: Optional[Token]):
    if previous is not None:
        return previous.end_line, previous.end_column
    lines = text.splitlines() or [""]
    return len(lines), len(lines[-1]) + 1
