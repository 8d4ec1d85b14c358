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

from dataclasses import replace
from typing import Callable, NamedTuple, Optional

from .. import functors
from ..errors import SchemaError
from ..overflow import BOUNDS, fits
from ..record_types import is_record, is_value_type, type_text
from ..recursive_records import encoded_fields, is_recursive, stored_type
from ..syntax import ast
from ..syntax.eqrel import LABEL as EQREL_LABEL
from .checked import Column
from .classes import RANK, Classes, kind
from .mentions import error_at, rule_text, where
from .naming import head_names, positional

DEFAULT_TYPE = "long"

_ORDERING = ("<", "<=", ">", ">=")
_COLUMN, _VARIABLE, _VALUE = 0, 1, 2  # ranks of the kinds of nodes (which one names a class)
_VARIABLE_LABEL = "variable {} in {} '{}'"
_NO_COLUMNS: tuple = ()  # the column nodes of a relation that has none yet (never written)
# Integers in every bounded type's range: their range check needs no type.
_IN_EVERY_RANGE = range(max(low for low, _ in BOUNDS.values()), min(high for _, high in BOUNDS.values()) + 1)


def _show(t: str) -> str:
    return type_text({"intlit": "long"}.get(t, t))


def _final(t: Optional[str]) -> str:
    return DEFAULT_TYPE if t in (None, "number", "intlit") else t


def _widest(types) -> Optional[str]:
    return max(types, key=RANK.__getitem__, default=None)


def _text(parts: tuple) -> str:
    """A message fragment kept as ``(template, *args)`` until a message needs it: args formatted
    with spans shown as ``line:column`` and rules as their text (most programs have no type error,
    so most labels and origins are never read)."""
    template, *args = parts
    return template.format(*(_shown(arg) for arg in args))


def _shown(arg) -> object:
    if isinstance(arg, ast.Span):
        return where(arg)
    if isinstance(arg, ast.Rule):
        return rule_text(arg)
    return arg


# The records below are named tuples: a program makes several per rule, and tuples are quick to make.


class _Flow(NamedTuple):
    """Evidence for ``target`` computed by ``function`` from the resolved ``operands``."""

    target: int
    function: Callable[[list[Optional[str]]], Optional[str]]
    operands: tuple
    origin: tuple  # (template, *args): see _text
    span: ast.Span


class _Compared(NamedTuple):
    """A comparison: among the flows, it stands for two (each side gets "the same kind as the
    other side"), and its sides are checked once types are known (bool ordered)."""

    literal: ast.Comparison
    left: int
    right: int
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


class _Scope:
    """A rule or query: its variables' nodes by name, and how messages name it."""

    __slots__ = ("kind", "index", "subject", "variables")

    def __init__(self, kind: str, index: int, subject: object) -> None:
        self.kind, self.index, self.subject = kind, index, subject
        self.variables: dict = {}

    def label(self, variable: ast.Variable) -> tuple:
        return (_VARIABLE, _VARIABLE_LABEL, variable, self.kind, self.subject)


def infer_types(program: ast.Program, rules, fixed: dict) -> tuple[dict, list, tuple]:
    """``({relation: (Column, ...)}, errors, typed rules)`` for every relation of the program.

    ``rules`` are the normalised rules; ``fixed`` maps a relation to its fixed columns
    (from ``.decl`` or the input DataFrame), see :func:`fixed_columns`. The typed rules are
    ``rules`` with the type of every arithmetic term set (``ast.BinaryOp.type``).
    """
    labels = {d.name for d in program.declarations if EQREL_LABEL in d.qualifiers}
    inference = _Inference(fixed, labels)
    for fact in program.facts:
        inference.write(fact.atom, None)
    for index, rule in enumerate(rules):
        inference.rule(rule, _Scope("rule", index, rule))
    for index, query in enumerate(program.queries):
        inference.read(query.atom, _Scope("query", index, str(query)))
    inference.solve()
    typed = tuple(_typed_rule(rule, inference) for rule in rules) if inference.expressions else rules
    inference.names = head_names(rules)
    return inference.columns(), inference.errors(), typed


