"""Arity consistency: every use of a predicate has the same number of arguments as its ``.decl``
(or, without one, as its first use), and input DataFrame schemas agree with the program."""

from __future__ import annotations

from typing import Optional

from ..errors import SchemaError
from ..syntax import ast
from .mentions import Mentions, atom_mentions, error_at, where


def check_arity(
    program: ast.Program, input_types: Optional[dict] = None, mentions: Optional[Mentions] = None
) -> list[SchemaError]:
    """One error per atom whose arity differs from the predicate's reference arity. ``mentions``
    is ``atom_mentions(program)`` when the caller has it already."""
    if mentions is None:
        mentions = atom_mentions(program)
    declared: dict[str, ast.Declaration] = {}
    for decl in program.declarations:
        declared.setdefault(decl.name, decl)
    # the reference arity: the .decl's, else the first use's
    expected = {name: len(atom.args) for name, atom in mentions.first.items()}
    expected.update((name, len(decl.columns)) for name, decl in declared.items())
    errors: list[SchemaError] = []
    for atom in mentions.atoms:
        arity = expected[atom.predicate]
        if len(atom.args) != arity:
            errors.append(
                error_at(
                    SchemaError,
                    f"relation '{atom.predicate}' has arity {atom.arity} here but arity {arity} at "
                    f"{_origin(atom.predicate, declared, mentions)}",
                    atom.span,
                )
            )
    for name, types in (input_types or {}).items():
        if name in expected and len(types) != expected[name]:
            errors.append(
                error_at(
                    SchemaError,
                    f"the input for relation '{name}' has "
                    f"{len(types)} column(s) but the program uses "
                    f"arity {expected[name]} at {_origin(name, declared, mentions)}",
                    _input_span(program, name),
                )
            )
    return errors


def _origin(name: str, declared: dict, mentions: Mentions) -> str:
    """Where the reference arity of ``name`` was fixed."""
    if name in declared:
        return f"its .decl at {where(declared[name].span)}"
    return f"its use at {where(mentions.first[name].span)}"


def _input_span(program: ast.Program, name: str) -> Optional[ast.Span]:
    """Where the program names ``name`` as an input: its ``.input``, else its ``.decl``."""
    for statement in (*program.directives, *program.declarations):
        if statement.name == name and getattr(statement, "kind", "input") == "input":
            return statement.span
    return None
