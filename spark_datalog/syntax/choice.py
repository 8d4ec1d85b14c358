"""Soufflé's ``choice-domain``, as a deterministic choice.

``.decl advisor(s: symbol, year: number, p: symbol) choice-domain (s, year)`` keeps one tuple per
``(s, year)``; ``choice-domain a, b`` keeps at most one tuple per ``a`` and at most one per ``b``.
Soufflé keeps whichever candidate its evaluation meets first (not deterministic); here the
choice is a deterministic **greedy** one. Within each evaluation round, the round's candidates
(the new tuples its rules derive; the stated facts are candidates of the first round) are
considered in value order (tuple order); a candidate is accepted iff it agrees on no key with a
tuple accepted before (in an earlier round, or earlier in this round). A relation outside
recursion has one round. The engines apply the greedy filter to every round's delta before it
joins the relation (``reference.choice``, ``kernel.choice``, ``eval.choice``): the accepted
delta is what later rounds join with (Soufflé's spanning tree ``st(X, Y) :- st(_, X), e(X, Y)``
with ``choice-domain y`` grows one edge into every reached node).

Value order: numbers by value, symbols by code point (UTF-8 bytes), ``false`` before ``true``,
tuples and records (structs: Python tuples, Polars and Spark structs) field by field in their
declared order, so a non-recursive ADT by its branch index (branches by name) and then its
branches' fields; a recursive record type's or ADT's value by its encoded text
(:mod:`spark_datalog.recursive_records`; ``[1, [5, nil]]`` before ``[2, nil]``, and ``[1, nil]``
before ``[-1, nil]``). The three engines sort and compare these alike.

One key on a relation outside recursion chooses the same tuples as the least candidate per key,
which is lowered here to ``min`` aggregates (the cheap path, maintained by ``update`` like any
``min``) unless a column outside the key is a record or ADT (no ``min`` takes one; the greedy
filter chooses the same tuples): the relation's rules and facts define ``<r>__choices``, and
one auxiliary relation per other column takes the ``min`` of that column among the candidates
that agree with the key and the columns chosen before it::

    advisor__choice1(S, Y, min<P>) :- advisor__choices(S, Y, P).
    advisor(S, Y, P) :- advisor__choice1(S, Y, P).

Otherwise (several keys, a recursive relation, or a record outside the one key:
:func:`greedy_keys`) analysis gives the keys to the engines (``CheckedProgram.choices``), and
the relation's facts move to ``<r>__facts`` read by one rule, so that they are first-round
candidates on every engine. A key covering every column constrains nothing and is dropped.
Error: ``choice-domain`` on an ``.input`` relation.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import DatalogError, ParseError
from ..record_types import is_record
from . import ast
from .auxiliary import fresh_name, is_recursive, relation_names, renamed_heads


def lower_choice(program: ast.Program) -> tuple[ast.Program, list[DatalogError]]:
    """``program`` with every ``choice-domain`` relation lowered as the module docstring says.

    >>> from spark_datalog.syntax.parser import parse
    >>> p = parse(".decl r(a: number, b: number) choice-domain a, b\\nr(1, 2).\\nr(X, Y) :- e(X, Y).")
    >>> [str(rule) for rule in p.rules], p.declarations[0].choice_domains
    (['r(X, Y) :- e(X, Y).', 'r(_choice0, _choice1) :- r__facts(_choice0, _choice1).'], (('a',), ('b',)))
    """
    errors: list[DatalogError] = []
    taken = relation_names(program)
    for declaration in [d for d in program.declarations if d.choice_domains]:
        keys = constraining_keys(declaration)
        greedy = bool(greedy_keys(declaration, is_recursive(program, declaration.name)))
        problem = _problem(declaration, program)
        if problem:
            errors.append(ParseError(problem, declaration.span.line, declaration.span.column))
        elif greedy:
            program = _with_greedy(program, declaration, taken)
        elif keys:
            program = _with_choice(program, declaration, keys[0], taken)
    return program, errors


def constraining_keys(declaration: ast.Declaration) -> tuple:
    """The keys of ``declaration``'s ``choice-domain`` that leave a column out (a key of every
    column constrains nothing)."""
    return tuple(key for key in declaration.choice_domains if len(key) < len(declaration.columns))


def greedy_keys(declaration: ast.Declaration, recursive: bool) -> tuple:
    """The keys of a choice the engines make greedily (several keys, a ``recursive`` relation,
    or a record column outside the one key); none when it is lowered to ``min`` or constrains
    nothing.

    >>> from spark_datalog.syntax.parser import parse
    >>> greedy_keys(parse(".decl r(a: number, b: number) choice-domain a, b").declarations[0], False)
    (('a',), ('b',))
    >>> text = ".type P = [x: number]\\n.decl r(a: number, b: P) choice-domain a"
    >>> greedy_keys(parse(text).declarations[0], False)
    (('a',),)
    """
    keys = constraining_keys(declaration)
    if len(keys) == 1 and not recursive and not _chooses_a_record(declaration, keys[0]):
        return ()
    return keys


def _chooses_a_record(declaration: ast.Declaration, key: tuple) -> bool:
    """Whether a column outside ``key`` is a record (or ADT): no ``min`` takes it."""
    return any(is_record(column.type) for column in declaration.columns if column.name not in key)


def _problem(declaration: ast.Declaration, program: ast.Program) -> str:
    name = declaration.name
    if name in program.inputs:
        return f"choice-domain on an .input relation is not supported ('{name}'): its facts are given"
    return ""


def _with_greedy(program: ast.Program, declaration: ast.Declaration, taken: set) -> ast.Program:
    """``program`` with ``declaration``'s facts moved to ``<r>__facts``, read by one rule."""
    name, span = declaration.name, declaration.span
    if not any(fact.atom.predicate == name for fact in program.facts):
        return program
    stated = fresh_name(f"{name}__facts", taken)
    facts = tuple(
        replace(f, atom=replace(f.atom, predicate=stated)) if f.atom.predicate == name else f
        for f in program.facts
    )
    row = tuple(ast.Variable(f"_choice{i}", span) for i in range(len(declaration.columns)))
    rule = ast.Rule(ast.Atom(name, row, span), (ast.Atom(stated, row, span),), span=span)
    return replace(
        program,
        facts=facts,
        declarations=program.declarations + (ast.Declaration(stated, declaration.columns, span),),
        rules=program.rules + (replace(rule, text=str(rule)),),
    )


