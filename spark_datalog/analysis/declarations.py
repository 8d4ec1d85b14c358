"""Checks of the ``.decl``, ``.input`` and ``.output`` statements against the rest of the program.

- a relation is declared at most once, with distinct column names and known types;
- ``.input`` / ``.output`` name a relation that is declared or used somewhere;
- a relation named by ``.input`` is not also defined by rules (an input is supplied from outside;
  facts stated in the program are added to it, rules are not);
- every relation an atom reads is defined: it has a rule, a fact, a ``.decl`` or an ``.input``
  (an atom over anything else is almost always a typo, or a function written as a relation).
"""

from __future__ import annotations

import difflib
from typing import Optional

from ..record_types import is_value_type
from ..errors import SchemaError
from ..syntax import ast
from .mentions import Mentions, atom_mentions, error_at, where


def check_declarations(program: ast.Program, mentions: Optional[Mentions] = None) -> list[SchemaError]:
    """All errors in the declarations and directives of ``program``. ``mentions`` is
    ``atom_mentions(program)`` when the caller has it already."""
    errors: list[SchemaError] = []
    declared: dict[str, ast.Declaration] = {}
    for decl in program.declarations:
        if decl.name in declared:
            first = declared[decl.name]
            errors.append(
                error_at(
                    SchemaError,
                    f"relation '{decl.name}' is declared twice (first .decl at {where(first.span)})",
                    decl.span,
                )
            )
            continue
        declared[decl.name] = decl
        seen: set[str] = set()
        for column in decl.columns:
            if column.name in seen:
                errors.append(
                    error_at(
                        SchemaError, f"column '{column.name}' appears twice in .decl {decl.name}", column.span
                    )
                )
            seen.add(column.name)
            if not is_value_type(column.type):
                errors.append(
                    error_at(
                        SchemaError,
                        f"unknown type '{column.type}' for column "
                        f"'{column.name}' of '{decl.name}' (types: "
                        f"{', '.join(ast.TYPES)})",
                        column.span,
                    )
                )

    used = (atom_mentions(program) if mentions is None else mentions).first
    for directive in program.directives:
        if directive.name not in used and directive.name not in declared:
            errors.append(
                error_at(
                    SchemaError,
                    f"relation '{directive.name}' named by .{directive.kind} is never used and has no .decl",
                    directive.span,
                )
            )

    inputs = set(program.inputs)
    reported: set[str] = set()
    for rule in program.rules:
        name = rule.head.predicate
        if name in inputs and name not in reported:
            reported.add(name)
            errors.append(
                error_at(
                    SchemaError,
                    f"relation '{name}' is declared .input but also defined by rules",
                    rule.head.span,
                )
            )
    return errors


def check_defined(program: ast.Program, mentions: Optional[Mentions] = None) -> list[SchemaError]:
    """An error at the first atom over each relation that has no rule, fact, .decl or .input.
    ``mentions`` is ``atom_mentions(program)`` when the caller has it already."""
    defined = set(defined_relations(program))
    first = (atom_mentions(program) if mentions is None else mentions).first
    return [
        error_at(SchemaError, _never_defined(name, defined), atom.span)
        for name, atom in first.items()
        if name not in defined
    ]


def defined_relations(program: ast.Program) -> list[str]:
    """Relations with a rule, a fact, a ``.decl`` or an ``.input``, in that order."""
    names = [rule.head.predicate for rule in program.rules]
    names += [fact.atom.predicate for fact in program.facts]
    names += [decl.name for decl in program.declarations]
    names += list(program.inputs)
    return list(dict.fromkeys(names))


def _never_defined(name: str, defined: set) -> str:
    message = f"relation '{name}' is never defined (it has no rule, fact, .decl or .input)"
    close = difflib.get_close_matches(name, sorted(defined), n=1)
    if close:
        return f"{message}; did you mean '{close[0]}'?"
    return f"{message}; if it is supplied from outside, declare it with '.input {name}'"
