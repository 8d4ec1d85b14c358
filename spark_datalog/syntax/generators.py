"""Generators (``range``, ``urange``, ``frange``) lifted out of the terms that contain them.

A generator has several values, so it cannot be computed where a term is: as Soufflé does
(its "normalise generators" pass), every generator call in a rule — in the head, in an
atom's argument, in a comparison, nested in another expression — is replaced by a fresh
variable, and the body gets the equality ``_range = range(...)`` (``_range2``, ... for
more), which analysis turns into an assignment binding that variable once per value (the
plan's ``Generate``). ``X = range(...)`` binding X itself stays as written. A fact with a
generator (``r(range(1, 4)).``) becomes a rule with that one body literal. Generators inside
a generator's arguments are lifted first, so every lifted call has plain arguments.

Example::

    >>> from spark_datalog.syntax.parser import parse
    >>> print(parse("r(X, range(0, X)) :- p(N), X = range(0, N).").rules[0])
    r(X, _range) :- p(N), X = range(0, N), _range = range(0, X).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from .. import functors
from . import ast
from ..analysis.normalise import positive_variables
from .auxiliary import fresh_name

__all__ = ["has_generator", "lift_generators"]


def has_generator(rule: ast.Rule) -> bool:
    """Whether a term of ``rule`` calls a generator."""
    return any(_calls(term) for term in _terms(rule))


def lift_generators(program: ast.Program) -> ast.Program:
    """``program`` with every generator call of its rules lifted into the body."""
    rules = tuple(_lift_rule(rule) if has_generator(rule) else rule for rule in program.rules)
    return replace(program, rules=rules)


def _terms(rule: ast.Rule):
    yield from rule.head.args
    for literal in rule.body:
        if isinstance(literal, ast.Atom):
            yield from literal.args
        elif isinstance(literal, ast.Negation):
            yield from literal.atom.args
        elif isinstance(literal, ast.Comparison):
            yield literal.left
            yield literal.right
        elif isinstance(literal, ast.Assignment):
            yield literal.expr


def _calls(term) -> bool:
    stack = [term]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call):
            if node.name in functors.GENERATORS:
                return True
            stack.extend(node.args)
        elif isinstance(node, ast.BinaryOp):
            stack.extend((node.left, node.right))
    return False


def _direct(body: tuple) -> set:
    """Positions of the equalities ``V = range(...)`` that bind ``V`` themselves: ``V`` is
    bound by no atom and is the bare side of no other equality. They stay as written (errors
    then name them as written); any other generator gets a fresh variable."""
    bound = positive_variables(body)
    sides: Counter = Counter()
    for literal in body:
        if isinstance(literal, ast.Comparison) and literal.op == "=":
            for side in (literal.left, literal.right):
                if isinstance(side, ast.Variable):
                    sides[side.name] += 1
    return {
        i
        for i, lit in enumerate(body)
        if isinstance(lit, ast.Comparison)
        and lit.op == "="
        and isinstance(lit.left, ast.Variable)
        and not lit.left.anonymous
        and lit.left.name not in bound
        and sides[lit.left.name] == 1
        and isinstance(lit.right, ast.Call)
        and lit.right.name in functors.GENERATORS
    }


class _Lifter:
    """Replaces generator calls by fresh variables, collecting their equalities."""

    def __init__(self, rule: ast.Rule):
        self.taken = {v.name for term in _terms(rule) for v in ast.term_variables(term)}
        self.equalities: list = []

    def term(self, term):
        if isinstance(term, ast.BinaryOp):
            return replace(term, left=self.term(term.left), right=self.term(term.right))
        if not isinstance(term, ast.Call):
            return term
        call = replace(term, args=tuple(self.term(a) for a in term.args))
        if call.name not in functors.GENERATORS:
            return call
        variable = ast.Variable(fresh_name(f"_{call.name}", self.taken), call.span)
        self.equalities.append(ast.Comparison("=", variable, call, call.span))
        return variable

    def call_arguments(self, call: ast.Call) -> ast.Call:
        """``call`` kept, with the generators in its arguments lifted."""
        return replace(call, args=tuple(self.term(a) for a in call.args))

    def atom(self, atom: ast.Atom) -> ast.Atom:
        return replace(atom, args=tuple(self.term(a) for a in atom.args))

    def literal(self, literal):
        if isinstance(literal, ast.Atom):
            return self.atom(literal)
        if isinstance(literal, ast.Negation):
            return replace(literal, atom=self.atom(literal.atom))
        if isinstance(literal, ast.Comparison):
            return replace(literal, left=self.term(literal.left), right=self.term(literal.right))
        return replace(literal, expr=self.term(literal.expr))


def _lift_rule(rule: ast.Rule) -> ast.Rule:
    lifter = _Lifter(rule)
    direct = _direct(rule.body)
    body = tuple(
        replace(lit, right=lifter.call_arguments(lit.right)) if i in direct else lifter.literal(lit)
        for i, lit in enumerate(rule.body)
    )
    head = lifter.atom(rule.head)
    return replace(rule, head=head, body=body + tuple(lifter.equalities))
