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
from ..recursive_records import FIELD_TYPES, recursive_type
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
                if any(self.types[n].kind in ("record", "adt") for n in self.resolving):
                    kind = "algebraic data types" if declared.kind == "adt" else "record types"
                    message = (
                        f"recursive {kind} are not supported yet ('{name}' contains itself; "
                        "Spark's structs cannot)"
                    )
                else:
                    message = f"type '{name}' is defined in terms of itself"
                self.error(message, declared.span)
                self.resolved[name] = None
            return None
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
            pairs = []
            for field, base in zip(names, bases, strict=True):
                value_type = self.value_type(base)
                if value_type is None:
                    if base not in self.types:
                        self.error(
                            f"unknown type '{base}' of field '{field}' of branch '{branch}' of "
                            f"'{declared.name}'",
                            declared.span,
                        )
                    return None
                pairs.append((field, value_type))
            branches.append((branch, tuple(pairs)))
        return adt_type(declared.name, branches)

    def _record(self, declared: ast.TypeDecl) -> Optional[str]:
        """The record type ``[x: long, ...]`` a ``.type P = [x: number, ...]`` names."""
        pairs = []
        name = declared.name
        for field, base in zip(declared.fields, declared.bases, strict=True):
            value_type = "@" + name if base == name else self.value_type(base)
            if value_type is None:
                if base not in self.types:
                    self.error(f"unknown type '{base}' of field '{field}' of '{name}'", declared.span)
                return None
            pairs.append((field, value_type))
        if not pairs:
            self.error(f"record type '{name}' has no fields", declared.span)
            return None
        if ("@" + name) not in dict(pairs).values():
            return record_type(pairs)
        return self._recursive(declared, pairs)

    def _recursive(self, declared: ast.TypeDecl, pairs: list) -> Optional[str]:
        """The value type ``@List[head: long, tail: @List]`` of a recursive record type (see
        :mod:`spark_datalog.recursive_records`)."""
        for field, value_type in pairs:
            if value_type not in (*FIELD_TYPES, "@" + declared.name):
                self.error(
                    f"field '{field}' of recursive record type '{declared.name}' is {value_type}: "
                    f"fields of other types than {', '.join(FIELD_TYPES)} or '{declared.name}' "
                    "itself are not supported yet",
                    declared.span,
                )
                return None
        return recursive_type(declared.name, pairs)