def _typed_rule(rule: ast.Rule, inference: "_Inference") -> ast.Rule:
    """``rule`` with each arithmetic term's ``type`` set from the inference (``rule`` itself when
    it has no arithmetic)."""
    if not _has_arithmetic(rule):
        return rule

    def typed(term):
        if isinstance(term, ast.BinaryOp):
            type_ = inference.expression_type(term) or DEFAULT_TYPE
            left, right = typed(term.left), typed(term.right)
            if type_ == "string":  # "a" + S: Soufflé's concatenation
                return ast.Call("cat", (left, right), span=term.span, type=type_)
            return replace(term, left=left, right=right, type=type_)
        if isinstance(term, ast.Call):
            args = tuple(typed(a) for a in term.args)
            call = replace(term, args=args, type=inference.expression_type(term) or DEFAULT_TYPE)
            return _resolved(call, term, inference)
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


def _resolved(call: ast.Call, written: ast.Call, inference: "_Inference") -> ast.Call:
    """A call as the engines compute it: ``to_string`` of a double formats it (``%f``), a
    ``match`` pattern has its POSIX classes written out (a constant one here)."""
    if call.name == "to_string" and inference.argument_type(written, 0) == "double":
        return replace(call, name=functors.FLOAT_TEXT)
    if call.name == "match" and call.args:
        pattern = call.args[0]
        if isinstance(pattern, ast.Constant) and isinstance(pattern.value, str):
            pattern = replace(pattern, value=functors.literal_pattern(pattern.value))
        else:
            pattern = ast.Call(functors.PATTERN, (pattern,), span=_span_of(pattern), type="string")
        return replace(call, args=(pattern, *call.args[1:]))
    return call


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
    return any(isinstance(term, ast.OPERATIONS) for term in terms)


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
            if not is_value_type(t):
                errors.append(
                    SchemaError(f"the input for relation '{name}' has a column of unsupported type '{t}'")
                )
        if not all(map(is_value_type, types)):
            continue
        if name not in fixed:
            fixed[name] = tuple(Column(positional(i), t) for i, t in enumerate(types))
            continue
        for column, given, decl_column in zip(fixed[name], types, spans[name].columns, strict=True):
            if not _fits(given, column.type) and given != stored_type(column.type):
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
    if value_type in RANK and column_type in RANK:
        return RANK[value_type] <= RANK[column_type]
    return value_type == column_type


def _arithmetic(types):
    if any(t is None or t not in RANK for t in types):
        return None
    return _widest(types)


def _sum(types):
    (t,) = types
    if t is None or t not in RANK:
        return None
    return "double" if t == "double" else "long"


def _ordered(types):
    """The type of ``min``/``max``: the widest number, or string (None until known)."""
    if any(t is None for t in types):
        return None
    if all(t == "string" for t in types):
        return "string"
    return _arithmetic(types)


def _same_kind(types):
    (t,) = types
    if t is None:
        return None
    return "number" if t in RANK else t


