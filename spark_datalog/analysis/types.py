"""Type inference for relation columns.

Types come from ``.decl``, from the input DataFrames (``input_types``), from literals, from
arithmetic and from aggregates, and travel through the variables that connect column positions.

The model: every undeclared column, every rule variable and every literal or arithmetic occurrence
is a node; nodes that must hold the same values are unified (a variable and the undeclared column
it sits in, the two sides of an assignment). Each class of nodes collects *evidence*: a type with
its origin. Declared columns are not nodes: they are fixed, so a read of one gives evidence to the
variable read, and a write into one gives evidence to the value written and is checked not to
narrow it. Some evidence is computed from other classes (the result of ``X + Y``, of ``sum<V>``,
and "same kind as the other side" for comparisons); those *flows* are re-evaluated until nothing
changes.

A class resolves to the widest of its numeric evidence (``int < long < double``; integer literals
are compatible with all three and on their own make ``long``), or to ``string`` or ``bool``.
Evidence of two kinds (number, string, bool) in one class is a conflict. A column nothing
constrains is ``long``.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import replace
from typing import Callable, NamedTuple, Optional

from ..errors import SchemaError
from ..overflow import BOUNDS, fits
from ..syntax import ast
from .checked import Column
from .mentions import error_at, rule_text, where

DEFAULT_TYPE = "long"

# Numeric evidence, weakest first: "number" (used in arithmetic), an integer literal, then the
# three numeric types. Only their maximum matters.
_RANK = {"number": 0, "intlit": 1, "int": 2, "long": 3, "double": 4}
_ORDERING = ("<", "<=", ">", ">=")


def _kind(t: str) -> str:
    return "number" if t in _RANK else t


def _show(t: str) -> str:
    return {"intlit": "long"}.get(t, t)


def _final(t: Optional[str]) -> str:
    return DEFAULT_TYPE if t in (None, "number", "intlit") else t


def _widest(types) -> Optional[str]:
    return max(types, key=_RANK.__getitem__, default=None)


def _wider(a: Optional[str], b: Optional[str]) -> Optional[str]:
    """The wider of two numeric evidences (either may be None)."""
    if a is None or b is None:
        return b if a is None else a
    return b if _RANK[b] > _RANK[a] else a


class _Text:
    """A message fragment formatted only if a message needs it: ``template.format(*args)``, a span
    shown as ``line:column`` and a rule as its text (most programs have no type error, so most
    labels and origins are never read)."""

    __slots__ = ("template", "args")

    def __init__(self, template: str, *args) -> None:
        self.template, self.args = template, args

    def __str__(self) -> str:
        return self.template.format(*(_shown(arg) for arg in self.args))


def _shown(arg) -> object:
    if isinstance(arg, ast.Span):
        return where(arg)
    if isinstance(arg, ast.Rule):
        return rule_text(arg)
    return arg


# The records below are named tuples: a program makes several per rule, and tuples are quick to make.


class _Evidence(NamedTuple):
    type: str
    origin: object  # str() gives the text
    span: ast.Span


class _Flow(NamedTuple):
    """Evidence for ``target`` computed by ``function`` from the resolved ``operands``."""

    target: object
    function: Callable[[list[Optional[str]]], Optional[str]]
    operands: tuple
    origin: object  # str() gives the text
    span: ast.Span


class _Known(NamedTuple):
    """The type of a value whose class is known when it is seen (a literal written into a declared
    column: its class holds only the literal, so no node is needed)."""

    type: str


class _WriteCheck(NamedTuple):
    """A value (a node, a :class:`_Known` type, or a fixed aggregate result) written into a
    declared column. ``what`` is the term or aggregate written (its text is in the message)."""

    node: object
    relation: str
    column: str
    type: str
    what: object
    span: ast.Span


def infer_types(program: ast.Program, rules, fixed: dict) -> tuple[dict, list, tuple]:
    """``({relation: (Column, ...)}, errors, typed rules)`` for every relation of the program.

    ``rules`` are the normalised rules; ``fixed`` maps a relation to its fixed columns
    (from ``.decl`` or the input DataFrame), see :func:`fixed_columns`. The typed rules are
    ``rules`` with the type of every arithmetic term set (``ast.BinaryOp.type``).
    """
    inference = _Inference(fixed)
    for fact in program.facts:
        inference.write(fact.atom, None)
    for index, rule in enumerate(rules):
        scope = ("rule", index, rule)
        inference.write(rule.head, scope)
        for literal in rule.body:
            inference.literal(literal, scope)
    for index, query in enumerate(program.queries):
        inference.read(query.atom, ("query", index, str(query)))
    inference.solve()
    typed = tuple(_typed_rule(rule, inference) for rule in rules) if inference.expressions else rules
    return inference.columns(), inference.errors(), typed


def _typed_rule(rule: ast.Rule, inference: "_Inference") -> ast.Rule:
    """``rule`` with each arithmetic term's ``type`` set from the inference (``rule`` itself when
    it has no arithmetic)."""
    if not _has_arithmetic(rule):
        return rule

    def typed(term):
        if isinstance(term, ast.BinaryOp):
            return replace(
                term,
                left=typed(term.left),
                right=typed(term.right),
                type=inference.expression_type(term) or DEFAULT_TYPE,
            )
        return term

    def literal(lit):
        if isinstance(lit, ast.Atom):
            return replace(lit, args=tuple(typed(a) for a in lit.args))
        if isinstance(lit, ast.Negation):
            return replace(lit, atom=literal(lit.atom))
        if isinstance(lit, ast.Comparison):
            return replace(lit, left=typed(lit.left), right=typed(lit.right))
        if isinstance(lit, ast.Assignment):
            return replace(lit, expr=typed(lit.expr))
        return lit

    return replace(rule, head=literal(rule.head), body=tuple(literal(lit) for lit in rule.body))


def _has_arithmetic(rule: ast.Rule) -> bool:
    """Whether an argument, a comparison side or an assigned expression of ``rule`` is arithmetic."""
    terms = list(rule.head.args)
    for lit in rule.body:
        if isinstance(lit, ast.Atom):
            terms += lit.args
        elif isinstance(lit, ast.Negation):
            terms += lit.atom.args
        elif isinstance(lit, ast.Comparison):
            terms += (lit.left, lit.right)
        elif isinstance(lit, ast.Assignment):
            terms.append(lit.expr)
    return any(isinstance(term, ast.BinaryOp) for term in terms)


def fixed_columns(program: ast.Program, input_types: Optional[dict]) -> tuple[dict, list]:
    """``({relation: (Column, ...)}, errors)``: columns whose types are given, not inferred.

    A ``.decl`` fixes names and types; an input DataFrame fixes the types of an undeclared
    relation. An input type the declared type cannot hold (another kind, or a wider number) is an
    error naming the relation and column.
    """
    errors: list = []
    fixed: dict = {}
    spans: dict = {}
    for decl in program.declarations:
        if decl.name not in fixed:
            fixed[decl.name] = tuple(Column(c.name, c.type) for c in decl.columns)
            spans[decl.name] = decl
    derived = {rule.head.predicate: rule for rule in reversed(program.rules)}
    for name, types in (input_types or {}).items():
        types = tuple(types)
        if name in derived:
            errors.append(
                error_at(
                    SchemaError,
                    f"relation '{name}' is defined by rules and cannot also be given as an input",
                    derived[name].head.span,
                )
            )
            continue
        for t in types:
            if t not in ast.TYPES:
                errors.append(
                    SchemaError(f"the input for relation '{name}' has a column of unsupported type '{t}'")
                )
        if any(t not in ast.TYPES for t in types):
            continue
        if name not in fixed:
            fixed[name] = tuple(Column(f"c{i}", t) for i, t in enumerate(types))
            continue
        for column, given, decl_column in zip(fixed[name], types, spans[name].columns, strict=True):
            if not _fits(given, column.type):
                errors.append(
                    error_at(
                        SchemaError,
                        f"column '{column.name}' of relation "
                        f"'{name}' is declared {column.type} but "
                        f"its input has type {given}",
                        decl_column.span,
                    )
                )
    return fixed, errors


def _fits(value_type: str, column_type: str) -> bool:
    """Whether a column of ``column_type`` holds every value of ``value_type``."""
    if value_type in _RANK and column_type in _RANK:
        return _RANK[value_type] <= _RANK[column_type]
    return value_type == column_type


def _arithmetic(types):
    if any(t is None or t not in _RANK for t in types):
        return None
    return _widest(types)


def _sum(types):
    (t,) = types
    if t is None or t not in _RANK:
        return None
    return "double" if t == "double" else "long"


def _same_kind(types):
    (t,) = types
    if t is None:
        return None
    return "number" if t in _RANK else t


_EMPTY: tuple = (frozenset(), None)  # the summary of a class without evidence


class _Inference:
    """Union-find over nodes with evidence per class, then a fixpoint over the flows."""

    def __init__(self, fixed: dict):
        self.fixed = fixed
        self.parent: dict = {}
        self.size: dict = {}  # root -> number of nodes in its class (union by size)
        self.evidence: dict = {}  # root -> deque[_Evidence], in the order it was given
        self.summary: dict = {}  # root -> (kinds of its evidence, widest numeric evidence)
        self.flows: list[_Flow] = []
        self.writes: list[_WriteCheck] = []
        self.comparisons: list = []  # (comparison, left node, right node)
        self.labels: dict = {}  # node -> description (for messages)
        self.column_keys: list = []  # the column nodes, in the order they were made
        self.expressions: dict = {}  # id(BinaryOp) -> its node (its type annotates the rule)
        self.integers: list = []  # (integer literal, its node): checked against their types
        self._fresh = itertools.count()

    # -- union-find ---------------------------------------------------------------------------

    def _node(self, key, *label):
        """The node ``key`` (a new class of its own the first time), described by
        ``_Text(*label)`` in messages."""
        if key not in self.parent:
            self.parent[key] = key
            self.size[key] = 1
            self.evidence[key] = deque()
            self.summary[key] = _EMPTY
            self.labels[key] = _Text(*label)
        return key

    def find(self, key):
        """The root of ``key``'s class (roots are the stored key objects: compared by identity)."""
        parent = self.parent
        root = parent[key]
        if parent[root] is root:
            return root
        while parent[root] is not root:
            root = parent[root]
        while parent[key] is not root:
            parent[key], key = root, parent[key]
        return root

    def unify(self, a, b) -> None:
        """Merge the classes of ``a`` and ``b``: the smaller joins the larger (so a class that
        keeps growing, such as a column read by every rule, costs O(1) per merge), and the
        evidence stays in the order ``a``'s class then ``b``'s."""
        ra, rb = self.find(a), self.find(b)
        if ra is rb:
            return
        evidence_a, evidence_b = self.evidence.pop(ra), self.evidence.pop(rb)
        if self.size[ra] < self.size[rb]:
            evidence_b.extendleft(reversed(evidence_a))
            ra, rb, merged = rb, ra, evidence_b
        else:
            evidence_a.extend(evidence_b)
            merged = evidence_a
        self.parent[rb] = ra
        self.size[ra] += self.size.pop(rb)
        self.evidence[ra] = merged
        (kinds_a, widest_a), (kinds_b, widest_b) = self.summary[ra], self.summary.pop(rb)
        kinds = kinds_a if kinds_b <= kinds_a else kinds_a | kinds_b
        self.summary[ra] = (kinds, _wider(widest_a, widest_b))

    def add(self, node, type_: str, origin: object, span: ast.Span) -> None:
        """Evidence ``type_`` (from ``origin``, whose str() is read only for messages) for the
        class of ``node``."""
        root = self.find(node)
        self.evidence[root].append(_Evidence(type_, origin, span))
        self._summarise(root, type_)

    def _summarise(self, root, type_: str) -> None:
        """Account for new evidence ``type_`` in the summary of the class ``root``."""
        kinds, widest = self.summary[root]
        if type_ in _RANK:
            widest = _wider(widest, type_)
        kind = _kind(type_)
        self.summary[root] = (kinds if kind in kinds else kinds | {kind}, widest)

    # -- building -----------------------------------------------------------------------------

    def column_node(self, relation: str, position: int):
        key = ("col", relation, position)
        if key in self.parent:
            return key
        self.column_keys.append(key)
        return self._node(("col", relation, position), "column 'c{}' of relation '{}'", position, relation)

    def term(self, term, scope):
        """The node of a term; literals and arithmetic get fresh nodes with their evidence."""
        if isinstance(term, ast.Variable):
            key = ("var", scope[0], scope[1], term.name)
            if key in self.parent:  # seen before in this rule
                return key
            return self._node(key, "variable {} in {} '{}'", term, scope[0], scope[2])
        if isinstance(term, ast.Constant):
            node = self._node(("term", next(self._fresh)), "value {}", term)
            self.add(node, _literal_type(term), _Text("literal {} at {}", term, term.span), term.span)
            if term.type == "long":
                self.integers.append((term, node))
            return node
        if isinstance(term, ast.BinaryOp):
            node = self._node(("term", next(self._fresh)), "expression {}", term)
            operands = (self.term(term.left, scope), self.term(term.right, scope))
            span = _span_of(term)
            for operand, side in zip(operands, (term.left, term.right), strict=True):
                self.add(operand, "number", _Text("operand of '{}' at {}", term.op, span), _span_of(side))
            self.flows.append(_Flow(node, _arithmetic, operands, _Text("result of {}", term), span))
            self.expressions[id(term)] = node
            return node
        raise TypeError(f"not a term: {term!r}")

    def _fixed_origin(self, relation: str, column: Column, span: ast.Span) -> _Text:
        return _Text("column '{}' of '{}' is {}, at {}", column.name, relation, column.type, span)

    def read(self, atom: ast.Atom, scope) -> None:
        fixed = self.fixed.get(atom.predicate)
        for i, arg in enumerate(atom.args):
            if fixed is None or i >= len(fixed):
                self._into_column(arg, scope, atom.predicate, i)
                continue
            node = self.term(arg, scope)
            span = _span_of(arg)
            self.add(node, fixed[i].type, self._fixed_origin(atom.predicate, fixed[i], span), span)

    def write(self, atom: ast.Atom, scope) -> None:
        fixed = self.fixed.get(atom.predicate)
        for i, arg in enumerate(atom.args):
            column = fixed[i] if fixed is not None and i < len(fixed) else None
            span = _span_of(arg)
            if isinstance(arg, ast.Aggregate):
                self._aggregate(atom.predicate, i, arg, column, scope)
                continue
            if column is not None and isinstance(arg, ast.Constant):
                self._constant_write(atom.predicate, arg, column, span)
                continue
            if column is None:
                self._into_column(arg, scope, atom.predicate, i)
                continue
            node = self.term(arg, scope)
            if isinstance(arg, ast.Variable) or (_is_integer(arg) and column.type == "int"):
                # a variable: tells the columns it is read from; an integer literal: its range
                self.add(node, column.type, self._fixed_origin(atom.predicate, column, span), span)
            self.writes.append(_WriteCheck(node, atom.predicate, column.name, column.type, arg, span))

    def _into_column(self, arg, scope, relation: str, position: int) -> None:
        """Unify ``arg`` with an undeclared column. A variable seen for the first time has no
        evidence yet: it joins the column's class directly (the same class, evidence and summary
        as a unify, for less work)."""
        column = self.column_node(relation, position)
        if isinstance(arg, ast.Variable):
            key = ("var", scope[0], scope[1], arg.name)
            if key not in self.parent:
                root = self.find(column)
                self.parent[key] = root
                self.size[root] += 1
                self.labels[key] = _Text("variable {} in {} '{}'", arg, scope[0], scope[2])
                return
        elif isinstance(arg, ast.Constant):
            self._constant_into(arg, column)
            return
        self.unify(self.term(arg, scope), column)

    def _constant_into(self, constant: ast.Constant, column) -> None:
        """A literal unified with an undeclared column, without a node of its own: its evidence
        goes first in the column's class, as unifying the literal's one-node class with it would
        put it, and its range is checked against the column's type. (Its node could only name the
        class in a message, and the column does that.)"""
        root = self.find(column)
        type_ = _literal_type(constant)
        origin = _Text("literal {} at {}", constant, constant.span)
        self.evidence[root].appendleft(_Evidence(type_, origin, constant.span))
        self._summarise(root, type_)
        if constant.type == "long":
            self.integers.append((constant, column))

    def _constant_write(self, relation: str, constant: ast.Constant, column: Column, span) -> None:
        """A literal written into a declared column. Its class would hold the literal alone (plus
        the column's type for an integer into an int column) and never join another, so its type
        is known at once: the same checks as for a node, without one."""
        integer = constant.type == "long"
        known = _Known(column.type if integer and column.type == "int" else _literal_type(constant))
        if integer:
            self.integers.append((constant, known))
        self.writes.append(_WriteCheck(known, relation, column.name, column.type, constant, span))

    def _aggregate(self, relation, position, aggregate: ast.Aggregate, column, scope) -> None:
        value = self.term(aggregate.variable, scope)
        span = _span_of(aggregate)
        func = aggregate.func
        if func in ("sum", "avg"):
            self.add(value, "number", _Text("argument of {} at {}", aggregate, span), span)
        result = self._node(("term", next(self._fresh)), "result of {}", aggregate)
        origin = _Text("result of {} at {}", aggregate, span)
        if func == "count":
            self.add(result, "long", origin, span)
        elif func == "avg":
            self.add(result, "double", origin, span)
        elif func == "sum":
            self.flows.append(_Flow(result, _sum, (value,), origin, span))
        else:  # min / max: the value itself
            result = value
        if column is None:
            self.unify(result, self.column_node(relation, position))
            return
        if result is value:
            self.add(value, column.type, self._fixed_origin(relation, column, span), span)
        self.writes.append(_WriteCheck(result, relation, column.name, column.type, aggregate, span))

    def literal(self, literal, scope) -> None:
        if isinstance(literal, ast.Atom):
            self.read(literal, scope)
        elif isinstance(literal, ast.Negation):
            self.read(literal.atom, scope)
        elif isinstance(literal, ast.Assignment):
            self.unify(self.term(literal.variable, scope), self.term(literal.expr, scope))
        elif isinstance(literal, ast.Comparison):
            left, right = self.term(literal.left, scope), self.term(literal.right, scope)
            span = literal.span if literal.span.line else _span_of(literal.left)
            self.flows.append(
                _Flow(left, _same_kind, (right,), _Text("compared with {} at {}", literal.right, span), span)
            )
            self.flows.append(
                _Flow(right, _same_kind, (left,), _Text("compared with {} at {}", literal.left, span), span)
            )
            self.comparisons.append((literal, left, right))

    # -- solving ------------------------------------------------------------------------------

    def resolve(self, node) -> Optional[str]:
        """The type of a node's class (or a :class:`_Known` type); ``"conflict"`` when its
        evidence disagrees."""
        if type(node) is _Known:
            return node.type
        kinds, widest = self.summary[self.find(node)]
        if not kinds:
            return None
        if len(kinds) > 1:
            return "conflict"
        return widest if kinds == {"number"} else next(iter(kinds))

    def solve(self) -> None:
        done: set = set()
        changed = True
        while changed:
            changed = False
            for i, flow in enumerate(self.flows):
                types = [self.resolve(n) for n in flow.operands]
                if "conflict" in types:
                    continue
                result = flow.function(types)
                if result is None or (i, result) in done:
                    continue
                done.add((i, result))
                self.add(flow.target, result, flow.origin, flow.span)
                changed = True

    # -- results ------------------------------------------------------------------------------

    def columns(self) -> dict:
        out: dict = {}
        for name, columns in self.fixed.items():
            out[name] = columns
        arities: dict = {}
        for _, relation, position in self.column_keys:
            arities[relation] = max(arities.get(relation, 0), position + 1)
        for name, arity in arities.items():
            if name in out:
                continue
            out[name] = tuple(Column(f"c{i}", _final(self._column_type(name, i))) for i in range(arity))
        return out

    def _column_type(self, relation: str, position: int) -> Optional[str]:
        key = ("col", relation, position)
        if key not in self.parent:
            return None
        t = self.resolve(key)
        return None if t == "conflict" else t

    def errors(self) -> list:
        errors: list = self._conflicts()
        for check in self.writes:
            t = self.resolve(check.node)
            if t in (None, "conflict"):
                continue  # a conflict is reported for the class itself
            if not _fits(t, check.type):
                errors.append(
                    error_at(
                        SchemaError,
                        f"column '{check.column}' of relation '{check.relation}' has "
                        f"type {check.type} but is given {check.what} of type "
                        f"{_show(t)}",
                        check.span,
                    )
                )
        errors += self._literal_errors()
        for comparison, left, right in self.comparisons:
            types = {self.resolve(left), self.resolve(right)}
            if comparison.op in _ORDERING and "bool" in types:
                errors.append(
                    error_at(
                        SchemaError,
                        f"bool values can only be compared with = and !=, not in '{comparison}'",
                        comparison.span,
                    )
                )
        return errors

    def _conflicts(self) -> list:
        """A type conflict per class whose evidence disagrees, in the order of the classes' first
        nodes (the classes' members are only gathered when there is one)."""
        if all(len(kinds) < 2 for kinds, _ in self.summary.values()):
            return []
        errors: list = []
        members: dict = {}
        for key in self.parent:
            members.setdefault(self.find(key), []).append(key)
        for root, keys in members.items():
            if self.resolve(root) == "conflict":
                errors.append(self._conflict(root, keys))
        return errors

    def _literal_errors(self) -> list:
        """Integer literals outside the range of their type (``long``, or ``int`` where they
        meet an int column or int arithmetic)."""
        errors = []
        for constant, node in self.integers:
            t = self.resolve(node)
            t = "long" if t in (None, "intlit", "number") else t
            if t in BOUNDS and not fits(constant.value, t):
                errors.append(
                    error_at(
                        SchemaError,
                        f"integer literal {constant.value} is out of the range of {t} "
                        f"({BOUNDS[t][0]} to {BOUNDS[t][1]})",
                        constant.span,
                    )
                )
        return errors

    def expression_type(self, term) -> Optional[str]:
        """The resolved type of an arithmetic term seen while building (None if unknown)."""
        node = self.expressions.get(id(term))
        if node is None:
            return None
        t = self.resolve(node)
        return None if t == "conflict" else _final(t)

    def _conflict(self, root, keys) -> SchemaError:
        # Name the class by its most telling member: a column, else a variable, else a value.
        keys = sorted(keys, key=lambda k: {"col": 0, "var": 1, "term": 2}[k[0]])
        what = self.labels[keys[0]]
        evidence = sorted(self.evidence[root], key=lambda e: e.span)
        first = evidence[0]
        second = next(e for e in evidence if _kind(e.type) != _kind(first.type))
        return error_at(
            SchemaError,
            f"type conflict for {what}: {_show(first.type)} "
            f"({first.origin}) vs {_show(second.type)} "
            f"({second.origin})",
            second.span if second.span.line else first.span,
        )


def _literal_type(constant: ast.Constant) -> str:
    """The evidence a literal gives: ``intlit`` for an integer, else its type."""
    return "intlit" if constant.type == "long" else constant.type


def _is_integer(term) -> bool:
    return isinstance(term, ast.Constant) and term.type == "long"


def _span_of(term) -> ast.Span:
    """The position of a term (arithmetic without its own position: its left operand's)."""
    span = getattr(term, "span", ast.NO_SPAN)
    if span.line or not isinstance(term, ast.BinaryOp):
        return span
    return _span_of(term.left)
