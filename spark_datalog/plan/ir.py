"""The backend-neutral relational-algebra IR.

Nodes are frozen dataclasses. Every node exposes ``columns``: the names of the columns it
produces, in order. Column names inside a rule's plan are the rule's variable names (and fresh
names the translator invents for constant or repeated positions). Integrity is checked at
construction, so a malformed plan fails where it is built, not inside Spark.

This module must never import pyspark: the IR is what every backend shares.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

from ..syntax import ast

# ---------------------------------------------------------------------------------------------
# Scalar expressions


@dataclass(frozen=True)
class ColumnRef:
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Literal:
    value: Union[int, float, str, bool]
    type: str  # one of ast.TYPES

    def __str__(self) -> str:
        return str(ast.Constant(self.value, self.type))


@dataclass(frozen=True)
class Arithmetic:
    """``left op right``. ``type``: the value's type (``int``, ``long`` or ``double``); an
    integer result outside its range is an overflow. ``span``: the expression's source
    position, which an overflow reports (part of equality: a backend may cache compiled
    expressions, and each must report its own position)."""

    op: str  # one of ast.ARITHMETIC_OPERATORS
    left: "Expr"
    right: "Expr"
    type: str = "long"
    span: ast.Span = ast.NO_SPAN

    def __post_init__(self):
        if self.op not in ast.ARITHMETIC_OPERATORS:
            raise ValueError(f"unknown arithmetic operator {self.op!r}")

    def __str__(self) -> str:
        return f"({self.left} {self.op} {self.right})"


@dataclass(frozen=True)
class Call:
    """Functor ``name`` (:mod:`spark_datalog.functors`) applied to ``args``. ``type``: the
    value's type; ``span``: the call's source position. ``functor``: a user-defined functor's
    entry (``@f``, :mod:`spark_datalog.user_functors`), None for an intrinsic one."""

    name: str
    args: tuple  # tuple[Expr, ...]
    type: str = "long"
    span: ast.Span = ast.NO_SPAN
    functor: Optional[object] = field(default=None, repr=False)

    def __str__(self) -> str:
        return f"{self.name}({', '.join(str(a) for a in self.args)})"


Expr = Union[ColumnRef, Literal, Arithmetic, Call]
COMPUTED = (Arithmetic, Call)


def operands(expr) -> tuple:
    """The expressions a computed expression reads (none for a column or literal)."""
    if isinstance(expr, Arithmetic):
        return (expr.left, expr.right)
    if isinstance(expr, Call):
        return expr.args
    return ()


@dataclass(frozen=True)
class Compare:
    op: str  # one of ast.COMPARISON_OPERATORS
    left: Expr
    right: Expr

    def __post_init__(self):
        if self.op not in ast.COMPARISON_OPERATORS:
            raise ValueError(f"unknown comparison operator {self.op!r}")

    def __str__(self) -> str:
        return f"{self.left} {self.op} {self.right}"


def expr_columns(expr) -> set:
    """Column names an expression or comparison reads."""
    if isinstance(expr, ColumnRef):
        return {expr.name}
    if isinstance(expr, Compare):
        return expr_columns(expr.left) | expr_columns(expr.right)
    return set().union(*(expr_columns(e) for e in operands(expr)))


# ---------------------------------------------------------------------------------------------
# Relational nodes

SCAN_SOURCES = ("full", "delta")


def _check_unique(names, what):
    if len(set(names)) != len(names):
        raise ValueError(f"{what}: duplicate column names {names}")


def _check_known(needed, available, what):
    missing = set(needed) - set(available)
    if missing:
        raise ValueError(f"{what}: unknown columns {sorted(missing)} (have {list(available)})")


@dataclass(frozen=True)
class Scan:
    """Read a relation, naming its positions ``columns``. ``source`` is ``full`` (the whole
    relation as known now) or ``delta`` (the facts new in the previous iteration)."""

    relation: str
    columns: tuple
    source: str = "full"

    def __post_init__(self):
        if self.source not in SCAN_SOURCES:
            raise ValueError(f"unknown scan source {self.source!r}")
        _check_unique(self.columns, f"scan {self.relation}")


@dataclass(frozen=True)
class Unit:
    """One row with no columns: where a rule body without a positive atom starts
    (``p(X) :- X = 3.``)."""

    @property
    def columns(self) -> tuple:
        return ()


@dataclass(frozen=True)
class Select:
    """Keep rows satisfying every condition (by value: ``X = 3``; by column: ``X = Y``)."""

    child: "Node"
    conditions: tuple  # tuple[Compare, ...]

    def __post_init__(self):
        for condition in self.conditions:
            _check_known(expr_columns(condition), self.child.columns, "select")

    @property
    def columns(self) -> tuple:
        return self.child.columns


@dataclass(frozen=True)
class Project:
    """Produce ``outputs``: pairs (name, expression) — plain columns, constants or computed values."""

    child: "Node"
    outputs: tuple  # tuple[tuple[str, Expr], ...]

    def __post_init__(self):
        _check_unique([n for n, _ in self.outputs], "project")
        for _, expr in self.outputs:
            _check_known(expr_columns(expr), self.child.columns, "project")

    @property
    def columns(self) -> tuple:
        return tuple(n for n, _ in self.outputs)


@dataclass(frozen=True)
class Join:
    """Equi-join on the shared column names ``on``; ``on == ()`` is a cross product."""

    left: "Node"
    right: "Node"
    on: tuple

    def __post_init__(self):
        _check_known(self.on, self.left.columns, "join (left)")
        _check_known(self.on, self.right.columns, "join (right)")
        shared = set(self.left.columns) & set(self.right.columns)
        if shared != set(self.on):
            raise ValueError(f"join: shared columns {sorted(shared)} must equal on={list(self.on)}")

    @property
    def columns(self) -> tuple:
        return self.left.columns + tuple(c for c in self.right.columns if c not in self.on)


@dataclass(frozen=True)
class AntiJoin:
    """Rows of ``left`` with no row of ``right`` agreeing on ``on`` (negation)."""

    left: "Node"
    right: "Node"
    on: tuple

    def __post_init__(self):
        _check_known(self.on, self.left.columns, "antijoin (left)")
        _check_known(self.on, self.right.columns, "antijoin (right)")

    @property
    def columns(self) -> tuple:
        return self.left.columns


@dataclass(frozen=True)
class SemiJoin:
    """Rows of ``left`` with a row of ``right`` agreeing on ``on``: an existence test, which
    never multiplies ``left``'s rows (``on=()``: all of ``left`` iff ``right`` has a row)."""

    left: "Node"
    right: "Node"
    on: tuple

    def __post_init__(self):
        _check_known(self.on, self.left.columns, "semijoin (left)")
        _check_known(self.on, self.right.columns, "semijoin (right)")

    @property
    def columns(self) -> tuple:
        return self.left.columns


