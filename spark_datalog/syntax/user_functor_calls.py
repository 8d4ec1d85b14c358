"""Calls of user-defined functors (``@f(X)``) bound to their ``.functor`` declarations.

Each declaration gets its entry in the program's own functor registry
(:func:`spark_datalog.user_functors.entry`), and every call ``@f(...)`` that entry
(``ast.Call.functor``), so analysis and the engines evaluate it as they do an intrinsic functor.
A call of an undeclared functor, a call with the wrong number of arguments, a functor declared
twice and a functor over record or ADT values (recursive ones too) not declared ``stateful`` (as
in Soufflé, which gives such a functor its record table; here the function gets the values:
:mod:`spark_datalog.functor_values`) are :class:`~spark_datalog.errors.ParseError` s.

Example::

    >>> from spark_datalog.syntax.parser import parse
    >>> program = parse(".functor inc(x: number): number  q(Y) :- p(X), Y = @inc(X).")
    >>> call = program.rules[0].body[1].right
    >>> call.functor is program.functors[0].functor, call.functor.arity_text()
    (True, '1 argument')
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import DatalogError, ParseError
from ..functor_values import holds_compound
from ..user_functors import entry
from . import ast
from .body_aggregates import rebuilt

__all__ = ["bind_functor_calls"]


def bind_functor_calls(program: ast.Program) -> tuple[ast.Program, list[DatalogError]]:
    """``program`` with each ``.functor`` given its registry entry and each ``@f`` call its
    declaration's entry; the errors found."""
    errors: list[DatalogError] = []
    declared: dict = {}
    functors = []
    for declaration in program.functors:
        name = "@" + declaration.name
        compound = _compound_type_span(declaration)
        if name in declared:
            errors.append(_error(f"functor '{declaration.name}' is declared twice", declaration.span))
        elif compound is not None:
            errors.append(_error(_compound_message(declaration), compound))
        elif all(
            t in ast.TYPES or holds_compound(t)
            for t in (declaration.result, *(p.type for p in declaration.params))
        ):
            declaration = replace(declaration, functor=entry(declaration))
            declared[name] = declaration.functor
        functors.append(declaration)

    def bound(node):
        if not (isinstance(node, ast.Call) and node.name.startswith("@")):
            return node
        spec = declared.get(node.name)
        if spec is None:
            if not any(d.name == node.name[1:] for d in program.functors):
                errors.append(
                    _error(
                        f"functor '{node.name}' is not declared (.functor {node.name[1:]}(...): ...)",
                        node.span,
                    )
                )
            return node
        if len(node.args) != spec.least:
            errors.append(
                _error(f"functor '{node.name}' takes {spec.arity_text()}, given {len(node.args)}", node.span)
            )
        return replace(node, functor=spec)

    rules = tuple(
        replace(rule, head=rebuilt(rule.head, bound), body=tuple(rebuilt(lit, bound) for lit in rule.body))
        for rule in program.rules
    )
    return replace(program, rules=rules, functors=tuple(functors)), errors


def _compound_type_span(declaration: ast.FunctorDecl):
    """Where ``declaration`` names a record or ADT type it may not (a parameter's, else the
    result's): any, unless it is ``stateful``. None when it names none."""
    for type_, span in (
        *((p.type, p.span) for p in declaration.params),
        (declaration.result, declaration.span),
    ):
        if holds_compound(type_) and not declaration.stateful:
            return span
    return None


def _compound_message(declaration: ast.FunctorDecl) -> str:
    return (
        f"functor '{declaration.name}' takes or returns a record or ADT value: only a stateful functor may "
        "(as in Soufflé)"
    )


def _error(message: str, span: ast.Span) -> ParseError:
    return ParseError(message, span.line, span.column)
