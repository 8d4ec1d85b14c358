"""``eqrel`` relations as connected components.

An ``eqrel`` relation holds the reflexive, symmetric and transitive closure of the pairs its
rules and facts give. Written as rules, that closure is cubic; it is the connected components of
the pairs seen as an undirected graph, and every pair of members of one component. So the
relation's own facts and rules define ``<r>__eqrel_pairs``, each element is labelled with the
least element it is connected to (a recursive ``min``, which every engine runs as connected
components), and ``r`` pairs the elements that share a label::

    r__eqrel_label(X, min<X>) :- r__eqrel_pairs(X, _).
    r__eqrel_label(Y, min<Y>) :- r__eqrel_pairs(_, Y).
    r__eqrel_label(Y, min<L>) :- r__eqrel_label(X, L), r__eqrel_pairs(X, Y).
    r__eqrel_label(X, min<L>) :- r__eqrel_label(Y, L), r__eqrel_pairs(X, Y).
    r(X, Y) :- r__eqrel_label(X, L), r__eqrel_label(Y, L).

Over a record or ADT type (which users cannot ``min``), the label is the least element in the
value order every engine shares (the greedy choice's: records field by field, a non-recursive
ADT by branch index then fields, a recursive type by its encoded text); the label relation's
declaration carries :data:`LABEL` so that analysis allows that ``min``.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import DatalogError, ParseError
from . import ast
from .auxiliary import fresh_name, relation_names, renamed_heads

LABEL = "eqrel-label"  # the qualifier of a label relation: its min may be over records


def lower_eqrel(program: ast.Program) -> tuple[ast.Program, list[DatalogError]]:
    """``program`` with every ``eqrel`` relation defined by components, and the errors."""
    errors: list[DatalogError] = []
    taken = relation_names(program)
    renamed: dict = {}  # eqrel relation -> the relation of its given pairs
    declarations = list(program.declarations)
    rules: list = []
    for declaration in program.declarations:
        if "eqrel" not in declaration.qualifiers:
            continue
        problem = _problem(declaration)
        if problem:
            errors.append(ParseError(problem, declaration.span.line, declaration.span.column))
            continue
        pairs = fresh_name(f"{declaration.name}__eqrel_pairs", taken)
        label = fresh_name(f"{declaration.name}__eqrel_label", taken)
        renamed[declaration.name] = pairs
        declarations += _declarations(declaration, pairs, label)
        rules += _rules(declaration, pairs, label)
    program = renamed_heads(program, renamed)
    return replace(program, declarations=tuple(declarations), rules=program.rules + tuple(rules)), errors


def _problem(declaration: ast.Declaration) -> str:
    """An eqrel relation that is an ``.input`` was lowered before (:mod:`.input_rules`): its
    pairs come from ``<r>__input``."""
    types = {column.type for column in declaration.columns}
    if len(declaration.columns) != 2 or len(types) != 1:
        return f"eqrel relation '{declaration.name}' must have two columns of one type"
    return ""


def _declarations(declaration: ast.Declaration, pairs: str, label: str) -> list:
    value_type = declaration.columns[0].type
    span = declaration.span
    return [
        ast.Declaration(pairs, declaration.columns, span=span),
        ast.Declaration(
            label,
            (ast.ColumnDecl("element", value_type, span), ast.ColumnDecl("label", value_type, span)),
            span=span,
            qualifiers=(LABEL,),
        ),
    ]


def _rules(declaration: ast.Declaration, pairs: str, label: str) -> list:
    span = declaration.span

    def v(name: str) -> ast.Variable:
        return ast.Variable(name, span)

    def atom(predicate: str, *args) -> ast.Atom:
        return ast.Atom(predicate, args, span)

    def anonymous(n: int) -> ast.Variable:
        return ast.Variable(f"_#{n}", span, anonymous=True)

    x, y, lowest = v("X"), v("Y"), v("L")
    least = ast.Aggregate("min", lowest, span)
    heads_bodies = [
        (atom(label, x, ast.Aggregate("min", x, span)), (atom(pairs, x, anonymous(1)),)),
        (atom(label, y, ast.Aggregate("min", y, span)), (atom(pairs, anonymous(1), y),)),
        (atom(label, y, least), (atom(label, x, lowest), atom(pairs, x, y))),
        (atom(label, x, least), (atom(label, y, lowest), atom(pairs, x, y))),
        (atom(declaration.name, x, y), (atom(label, x, lowest), atom(label, y, lowest))),
    ]
    rules = [ast.Rule(head, body, span=span) for head, body in heads_bodies]
    return [replace(rule, text=str(rule)) for rule in rules]
