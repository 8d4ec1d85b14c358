"""Soufflé's ``choice-domain``, as a deterministic choice: the least candidate per key.

``.decl advisor(s: symbol, year: number, p: symbol) choice-domain (s, year)`` keeps one tuple per
``(s, year)``. Soufflé keeps whichever candidate its evaluation meets first (not deterministic);
here it is the least candidate, comparing the other columns in their order (the first, then the
second among those with the least first, ...). The relation's rules and facts define
``<r>__choices``; one auxiliary relation per other column takes the ``min`` of that column among
the candidates that agree with the key and the columns chosen before it::

    advisor__choice1(S, Y, min<P>) :- advisor__choices(S, Y, P).
    advisor(S, Y, P) :- advisor__choice1(S, Y, P).

Supported for one key on a relation outside recursion (where the least candidate is a faithful
choice). A recursive relation (Soufflé's spanning tree, where the choice in each round decides
what later rounds derive) and several keys on one relation are errors: not supported yet.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import DatalogError, ParseError
from . import ast
from .auxiliary import fresh_name, is_recursive, relation_names, renamed_heads


def lower_choice(program: ast.Program) -> tuple[ast.Program, list[DatalogError]]:
    """``program`` with every ``choice-domain`` relation choosing its least candidate per key."""
    errors: list[DatalogError] = []
    taken = relation_names(program)
    for declaration in [d for d in program.declarations if d.choice_domains]:
        problem = _problem(declaration, program)
        if problem:
            errors.append(ParseError(problem, declaration.span.line, declaration.span.column))
            continue
        key = declaration.choice_domains[0]
        if len(key) < len(declaration.columns):
            program = _with_choice(program, declaration, key, taken)
    return program, errors


def _problem(declaration: ast.Declaration, program: ast.Program) -> str:
    name = declaration.name
    if len(declaration.choice_domains) > 1:
        return f"choice-domain with several keys is not supported yet ('{name}')"
    if name in program.inputs:
        return f"choice-domain on an .input relation is not supported yet ('{name}')"
    if is_recursive(program, name):
        return (
            f"choice-domain on a recursive relation is not supported yet ('{name}'): Soufflé chooses "
            "while it evaluates, which a least candidate over the whole result does not reproduce"
        )
    return ""


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
