"""Soufflé's components expanded into plain statements.

``.comp Graph<T> { .decl edge(x: T, y: T) ... }`` is a template; ``.init g = Graph<number>``
copies its statements with ``T`` replaced by ``number`` and every relation and type the
component declares renamed ``g.<name>`` (``g.edge``). What it does not declare keeps its name,
so a component can add rules to relations outside it. A component's bases (``.comp Sub : Base``)
give it their statements first, except the rules and facts of the relations it names in an
``.override`` (which the base must declare ``overridable``). A component declared inside another
is visible only there; a type parameter may also name the component an inner ``.init``
instantiates. Statements keep their positions, so errors point into the component's text.

Example::

    >>> from spark_datalog.syntax.parser import parse
    >>> program = parse(".comp C<T> { .decl r(x: T) r(1). } .init a = C<number>")
    >>> [str(d) for d in program.declarations], [str(f) for f in program.facts]
    (['.decl a.r(x: long)'], ['a.r(1).'])
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from ..errors import DatalogError, ParseError
from . import ast

MAX_DEPTH = 100  # instantiations nested deeper than this are taken for a cycle


def expand_components(program: ast.Program, type_spans: dict) -> tuple[ast.Program, list[DatalogError]]:
    """``program`` with every ``.init`` replaced by the statements it stands for."""
    expansion = _Expansion(type_spans)
    scope = _Scope([c for c in program.components if isinstance(c, ast.Component)], None)
    added: list = []
    for init in (c for c in program.components if isinstance(c, ast.Init)):
        added += expansion.instantiate(init, scope, {}, 0)
    kinds = {
        ast.Declaration: "declarations",
        ast.Directive: "directives",
        ast.Fact: "facts",
        ast.Rule: "rules",
        ast.Subsumption: "subsumptions",
    }
    kinds[ast.TypeDecl] = "types"  # the grammar allows nothing else in a component
    grouped: dict = {field: list(getattr(program, field)) for field in kinds.values()}
    for statement in added:
        grouped[kinds[type(statement)]].append(statement)
    expanded = replace(
        program,
        components=(),
        declarations=tuple(grouped["declarations"]),
        directives=tuple(grouped["directives"]),
        facts=tuple(grouped["facts"]),
        rules=tuple(grouped["rules"]),
        types=tuple(grouped["types"]),
        subsumptions=tuple(grouped["subsumptions"]),
    )
    return expanded, expansion.errors


class _Scope:
    """The components visible at one level (a component's own inner ones, then the outer)."""

    def __init__(self, components: list, parent: Optional["_Scope"]):
        self.components = {c.signature.name: c for c in components}
        self.parent = parent

    def find(self, name: str) -> Optional[ast.Component]:
        scope: Optional[_Scope] = self
        while scope is not None:
            if name in scope.components:
                return scope.components[name]
            scope = scope.parent
        return None


class _Expansion:
    def __init__(self, type_spans: dict):
        self.type_spans = type_spans
        self.errors: list[DatalogError] = []

    def error(self, message: str, where: ast.Span) -> None:
        self.errors.append(ParseError(message, where.line, where.column))

    def instantiate(self, init: ast.Init, scope: _Scope, bindings: dict, depth: int) -> list:
        """The statements of ``init``'s instance, renamed into its namespace."""
        found = self._component(init.component, scope, bindings, depth)
        if found is None:
            return []
        component, arguments = found
        statements = self.statements(component, arguments, scope, depth + 1)
        relations = {s.name for s in statements if isinstance(s, ast.Declaration)}
        types = {s.name for s in statements if isinstance(s, ast.TypeDecl)}
        return [self._renamed(statement, relations, types, init.name + ".") for statement in statements]

    def _component(self, used: ast.ComponentType, scope: _Scope, bindings: dict, depth: int):
        """(the component ``used`` names, its parameters bound to the arguments) or None."""
        name = bindings.get(used.name, used.name)
        component = scope.find(name)
        if component is None:
            self.error(f"unknown component '{name}'", used.span)
            return None
        if depth > MAX_DEPTH:
            self.error(f"components instantiated more than {MAX_DEPTH} deep (a cycle?)", used.span)
            return None
        parameters = component.signature.args
        if len(parameters) != len(used.args):
            self.error(
                f"component '{name}' takes {len(parameters)} type parameter(s), given {len(used.args)}",
                used.span,
            )
            return None
        return component, dict(zip(parameters, (bindings.get(a, a) for a in used.args), strict=True))

    def statements(self, component: ast.Component, bindings: dict, scope: _Scope, depth: int) -> list:
        """``component``'s statements with ``bindings`` for its parameters: its bases' first
        (without the rules and facts of overridden relations), its inner instances expanded."""
        inner = _Scope([i for i in component.items if isinstance(i, ast.Component)], scope)
        statements: list = []
        for base in component.bases:
            found = self._component(base, scope, bindings, depth)
            if found is not None:
                statements += self.statements(found[0], found[1], scope, depth + 1)
        statements = self._overridden(component, statements)
        for item in component.items:
            if isinstance(item, ast.Init):
                statements += self.instantiate(item, inner, bindings, depth)
            elif not isinstance(item, (ast.Component, ast.Override)):
                statements.append(self._bound(item, bindings))
        return statements

    def _overridden(self, component: ast.Component, inherited: list) -> list:
        overrides = {item.name: item for item in component.items if isinstance(item, ast.Override)}
        if not overrides:
            return inherited
        overridable = {
            s.name for s in inherited if isinstance(s, ast.Declaration) and "overridable" in s.qualifiers
        }
        for name, item in overrides.items():
            if name not in overridable:
                self.error(f"'{name}' cannot be overridden: no base declares it overridable", item.span)
        return [s for s in inherited if _head_name(s) not in overrides]

    def _bound(self, statement, bindings: dict):
        """``statement`` with type parameters replaced in its column and type names."""
        if not bindings:
            return statement
        if isinstance(statement, ast.Declaration):
            columns = tuple(self._column(c, lambda t: bindings.get(t, t)) for c in statement.columns)
            return replace(statement, columns=columns)
        if isinstance(statement, ast.TypeDecl):
            return replace(
                statement,
                bases=tuple(bindings.get(b, b) for b in statement.bases),
                branches=_branch_types(statement, lambda b: bindings.get(b, b)),
            )
        return statement

    def _column(self, column: ast.ColumnDecl, rename) -> ast.ColumnDecl:
        name = rename(column.type)
        if name == column.type:
            return column
        renamed = replace(column, type=ast.TYPE_ALIASES.get(name, name))
        if id(column) in self.type_spans:
            self.type_spans[id(renamed)] = self.type_spans[id(column)]
        return renamed

    def _renamed(self, statement, relations: set, types: set, prefix: str):
        """``statement`` with the names in ``relations`` and in ``types`` given ``prefix`` (two
        namespaces: a relation ``node`` leaves a column of type ``node`` alone)."""

        def rename(name: str) -> str:
            return prefix + name if name in relations else name

        def rename_type(name: str) -> str:
            return prefix + name if name in types else name

        if isinstance(statement, ast.Declaration):
            columns = tuple(self._column(c, rename_type) for c in statement.columns)
            return replace(statement, name=rename(statement.name), columns=columns)
        if isinstance(statement, ast.TypeDecl):
            return replace(
                statement,
                name=rename_type(statement.name),
                bases=tuple(map(rename_type, statement.bases)),
                branches=_branch_types(statement, rename_type),
            )
        if isinstance(statement, ast.Directive):
            return replace(statement, name=rename(statement.name))
        if isinstance(statement, ast.Fact):
            return replace(statement, atom=_renamed_atom(statement.atom, rename))
        if isinstance(statement, ast.Rule):
            body = tuple(_renamed_node(literal, rename) for literal in statement.body)
            return replace(statement, head=_renamed_node(statement.head, rename), body=body)
        if isinstance(statement, ast.Subsumption):
            body = tuple(_renamed_node(literal, rename) for literal in statement.body)
            dominated, dominating = (
                _renamed_atom(a, rename) for a in (statement.dominated, statement.dominating)
            )
            return replace(statement, dominated=dominated, dominating=dominating, body=body)
        return statement


def _head_name(statement) -> Optional[str]:
    if isinstance(statement, ast.Subsumption):
        return statement.dominated.predicate
    if isinstance(statement, ast.Rule):
        return statement.head.predicate
    if isinstance(statement, ast.Fact):
        return statement.atom.predicate
    return None


def _renamed_atom(atom: ast.Atom, rename) -> ast.Atom:
    args = tuple(_renamed_node(a, rename) for a in atom.args)
    return replace(atom, predicate=rename(atom.predicate), args=args)


def _renamed_node(node, rename):
    """``node`` (a literal or term) with its atoms' relation names renamed, aggregates'
    bodies included."""
    if isinstance(node, ast.Atom):
        return _renamed_atom(node, rename)
    if isinstance(node, ast.Negation):
        return replace(node, atom=_renamed_atom(node.atom, rename))
    if isinstance(node, (ast.Comparison, ast.BinaryOp)):
        return replace(node, left=_renamed_node(node.left, rename), right=_renamed_node(node.right, rename))
    if isinstance(node, ast.Call):
        return replace(node, args=tuple(_renamed_node(a, rename) for a in node.args))
    if isinstance(node, ast.BodyAggregate):
        target = None if node.target is None else _renamed_node(node.target, rename)
        return replace(node, target=target, body=tuple(_renamed_node(lit, rename) for lit in node.body))
    return node


def _branch_types(declared: ast.TypeDecl, rename) -> tuple:
    """An ADT's branches with their fields' types renamed."""
    return tuple((branch, names, tuple(map(rename, types))) for branch, names, types in declared.branches)
