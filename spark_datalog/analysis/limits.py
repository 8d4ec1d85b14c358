"""Checks of ``.limitsize r(n=N)``: the relations a limit may bound.

A limit cuts the new facts of the round that reaches it (the least ones, in value order: see
``spark_datalog.limits``), so it needs a relation whose facts a round adds as a set: one with
rules (an ``.input`` relation with a limit is derived from its input, ``syntax.input_rules``).
A relation with only stated facts, a head aggregate, a ``choice-domain`` or a subsumption
applied in its rounds is refused, at the directive.
"""

from __future__ import annotations

from ..errors import ParseError
from ..syntax import ast
from .mentions import error_at


def limit_errors(program: ast.Program, idb: set, aggregates: dict) -> list:
    """A ``ParseError`` at each ``.limitsize`` naming a relation it cannot bound."""
    chosen = {d.name for d in program.declarations if d.choice_domains}
    subsumed = {relation for relation, *_ in program.subsumed}
    errors = []
    for directive in program.directives:
        name = directive.name
        if directive.kind != "limitsize":
            continue
        why = ""
        if name not in idb:
            why = "it has no rules (only stated facts); state fewer facts"
        elif name in aggregates:
            why = f"it has a {aggregates[name].func} aggregate"
        elif name in chosen:
            why = "it has a choice-domain"
        elif name in subsumed:
            why = "a subsumption removes its facts in each round"
        if why:
            message = f".limitsize {name} is not supported: {why}"
            errors.append(error_at(ParseError, message, directive.span))
    return errors
