"""Where each relation is mentioned: the atoms of a program in source order, with their role.

Several passes need "every use of a predicate" (arity, types) or "the order relations first appear
in" (deterministic output). Both come from :func:`atom_uses`.
"""

from __future__ import annotations

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
    return sorted(uses, key=lambda u: (u.atom.span.line, u.atom.span.column))  # ints: fast


def relation_order(program: ast.Program, uses: Optional[list[AtomUse]] = None) -> list[str]:
    """Relation names in order of first mention (declarations, directives and atoms by position).
    ``uses`` is ``atom_uses(program)`` when the caller has it already."""
    mentions: list[tuple[ast.Span, str]] = [(d.span, d.name) for d in program.declarations]
    mentions += [(d.span, d.name) for d in program.directives]
    mentions += [(u.span, u.atom.predicate) for u in (atom_uses(program) if uses is None else uses)]
    # Sort by position only (stable), so unpositioned mentions keep declaration order.
    mentions.sort(key=lambda m: (m[0].line, m[0].column))
    return list(dict.fromkeys(name for _, name in mentions))


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
