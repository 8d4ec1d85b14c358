"""Soufflé's constructs lowered to the core language before analysis.

The parser builds what the text says; :func:`lower` rewrites the parts of Soufflé's dialect
that the core language expresses with other means, so that analysis, the reference interpreter
and every engine see only the core:

- components: every ``.init`` replaced by the statements it stands for (:mod:`.components`);
- ``.type`` declarations: every column type names a value type (:mod:`.typedecls`);
- ``.input`` relations with rules: the input read into ``<r>__input`` (:mod:`.input_rules`);
- ``eqrel`` relations: the equivalence closure as connected components (:mod:`.eqrel`);
- subsumptive clauses (``r(X, A) <= r(X, B) :- B < A.``): a head ``min``/``max``, negation, or
  in recursion the rules of each round's dominated tuples (:mod:`.subsumption`);
- ``choice-domain`` relations: the least candidate per key (:mod:`.choice`);
- aggregates over a body (``N = count : { p(X, _) }``): auxiliary relations with head
  aggregates (:mod:`.body_aggregates`);
- generators (``range``, ``urange``, ``frange``): each call lifted into the body as
  ``_range = range(...)``, which binds a fresh variable once per value (:mod:`.generators`).
- calls of user-defined functors (``@f(X)``): each given its ``.functor`` declaration's entry
  in the program's registry (:mod:`.user_functor_calls`);
- ``autoinc()``: each call lifted into the body as ``_autoinc = autoinc(site, sites)``, its value
  a function of the body's binding (:mod:`.autoinc`);
- declared types checked in the rules (distinct subtypes are not mixed) and ``as(expr, T)``
  casts replaced by ``expr`` (:mod:`.subtypes`).
- record terms (``p([X, 1])``): record construction and field reads (:mod:`.records`).

Several heads and disjunctions (``a(X), b(X) :- c(X) ; d(X).``) are multiplied out by the
parser itself. Auxiliary relations are named ``<relation>__<what><n>`` (never a name the
program uses); their rules carry the position of the construct they come from.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import DatalogError
from . import ast
from .auxiliary import nodes
from .autoinc import has_autoinc, lower_autoinc
from .body_aggregates import lower_body_aggregates
from .choice import lower_choice
from .components import expand_components
from .eqrel import lower_eqrel
from .generators import has_generator, lift_generators
from .input_rules import lower_input_rules
from .subsumption import has_lattice_qualifier, lower_subsumption
from .subtypes import check_types, has_casts_or_types
from .records import has_records, lower_records
from .typedecls import resolve_types
from .user_functor_calls import bind_functor_calls

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
    program = _qualifier_directives(program)
    program, type_errors = resolve_types(program, type_spans)
    errors += type_errors
    if not complete:
        return program, errors
    program = lower_input_rules(program)
    if any("eqrel" in d.qualifiers for d in program.declarations):
        program, eqrel_errors = lower_eqrel(program)
        errors += eqrel_errors
    if program.subsumptions or has_lattice_qualifier(program):
        program, subsumption_errors = lower_subsumption(program)
        errors += subsumption_errors
    if any(d.choice_domains for d in program.declarations):
        program, choice_errors = lower_choice(program)
        errors += choice_errors
    if any(_has_body_aggregate(rule) for rule in program.rules):
        program, aggregate_errors = lower_body_aggregates(program)
        errors += aggregate_errors
    if has_records(program):
        program, record_errors = lower_records(program)
        errors += record_errors
    if program.functors or "@" in program.source:
        program, functor_errors = bind_functor_calls(program)
        errors += functor_errors
    if any(has_generator(rule) for rule in program.rules):
        program = lift_generators(program)
    if any(has_autoinc(rule) for rule in program.rules):
        program, autoinc_errors = lower_autoinc(program)
        errors += autoinc_errors
    if has_casts_or_types(program):
        program, type_errors = check_types(program)
        errors += type_errors
    return program, errors


_IO_QUALIFIERS = ("input", "output", "printsize")


def _qualifier_directives(program: ast.Program) -> ast.Program:
    """``program`` with Soufflé's old I/O qualifiers as directives: ``.decl r(x: number) output``
    is ``.output r`` (unless the program says ``.output r`` itself)."""
    given = {(d.kind, d.name) for d in program.directives}
    added = tuple(
        ast.Directive(kind, declaration.name, span=declaration.span)
        for declaration in program.declarations
        for kind in _IO_QUALIFIERS
        if kind in declaration.qualifiers and (kind, declaration.name) not in given
    )
    return replace(program, directives=program.directives + added) if added else program


def _has_body_aggregate(rule: ast.Rule) -> bool:
    return any(isinstance(node, ast.BodyAggregate) for node in nodes(rule.head, *rule.body))