@dataclass(frozen=True)
class Union_:
    """Multiset union of children with identical columns (use Distinct for a set)."""

    children: tuple

    def __post_init__(self):
        if not self.children:
            raise ValueError("union of nothing")
        first = self.children[0].columns
        for child in self.children[1:]:
            if child.columns != first:
                raise ValueError(f"union: columns differ {first} vs {child.columns}")

    @property
    def columns(self) -> tuple:
        return self.children[0].columns


@dataclass(frozen=True)
class Distinct:
    child: "Node"

    @property
    def columns(self) -> tuple:
        return self.child.columns


@dataclass(frozen=True)
class Aggregate:
    """Group ``child`` by ``group_by`` and compute ``func(argument)`` as column ``output``.
    ``count`` counts distinct values of ``argument``; the others range over all child rows."""

    child: "Node"
    group_by: tuple
    func: str  # one of ast.AGGREGATE_FUNCTIONS
    argument: str
    output: str

    def __post_init__(self):
        if self.func not in ast.AGGREGATE_FUNCTIONS:
            raise ValueError(f"unknown aggregate {self.func!r}")
        _check_known(self.group_by + (self.argument,), self.child.columns, "aggregate")
        _check_unique(self.group_by + (self.output,), "aggregate")

    @property
    def columns(self) -> tuple:
        return self.group_by + (self.output,)


