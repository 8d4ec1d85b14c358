"""Where each relation is mentioned: the atoms of a program in source order, with their role.

Several passes need "every use of a predicate" (arity, types) or "the order relations first appear
in" (deterministic output). Both come from :func:`atom_uses`.
"""

from __future__ import annotations

from operator import attrgetter
from typing import NamedTuple, Optional, TypeVar

from ..errors import DatalogError
from ..syntax import ast

# Roles of an atom occurrence.
FACT = "fact"
HEAD = "head"
BODY = "body"
NEGATED = "negated"
QUERY = "query"

E = TypeVar("E", bound=DatalogError)

# Sort keys: (line, column) of an atom use, of a (span, name) mention (C getters: no Python call).
_USE_POSITION = attrgetter("atom.span.line", "atom.span.column")
_MENTION_POSITION = attrgetter("span.line", "span.column")


class AtomUse(NamedTuple):
    """One atom of the program: its role and, for rule atoms, the index of its rule."""

    atom: ast.Atom
    role: str
    rule_index: Optional[int] = None

    @property
    def span(self) -> ast.Span:
        return self.atom.span


def atom_uses(program: ast.Program, rules: Optional[tuple] = None) -> list[AtomUse]:
    """Every atom of the program (facts, rule heads and bodies, queries), sorted by source position.

    ``rules`` replaces ``program.rules`` (for normalised rules; they keep their atoms). The sort
    is stable, so atoms without positions keep the order facts, rules, queries.
    """
    uses: list[AtomUse] = [AtomUse(f.atom, FACT) for f in program.facts]
    for index, rule in enumerate(program.rules if rules is None else rules):
        uses.append(AtomUse(rule.head, HEAD, index))
        for literal in rule.body:
            if isinstance(literal, ast.Atom):
                uses.append(AtomUse(literal, BODY, index))
            elif isinstance(literal, ast.Negation):
                uses.append(AtomUse(literal.atom, NEGATED, index))
    uses.extend(AtomUse(q.atom, QUERY) for q in program.queries)
    return sorted(uses, key=_USE_POSITION)


def relation_order(program: ast.Program, uses: Optional[list[AtomUse]] = None) -> list[str]:
    """Relation names in order of first mention (declarations, directives and atoms by position).
    ``uses`` is ``atom_uses(program)`` when the caller has it already."""
    mentions: list = [*program.declarations, *program.directives]
    # The uses are sorted by position: only each relation's first one can be its first mention.
    first_uses: dict = {}
    for use in atom_uses(program) if uses is None else uses:
        first_uses.setdefault(use.atom.predicate, use.atom)
    mentions += [_Mention(atom.predicate, atom.span) for atom in first_uses.values()]
    # Sort by position only (stable), so unpositioned mentions keep declaration order.
    mentions.sort(key=_MENTION_POSITION)
    return list(dict.fromkeys(mention.name for mention in mentions))


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
