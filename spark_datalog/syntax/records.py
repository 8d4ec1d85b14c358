"""Soufflé's record terms lowered to record construction and field reads.

A record term ``[X, 1]`` is typed by where it stands: a column of a declared record type
(``.decl p(r: P)`` with ``.type P = [x: number, y: number]``), a field of such a record, or the
other side of a comparison with a variable of one. Then:

- where it gives a value (a head, a negated atom, a comparison whose other side is not bound
  by a positive atom), it becomes the functor call ``record(X, 1)`` of that type
  (``[X, 1]`` when printed);
- in a positive body atom it is a pattern: ``p([X, 1])`` becomes ``p(_record1_)`` with
  ``X = (_record1_).x`` and ``(_record1_).y = 1`` (field reads are the functors
  ``field:<position>:<name>``), nested records through further ``_record<n>_`` variables;
  ``R = [X, Y]`` where a positive atom binds ``R`` destructures ``R`` the same way;
- in a fact, a record of constants is a constant record value.

So analysis and the engines see only calls (:mod:`spark_datalog.functors`) and constants.

Example::

    >>> from spark_datalog.syntax.parser import parse
    >>> text = ".type P = [x: number, y: number]\\n.decl p(r: P)\\n.decl q(x: number)\\n"
    >>> print(parse(text + "q(X) :- p([X, 1]).").rules[0])
    q(X) :- p(_record1_), X = (_record1_).x, (_record1_).y = 1.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional, Union

from ..errors import DatalogError, ParseError
from ..record_types import Record, adt_branches, default_value, is_record, nil_record, type_text
from ..recursive_records import (
    NIL,
    encode,
    encoded_fields,
    is_recursive,
    recursive_branches,
    recursive_fields,
)
from ..record_types import fields as _declared_fields
from . import ast
from .auxiliary import fresh_name, relation_names
from .typedecls import branch_types

__all__ = ["has_records", "lower_records"]


def has_records(program: ast.Program) -> bool:
    """Whether a rule, fact or query of ``program`` has a record term."""
    atoms = (
        [r.head for r in program.rules] + [f.atom for f in program.facts] + [q.atom for q in program.queries]
    )
    for rule in program.rules:
        for literal in rule.body:
            atoms.append(literal.atom if isinstance(literal, ast.Negation) else literal)
    for node in atoms:
        terms = (
            [node.left, node.right] if isinstance(node, ast.Comparison) else list(getattr(node, "args", ()))
        )
        while terms:
            term = terms.pop()
            if isinstance(term, ast.RecordTerm) or is_nil(term):
                return True
            terms.extend(getattr(term, "args", ()))
            if isinstance(term, ast.BinaryOp):
                terms.extend((term.left, term.right))
    return False


def lower_records(program: ast.Program) -> tuple[ast.Program, list[DatalogError]]:
    """``program`` without record terms, and the errors found (see the module's docstring)."""
    columns = {d.name: tuple(c.type for c in d.columns) for d in program.declarations}
    errors: list[DatalogError] = []
    branches = branch_types(program.types)
    taken = relation_names(program)
    split = [_negated_patterns(rule, taken) for rule in program.rules]
    unlowered = [rule for rules, _ in split for rule in rules] + [aux for _, auxs in split for aux in auxs]
    rules = tuple(_Rule(columns, errors, branches).lower(rule) for rule in unlowered)
    facts = tuple(_fact(fact, columns, errors, branches) for fact in program.facts)
    queries = tuple(_query(query, columns, errors) for query in program.queries)
    return replace(program, rules=rules, facts=facts, queries=queries), errors


def _query(query, columns: dict, errors: list):
    """``query`` with its ``nil`` arguments typed (record terms in queries are not supported yet)."""
    args = []
    for position, arg in enumerate(query.atom.args):
        if isinstance(arg, ast.RecordTerm):
            errors.append(_error("record terms in queries are not supported yet", arg))
        elif is_nil(arg):
            where = f"column {position + 1} of '{query.atom.predicate}'"
            arg = _nil(arg, _column_type(columns, query.atom, position), errors, where)
        args.append(arg)
    return replace(query, atom=replace(query.atom, args=tuple(args)))


def _negated_patterns(rule: ast.Rule, taken: set) -> tuple[list, list]:
    """``rule`` with each negated atom whose record terms hold a ``_`` read through a new
    relation, and those relations' rules: ``!e([_, X])`` becomes ``!e__match(X)`` with
    ``e__match(X) :- e([_, X]).`` (a negated atom's record terms are built, and ``_`` builds
    nothing)."""
    body, auxiliary = [], []
    for literal in rule.body:
        if isinstance(literal, ast.Negation) and any(_has_anonymous(a) for a in literal.atom.args):
            atom = literal.atom
            named = list(dict.fromkeys(v.name for v in _variables(atom.args) if not v.anonymous))
            head = ast.Atom(
                fresh_name(f"{atom.predicate}__match", taken),
                tuple(ast.Variable(name, span=atom.span) for name in named),
                span=atom.span,
            )
            auxiliary.append(ast.Rule(head, (atom,), span=atom.span, text=rule.text))
            literal = replace(literal, atom=head)
        body.append(literal)
    return [replace(rule, body=tuple(body))], auxiliary


def _has_anonymous(term) -> bool:
    return isinstance(term, ast.RecordTerm) and any(
        (isinstance(a, ast.Variable) and a.anonymous) or _has_anonymous(a) for a in term.args
    )


def _variables(terms) -> list:
    out: list = []
    for term in terms:
        if isinstance(term, ast.Variable):
            out.append(term)
        out.extend(_variables(getattr(term, "args", ())))
        if isinstance(term, ast.BinaryOp):
            out.extend(_variables((term.left, term.right)))
    return out


def fields(type_: Optional[str], term=None) -> tuple:
    """The (name, type) pairs of a record type, recursive ones too (none for another type);
    of a recursive ADT, those of the expanded branch ``term`` (:func:`expand_branch`)."""
    if recursive_branches(type_) is not None:
        tag = term.args[0] if isinstance(term, ast.RecordTerm) and term.branch == _EXPANDED else None
        return encoded_fields(type_, tag.value) if isinstance(tag, ast.Constant) else ()  # type: ignore[arg-type]
    if is_recursive(type_):
        return recursive_fields(type_) or ()  # type: ignore[arg-type]
    return (_declared_fields(type_) or ()) if type_ else ()


def _is_recursive_record(type_: Optional[str]) -> bool:
    return is_recursive(type_) and recursive_branches(type_) is None


def is_nil(term) -> bool:
    """Whether ``term`` is ``nil``: Soufflé's dialect's, or the default dialect's symbol ``nil``
    (which is nil where a recursive record is expected)."""
    return isinstance(term, ast.Constant) and term.value == NIL and term.type in ("nil", "string")


def _nil(term, type_: Optional[str], errors: list, where: str):
    """The nil of ``type_`` that ``term`` is (itself, with an error for Soufflé's ``nil``, where
    no record type is expected)."""
    if _is_recursive_record(type_):
        return ast.Constant(NIL, type_, span=term.span)  # type: ignore[arg-type]
    if _is_plain_record(type_):
        return ast.Constant(nil_record(type_), type_, span=term.span)  # type: ignore[arg-type]
    if term.type == "nil":
        shown = f"is {type_text(type_)}" if type_ else "has no known record type"
        errors.append(_error(f"nil needs a record type, but {where} {shown}", term))
    return term


def _is_plain_record(type_: Optional[str]) -> bool:
    """Whether ``type_`` is a (non-recursive) record type, no ADT: one whose values include nil."""
    return is_record(type_) and adt_branches(type_) is None


def _error(message: str, term) -> ParseError:
    span = getattr(term, "span", ast.NO_SPAN)
    return ParseError(message, span.line, span.column)


def _column_type(columns: dict, atom: ast.Atom, position: int) -> Optional[str]:
    types = columns.get(atom.predicate, ())
    return types[position] if position < len(types) else None


def _fact(fact: ast.Fact, columns: dict, errors: list, branches: dict) -> ast.Fact:
    args = []
    for position, arg in enumerate(fact.atom.args):
        type_ = _column_type(columns, fact.atom, position)
        if is_nil(arg):
            arg = _nil(arg, type_, errors, f"column {position + 1} of '{fact.atom.predicate}'")
        elif isinstance(arg, ast.RecordTerm):
            value = _constant(
                arg, type_, errors, f"column {position + 1} of '{fact.atom.predicate}'", branches
            )
            arg = ast.Constant(value, type_ or "", span=arg.span) if value is not None else arg  # type: ignore[arg-type]
        args.append(arg)
    return replace(fact, atom=replace(fact.atom, args=tuple(args)))


def _constant(
    term, type_: Optional[str], errors: list, where: str, branches: dict
) -> Union[Record, str, None]:
    """The record value of a record term of constants in a fact (None, with an error, if none);
    a recursive record's is its encoding."""
    expanded = expand_branch(term, type_, where, branches, errors, pattern=False)
    if expanded is None:
        return None
    term, type_ = expanded
    if not _fits_arity(term, type_, errors, where):
        return None
    values: list = []
    for arg, (name, field_type) in zip(term.args, fields(type_, term), strict=True):
        if is_nil(arg) and _is_recursive_record(field_type):
            values.append(NIL)
        elif is_nil(arg) and _is_plain_record(field_type):
            values.append(nil_record(field_type))
        elif isinstance(arg, ast.Constant) and arg.type == field_type:  # a default (_default)
            values.append(arg.value)
        elif isinstance(arg, ast.RecordTerm):
            value = _constant(arg, field_type, errors, f"field '{name}'", branches)
            if value is None:
                return None
            values.append(value)
        elif isinstance(arg, ast.Constant) and arg.type not in _HOLDS.get(field_type, ()):
            errors.append(_error(f"field '{name}' of {type_text(type_)} cannot hold {arg} ({arg.type})", arg))
            return None
        elif isinstance(arg, ast.Constant):
            values.append(float(arg.value) if field_type == "double" and arg.type == "long" else arg.value)
        else:
            errors.append(_error(f"a fact's record may hold only constants, not {arg}", arg))
            return None
    return encode(values, type_ or "") if is_recursive(type_) else Record(values)


# The literal types a field of each primitive type holds
_HOLDS = {
    "int": ("long",),
    "long": ("long",),
    "double": ("long", "double"),
    "string": ("string",),
    "bool": ("bool",),
}


def _fits_arity(term: ast.RecordTerm, type_: Optional[str], errors: list, where: str) -> bool:
    """Whether ``type_`` is a record type with as many fields as ``term`` (else an error)."""
    if (adt_branches(type_) or recursive_branches(type_)) and term.branch != _EXPANDED:
        errors.append(
            _error(f"record term {term} needs a record type, but {where} is {type_text(type_)}", term)
        )
        return False
    if not is_record(type_) and not is_recursive(type_):
        shown = f"is {type_text(type_)}" if type_ else "has no declared type"
        errors.append(_error(f"record term {term} needs a record type, but {where} {shown}", term))
        return False
    if len(fields(type_, term)) != len(term.args):
        errors.append(
            _error(f"record term {term} has {len(term.args)} fields, but {where} is {type_text(type_)}", term)
        )
        return False
    return True


# The ``branch`` of the record term an ADT's term is expanded into (see :func:`expand_branch`)
_EXPANDED = "$"


def expand_branch(
    term, type_: Optional[str], where: str, branches: dict, errors: list, pattern: bool
) -> Optional[tuple[Any, Optional[str]]]:
    """An ADT's term ``$Circle(R)`` as the record term of its ADT's struct, and that type
    (``term`` and ``type_`` themselves if ``term`` is none; None, with an error, if it is wrong).

    The struct holds the branch's index and the branch's fields; those of the other branches
    hold their defaults, or are ``_`` in a ``pattern``.
    """
    if not isinstance(term, ast.RecordTerm) or term.branch in ("", _EXPANDED):
        return term, type_
    adt = branches.get(term.branch)
    if adt is None:
        known = ", ".join(f"${b}" for b in sorted(branches)) or "none is declared"
        errors.append(_error(f"unknown branch '${term.branch}' (branches: {known})", term))
        return None
    if type_ is not None and type_ != adt:
        errors.append(_error(f"{term} is of type {type_text(adt)}, but {where} is {type_text(type_)}", term))
        return None
    if recursive_branches(adt) is not None:
        return _expand_recursive(term, adt, errors)
    name, tagged = adt_branches(adt)  # type: ignore[misc]
    index = [branch for branch, _ in tagged].index(term.branch)
    struct = tagged[index][1]
    arity = len(fields(struct))
    if len(term.args) != arity:
        message = f"{term} has {len(term.args)} fields, but branch '{term.branch}' of {name} has {arity}"
        errors.append(_error(message, term))
        return None
    args: list = [ast.Constant(index, "long", span=term.span)]
    for branch, other in tagged:
        if branch == term.branch and other is not None:
            args.append(ast.RecordTerm(term.args, span=term.span))
        elif other is not None:
            args.append(
                ast.Variable("_", span=term.span, anonymous=True) if pattern else _default(other, term.span)
            )
    return ast.RecordTerm(tuple(args), span=term.span, branch=_EXPANDED), adt


def _expand_recursive(term: ast.RecordTerm, adt: str, errors: list) -> Optional[tuple]:
    """A recursive ADT's term ``$Add(L, R)`` as the record term of its encoding: the branch's
    index, then its fields (see :mod:`spark_datalog.recursive_records`)."""
    tagged = recursive_branches(adt) or ()
    index = [branch for branch, _ in tagged].index(term.branch)
    if len(term.args) != len(tagged[index][1]):
        message = (
            f"{term} has {len(term.args)} fields, but branch '{term.branch}' of {type_text(adt)} "
            f"has {len(tagged[index][1])}"
        )
        errors.append(_error(message, term))
        return None
    args = (ast.Constant(index, "long", span=term.span), *term.args)
    return ast.RecordTerm(args, span=term.span, branch=_EXPANDED), adt


def _default(type_: str, span: ast.Span):
    """The term of a type's default value (:func:`~spark_datalog.record_types.default_value`)."""
    if is_record(type_):
        branch = _EXPANDED if adt_branches(type_) else ""
        return ast.RecordTerm(tuple(_default(t, span) for _, t in fields(type_)), span=span, branch=branch)
    if is_recursive(type_):
        return ast.Constant(NIL, type_, span=span)
    value = default_value(type_)
    kind = {bool: "bool", float: "double", str: "string"}.get(type(value), "long")
    return ast.Constant(value, kind, span=span)  # type: ignore[arg-type]


class _Rule:
    """One rule's record terms lowered; errors are appended to ``errors``."""

    def __init__(self, columns: dict, errors: list, branches: dict):
        self.columns = columns
        self.errors = errors
        self.branches = branches
        self.fresh = 0
        self.types: dict = {}  # variable -> its record type (from atoms and patterns)
        self.bound: set = set()  # variables bound by positive atoms or patterns

    def lower(self, rule: ast.Rule) -> ast.Rule:
        if not any(_has_record(lit) for lit in (rule.head, *rule.body)):
            return rule
        self._learn(rule)
        body: list = []
        for literal in rule.body:
            body.extend(self._literal(literal))
        head = self._atom(rule.head)
        return replace(rule, head=head, body=tuple(body))

    def _learn(self, rule: ast.Rule) -> None:
        """The record types and bound variables the rule's atoms give, and those of the fields
        of the records they bind that ``R = [X, Y]`` destructures (``X`` too, in any order)."""
        for literal in (rule.head, *rule.body):
            atom = literal.atom if isinstance(literal, ast.Negation) else literal
            if not isinstance(atom, ast.Atom):
                continue
            for position, arg in enumerate(atom.args):
                type_ = _column_type(self.columns, atom, position)
                self._learn_term(arg, type_)
                if isinstance(arg, ast.Variable) and literal is not rule.head and atom is literal:
                    self.bound.add(arg.name)
        pending = [pair for lit in rule.body if (pair := _destructuring(lit)) is not None]
        while learnt := [(v, t) for v, t in pending if v.name in self.bound and v.name in self.types]:
            for variable, term in learnt:
                pending.remove((variable, term))
                self._learn_term(term, self.types[variable.name])
                self.bound.update(v.name for v in _variables(term.args) if not v.anonymous)

    def _learn_term(self, term, type_: Optional[str]) -> None:
        """The record types of the variables of ``term``, of type ``type_``, and of its fields."""
        if isinstance(term, ast.Variable) and (is_record(type_) or is_recursive(type_)):
            self.types.setdefault(term.name, type_)
        if (
            isinstance(term, ast.RecordTerm)
            and not term.branch
            and len(term.args) == len(fields(type_, term))
        ):
            for arg, (_, field_type) in zip(term.args, fields(type_), strict=True):
                self._learn_term(arg, field_type)

    def _literal(self, literal) -> list:
        if isinstance(literal, ast.Atom):
            return self._pattern_atom(literal)
        if isinstance(literal, ast.Negation):
            return [replace(literal, atom=self._atom(literal.atom))]
        if isinstance(literal, ast.Comparison):
            return self._comparison(literal)
        return [literal]

    def _atom(self, atom: ast.Atom) -> ast.Atom:
        """``atom`` with every record term a construction (a head, a negated atom)."""
        args = tuple(
            self.construct(arg, _column_type(self.columns, atom, i), self._where(atom, i))
            for i, arg in enumerate(atom.args)
        )
        return replace(atom, args=args)

    def _where(self, atom: ast.Atom, position: int) -> str:
        return f"column {position + 1} of '{atom.predicate}'"

    def _pattern_atom(self, atom: ast.Atom) -> list:
        args, after = [], []
        for position, arg in enumerate(atom.args):
            if isinstance(arg, ast.RecordTerm):
                type_ = _column_type(self.columns, atom, position)
                where = self._where(atom, position)
                expanded = self._expand(arg, type_, where, pattern=True)
                if expanded is not None and _fits_arity(*expanded, self.errors, where):
                    arg, type_ = expanded
                    assert type_ is not None  # a record type: _fits_arity
                    variable = self._variable(arg, type_)
                    after.extend(self.destructure(variable, arg, type_))
                    arg = variable
            else:
                arg = self.construct(
                    arg, _column_type(self.columns, atom, position), self._where(atom, position)
                )
            args.append(arg)
        return [replace(atom, args=tuple(args)), *after]

    def _variable(self, term, type_: str) -> ast.Variable:
        self.fresh += 1
        variable = ast.Variable(f"_record{self.fresh}_", span=term.span)
        self.types[variable.name] = type_
        self.bound.add(variable.name)
        return variable

    def destructure(
        self, variable: ast.Variable, term: ast.RecordTerm, type_: str, may_be_nil: bool = True
    ) -> list:
        """The literals that match the record ``variable`` holds against the pattern ``term``
        (``may_be_nil``: unless it is an ADT's branch struct, which is never nil)."""
        out: list = []
        reader = "field@" if is_recursive(type_) else "field"
        if _is_recursive_record(type_):  # a field of nil is undefined: the literal fails (the guard says so)
            out.append(
                ast.Comparison("!=", variable, ast.Constant(NIL, type_, span=term.span), span=term.span)
            )
        for position, (arg, (name, field_type)) in enumerate(
            zip(term.args, fields(type_, term), strict=True)
        ):
            read = ast.Call(f"{reader}:{position}:{name}", (variable,), span=term.span, type=field_type)
            if isinstance(arg, ast.RecordTerm):
                expanded = self._expand(arg, field_type, f"field '{name}'", pattern=True)
                if expanded is not None and _fits_arity(*expanded, self.errors, f"field '{name}'"):
                    arg, inner_type = expanded
                    assert inner_type is not None  # a record type: _fits_arity
                    inner = self._variable(arg, inner_type)
                    out.append(ast.Comparison("=", inner, read, span=arg.span))
                    out.extend(self.destructure(inner, arg, inner_type, adt_branches(type_) is None))
            elif isinstance(arg, ast.Variable) and arg.anonymous:
                continue
            elif isinstance(arg, ast.Variable):
                out.append(ast.Comparison("=", arg, read, span=arg.span))
            else:
                out.append(ast.Comparison("=", read, self.construct(arg, field_type, ""), span=term.span))
        if not out and may_be_nil:  # no field read (undefined for nil) tells nil from a record: [_, _]
            nil = ast.Constant(nil_record(type_), type_, span=term.span)  # type: ignore[arg-type]
            out.append(ast.Comparison("!=", variable, nil, span=term.span))
        return out

    def _comparison(self, literal: ast.Comparison) -> list:
        left, right = literal.left, literal.right
        if is_nil(left) or is_nil(right):
            other = right if is_nil(left) else left
            where = f"the other side of '{literal.op}'"
            type_ = self._type_of(other) or getattr(other, "type", None)
            return [
                replace(
                    literal,
                    left=self.construct(left, type_, where),
                    right=self.construct(right, type_, where),
                )
            ]
        if isinstance(left, ast.RecordTerm) and not isinstance(right, ast.RecordTerm):
            left, right = right, left
        if isinstance(right, ast.RecordTerm):
            type_ = self._type_of(left) or self.branches.get(right.branch)
            where = f"the other side of '{literal.op}'"
            if type_ is None:
                self.errors.append(
                    _error(
                        f"the record type of {right} is not known: compare it with a variable of one", right
                    )
                )
                return [literal]
            if literal.op == "=" and isinstance(left, ast.Variable) and left.name in self.bound:
                expanded = self._expand(right, type_, where, pattern=True)
                if expanded is None or not _fits_arity(*expanded, self.errors, where):
                    return [literal]
                return self.destructure(left, *expanded)
            return [
                replace(
                    literal,
                    left=self.construct(left, type_, where),
                    right=self.construct(right, type_, where),
                )
            ]
        return [replace(literal, left=self.construct(left, None, ""), right=self.construct(right, None, ""))]

    def _expand(
        self, term, type_: Optional[str], where: str, pattern: bool
    ) -> Optional[tuple[Any, Optional[str]]]:
        return expand_branch(term, type_, where, self.branches, self.errors, pattern)

    def _type_of(self, term) -> Optional[str]:
        if isinstance(term, ast.Variable):
            return self.types.get(term.name)
        return None

    def construct(self, term, type_: Optional[str], where: str):
        """``term`` with its record terms made ``record`` calls of their types."""
        if is_nil(term):
            return _nil(term, type_, self.errors, where)
        expanded = self._expand(term, type_, where, pattern=False)
        if expanded is None:
            return term
        term, type_ = expanded
        if isinstance(term, ast.RecordTerm):
            if not _fits_arity(term, type_, self.errors, where):
                return term
            args = tuple(
                _nested(self.construct(arg, field_type, f"field '{name}'"), field_type, type_)
                for arg, (name, field_type) in zip(term.args, fields(type_, term), strict=True)
            )
            return ast.Call("record", args, span=term.span, type=type_)
        if isinstance(term, ast.Call):
            return replace(
                term, args=tuple(self.construct(a, None, f"an argument of '{term.name}'") for a in term.args)
            )
        if isinstance(term, ast.BinaryOp):
            where = f"an operand of '{term.op}'"
            return replace(
                term,
                left=self.construct(term.left, None, where),
                right=self.construct(term.right, None, where),
            )
        return term


def _nested(arg, field_type: str, type_: Optional[str]):
    """``arg`` as a field of a record of ``type_``: a record field of a recursive type's is the
    nested text ``text@:<type>(arg)`` (see :mod:`spark_datalog.recursive_records`)."""
    if is_recursive(type_) and (is_record(field_type) or field_type == "double"):
        return ast.Call(f"text@:{field_type}", (arg,), span=getattr(arg, "span", ast.NO_SPAN))
    return arg


def _destructuring(literal) -> Optional[tuple]:
    """``(R, [X, Y])`` of a comparison ``R = [X, Y]`` (or ``[X, Y] = R``), else None."""
    if not isinstance(literal, ast.Comparison) or literal.op != "=":
        return None
    for variable, term in ((literal.left, literal.right), (literal.right, literal.left)):
        if isinstance(variable, ast.Variable) and isinstance(term, ast.RecordTerm) and not term.branch:
            return variable, term
    return None


def _has_record(literal) -> bool:
    return has_records(ast.Program(rules=(ast.Rule(ast.Atom("_", ()), (literal,)),)))
