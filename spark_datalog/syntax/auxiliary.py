"""Names and positions of the auxiliary relations that lowering adds."""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from typing import Any, Iterator

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


def nodes(*roots) -> Iterator:
    """Every node inside ``roots`` (literals or terms), the roots included: atoms' arguments,
    negated atoms, operands, functors' arguments, aggregates' bodies and targets."""
    stack = list(roots)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.Atom):
            stack.extend(node.args)
        elif isinstance(node, ast.Negation):
            stack.append(node.atom)
        elif isinstance(node, (ast.Comparison, ast.BinaryOp)):
            stack.extend((node.left, node.right))
        elif isinstance(node, ast.Call):
            stack.extend(node.args)
        elif isinstance(node, ast.BodyAggregate):
            stack.extend(node.body)
            if node.target is not None:
                stack.append(node.target)


def read_relations(literal) -> set:
    """The relations a literal reads, inside negations and aggregates' bodies too."""
    return {node.predicate for node in nodes(literal) if isinstance(node, ast.Atom)}


def is_recursive(program: ast.Program, name: str) -> bool:
    """Whether relation ``name`` depends on itself through the program's rules.

    Example::

        >>> from spark_datalog.syntax.parser import parse
        >>> is_recursive(parse("t(X, Y) :- e(X, Y). t(X, Z) :- t(X, Y), e(Y, Z)."), "t")
        True
    """
    return name in dependencies(program, name)


def dependencies(program: ast.Program, name: str) -> set:
    """The relations ``name`` reads through the program's rules, directly or not (``name``
    itself when it is recursive).

    >>> from spark_datalog.syntax.parser import parse
    >>> sorted(dependencies(parse("s(X) :- e(X). t(X) :- s(X)."), "t"))
    ['e', 's']
    """
    reads: dict = {}
    for rule in program.rules:
        found = reads.setdefault(rule.head.predicate, set())
        for literal in rule.body:
            found |= read_relations(literal)
    seen: set = set()
    pending = list(reads.get(name, ()))
    while pending:
        relation = pending.pop()
        if relation not in seen:
            seen.add(relation)
            pending.extend(reads.get(relation, ()))
    return seen


def renamed_reads(node: Any, renamed: dict) -> Any:
    """``node`` (a literal or term) with every atom of a relation in ``renamed`` (old name ->
    new name) reading the new name, inside negations and aggregates' bodies too.

    >>> count = ast.BodyAggregate("count", None, (ast.Negation(ast.Atom("r", (ast.Variable("Y"),))),))
    >>> str(renamed_reads(ast.Comparison("<", count, ast.Variable("X")), {"r": "q"}))
    'count : { not q(Y) } < X'
    """
    if isinstance(node, tuple):
        items = tuple(renamed_reads(item, renamed) for item in node)
        return node if all(a is b for a, b in zip(items, node, strict=True)) else items
    if not is_dataclass(node) or isinstance(node, ast.Span):
        return node
    changes = {}
    for item in fields(node):
        value = getattr(node, item.name)
        new = renamed_reads(value, renamed) if isinstance(value, tuple) or is_dataclass(value) else value
        if new is not value:
            changes[item.name] = new
    if isinstance(node, ast.Atom) and node.predicate in renamed:
        changes["predicate"] = renamed[node.predicate]
    return replace(node, **changes) if changes else node


def renamed_heads(program: ast.Program, renamed: dict) -> ast.Program:
    """``program`` with the heads of the rules and facts of the relations in ``renamed`` (old
    name -> new name) renamed; the bodies keep reading the old names."""

    def head(atom: ast.Atom) -> ast.Atom:
        return replace(atom, predicate=renamed[atom.predicate]) if atom.predicate in renamed else atom

    facts = tuple(replace(fact, atom=head(fact.atom)) for fact in program.facts)
    rules = tuple(replace(rule, head=head(rule.head)) for rule in program.rules)
    return replace(program, facts=facts, rules=rules)
