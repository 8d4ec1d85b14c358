"""A query's text, checked against a program, and the rule that computes its answers.

A query is one atom, written ``tc(1, X)`` or ``?- tc(1, X).``. Its answers are the rows of an
*answer rule* ``answer(X) :- tc(1, X).``: one column per distinct named variable, in order of
first appearance; constants select and ``_`` projects away. A query without named variables
(``tc(1, 2)``, ``tc(1, _)``) asks whether the atom holds. Errors (syntax, unknown relation,
arity, types, an expression of a variable nothing binds) are ``DatalogError`` subclasses
positioned in the query's own text.

Example::

    >>> import spark_datalog as sd
    >>> p = sd.Program.parse(".input arc. tc(X, Y) :- arc(X, Y).")
    >>> q = checked_query(p.checked, "tc(1, X)")
    >>> q.variables, str(q.rule)
    (('X',), 'answer(X) :- tc(1, X).')
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

from ..analysis import analyse
from ..analysis.checked import CheckedProgram
from ..errors import DatalogError, ParseError
from ..syntax import ast
from ..syntax.parser import parse

PREFIX = "?- "


@dataclass(frozen=True)
class CheckedQuery:
    """A query checked against a program: its atom, its text, the answer relation's name, the
    names of its answer columns (empty: a yes/no question), its answer rule and the answer
    columns' types (a column's relation type where its variable is a bare argument, else "")."""

    atom: ast.Atom
    text: str
    answer: str
    variables: tuple
    rule: ast.Rule
    types: tuple = ()

    @property
    def is_ground(self) -> bool:
        """True for a yes/no question (no named variable)."""
        return not self.variables


def checked_query(checked: CheckedProgram, query, filename: Optional[str] = None) -> CheckedQuery:
    """``query`` (a text, or an ``ast.Query``/``ast.Atom`` of the program) checked against
    ``checked``; raises the query's errors with carets in its own text."""
    if isinstance(query, str):
        atom, text = parse_query(query, filename), query
    else:
        atom = query.atom if isinstance(query, ast.Query) else query
        text = str(atom)
    answer = answer_name(checked)
    variables = tuple(dict.fromkeys(v.name for v in ast.literal_variables(atom) if not v.anonymous))
    head = ast.Atom(answer, tuple(ast.Variable(name) for name in variables), atom.span)
    rule = ast.Rule(head, (atom,), atom.span)
    rule = replace(rule, text=str(rule))
    if isinstance(query, str):
        _check(checked, rule, query, filename)
    return CheckedQuery(atom, text, answer, variables, rule, _variable_types(checked, atom, variables))


def _variable_types(checked: CheckedProgram, atom: ast.Atom, variables: tuple) -> tuple:
    """The relation's type of each variable at its first bare argument of ``atom`` ("" if none)."""
    relation = checked.relations.get(atom.predicate)
    if relation is None:
        return ("",) * len(variables)
    found: dict = {}
    for term, type_ in zip(atom.args, relation.types, strict=False):  # arity: checked apart
        if isinstance(term, ast.Variable):
            found.setdefault(term.name, type_)
    return tuple(found.get(name, "") for name in variables)


def parse_query(text: str, filename: Optional[str] = None) -> ast.Atom:
    """The atom of a query text (``tc(1, X)`` or ``?- tc(1, X).``)."""
    stripped = text.strip()
    shift = 0 if stripped.startswith("?-") else len(PREFIX)
    wrapped = (PREFIX if shift else "") + text.rstrip() + ("" if stripped.endswith(".") else ".")
    try:
        program = parse(wrapped, filename or "<query>")
    except DatalogError as err:
        raise _in_query_text(err, text, shift, filename) from None
    if (
        len(program.queries) != 1
        or program.rules
        or program.facts
        or program.declarations
        or program.directives
    ):
        raise ParseError(
            "a query is a single atom, like `tc(1, X)` or `?- tc(1, X).`",
            1,
            1,
            source=text,
            filename=filename or "<query>",
        )
    return _shifted_atom(program.queries[0].atom, shift)


def answer_name(checked: CheckedProgram) -> str:
    """A relation name the program does not use: ``answer``, else ``answer_2``, ..."""
    name, n = "answer", 1
    while name in checked.relations:
        n += 1
        name = f"answer_{n}"
    return name


def query_program(checked: CheckedProgram, query: CheckedQuery) -> ast.Program:
    """The program plus the query's answer rule, with the answer relation its only output (so
    only what the query reads is evaluated)."""
    program = checked.program
    directives = tuple(d for d in program.directives if d.kind in ("input", "limitsize"))
    return replace(
        program,
        directives=directives + (ast.Directive("output", query.answer),),
        rules=program.rules + (query.rule,),
        queries=(),
    )


def _check(checked: CheckedProgram, rule: ast.Rule, text: str, filename: Optional[str]) -> None:
    """Analyse the answer rule against declarations of every relation of ``checked``."""
    declarations = tuple(
        ast.Declaration(name, tuple(ast.ColumnDecl(c.name, c.type) for c in schema.columns))
        for name, schema in checked.relations.items()
    )
    probe = ast.Program(declarations=declarations, rules=(rule,), source=text, filename=filename)
    try:
        analyse(probe)
    except DatalogError as err:
        raise _in_query_text(err, text, 0, filename) from None


def _in_query_text(err: DatalogError, text: str, shift: int, filename: Optional[str]) -> DatalogError:
    """``err`` (and every error it carries) positioned in the query's own text."""
    for each in err.errors:
        if each.line == 1 and each.column is not None:
            each.column = max(1, each.column - shift)
        each.source, each.filename = text, filename or "<query>"
    return err


def _shifted_atom(atom: ast.Atom, shift: int) -> ast.Atom:
    """``atom`` with the spans of line 1 moved ``shift`` columns left (the ``?- `` added)."""
    if not shift:
        return atom

    def moved(span: ast.Span) -> ast.Span:
        return ast.Span(span.line, span.column - shift) if span.line == 1 else span

    def term(t):
        if isinstance(t, ast.BinaryOp):
            return replace(t, left=term(t.left), right=term(t.right), span=moved(t.span))
        if isinstance(t, ast.Call):
            return replace(t, args=tuple(term(a) for a in t.args), span=moved(t.span))
        return replace(t, span=moved(t.span))

    return replace(atom, args=tuple(term(a) for a in atom.args), span=moved(atom.span))
