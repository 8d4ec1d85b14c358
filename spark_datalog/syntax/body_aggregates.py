"""Soufflé's aggregates over a body, as auxiliary relations with head aggregates.

``N = count : { e(X, _) }`` in a rule whose other literals bind ``X`` counts, per ``X``, the
tuples that satisfy the aggregate's body. The variables the aggregate's body shares with the
rest of the rule group it; the others, ``_`` included, are its own. Lowered::

    n(X, N) :- node(X), N = count : { e(X, _) }.
becomes
    n__count1(X, sum<_one1>) :- e(X, _count1_1), _one1 = 1.
    n(X, N) :- node(X), n__count1(X, _count1), N = _count1.
    n(X, N) :- node(X), not n__count1(X, _), _count1 = 0, N = _count1.

- ``count`` counts and ``sum`` sums over the distinct satisfying tuples of the body (Soufflé's
  semantics; every ``_`` becomes a named variable so that tuples differing only there count
  twice); both give 0 for a group with none (the third rule). ``min``, ``max`` and ``mean`` give
  nothing for an empty group: the rule does not fire.
- When the aggregate's body does not bind a grouping variable itself (``count : { e(Y),
  Y > X }``), the groups come from the rule's other positive atoms, comparisons and
  constraints (``X = 1``; not those reading the aggregate's value) through a context relation
  ``<head>__<func><n>_groups`` (a set, so it does not multiply the count).
- A target that is not a variable (``sum X * 2 : {...}``) is assigned to one inside the body.
- Aggregates nested inside an aggregate's body are lowered in turn, the auxiliary rule being the
  outer rule.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

from ..errors import DatalogError
from . import ast
from .auxiliary import fresh_name, relation_names


def lower_body_aggregates(program: ast.Program) -> tuple[ast.Program, list[DatalogError]]:
    """``program`` without aggregates over bodies (see the module's docstring)."""
    lowering = _Lowering(relation_names(program))
    rules: list = []
    pending = list(program.rules)
    while pending:
        rule = pending.pop(0)
        found = _first_aggregate(rule)
        if found is None:
            rules.append(rule)
        else:
            pending[:0] = lowering.rules_for(rule, found)
    return replace(program, rules=tuple(rules)), []


class _Lowering:
    def __init__(self, taken: set):
        self.taken = taken
        self.variables: set = set()
        self.count = 0

    def fresh_variable(self, base: str, span: ast.Span) -> ast.Variable:
        return ast.Variable(fresh_name(base, self.variables), span)

    def rules_for(self, rule: ast.Rule, aggregate: ast.BodyAggregate) -> list:
        """The auxiliary rules for ``aggregate`` (outermost in ``rule``), then ``rule`` reading
        the auxiliary relation instead (two rules for count and sum: the empty group is 0)."""
        self.count += 1
        n, func, span = self.count, aggregate.func, aggregate.span
        self.variables |= {v.name for v in _rule_variables(rule)}
        name = fresh_name(f"{rule.head.predicate}__{func}{n}", self.taken)
        value = self.fresh_variable(f"_{func}{n}", span)
        outside = {v.name for v in _rule_variables(rule, without=aggregate) if not v.anonymous}
        body, target = self._own_body(aggregate, n)
        groups = [v for v in _unique(_variables(body)) if v.name in outside]
        body, auxiliary = self._with_groups(rule, aggregate, body, groups, name)
        head = ast.Atom(
            name, (*groups, ast.Aggregate(ast.BODY_AGGREGATE_FUNCTIONS[func], target, span)), span
        )
        auxiliary.append(_rule(head, body, span))
        reading = _replaced(rule, aggregate, value)
        found = ast.Atom(name, (*groups, value), span)
        with_value = replace(reading, body=(*_before(reading, value), found, *_from(reading, value)))
        lowered = [with_value]
        if func in ("count", "sum"):
            anything = ast.Variable(f"_#{func}{n}", span, anonymous=True)
            missing = ast.Negation(ast.Atom(name, (*groups, anything), span), span)
            zero = ast.Comparison("=", value, ast.Constant(0, "long", span), span)
            empty = (*_before(reading, value), missing, zero, *_from(reading, value))
            lowered.append(replace(reading, body=empty))
        return auxiliary + lowered

    def _own_body(self, aggregate: ast.BodyAggregate, n: int) -> tuple[tuple, ast.Variable]:
        """The aggregate's body with its ``_`` named, and the variable it aggregates."""
        renamed = {}
        for variable in _variables(aggregate.body):
            if variable.anonymous and variable.name not in renamed:
                renamed[variable.name] = self.fresh_variable(f"_{aggregate.func}{n}_", variable.span)
        body = tuple(_rename(literal, renamed) for literal in aggregate.body)
        span = aggregate.span
        if aggregate.target is None:  # count: the sum of one per tuple
            target = self.fresh_variable(f"_one{n}", span)
            return body + (ast.Comparison("=", target, ast.Constant(1, "long", span), span),), target
        if isinstance(aggregate.target, ast.Variable):
            return body, aggregate.target
        target = self.fresh_variable(f"_value{n}", span)
        return body + (ast.Comparison("=", target, aggregate.target, span),), target

    def _with_groups(self, rule, aggregate, body: tuple, groups: list, name: str) -> tuple[tuple, list]:
        """``body``, preceded by the context relation of the groups when it does not bind them
        itself, and the context relation's rule."""
        bound = {
            a.name
            for literal in body
            if isinstance(literal, ast.Atom)
            for a in literal.args
            if type(a) is ast.Variable
        }
        if all(g.name in bound for g in groups):
            return body, []
        span = aggregate.span
        head = ast.Atom(fresh_name(f"{name}_groups", self.taken), tuple(groups), span)
        return (head, *body), [_rule(head, _context(rule, groups), span)]


def _context(rule: ast.Rule, groups: list) -> tuple:
    """The literals of ``rule`` that give the groups their values: its positive atoms,
    comparisons (``X = 1``) and constraints, without those holding an aggregate or reading a
    value computed from one (``N = count : {...}, M = N + 1``)."""
    grouping = {g.name for g in groups}
    candidates = [literal for literal in rule.body if not isinstance(literal, ast.Negation)]
    names = [{v.name for v in _variables([literal])} for literal in candidates]
    left_out = [_first_aggregate_in(literal) is not None for literal in candidates]
    tainted: set = set()
    while True:
        grown = tainted.union(*(n for n, out in zip(names, left_out, strict=True) if out)) - grouping
        left_out = [out or bool(n & grown) for n, out in zip(names, left_out, strict=True)]
        if grown == tainted:
            return tuple(lit for lit, out in zip(candidates, left_out, strict=True) if not out)
        tainted = grown


def _rule(head: ast.Atom, body: tuple, span: ast.Span) -> ast.Rule:
    rule = ast.Rule(head, body, span=span)
    return replace(rule, text=str(rule))


def _first_aggregate(rule: ast.Rule) -> Optional[ast.BodyAggregate]:
    for literal in (rule.head, *rule.body):
        found = _first_aggregate_in(literal)
        if found is not None:
            return found
    return None


def _first_aggregate_in(node) -> Optional[ast.BodyAggregate]:
    """The first aggregate over a body in ``node``, not looking inside aggregates."""
    stack = [node]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.BodyAggregate):
            return node
        stack.extend(reversed(_children(node)))
    return None


