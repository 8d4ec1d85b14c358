"""Soufflé's ``.type`` declarations resolved to the language's value types.

``.type Node <: symbol`` (a subtype), ``.type Id = number`` (an equivalent name) and
``.type Any = Node | Other`` (a union, whose members must share one value type) each name a
value type: the type a column declared with them gets. Declared types may be used before their
declaration and may name each other; a cycle, an unknown name or a union of different value
types is a :class:`~spark_datalog.errors.ParseError` at the declaration.

Example::

    >>> from spark_datalog.syntax.parser import parse
    >>> parse(".type Node <: symbol  .decl e(a: Node, b: Node)").declarations[0].columns[0].type
    'string'
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from ..errors import DatalogError, ParseError
from ..record_types import adt_type, record_type
from ..recursive_records import group_type, recursive_adt, recursive_type
from . import ast

KNOWN = "int, long, double, string, bool (aliases number, symbol, float, unsigned)"


def resolve_types(program: ast.Program, type_spans: dict) -> tuple[ast.Program, list[DatalogError]]:
    """``program`` with every column type (of its declarations, and of its ``.functor``
    declarations' parameters and results) a value type, and the errors."""
    resolver = _Resolver(program.types)
    declarations = tuple(
        replace(d, columns=_resolved_columns(resolver, d.columns, type_spans)) for d in program.declarations
    )
    functors = []
    for declared in program.functors:
        params = _resolved_columns(resolver, declared.params, type_spans)
        result = ast.ColumnDecl("", declared.result, declared.span)
        type_spans[id(result)] = type_spans.get(id(declared), declared.span)
        (result,) = _resolved_columns(resolver, (result,), type_spans)
        functors.append(replace(declared, params=params, result=result.type))
    resolver.check_all()
    return replace(program, declarations=declarations, functors=tuple(functors)), resolver.errors


def branch_types(types: tuple) -> dict:
    """Each ADT branch's ADT value type, of the ``.type`` declarations ``types`` (resolved
    again, without their errors, which :func:`resolve_types` reports).

    >>> from spark_datalog.syntax.parser import parse
    >>> branch_types(parse(".type S = Dot {} | Box {s: number}").types)["Dot"]
    '[$S|Box|Dot: long, Box: [s: long]]'
    """
    resolver = _Resolver(types)
    return {
        branch: resolver.value_type(declared.name)
        for declared in types
        for branch, _, _ in declared.branches
        if resolver.value_type(declared.name) is not None
    }


def _resolved_columns(resolver: "_Resolver", columns: tuple, type_spans: dict) -> tuple:
    resolved = []
    for column in columns:
        value_type = resolver.value_type(column.type)
        if value_type is None:
            where = type_spans.get(id(column), column.span)
            resolver.error(
                f"unknown type '{column.type}'; expected one of {KNOWN}{resolver.declared()}", where
            )
            value_type = column.type
        resolved.append(replace(column, type=value_type, declared=column.declared or column.type))
    return tuple(resolved)


class _Resolver:
    """Value types of declared type names, each resolved once."""

    def __init__(self, types: tuple):
        self.errors: list[DatalogError] = []
        self.types: dict = {}
        for declared in types:
            if declared.name in self.types or ast.TYPE_ALIASES.get(declared.name, declared.name) in ast.TYPES:
                self.error(f"type '{declared.name}' is declared twice (or is a built-in type)", declared.span)
            else:
                self.types[declared.name] = declared
        self.resolved: dict = {}
        self.resolving: set = set()
        self.groups = recursive_groups(self.types)
        self.branches: dict = {}  # an ADT's branch -> the ADT's name
        for declared in types:
            for branch, _, _ in declared.branches:
                if self.branches.setdefault(branch, declared.name) != declared.name:
                    self.error(
                        f"branch '{branch}' of '{declared.name}' is also a branch of "
                        f"'{self.branches[branch]}'",
                        declared.span,
                    )

    def error(self, message: str, where: ast.Span) -> None:
        self.errors.append(ParseError(message, where.line, where.column))

    def declared(self) -> str:
        return f", or a type declared with .type ({', '.join(sorted(self.types))})" if self.types else ""

    def check_all(self) -> None:
        for name in self.types:
            self.value_type(name)

    def value_type(self, name: str) -> Optional[str]:
        """The value type ``name`` stands for; None (with an error if it is declared) if none."""
        name = ast.TYPE_ALIASES.get(name, name)
        if name in ast.TYPES:
            return name
        if name in self.resolved:
            return self.resolved[name]
        declared = self.types.get(name)
        if declared is None or name in self.resolving:
            if declared is not None:
                message = f"type '{name}' is defined in terms of itself"
                if any(self.types[n].kind in ("record", "adt") for n in self.resolving):
                    message += (
                        " through a type that is no record type or ADT: not supported yet "
                        "(a recursive type's members must all be record types or ADTs)"
                    )
                self.error(message, declared.span)
                self.resolved[name] = None
            return None
        if name in self.groups:
            return self._group(self.groups[name])[name]
        self.resolving.add(name)
        self.resolved[name] = self._resolve(declared)
        self.resolving.discard(name)
        return self.resolved[name]

    def _resolve(self, declared: ast.TypeDecl) -> Optional[str]:
        found = []
        if declared.kind == "record":
            return self._record(declared)
        if declared.kind == "adt":
            return self._adt(declared)
        for base in declared.bases:
            value_type = self.value_type(base)
            if value_type is None:
                if base not in self.types:
                    self.error(
                        f"unknown type '{base}' in the declaration of '{declared.name}'", declared.span
                    )
                return None
            found.append(value_type)
        if len(set(found)) > 1:
            members = ", ".join(f"{b}: {t}" for b, t in zip(declared.bases, found, strict=True))
            self.error(f"union type '{declared.name}' mixes value types ({members})", declared.span)
            return None
        return found[0]

    def _adt(self, declared: ast.TypeDecl) -> Optional[str]:
        """The value type (:func:`~spark_datalog.record_types.adt_type`) of an ADT."""
        branches = []
        for branch, names, bases in declared.branches:
            pairs = self._fields(declared.name, branch, names, bases, set())
            if pairs is None:
                return None
            branches.append((branch, tuple(pairs)))
        return adt_type(declared.name, branches)

    def _record(self, declared: ast.TypeDecl) -> Optional[str]:
        """The record type ``[x: long, ...]`` a ``.type P = [x: number, ...]`` names."""
        pairs = self._fields(declared.name, "", declared.fields, declared.bases, set())
        if pairs is None:
            return None
        if not pairs:
            self.error(f"record type '{declared.name}' has no fields", declared.span)
            return None
        return record_type(pairs)

    def _fields(self, name: str, branch: str, names: tuple, bases: tuple, group: set) -> Optional[list]:
        """The ``(field, value type)`` pairs of fields ``names`` of types ``bases`` of type
        ``name`` (of its ``branch``); a type of the recursive ``group`` is ``@<type>``."""
        declared = self.types[name]
        where = f" of branch '{branch}'" if branch else ""
        pairs = []
        for field, base in zip(names, bases, strict=True):
            value_type = "@" + base if base in group else self.value_type(base)
            if value_type is None:
                if base not in self.types:
                    self.error(f"unknown type '{base}' of field '{field}'{where} of '{name}'", declared.span)
                return None
            pairs.append((field, value_type))
        return pairs

    def _group(self, members: tuple) -> dict:
        """The value types of the members of a recursive group of record types and ADTs (see
        :mod:`spark_datalog.recursive_records`): each member's definition, then the others'."""
        group = set(members)
        definitions: dict = {}
        self.resolving |= group
        for name in members:
            definitions[name] = self._definition(self.types[name], group)
        self.resolving -= group
        complete = None not in definitions.values()
        for name in members:
            self.resolved[name] = group_type(definitions, name) if complete else None
        return {name: self.resolved[name] for name in members}

    def _definition(self, declared: ast.TypeDecl, group: set) -> Optional[str]:
        """The definition ``@List[head: long, tail: @List]`` or ``@E|Neg[e: @E]|Num[n: long]``
        of a member of a recursive group."""
        if declared.kind == "record":
            pairs = self._fields(declared.name, "", declared.fields, declared.bases, group)
            return recursive_type(declared.name, pairs) if pairs is not None else None
        branches = []
        for branch, names, bases in declared.branches:
            pairs = self._fields(declared.name, branch, names, bases, group)
            if pairs is None:
                return None
            branches.append((branch, pairs))
        return recursive_adt(declared.name, branches)


def recursive_groups(types: dict) -> dict:
    """Each record type or ADT of a recursive group (a cycle of record types and ADTs, by their
    fields' types) -> the group's members, by name.

    >>> from spark_datalog.syntax.parser import parse
    >>> types = parse(".type A = [b: B]  .type B = X {a: A} | Y {}  .type C = [a: A]").types
    >>> recursive_groups({t.name: t for t in types})
    {'A': ('A', 'B'), 'B': ('A', 'B')}
    """

    def refers(name: str) -> set:
        declared = types[name]
        bases = (
            [b for _, _, bs in declared.branches for b in bs] if declared.kind == "adt" else declared.bases
        )
        return {b for b in bases if b in types and types[b].kind in ("record", "adt")}

    candidates = [name for name, declared in types.items() if declared.kind in ("record", "adt")]
    reach = {name: refers(name) for name in candidates}
    changed = True
    while changed:  # the transitive closure: types are few
        changed = False
        for name in candidates:
            more = set().union(*(reach[r] for r in reach[name])) - reach[name]
            if more:
                reach[name] |= more
                changed = True
    return {
        name: tuple(sorted(m for m in candidates if m == name or (m in reach[name] and name in reach[m])))
        for name in candidates
        if name in reach[name]
    }
