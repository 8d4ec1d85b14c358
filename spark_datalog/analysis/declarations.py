"""Checks of the ``.decl``, ``.input`` and ``.output`` statements against the rest of the program.

- a relation is declared at most once, with distinct column names and known types;
- ``.input`` / ``.output`` name a relation that is declared or used somewhere;
- a relation named by ``.input`` is not also defined by rules (an input is supplied from outside;
  facts stated in the program are added to it, rules are not).
"""

from __future__ import annotations

from ..errors import SchemaError
from ..syntax import ast
from .mentions import atom_uses, error_at, where


def check_declarations(program: ast.Program) -> list[SchemaError]:
    """All errors in the declarations and directives of ``program``."""
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
            if column.type not in ast.TYPES:
                errors.append(
                    error_at(
                        SchemaError,
                        f"unknown type '{column.type}' for column "
                        f"'{column.name}' of '{decl.name}' (types: "
                        f"{', '.join(ast.TYPES)})",
                        column.span,
                    )
                )

    used = {u.atom.predicate for u in atom_uses(program)}
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