@dataclass(frozen=True)
class Generate:
    """For each row of ``child``, one row per value of generator ``func`` (``range``,
    ``urange``, ``frange``: :mod:`spark_datalog.generators`) over the columns ``args``
    (start, stop and optionally step), the value appended as column ``output`` of type
    ``type``. A row whose generator has no values disappears."""

    child: "Node"
    func: str
    args: tuple  # tuple[str, ...]: column names
    output: str
    type: str = "long"

    def __post_init__(self):
        if len(self.args) not in (2, 3):
            raise ValueError(f"generate: {self.func} takes 2 or 3 arguments, given {len(self.args)}")
        _check_known(self.args, self.child.columns, "generate")
        _check_unique(self.child.columns + (self.output,), "generate")

    @property
    def columns(self) -> tuple:
        return self.child.columns + (self.output,)


@dataclass(frozen=True)
class Number:
    """Each row of ``child`` (whose rows are distinct) with its rank in column ``output``
    (``long``: 0, 1, 2, ...) in the order of the rows' values compared column by column, left
    to right: numbers numerically (NaN the largest double), strings by code point, ``false``
    before ``true``. It numbers a rule's bindings for ``autoinc()``
    (:mod:`spark_datalog.syntax.autoinc`); it needs every row, so it is never partitioned."""

    child: "Node"
    output: str

    def __post_init__(self):
        _check_unique(self.child.columns + (self.output,), "number")

    @property
    def columns(self) -> tuple:
        return self.child.columns + (self.output,)


Node = Union[
    Scan, Unit, Select, Project, Join, AntiJoin, SemiJoin, Union_, Distinct, Aggregate, Generate, Number
]


def children(node) -> tuple:
    """The child nodes of ``node`` (for generic walks)."""
    if isinstance(node, (Scan, Unit)):
        return ()
    if isinstance(node, (Select, Project, Distinct, Aggregate, Generate, Number)):
        return (node.child,)
    if isinstance(node, (Join, AntiJoin, SemiJoin)):
        return (node.left, node.right)
    if isinstance(node, Union_):
        return node.children
    raise TypeError(f"not an IR node: {node!r}")


def own_exprs(node) -> list:
    """The expressions ``node`` itself evaluates: its conditions' sides, its outputs."""
    if isinstance(node, Select):
        return [e for c in node.conditions for e in (c.left, c.right)]
    if isinstance(node, Project):
        return [e for _, e in node.outputs]
    return []


def computes(node) -> bool:
    """Whether ``node`` or a node under it computes arithmetic (which may overflow)."""
    own = any(isinstance(e, COMPUTED) for e in own_exprs(node))
    return own or any(computes(c) for c in children(node))


def numbers(node) -> bool:
    """Whether ``node`` or a node under it is a ``Number``."""
    return isinstance(node, Number) or any(numbers(c) for c in children(node))


def calls(node) -> list:
    """Every functor call under ``node``: in its conditions and outputs, nested ones too."""
    found = [call for e in own_exprs(node) for call in _expr_calls(e)]
    return found + [call for c in children(node) for call in calls(c)]


def _expr_calls(expr) -> list:
    own = [expr] if isinstance(expr, Call) else []
    return own + [call for e in operands(expr) for call in _expr_calls(e)]


def scans(node) -> list:
    """Every Scan under ``node``, left to right."""
    if isinstance(node, Scan):
        return [node]
    return [s for c in children(node) for s in scans(c)]


# ---------------------------------------------------------------------------------------------
# Plans of rules and strata


