"""Rules and facts adding to an ``.input`` relation, as Soufflé allows.

``.input r`` with rules for ``r`` (or ``r`` an ``eqrel``, or limited by ``.limitsize``: the
limit then cuts the input too) is lowered so that the input lands in
an EDB relation ``r__input`` (same columns; the ``.input`` directive reads into it, from the file
``r.facts`` unless it names another) and ``r`` is derived: ``r(X0, ...) :- r__input(X0, ...).``
plus the program's own rules and facts. The program records ``{"r": "r__input"}``
(``ast.Program.input_aliases``): every place that takes inputs by name (``materialize``'s
``inputs``, ``update``'s ``changes``, ``query``, the reference and kernel evaluators, ``--input``,
the job's inputs) maps ``r`` through :func:`input_relation`, so users keep naming ``r``.

Example::

    >>> from spark_datalog.syntax.parser import parse
    >>> program = parse(".decl r(x: number)\\n.input r\\nr(X + 1) :- r(X), X < 3.")
    >>> [str(rule) for rule in program.rules]
    ['r((X + 1)) :- r(X), X < 3.', 'r(X0) :- r__input(X0).']
    >>> program.input_aliases, [str(d) for d in program.directives]
    ((('r', 'r__input'),), [".input r__input(filename='r.facts')"])
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from . import ast
from .auxiliary import fresh_name, relation_names


def has_input_rules(program: ast.Program) -> bool:
    """Whether an ``.input`` relation of ``program`` has rules, is an ``eqrel`` or is limited."""
    inputs = set(program.inputs)
    if not inputs:
        return False
    eqrel = {d.name for d in program.declarations if "eqrel" in d.qualifiers}
    if inputs & (eqrel | set(program.limits)):
        return True
    return any(rule.head.predicate in inputs for rule in program.rules)


def lower_input_rules(program: ast.Program) -> ast.Program:
    """``program`` with each ``.input`` relation that has rules (or is an ``eqrel``) read into
    ``<r>__input`` and derived from it (see the module's docstring)."""
    if not has_input_rules(program):
        return program
    eqrel = {d.name for d in program.declarations if "eqrel" in d.qualifiers}
    derived = {rule.head.predicate for rule in program.rules} | eqrel | set(program.limits)
    taken = relation_names(program)
    aliases: dict = {}
    for name in program.inputs:
        if name in derived and name not in aliases:
            aliases[name] = fresh_name(f"{name}__input", taken)
    declarations = list(program.declarations)
    for declaration in program.declarations:
        if declaration.name in aliases:
            declarations.append(
                ast.Declaration(aliases[declaration.name], declaration.columns, declaration.span)
            )
    directives = tuple(_read_into(d, aliases) for d in program.directives)
    rules = [*program.rules, *(_copy_rule(program, name, edb) for name, edb in aliases.items())]
    return replace(
        program,
        declarations=tuple(declarations),
        directives=directives,
        rules=tuple(rules),
        input_aliases=tuple(aliases.items()),
    )


def _read_into(directive: ast.Directive, aliases: dict) -> ast.Directive:
    """An ``.input r`` directive reading into ``r``'s EDB relation, from ``r``'s file."""
    if directive.kind != "input" or directive.name not in aliases:
        return directive
    params = directive.params
    if directive.param("filename") is None:
        params = (*params, ("filename", f"{directive.name}.facts"))
    return replace(directive, name=aliases[directive.name], params=params)


def _copy_rule(program: ast.Program, name: str, edb: str) -> ast.Rule:
    """``r(X0, ...) :- r__input(X0, ...).``, at the ``.input`` directive."""
    span = next(d.span for d in program.directives if d.kind == "input" and d.name == name)
    arity = next(
        (len(d.columns) for d in program.declarations if d.name == name),
        next((len(r.head.args) for r in program.rules if r.head.predicate == name), 0),
    )
    variables = tuple(ast.Variable(f"X{i}", span) for i in range(arity))
    rule = ast.Rule(ast.Atom(name, variables, span), (ast.Atom(edb, variables, span),), span=span)
    return replace(rule, text=str(rule))


def input_relation(aliases: tuple, name: str) -> str:
    """The EDB relation that holds the input the user calls ``name`` (``name`` itself unless
    ``.input name`` has rules)."""
    for given, edb in aliases:
        if given == name:
            return edb
    return name


def bound_inputs(aliases: tuple, inputs: Any) -> Any:
    """``inputs`` (a mapping from relation names, or anything else, returned as is) with each
    name mapped by :func:`input_relation`."""
    if not aliases or not isinstance(inputs, Mapping):
        return inputs
    return {input_relation(aliases, name): value for name, value in inputs.items()}
