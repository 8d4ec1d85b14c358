"""Where each relation is mentioned: the atoms of a program in source order.

Several passes need "every use of a predicate" (arity), "the first use of each" (declarations) or
"the order relations first appear in" (deterministic output). All come from :func:`atom_mentions`.
"""

from __future__ import annotations

from operator import attrgetter
from typing import NamedTuple, Optional, TypeVar

from ..errors import DatalogError
from ..syntax import ast

E = TypeVar("E", bound=DatalogError)

# Sort keys: (line, column) of an atom, of a (span, name) mention (C getters: no Python call).
_POSITION = attrgetter("span.line", "span.column")


class Mentions(NamedTuple):
    """Every atom of a program (facts, rule heads and bodies, queries) sorted by source position,
    and each relation's first one. The sort is stable, so atoms without positions keep the order
    facts, rules, queries."""

    atoms: list  # list[ast.Atom]
    first: dict  # relation -> its first atom, in the order of the relations' first atoms


def atom_mentions(program: ast.Program) -> Mentions:
    """The :class:`Mentions` of ``program`` (normalised rules keep the same atoms)."""
    atoms: list = [f.atom for f in program.facts]
    for rule in program.rules:
        atoms.append(rule.head)
        for literal in rule.body:
            kind = type(literal)
            if kind is ast.Atom:
                atoms.append(literal)
            elif kind is ast.Negation:
                atoms.append(literal.atom)
    atoms += [q.atom for q in program.queries]
    atoms.sort(key=_POSITION)
    first: dict = {}
    for atom in atoms:
        if atom.predicate not in first:
            first[atom.predicate] = atom
    return Mentions(atoms, first)


def relation_order(program: ast.Program, mentions: Optional[Mentions] = None) -> list[str]:
    """Relation names in order of first mention (declarations, directives and atoms by position).
    ``mentions`` is ``atom_mentions(program)`` when the caller has it already."""
    first = (atom_mentions(program) if mentions is None else mentions).first
    mentions_: list = [*program.declarations, *program.directives]
    # The atoms are sorted by position: only each relation's first one can be its first mention.
    mentions_ += [_Mention(atom.predicate, atom.span) for atom in first.values()]
    # Sort by position only (stable), so unpositioned mentions keep declaration order.
    mentions_.sort(key=_POSITION)
    return list(dict.fromkeys(mention.name for mention in mentions_))


class _Mention(NamedTuple):
    """A relation's first atom, as a declaration or directive would name it."""

    name: str
    span: ast.Span


def rule_text(rule: ast.Rule) -> str:
    """The rule as the user wrote it, on one line (for messages)."""
    text = " ".join((rule.text or "").split())
    return text or str(rule)


def where(span: ast.Span) -> str:
    """``line:column`` of a span, or ``?`` when it has no position."""
    return str(span) if span.line else "?"


def error_at(cls: type[E], message: str, span: Optional[ast.Span]) -> E:
    """An error of class ``cls`` positioned at ``span`` (no position when the span is unknown)."""
    if span is None or not span.line:
        return cls(message)
    return cls(message, span.line, span.column)