class _Inference(Classes):
    """Union-find over nodes with evidence per class (:class:`.classes.Classes`), then a fixpoint
    over the flows."""

    def __init__(self, fixed: dict, labels: frozenset | set = frozenset()):
        super().__init__()
        self.fixed = fixed
        self.eqrel_labels = labels  # eqrel label relations: their min may be over records
        self.flows: list = []  # _Flow and _Compared records, in the order they were seen
        self.writes: list[_WriteCheck] = []
        self.comparisons: list[_Compared] = []
        self.column_nodes: dict = {}  # relation -> [node or None by position], in the order made
        self.expressions: dict = {}  # id(BinaryOp or Call) -> its node (its type annotates the rule)
        self.calls: list = []  # (call, its argument nodes): checked once types are known
        self.arguments: dict = {}  # id(call) -> its argument nodes
        self.sums: list = []  # (X + Y, its operands' nodes): checked once types are known
        self.orders: list = []  # (min/max aggregate, its value's node): checked once types are known
        self.names: dict = {}  # relation -> its column names from its first rule (see .naming)
        # (integer literal, its node) for literals outside _IN_EVERY_RANGE: checked against their types
        self.integers: list = []

    # -- building -----------------------------------------------------------------------------

    def column_node(self, relation: str, position: int) -> int:
        """The node of an undeclared column (labelled None: see :meth:`_label`)."""
        columns = self.column_nodes.get(relation)
        if columns is None:
            columns = self.column_nodes[relation] = []
        if position < len(columns):
            node = columns[position]
            if node is not None:
                return node
        else:
            columns.extend([None] * (position + 1 - len(columns)))
        node = columns[position] = self.node(None)
        return node

    def term(self, term, scope: _Scope) -> int:
        """The node of a term; literals and arithmetic get fresh nodes with their evidence."""
        kind_ = type(term)
        if kind_ is ast.Variable:
            node = scope.variables.get(term.name)
            if node is None:  # not seen before in this rule
                node = scope.variables[term.name] = self.node(scope.label(term))
            return node
        if kind_ is ast.Constant:
            node = self.node((_VALUE, "value {}", term))
            self.add(node, _literal_type(term), ("literal {} at {}", term, term.span), term.span)
            if term.type == "long" and term.value not in _IN_EVERY_RANGE:
                self.integers.append((term, node))
            return node
        if kind_ is ast.BinaryOp:
            return self._arithmetic(term, scope)
        if kind_ is ast.Call:
            return self._call(term, scope)
        raise TypeError(f"not a term: {term!r}")

    def _arithmetic(self, term: ast.BinaryOp, scope: _Scope) -> int:
        node = self.node((_VALUE, "expression {}", term))
        operands = (self.term(term.left, scope), self.term(term.right, scope))
        span = _span_of(term)
        if term.op == "+":  # numbers, or symbols (concatenated): see _typed_rule
            self._concatenable(term, node, operands, span)
        else:
            for operand, side in zip(operands, (term.left, term.right), strict=True):
                self.add(operand, "number", ("operand of '{}' at {}", term.op, span), _span_of(side))
            self.flows.append(_Flow(node, _arithmetic, operands, ("result of {}", term), span))
        self.expressions[id(term)] = node
        return node

    def _concatenable(self, term: ast.BinaryOp, node: int, operands: tuple, span: ast.Span) -> None:
        """``X + Y``: both numbers (the widest) or both symbols (a symbol); each operand is of the
        kind of the other and of the result."""
        origin = ("operand of '+' in {} at {}", term, span)
        left, right = operands
        self.flows += [
            _Flow(left, _same_kind, (right,), origin, _span_of(term.left)),
            _Flow(right, _same_kind, (left,), origin, _span_of(term.right)),
            _Flow(left, _same_kind, (node,), origin, _span_of(term.left)),
            _Flow(right, _same_kind, (node,), origin, _span_of(term.right)),
            _Flow(node, _ordered, operands, ("result of {}", term), span),
        ]
        self.sums.append((term, operands))

    def _call(self, term: ast.Call, scope: _Scope) -> int:
        """A functor call: evidence for its arguments (numbers, strings) and its value."""
        node = self.node((_VALUE, "expression {}", term))
        spec = functors.spec(term)
        operands = tuple(self.term(arg, scope) for arg in term.args)
        for position, (operand, arg) in enumerate(zip(operands, term.args, strict=True)):
            kind_ = spec.kind(position)
            if kind_ not in ("ordered", "any"):
                evidence = "number" if kind_ == "integer" else kind_
                self.add(operand, evidence, ("argument of '{}' at {}", term.name, term.span), _span_of(arg))
        origin = ("result of {}", term)
        if spec.result == "given":  # records: the type lowering gave
            self.add(node, term.type or "", ("result of {} at {}", term, term.span), term.span)
            if spec.name == "record" and is_recursive(term.type):
                self._recursive_fields(term, operands)
        elif term.name.startswith("text@:"):  # a record field of a recursive type's, as text
            origin_ = ("field of a recursive type's record at {}", term.span)
            self.add(operands[0], term.name.partition(":")[2], origin_, _span_of(term.args[0]))
            self.add(node, spec.result, ("result of {} at {}", term, term.span), term.span)
        elif spec.result == "operands":
            rule = _ordered if spec.operands == "ordered" else _arithmetic
            self.flows.append(_Flow(node, rule, operands, origin, term.span))
        else:
            self.add(node, spec.result, ("result of {} at {}", term, term.span), term.span)
        self.expressions[id(term)] = node
        self.calls.append((term, operands))
        self.arguments[id(term)] = operands
        return node

    def _recursive_fields(self, term: ast.Call, operands: tuple) -> None:
        """The types of a recursive record's fields (of a recursive ADT's, its branch's index,
        a constant, and the branch's fields): its encoding holds them as texts."""
        tag = term.args[0] if term.args else None
        branch = tag.value if isinstance(tag, ast.Constant) and isinstance(tag.value, int) else None
        pairs = encoded_fields(term.type or "", branch)
        for operand, arg, (_, type_) in zip(operands, term.args, pairs, strict=True):
            if isinstance(arg, ast.Call) and arg.name.startswith("text@:"):
                continue  # a record field's nested text (string), typed by its own call
            self.add(operand, type_, ("field of {} at {}", term, term.span), _span_of(arg))

    def _call_errors(self) -> list:
        """Integer arguments that are doubles, min/max over numbers and strings together."""
        errors = []
        for call, operands in self.calls:
            spec = functors.spec(call)
            types = [self.resolve(node) for node in operands]
            if "conflict" in types:
                continue
            for position, (arg, t) in enumerate(zip(call.args, types, strict=True)):
                if spec.kind(position) == "integer" and t == "double":
                    message = f"argument {arg} of '{call.name}' must be an integer (int or long), not double"
                    errors.append(error_at(SchemaError, message, _span_of(arg)))
            kinds = {"number" if t in RANK else t for t in types if t is not None}
            if spec.operands == "ordered" and not (kinds <= {"number"} or kinds == {"string"}):
                message = f"the arguments of '{call.name}' must be all numbers or all strings, in {call}"
                errors.append(error_at(SchemaError, message, call.span))
        return errors

    def _sum_errors(self) -> list:
        """``X + Y`` over other than two numbers or two symbols."""
        errors = []
        for term, operands in self.sums:
            types = [self.resolve(node) for node in operands]
            kinds = {"number" if t in RANK else t for t in types if t is not None}
            if "conflict" not in kinds and not (kinds <= {"number"} or kinds == {"string"}):
                message = f"the operands of '+' must be two numbers or two symbols, in {term}"
                errors.append(error_at(SchemaError, message, _span_of(term)))
        return errors

    def argument_type(self, call: ast.Call, position: int) -> Optional[str]:
        """The resolved type of a call's argument (None if unknown)."""
        t = self.resolve(self.arguments[id(call)][position])
        return None if t == "conflict" else _final(t)

    def _order_errors(self) -> list:
        """A ``min``/``max`` over records or ADTs: they have no order (as in Soufflé). An
        ``eqrel``'s labels (``syntax.eqrel``) are the one ``min`` over them, in value order."""
        errors: list = []
        for aggregate, node, relation in self.orders:
            t = self.resolve(node)
            if t is None or not _is_any_record(t) or relation in self.eqrel_labels:
                continue
            what = (
                f"{aggregate.func} needs numbers or symbols, not records or ADTs ({_show(t)}), in {aggregate}"
            )
            errors.append(error_at(SchemaError, what, _span_of(aggregate)))
        return errors

    def _fixed_origin(self, relation: str, column: Column, span: ast.Span) -> tuple:
        return ("column '{}' of '{}' is {}, at {}", column.name, relation, column.type, span)

    def read(self, atom: ast.Atom, scope: _Scope) -> None:
        fixed = self.fixed.get(atom.predicate)
        if fixed is None:
            self._undeclared(atom, scope)
            return
        for i, arg in enumerate(atom.args):
            if i >= len(fixed):
                self._into_column(arg, scope, atom.predicate, i)
                continue
            node = self.term(arg, scope)
            span = _span_of(arg)
            self.add(node, fixed[i].type, self._fixed_origin(atom.predicate, fixed[i], span), span)

    def write(self, atom: ast.Atom, scope: Optional[_Scope]) -> None:
        fixed = self.fixed.get(atom.predicate)
        if fixed is None:
            self._undeclared(atom, scope)
            return
        for i, arg in enumerate(atom.args):
            column = fixed[i] if i < len(fixed) else None
            if type(arg) is ast.Aggregate:
                self._aggregate(atom.predicate, i, arg, column, scope)
            elif column is None:
                self._into_column(arg, scope, atom.predicate, i)
            else:
                self._fixed_write(atom.predicate, arg, column, scope)

    def _undeclared(self, atom: ast.Atom, scope) -> None:
        """Each argument of an atom over a relation without fixed columns into its column (what
        :meth:`_into_column` does per argument, with the hot case, a variable, inline)."""
        relation = atom.predicate
        columns = self.column_nodes.get(relation, _NO_COLUMNS)
        for position, arg in enumerate(atom.args):
            kind_ = type(arg)
            if kind_ is ast.Aggregate:
                self._aggregate(relation, position, arg, None, scope)
                continue
            column = columns[position] if position < len(columns) else None
            if column is None:
                column = self.column_node(relation, position)
                columns = self.column_nodes[relation]
            if kind_ is not ast.Variable:
                self._term_into(arg, scope, column)
                continue
            variables = scope.variables
            node = variables.get(arg.name)
            if node is None:
                variables[arg.name] = column  # see _into_column
            else:
                self.unify(node, column)

    def _fixed_write(self, relation: str, arg, column: Column, scope) -> None:
        """A term written into a declared column."""
        span = _span_of(arg)
        if type(arg) is ast.Constant:
            self._constant_write(relation, arg, column, span)
            return
        node = self.term(arg, scope)
        if type(arg) is ast.Variable or (_is_integer(arg) and column.type == "int"):
            # a variable: tells the columns it is read from; an integer literal: its range
            self.add(node, column.type, self._fixed_origin(relation, column, span), span)
        self.writes.append(_WriteCheck(node, relation, column.name, column.type, arg, span))

    def _into_column(self, arg, scope, relation: str, position: int) -> None:
        """Unify ``arg`` with an undeclared column. A variable seen for the first time has no
        evidence yet and needs no node: the column's node stands for it. (Its node would join the
        column's class, with nothing to add to its evidence, and never name it in a message: a
        class with a column is named by a column.)"""
        column = self.column_node(relation, position)
        if type(arg) is not ast.Variable:
            self._term_into(arg, scope, column)
            return
        node = scope.variables.get(arg.name)
        if node is None:
            scope.variables[arg.name] = column
        else:
            self.unify(node, column)

    def _term_into(self, arg, scope, column: int) -> None:
        """Unify a constant or arithmetic ``arg`` with the undeclared ``column``."""
        if type(arg) is ast.Constant:
            self._constant_into(arg, column)
        else:
            self.unify(self.term(arg, scope), column)

    def _constant_into(self, constant: ast.Constant, column: int) -> None:
        """A literal unified with an undeclared column, without a node of its own: its evidence
        goes first in the column's class, as unifying the literal's one-node class with it would
        put it, and its range is checked against the column's type. (Its node could only name the
        class in a message, and the column does that.)"""
        origin = ("literal {} at {}", constant, constant.span)
        self.add(column, _literal_type(constant), origin, constant.span, first=True)
        if constant.type == "long" and constant.value not in _IN_EVERY_RANGE:
            self.integers.append((constant, column))

    def _constant_write(self, relation: str, constant: ast.Constant, column: Column, span) -> None:
        """A literal written into a declared column. Its class would hold the literal alone (plus
        the column's type for an integer into an int column) and never join another, so its type
        is known at once: the same checks as for a node, without one."""
        integer = constant.type == "long"
        known = _Known(column.type if integer and column.type == "int" else _literal_type(constant))
        if integer and constant.value not in _IN_EVERY_RANGE:
            self.integers.append((constant, known))
        self.writes.append(_WriteCheck(known, relation, column.name, column.type, constant, span))

    def _aggregate(self, relation, position, aggregate: ast.Aggregate, column, scope) -> None:
        value = self.term(aggregate.variable, scope)
        span = _span_of(aggregate)
        func = aggregate.func
        if func in ("sum", "avg"):
            self.add(value, "number", ("argument of {} at {}", aggregate, span), span)
        result = self.node((_VALUE, "result of {}", aggregate))
        origin = ("result of {} at {}", aggregate, span)
        if func == "count":
            self.add(result, "long", origin, span)
        elif func == "avg":
            self.add(result, "double", origin, span)
        elif func == "sum":
            self.flows.append(_Flow(result, _sum, (value,), origin, span))
        else:  # min / max: the value itself
            result = value
            self.orders.append((aggregate, value, relation))
        if column is None:
            self.unify(result, self.column_node(relation, position))
            return
        if result is value:
            self.add(value, column.type, self._fixed_origin(relation, column, span), span)
        self.writes.append(_WriteCheck(result, relation, column.name, column.type, aggregate, span))

    def rule(self, rule: ast.Rule, scope: _Scope) -> None:
        self.write(rule.head, scope)
        fixed = self.fixed
        for literal in rule.body:
            if type(literal) is ast.Atom and literal.predicate not in fixed:
                self._undeclared(literal, scope)  # the most common literal, without a dispatch
            else:
                self.literal(literal, scope)

    def literal(self, literal, scope: _Scope) -> None:
        kind_ = type(literal)
        if kind_ is ast.Atom:
            self.read(literal, scope)
        elif kind_ is ast.Negation:
            self.read(literal.atom, scope)
        elif kind_ is ast.Assignment:
            self.unify(self.term(literal.variable, scope), self.term(literal.expr, scope))
        elif kind_ is ast.Comparison:
            self._comparison(literal, scope)

    def _comparison(self, literal: ast.Comparison, scope: _Scope) -> None:
        left, right = self.term(literal.left, scope), self.term(literal.right, scope)
        span = literal.span if literal.span.line else _span_of(literal.left)
        compared = _Compared(literal, left, right, span)
        self.flows.append(compared)
        self.comparisons.append(compared)

    # -- solving ------------------------------------------------------------------------------

    def resolve(self, node) -> Optional[str]:
        """The type of a node's class (or a :class:`_Known` type); ``"conflict"`` when its
        evidence disagrees."""
        if type(node) is _Known:
            return node.type
        return self.resolve_root(self.find(node))

    def solve(self) -> None:
        done: set = set()
        changed = True
        while changed:
            changed = False
            for i, flow in enumerate(self.flows):
                if type(flow) is _Compared:
                    literal, left, right, span = flow
                    changed |= self._compared_flow(done, (i, 0), left, right, literal.right, span)
                    changed |= self._compared_flow(done, (i, 1), right, left, literal.left, span)
                    continue
                target, function, operands, origin, span = flow
                types = [self.resolve(n) for n in operands]
                if "conflict" in types:
                    continue
                result = function(types)
                if result is None or (i, result) in done:
                    continue
                done.add((i, result))
                self.add(target, result, origin, span)
                changed = True

    def _compared_flow(self, done: set, key: tuple, target: int, source: int, other, span) -> bool:
        """The flow of a comparison's side ``source`` to its other side ``target`` (a ``_Flow``
        with :func:`_same_kind`, its origin made only when used); whether it gave evidence."""
        result = _same_kind([self.resolve(source)])
        if result is None or result == "conflict" or (key, result) in done:
            return False
        done.add((key, result))
        self.add(target, result, ("compared with {} at {}", other, span), span)
        return True

    # -- results ------------------------------------------------------------------------------

    def columns(self) -> dict:
        """Every relation's columns: the fixed ones, else the inferred types, named as
        :meth:`column_name` says."""
        out: dict = dict(self.fixed)
        made: dict = {}  # (name, type) -> its Column: equal columns are one (immutable) object
        types: dict = {}  # root -> its final type
        for relation, nodes in self.column_nodes.items():
            if relation not in out:
                out[relation] = tuple(
                    [
                        self._column(made, types, node, self.column_name(relation, i))
                        for i, node in enumerate(nodes)
                    ]
                )
        return out

    def column_name(self, relation: str, position: int) -> str:
        """The name of an undeclared column: from its relation's first rule (:mod:`.naming`),
        else positional."""
        given = self.names.get(relation, ())
        return given[position] if position < len(given) else positional(position)

    def _column(self, made: dict, types: dict, node: Optional[int], name: str) -> Column:
        """The inferred column ``name`` whose node is ``node`` (None: no node)."""
        t = DEFAULT_TYPE if node is None else types.get(root := self.find(node))
        if t is None:
            t = self.resolve_root(root)
            t = types[root] = _final(None if t == "conflict" else t)
        column = made.get((name, t))
        if column is None:
            column = made[name, t] = Column(name, t)
        return column

    def errors(self) -> list:
        errors: list = [self._conflict(root, members) for root, members in self.conflicting()]
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
        errors += self._call_errors()
        errors += self._sum_errors()
        errors += self._order_errors()
        for comparison, left, right, _ in self.comparisons:
            types = (self.resolve(left), self.resolve(right))
            if comparison.op in _ORDERING and ("bool" in types or any(map(_is_any_record, types))):
                what = "bool values" if "bool" in types else "records"
                errors.append(
                    error_at(
                        SchemaError,
                        f"{what} can only be compared with = and !=, not in '{comparison}'",
                        comparison.span,
                    )
                )
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

    def _rank(self, node: int) -> int:
        label = self.labels[node]
        return _COLUMN if label is None else label[0]

    def _label(self, node: int) -> tuple:
        """The label of ``node``; a column's is made here, when a message needs it (columns are
        many, messages few)."""
        label = self.labels[node]
        if label is not None:
            return label
        relation, position = next(
            (relation, position)
            for relation, nodes in self.column_nodes.items()
            for position, column in enumerate(nodes)
            if column == node
        )
        return (_COLUMN, "column '{}' of relation '{}'", self.column_name(relation, position), relation)

    def _conflict(self, root: int, members: list) -> SchemaError:
        # Name the class by its most telling member: a column, else a variable, else a value.
        what = _text(self._label(min(members, key=self._rank))[1:])
        evidence = sorted(self.evidence[root], key=lambda e: e.span)
        first = evidence[0]
        second = next(e for e in evidence if kind(e.type) != kind(first.type))
        return error_at(
            SchemaError,
            f"type conflict for {what}: {_show(first.type)} "
            f"({_text(first.origin)}) vs {_show(second.type)} "
            f"({_text(second.origin)})",
            second.span if second.span.line else first.span,
        )


def _is_any_record(type_name: Optional[str]) -> bool:
    return is_record(type_name) or is_recursive(type_name)


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