@dataclass(frozen=True)
class LocalRelation:
    """A relation as a backend evaluates it (e.g. in a Spark task): its columns and Datalog
    types, ``best`` = ``(func, position)`` when it keeps a min/max per group, ``limit`` the N
    of its ``.limitsize``."""

    name: str
    column_names: tuple
    column_types: tuple  # Datalog type names
    best: Optional[tuple] = None
    limit: Optional[int] = None


@dataclass(frozen=True)
class RulePlan:
    """The plan of one rule (or one semi-naive variant of it).

    ``plan`` produces the head relation's columns, positionally, named as the relation's columns.
    For a rule with a head aggregate it produces the aggregate's *contributions* — the group
    columns and the aggregated value, one row per distinct satisfying assignment of the body
    (a multiset) — and the relation-level aggregation happens when the relation is assembled.
    ``delta_position`` is the index (in ``rule.body``) of the atom read from the delta, or None.
    """

    rule: ast.Rule = field(compare=False)
    relation: str
    plan: Node
    delta_position: Optional[int] = None


@dataclass(frozen=True)
class StratumPlan:
    """Everything the driver needs to evaluate one stratum.

    ``rules``: one full plan per rule (naive evaluation, and the first semi-naive iteration).
    ``delta_rules``: the semi-naive variants of the recursive rules (empty when not recursive).
    ``aggregates``: relation name -> ``AggregateSpec`` for relations with a head aggregate.
    ``choices``: relation name -> its greedy ``choice-domain`` keys (column positions,
    :mod:`spark_datalog.syntax.choice`).
    ``subsumed``: relation name -> (its pseudo relation of all tuples, the plans of its
    dominated tuples over it) for a subsumption each round applies
    (:mod:`spark_datalog.syntax.subsumption`).
    ``limits``: relation name -> the N of its ``.limitsize`` (:mod:`spark_datalog.limits`).
    """

    index: int
    relations: tuple
    recursive: bool
    uses_prem: bool
    rules: tuple  # tuple[RulePlan, ...]
    delta_rules: tuple = ()  # tuple[RulePlan, ...]
    aggregates: dict = field(default_factory=dict, compare=False)
    choices: dict = field(default_factory=dict, compare=False)
    subsumed: dict = field(default_factory=dict, compare=False)
    limits: dict = field(default_factory=dict, compare=False)

    @property
    def numbered(self) -> bool:
        """Whether a rule numbers its bindings (``autoinc()``): its facts depend on all the
        bindings at once, so no delta maintains them and they have one derivation each."""
        return any(numbers(rule.plan) for rule in self.rules)

    @property
    def spark_sql_functors(self) -> dict:
        """The user-defined functors its rules call that are bound to a Spark SQL function
        (``@f`` -> the function's name, :func:`spark_datalog.spark_function`): only Spark's own
        plans run them, never the kernel."""
        plans = [rule.plan for rule in (*self.rules, *self.delta_rules)]
        plans += [rule.plan for _, rules in self.subsumed.values() for rule in rules]
        bindings = [getattr(call.functor, "binding", None) for plan in plans for call in calls(plan)]
        return {b.name: b.spark_name for b in bindings if b is not None and b.spark_name is not None}

    def set_valued(self, name: str) -> bool:
        """Whether relation ``name`` of this stratum stores count 1 per fact rather than
        derivation counts: recursive strata, aggregate relations, strata run as a whole."""
        return self.recursive or name in self.aggregates or self.whole

    @property
    def whole(self) -> bool:
        """Whether the stratum's facts depend on all its candidates at once, so no delta
        maintains them and ``update`` recomputes it: it numbers its bindings (``autoinc()``)
        makes a greedy choice (``choice-domain``), removes dominated facts in its rounds
        (subsumption) or keeps the least facts of the round reaching a limit (``.limitsize``)."""
        return self.numbered or bool(self.choices) or bool(self.subsumed) or bool(self.limits)
