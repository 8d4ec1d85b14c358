"""Soufflé's constructs lowered to the core language before analysis.

The parser builds what the text says; :func:`lower` rewrites the parts of Soufflé's dialect
that the core language expresses with other means, so that analysis, the reference interpreter
and every engine see only the core:

- components: every ``.init`` replaced by the statements it stands for (:mod:`.components`);
- ``.type`` declarations: every column type names a value type (:mod:`.typedecls`);
- ``eqrel`` relations: the equivalence closure as connected components (:mod:`.eqrel`);
- aggregates over a body (``N = count : { p(X, _) }``): auxiliary relations with head
  aggregates (:mod:`.body_aggregates`);
- record terms (``p([X, 1])``): record construction and field reads (:mod:`.records`).

Several heads and disjunctions (``a(X), b(X) :- c(X) ; d(X).``) are multiplied out by the
parser itself. Auxiliary relations are named ``<relation>__<what><n>`` (never a name the
program uses); their rules carry the position of the construct they come from.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import DatalogError
from . import ast
from .body_aggregates import lower_body_aggregates
from .components import expand_components
from .eqrel import lower_eqrel
from .records import has_records, lower_records
from .typedecls import resolve_types

__all__ = ["lower"]


def lower(
    program: ast.Program, type_spans: dict, complete: bool = True
) -> tuple[ast.Program, list[DatalogError]]:
    """``program`` in the core language, and the errors found on the way. ``type_spans`` maps
    ``id(ColumnDecl)`` to the position of the column's type name (for unknown types). When the
    text had other errors (``complete`` false) only the types are checked.

    Example::

        >>> from spark_datalog.syntax.parser import parse
        >>> for rule in parse("n(X, N) :- e(X, _), N = count : { e(X, _) }.").rules[:2]:
        ...     print(rule)
        n__count1(X, sum<_one1>) :- e(X, _count1_), _one1 = 1.
        n(X, N) :- e(X, _), n__count1(X, _count1), N = _count1.
    """
    errors: list[DatalogError] = []
    if program.components:
        program, errors = expand_components(program, type_spans)
    declarations, type_errors = resolve_types(program, type_spans)
    errors += type_errors
    program = replace(program, declarations=declarations)
    if not complete:
        return program, errors
    if any("eqrel" in d.qualifiers for d in program.declarations):
        program, eqrel_errors = lower_eqrel(program)
        errors += eqrel_errors
    if any(_has_body_aggregate(rule) for rule in program.rules):
        program, aggregate_errors = lower_body_aggregates(program)
        errors += aggregate_errors
    if has_records(program):
        program, record_errors = lower_records(program)
        errors += record_errors
    return program, errors


def _has_body_aggregate(rule: ast.Rule) -> bool:
    return "BodyAggregate" in _node_kinds(rule)


def _node_kinds(rule: ast.Rule) -> set:
    kinds: set = set()
    stack: list = [rule.head, *rule.body]
    while stack:
        node = stack.pop()
        kinds.add(type(node).__name__)
        if isinstance(node, ast.Atom):
            stack.extend(node.args)
        elif isinstance(node, ast.Negation):
            stack.append(node.atom)
        elif isinstance(node, (ast.Comparison, ast.BinaryOp)):
            stack.extend((node.left, node.right))
        elif isinstance(node, ast.Call):
            stack.extend(node.args)
    return kinds