def _with_choice(program: ast.Program, declaration: ast.Declaration, key: tuple, taken: set) -> ast.Program:
    name, span = declaration.name, declaration.span
    names = [column.name for column in declaration.columns]
    keyed = [names.index(column) for column in key]
    others = [i for i in range(len(names)) if i not in keyed]
    candidates = fresh_name(f"{name}__choices", taken)
    program = renamed_heads(program, {name: candidates})
    row = tuple(ast.Variable(f"_choice{i}", span) for i in range(len(names)))
    declarations = [ast.Declaration(candidates, declaration.columns, span)]
    rules: list = []
    chosen, previous = sorted(keyed), None
    for column in others:
        step = fresh_name(f"{name}__choice", taken)
        positions = sorted(chosen + [column])
        args = tuple(ast.Aggregate("min", row[i], span) if i == column else row[i] for i in positions)
        body: tuple = (ast.Atom(candidates, row, span),)
        if previous is not None:
            body += (ast.Atom(previous, tuple(row[i] for i in chosen), span),)
        rules.append(ast.Rule(ast.Atom(step, args, span), body, span=span))
        declarations.append(ast.Declaration(step, tuple(declaration.columns[i] for i in positions), span))
        chosen, previous = positions, step
    rules.append(ast.Rule(ast.Atom(name, row, span), (ast.Atom(str(previous), row, span),), span=span))
    rules = [replace(rule, text=str(rule)) for rule in rules]
    return replace(
        program,
        declarations=program.declarations + tuple(declarations),
        rules=program.rules + tuple(rules),
    )
