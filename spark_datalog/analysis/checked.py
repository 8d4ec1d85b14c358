"""What analysis hands to every back end: schemas, strata and normalised rules.

Everything here is immutable. Evaluators (the reference interpreter, the relational-algebra
translator) read a ``CheckedProgram`` and never the raw AST alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Optional

from ..records import twin
from ..syntax import ast
from ..syntax.choice import greedy_keys
from ..syntax.input_rules import bound_inputs, input_relation
from .naming import positional


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: str  # one of ast.TYPES


@dataclass(frozen=True, slots=True)
class AggregateSpec:
    """The relation keeps one row per group (all other positions) for a head aggregate."""

    position: int
    func: str  # one of ast.AGGREGATE_FUNCTIONS


@dataclass(frozen=True, slots=True)
class RelationSchema:
    """A relation's columns and role. ``kind`` is ``"edb"`` or ``"idb"``."""

    name: str
    columns: tuple  # tuple[Column, ...]
    kind: str
    declared: bool = False  # has a .decl
    aggregate: Optional[AggregateSpec] = None

    @property
    def arity(self) -> int:
        return len(self.columns)

    @property
    def column_names(self) -> tuple:
        return tuple(c.name for c in self.columns)

    @property
    def types(self) -> tuple:
        return tuple(c.type for c in self.columns)

    def __str__(self) -> str:
        cols = ", ".join(f"{c.name}: {c.type}" for c in self.columns)
        extra = f" [{self.aggregate.func} on column {self.aggregate.position}]" if self.aggregate else ""
        return f"{self.kind.upper()} {self.name}({cols}){extra}"


@dataclass(frozen=True, slots=True)
class Stratum:
    """Relations evaluated together, in evaluation order.

    ``recursive`` is true when the stratum's dependency graph has a cycle (including a relation
    that depends on itself). ``uses_prem`` marks min/max aggregates inside that recursion
    (Pre-Mappability). ``rules`` are the normalised rules whose heads are in this stratum.
    """

    index: int
    relations: tuple  # tuple[str, ...]
    rules: tuple  # tuple[ast.Rule, ...]
    recursive: bool
    uses_prem: bool = False

    def __str__(self) -> str:
        tags = []
        if self.recursive:
            tags.append("recursive")
        if self.uses_prem:
            tags.append("min/max in recursion (PreM)")
        suffix = f" ({', '.join(tags)})" if tags else ""
        return f"stratum {self.index}: {', '.join(self.relations)}{suffix}"


# Analysis makes a schema per relation and a stratum per component: for a large program, enough to
# build them without their dataclass __init__ (see :mod:`spark_datalog.records`).
_MutableRelationSchema = twin(RelationSchema)
_MutableStratum = twin(Stratum)


def relation_schema(
    name: str, columns: tuple, kind: str, declared: bool, aggregate: Optional[AggregateSpec]
) -> RelationSchema:
    """``RelationSchema(name, columns, kind, declared, aggregate)``, built faster."""
    schema = _MutableRelationSchema()
    schema.name, schema.columns, schema.kind = name, columns, kind
    schema.declared, schema.aggregate = declared, aggregate
    schema.__class__ = RelationSchema
    return schema


def positional_schema(schema: RelationSchema) -> RelationSchema:
    """``schema`` with columns ``c0, c1, ...`` when it has no ``.decl`` (``schema`` itself when
    they are named so already): how relations without ``.decl`` were named before their columns
    were named after head variables (:mod:`.naming`)."""
    names = tuple(positional(i) for i in range(schema.arity))
    if schema.declared or schema.column_names == names:
        return schema
    columns = tuple(Column(name, column.type) for name, column in zip(names, schema.columns, strict=True))
    return relation_schema(schema.name, columns, schema.kind, schema.declared, schema.aggregate)


def stratum(index: int, relations: tuple, rules: tuple, recursive: bool, uses_prem: bool) -> Stratum:
    """``Stratum(index, relations, rules, recursive, uses_prem)``, built faster."""
    built = _MutableStratum()
    built.index, built.relations, built.rules = index, relations, rules
    built.recursive, built.uses_prem = recursive, uses_prem
    built.__class__ = Stratum
    return built