def _children(node) -> tuple:
    if isinstance(node, ast.Atom):
        return node.args
    if isinstance(node, ast.Negation):
        return (node.atom,)
    if isinstance(node, (ast.Comparison, ast.BinaryOp)):
        return (node.left, node.right)
    if isinstance(node, ast.Call):
        return node.args
    return ()


def rebuilt(node, function) -> Any:
    """``node`` with ``function`` applied to every sub-node bottom-up (aggregates left whole)."""
    if isinstance(node, ast.Atom):
        node = replace(node, args=tuple(rebuilt(a, function) for a in node.args))
    elif isinstance(node, ast.Negation):
        node = replace(node, atom=rebuilt(node.atom, function))
    elif isinstance(node, (ast.Comparison, ast.BinaryOp)):
        node = replace(node, left=rebuilt(node.left, function), right=rebuilt(node.right, function))
    elif isinstance(node, ast.Call):
        node = replace(node, args=tuple(rebuilt(a, function) for a in node.args))
    return function(node)


def _replaced(rule: ast.Rule, aggregate: ast.BodyAggregate, value: ast.Variable) -> ast.Rule:
    def swap(node):
        return value if node is aggregate else node

    return replace(rule, head=rebuilt(rule.head, swap), body=tuple(rebuilt(lit, swap) for lit in rule.body))


def _rename(literal, renamed: dict):
    def swap(node):
        return renamed.get(node.name, node) if isinstance(node, ast.Variable) else node

    return rebuilt(literal, swap)


def _variables(nodes) -> list:
    """Variables of ``nodes`` left to right, inside nested aggregates too."""
    found: list = []
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Variable):
            found.append(node)
        elif isinstance(node, ast.BodyAggregate):
            inner = list(node.body) + ([node.target] if node.target is not None else [])
            stack.extend(reversed(inner))
        else:
            stack.extend(reversed(_children(node)))
    return found


def _rule_variables(rule: ast.Rule, without: Optional[ast.BodyAggregate] = None) -> list:
    nodes = [rule.head, *rule.body]
    if without is not None:
        nodes = [rebuilt(node, lambda n: ast.Constant(0, "long") if n is without else n) for node in nodes]
    return _variables(nodes)


def _unique(variables: list) -> list:
    seen: set = set()
    out = []
    for v in variables:
        if not v.anonymous and v.name not in seen:
            seen.add(v.name)
            out.append(v)
    return out


def _before(rule: ast.Rule, value: ast.Variable) -> tuple:
    """The body literals before the first that mentions ``value``."""
    index = _index(rule, value)
    return rule.body[:index]


def _from(rule: ast.Rule, value: ast.Variable) -> tuple:
    return rule.body[_index(rule, value) :]


def _index(rule: ast.Rule, value: ast.Variable) -> int:
    for i, literal in enumerate(rule.body):
        if any(v.name == value.name for v in _variables([literal])):
            return i
    return len(rule.body)
