"""Soufflé's ``autoinc()``: fresh numbers, numbered deterministically.

Soufflé's ``autoinc()`` returns the next value of one global counter each time it is evaluated,
so which tuple gets which number depends on the evaluation order. Here the number is a function
of the rule's body binding instead, identical on every engine and after any ``update``:

- the *bindings* of a rule are the distinct values of its body variables (named, not ``_``),
  the calls' own variables and what is computed from them left out;
- they are ranked 0, 1, 2, ... in the order of their values compared variable by variable,
  the variables taken by name (code point order); numbers compare numerically (NaN is the
  largest double), strings by code point, ``false`` before ``true``;
- call site ``s`` (0, 1, ... in program order: rules in order, a rule's head arguments then
  its body, left to right) of the program's ``K`` call sites gives the binding of rank ``r``
  the value ``r * K + s``: unique over the whole program, as Soufflé's are.

Lowering lifts every call into the front of the body as ``_autoinc = autoinc(s, K)`` (the two constants say
the site; a user writes ``autoinc()``). As in Soufflé, a call in a fact (``Counter in fact``) is
an error, and so is a call in a recursive rule (checked by analysis, :func:`autoinc_errors`).
The plan numbers the bindings with ``ir.Number``; the reference interpreter does it in
``reference.interpreter``; both through :func:`numbering`.

Example::

    >>> from spark_datalog.syntax.parser import parse
    >>> print(parse("p(X, autoinc()) :- e(X).").rules[0])
    p(X, _autoinc) :- _autoinc = autoinc(0, 1), e(X).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

from ..errors import ParseError, SchemaError
from . import ast
from .auxiliary import fresh_name, nodes

__all__ = [
    "AUTOINC",
    "Numbering",
    "has_autoinc",
    "is_counter",
    "lower_autoinc",
    "numbering",
    "autoinc_errors",
]

AUTOINC = "autoinc"


def _is_call(node) -> bool:
    return isinstance(node, ast.Call) and node.name == AUTOINC


def is_counter(literal) -> bool:
    """Whether ``literal`` is a lifted call ``_autoinc = autoinc(site, sites)``."""
    return isinstance(literal, ast.Assignment) and _is_call(literal.expr)


def _calls(*roots) -> list:
    """The ``autoinc`` calls inside ``roots`` (literals, assignments included, or terms)."""
    roots = tuple(r.expr if isinstance(r, ast.Assignment) else r for r in roots)
    return [node for node in nodes(*roots) if _is_call(node)]


def has_autoinc(rule: ast.Rule) -> bool:
    """Whether ``rule`` calls ``autoinc``."""
    return bool(_calls(rule.head, *rule.body))


def lower_autoinc(program: ast.Program) -> tuple[ast.Program, list]:
    """``program`` with every ``autoinc()`` lifted into its rule's body as
    ``_autoinc = autoinc(site, sites)``; errors for calls in facts and in positive body atoms."""
    sites = sum(_count(rule) for rule in program.rules)
    errors: list = []
    rules, site = [], 0
    for rule in program.rules:
        if not has_autoinc(rule):
            rules.append(rule)
            continue
        lifter = _Lifter(rule, site, sites)
        rules.append(lifter.rule())
        errors += lifter.errors
        site = lifter.site
    return replace(program, rules=tuple(rules)), errors


def _count(rule: ast.Rule) -> int:
    return len(_calls(rule.head, *rule.body))


class _Lifter:
    """Replaces the calls of one rule by fresh variables, in program order."""

    def __init__(self, rule: ast.Rule, site: int, sites: int):
        self.source = rule
        self.site, self.sites = site, sites
        self.taken = {v.name for node in nodes(rule.head, *rule.body) for v in _variables(node)}
        self.equalities: list = []
        self.errors: list = []

    def rule(self) -> ast.Rule:
        rule = self.source
        if not rule.body:
            for node in _calls(rule.head):
                self._error("autoinc() in a fact (Soufflé: counter in fact)", node)
        head = replace(rule.head, args=tuple(self.term(a) for a in rule.head.args))
        body = tuple(self.literal(literal) for literal in rule.body)
        # first: analysis then makes each the assignment of its variable (never a test)
        return replace(rule, head=head, body=tuple(self.equalities) + body)

    def _error(self, message: str, node) -> None:
        self.errors.append(ParseError(message, node.span.line, node.span.column))

    def literal(self, literal):
        if isinstance(literal, ast.Atom):
            for node in _calls(literal):
                self._error("autoinc() in a body atom is not supported: bind it first (X = autoinc())", node)
            return literal
        if isinstance(literal, ast.Negation):
            return replace(
                literal, atom=replace(literal.atom, args=tuple(self.term(a) for a in literal.atom.args))
            )
        if isinstance(literal, ast.Comparison):
            return replace(literal, left=self.term(literal.left), right=self.term(literal.right))
        return literal

    def term(self, term):
        if isinstance(term, ast.BinaryOp):
            return replace(term, left=self.term(term.left), right=self.term(term.right))
        if isinstance(term, ast.RecordTerm):
            return replace(term, args=tuple(self.term(a) for a in term.args))
        if not isinstance(term, ast.Call):
            return term
        if not _is_call(term):
            return replace(term, args=tuple(self.term(a) for a in term.args))
        variable = ast.Variable(fresh_name("_autoinc", self.taken), term.span)
        counter = ast.Call(
            AUTOINC, (ast.Constant(self.site, "long"), ast.Constant(self.sites, "long")), term.span
        )
        self.equalities.append(ast.Comparison("=", variable, counter, term.span))
        self.site += 1
        return variable


def _variables(node) -> list:
    if isinstance(node, ast.Variable):
        return [node]
    return []


@dataclass(frozen=True)
class Numbering:
    """How a rule's bindings are numbered: ``key``, the variables ranked (by name);
    ``calls``, ``(variable, site, sites)`` per call; ``held``, the body positions evaluated
    after the numbering (the calls and the literals that use their values)."""

    key: tuple
    calls: tuple
    held: frozenset

    def value(self, rank: int, site: int, sites: int) -> int:
        """The value of call ``site`` for the binding of rank ``rank``."""
        return rank * sites + site


def numbering(body: tuple) -> Optional[Numbering]:
    """The numbering of an analysed rule ``body`` that calls ``autoinc`` (None for others).

    >>> from spark_datalog.analysis import analyse
    >>> from spark_datalog.syntax.parser import parse
    >>> rule = analyse(parse(".input e. p(Y, X + 1) :- e(Y, _), X = autoinc().")).rules[0]
    >>> print(rule)
    p(Y, (X + 1)) :- _autoinc = autoinc(0, 1), e(Y, _), X = _autoinc.
    >>> numbering(rule.body)
    Numbering(key=('Y',), calls=(('_autoinc', 0, 1),), held=frozenset({0, 2}))
    """
    calls = tuple(
        (lit.variable.name, lit.expr.args[0].value, lit.expr.args[1].value) for lit in body if is_counter(lit)
    )
    if not calls:
        return None
    dependent = {name for name, _, _ in calls}
    grown = True
    while grown:
        grown = False
        for lit in body:
            if (
                isinstance(lit, ast.Assignment)
                and lit.variable.name not in dependent
                and any(v.name in dependent for v in ast.term_variables(lit.expr))
            ):
                dependent.add(lit.variable.name)
                grown = True
    held = frozenset(
        i for i, lit in enumerate(body) if any(v.name in dependent for v in ast.literal_variables(lit))
    )
    key = sorted(
        {
            v.name
            for i, lit in enumerate(body)
            if i not in held
            for v in ast.literal_variables(lit)
            if not v.anonymous
        }
    )
    return Numbering(tuple(key), calls, held)


def autoinc_errors(strata) -> list:
    """Soufflé's "Auto-increment functor in a recursive rule" (a rule calling ``autoinc``
    whose body reads a relation of its own recursive stratum), and a call's value used in a
    positive body atom (not supported: the atom would have to be read after the numbering)."""
    errors = []
    for stratum in strata:
        for rule in stratum.rules:
            calls = _calls(*rule.body)
            if not calls:
                continue
            call = min(calls, key=lambda c: (c.span.line, c.span.column))
            if stratum.recursive and _reads(rule, set(stratum.relations)):
                message = (
                    "autoinc() in a recursive rule (Soufflé: auto-increment functor in a recursive rule)"
                )
                errors.append(SchemaError(message, call.span.line, call.span.column))
            elif _atom_uses_value(rule.body):
                message = "autoinc()'s value in a body atom is not supported: compare it instead (A = X)"
                errors.append(SchemaError(message, call.span.line, call.span.column))
    return errors


def _atom_uses_value(body: tuple) -> bool:
    counters = numbering(body)
    return counters is not None and any(isinstance(body[i], ast.Atom) for i in counters.held)


def _reads(rule: ast.Rule, relations: set) -> bool:
    for literal in rule.body:
        atom = literal.atom if isinstance(literal, ast.Negation) else literal
        if isinstance(atom, ast.Atom) and atom.predicate in relations:
            return True
    return False
