"""Names and positions of the auxiliary relations that lowering adds."""

from __future__ import annotations

from . import ast


def fresh_name(base: str, taken: set) -> str:
    """``base``, or ``base`` with the first number that makes it new; added to ``taken``."""
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}{n}"
    taken.add(name)
    return name


def relation_names(program: ast.Program) -> set:
    """Every relation name the program declares, defines or reads."""
    names = {d.name for d in program.declarations} | {d.name for d in program.directives}
    names |= {f.atom.predicate for f in program.facts}
    for rule in program.rules:
        names.add(rule.head.predicate)
        for literal in rule.body:
            atom = literal.atom if isinstance(literal, ast.Negation) else literal
            if isinstance(atom, ast.Atom):
                names.add(atom.predicate)
    return names
