"""Arity consistency: every use of a predicate has the same number of arguments as its ``.decl``
(or, without one, as its first use), and input DataFrame schemas agree with the program."""

from __future__ import annotations

from typing import Optional

from ..errors import SchemaError
from ..syntax import ast
from .mentions import AtomUse, atom_uses, error_at, where


def check_arity(
    program: ast.Program, input_types: Optional[dict] = None, uses: Optional[list[AtomUse]] = None
) -> list[SchemaError]:
    """One error per atom whose arity differs from the predicate's reference arity. ``uses`` is
    ``atom_uses(program)`` when the caller has it already."""
    errors: list[SchemaError] = []
    reference: dict[str, tuple[int, str]] = {}  # name -> (arity, description of where it was fixed)
    for decl in program.declarations:
        reference.setdefault(decl.name, (len(decl.columns), f"its .decl at {where(decl.span)}"))
    for use in atom_uses(program) if uses is None else uses:
        atom = use.atom
        if atom.predicate not in reference:
            reference[atom.predicate] = (atom.arity, f"its use at {where(atom.span)}")
            continue
        arity, origin = reference[atom.predicate]
        if atom.arity != arity:
            errors.append(
                error_at(
                    SchemaError,
                    f"relation '{atom.predicate}' has arity {atom.arity} here but arity {arity} at {origin}",
                    atom.span,
                )
            )
    for name, types in (input_types or {}).items():
        if name in reference and len(types) != reference[name][0]:
            arity, origin = reference[name]
            errors.append(
                error_at(
                    SchemaError,
                    f"the input for relation '{name}' has "
                    f"{len(types)} column(s) but the program uses "
                    f"arity {arity} at {origin}",
                    _input_span(program, name),
                )
            )
    return errors


def _input_span(program: ast.Program, name: str) -> Optional[ast.Span]:
    """Where the program names ``name`` as an input: its ``.input``, else its ``.decl``."""
    for statement in (*program.directives, *program.declarations):
        if statement.name == name and getattr(statement, "kind", "input") == "input":
            return statement.span
    return None