@dataclass(frozen=True)
class CheckedProgram:
    """A program that passed every check.

    ``rules`` are normalised: each ``=`` comparison that binds a variable is an
    ``ast.Assignment``. ``facts`` maps a relation to the set of tuples stated in the program.
    ``edb`` / ``idb`` are relation names; ``outputs`` are the ``.output`` relations, or all IDB
    relations when the program names none. ``.output`` decides what is computed: ``demanded``
    holds the outputs and every relation they depend on, ``evaluated`` the strata defining
    them (all strata without ``.output``).
    """

    program: ast.Program
    relations: dict  # name -> RelationSchema (insertion order: first mention)
    strata: tuple  # tuple[Stratum, ...]
    rules: tuple  # tuple[ast.Rule, ...]
    facts: dict  # name -> frozenset[tuple]
    queries: tuple  # tuple[ast.Query, ...]
    outputs: tuple = field(default=())

    # The derived sets below are computed once per (immutable) program: callers test membership
    # in them inside loops over the relations or strata.

    def input_relation(self, name: str) -> str:
        """The EDB relation holding the input users call ``name``: ``r__input`` for an
        ``.input r`` with rules (:mod:`spark_datalog.syntax.input_rules`), else ``name``."""
        return input_relation(self.program.input_aliases, name)

    def bound_inputs(self, inputs: Any) -> Any:
        """``inputs`` (relation name -> anything) keyed by :meth:`input_relation`; every place
        that takes inputs or changes by name passes them through here."""
        return bound_inputs(self.program.input_aliases, inputs)

    @cached_property
    def edb(self) -> tuple:
        return tuple(n for n, r in self.relations.items() if r.kind == "edb")

    @cached_property
    def idb(self) -> tuple:
        return tuple(n for n, r in self.relations.items() if r.kind == "idb")

    @cached_property
    def demanded(self) -> frozenset:
        """The outputs, the relations the ``?-`` queries read, and every relation they depend on
        (through positive and negated body atoms, and the bodies of the subsumptions applied in
        their rounds); every relation without ``.output``."""
        if not self.program.outputs:
            return frozenset(self.relations)
        reads: dict = {}
        for rule in self.rules:
            body = reads.setdefault(rule.head.predicate, set())
            body.update(
                a.atom.predicate if isinstance(a, ast.Negation) else a.predicate for a in _atoms(rule)
            )
        for relation, every, dominated in self.program.subsumed:  # read in relation's rounds
            reads.setdefault(relation, set()).update(reads.get(dominated, set()) - {every})
        found, todo = set(), list(self.outputs) + [q.atom.predicate for q in self.queries]
        while todo:
            name = todo.pop()
            if name not in found:
                found.add(name)
                todo += reads.get(name, ())
        return frozenset(found)

    @property
    def returned(self) -> tuple:
        """The relations an evaluation returns: the ``.output`` relations (EDB ones too), or
        every IDB relation when the program names no ``.output``."""
        return self.outputs if self.program.outputs else self.idb

    @property
    def evaluated(self) -> tuple:
        """The strata that define a demanded relation, in evaluation order."""
        demanded = self.demanded
        return tuple(s for s in self.strata if demanded & set(s.relations))

    @cached_property
    def choices(self) -> dict:
        """Relation -> the column positions of each key of its greedy ``choice-domain``
        (several keys, or in recursion: :mod:`spark_datalog.syntax.choice`).

        >>> from spark_datalog.analysis import analyse
        >>> from spark_datalog.syntax.parser import parse
        >>> text = ".decl r(a: number, b: number) choice-domain a, b\\n.input e\\nr(X, Y) :- e(X, Y)."
        >>> analyse(parse(text)).choices
        {'r': ((0,), (1,))}
        """
        found: dict = {}
        for declaration in self.program.declarations:
            stratum = self.stratum_of(declaration.name) if declaration.choice_domains else None
            keys = greedy_keys(declaration, stratum.recursive) if stratum is not None else ()
            if keys:
                names = [column.name for column in declaration.columns]
                found[declaration.name] = tuple(tuple(names.index(column) for column in key) for key in keys)
        return found

    @cached_property
    def subsumed(self) -> dict:
        """Recursive relation -> (its pseudo relation of all tuples, the rules of its dominated
        tuples) for a subsumption each round applies (:mod:`spark_datalog.syntax.subsumption`).

        >>> from spark_datalog.analysis import analyse
        >>> from spark_datalog.syntax.parser import parse
        >>> text = "r(1, 2). r(X, Y) :- r(Y, X). r(A, B) <= r(C, D) :- C < A, D < B."
        >>> every, rules = analyse(parse(text)).subsumed["r"]
        >>> every, [str(rule) for rule in rules]
        ('r__all', ['r__dominated(A, B) :- r__all(A, B), r__all(C, D), C < A, D < B, A != C.', \
'r__dominated(A, B) :- r__all(A, B), r__all(C, D), C < A, D < B, B != D.'])
        """
        found: dict = {}
        for relation, every, dominated in self.program.subsumed:
            stratum = self.stratum_of(relation)
            if stratum is not None and stratum.recursive:
                found[relation] = (every, tuple(r for r in self.rules if r.head.predicate == dominated))
        return found

    @cached_property
    def limits(self) -> dict:
        """Relation -> the N of its ``.limitsize r(n=N)``: it keeps at most N facts
        (:mod:`spark_datalog.limits`)."""
        return self.program.limits

    def stratum_of(self, relation: str) -> Optional[Stratum]:
        """The stratum defining ``relation`` (None for an EDB relation)."""
        return self._stratum_index.get(relation)

    @cached_property
    def _stratum_index(self) -> dict:
        """Relation -> its stratum (the first one naming it)."""
        index: dict = {}
        for stratum in self.strata:
            for name in stratum.relations:
                index.setdefault(name, stratum)
        return index


def _atoms(rule: ast.Rule) -> list:
    """The positive and negated atoms of ``rule``'s body."""
    return [literal for literal in rule.body if isinstance(literal, (ast.Atom, ast.Negation))]
