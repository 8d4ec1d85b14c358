"""Soufflé's declared types checked in rules, and ``as(expr, Type)`` casts removed.

Lowering resolves every declared type to its value type (:mod:`.typedecls`), which is all the
engines see; the type names stay on the columns (``ColumnDecl.declared``) for this check, which
follows Soufflé's type system on the rules as lowered:

- ``.type A <: number`` is a subset of ``number``; two subtypes of one type (``A``, ``B <:
  number``) are different types: a variable read from a column of type ``A`` and one of type
  ``B`` (a join), a comparison of an ``A`` with a ``B``, an ``A`` written into a ``B`` column are
  each a :class:`~spark_datalog.errors.SchemaError` at the term, naming both types;
- a subtype goes wherever its base type is expected (an ``A`` into a ``number`` column), and a
  variable read from an ``A`` column and a ``number`` column is an ``A``; a variable of the base
  type does not go into an ``A`` column (write ``as(x, A)``);
- ``.type T = U`` is the same type as ``U``; a union ``.type U = A | B`` holds its members;
- a constant and a computed value are of every subtype of their kind (``1`` and ``x + 1`` go into
  any number type, ``"a"`` and ``cat(x, y)`` into any symbol type: Soufflé constrains a functor's
  result only to a subtype of its kind); a variable read only from relations without declared
  types (the auxiliary relations lowering adds, relations without ``.decl``) has no type to check.

``as(expr, T)`` gives ``expr`` the type ``T`` without changing its value: the cast is removed
here, the engines compute ``expr``. A cast between kinds (``as(X, symbol)`` of a number) would
reinterpret the value's bits, meaningless here: it is a ``SchemaError`` naming the functor that
converts (``to_string``, ``to_number``, ``itof``, ...).

Example::

    >>> from spark_datalog.errors import SchemaError
    >>> from spark_datalog.syntax.parser import parse
    >>> text = ".type A <: number .type B <: number .decl a(x: A) .decl b(x: B) .decl c(x: A)\\n"
    >>> try:
    ...     parse(text + "c(X) :- a(X), b(X).")
    ... except SchemaError as error:
    ...     print(error.line, error.column, str(error).splitlines()[0].split(": ")[2])
    2 17 type mismatch for variable X
    >>> print(parse(text + "c(as(Y + 1, A)) :- a(X), Y = X.").rules[0])
    c((Y + 1)) :- a(X), Y = X.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

from .. import functors
from ..errors import DatalogError, SchemaError
from . import ast

# The root type of each value type, by Soufflé's name (``unsigned`` is a number here)
ROOTS = {"int": "number", "long": "number", "double": "float", "string": "symbol", "bool": "bool"}
# The functor that converts a value of one root type to another
_CONVERSIONS = {
    ("number", "symbol"): "to_string",
    ("symbol", "number"): "to_number",
    ("number", "float"): "itof",
    ("float", "number"): "ftoi",
    ("symbol", "float"): "to_float",
    ("float", "symbol"): "to_string",
}


def check_types(program: ast.Program) -> tuple[ast.Program, list[DatalogError]]:
    """``program`` without casts, and the type errors of its rules (see the module's docstring)."""
    lattice = Lattice(program.types)
    columns = {
        d.name: tuple((c.name, lattice.column_type(c)) for c in d.columns) for d in program.declarations
    }
    errors: list[DatalogError] = []
    rules = []
    for rule in program.rules:
        errors += _RuleCheck(lattice, columns).errors(rule)
        rules.append(_without_casts(rule))
    return replace(program, rules=tuple(rules)), errors


def has_casts_or_types(program: ast.Program) -> bool:
    """Whether ``program`` declares types or has a cast (else :func:`check_types` has nothing to do)."""
    return bool(program.types) or any(_casts(_terms(rule)) for rule in program.rules)


class Lattice:
    """Declared types ordered by inclusion. A static type is a frozenset of type names (their
    union); ``number``, ``float``, ``symbol`` and ``bool`` are the roots."""

    def __init__(self, types: tuple):
        self.declared = {t.name: t for t in types}
        self.parents: dict = {root: set() for root in ROOTS.values()}
        for declared in types:
            name = self.canonical(declared.name)
            if declared.kind == "equivalent" or name is None:
                continue
            bases = [self.canonical(b) for b in declared.bases]
            if declared.kind == "subtype":
                self.parents.setdefault(name, set()).update(b for b in bases if b)
            else:  # a union: above its members
                self.parents.setdefault(name, set())
                for base in filter(None, bases):
                    self.parents.setdefault(base, set()).add(name)
        for name, parents in self.parents.items():  # a union is below its members' root
            if not parents and name not in ROOTS.values():
                parents.update(filter(None, [self._root_of(name, set())]))
        self._ancestors: dict = {}

    def canonical(self, name: str) -> Optional[str]:
        """The type ``name`` is (equivalences followed, built-ins by root); None if unknown."""
        seen: set = set()
        while True:
            name = ast.TYPE_ALIASES.get(name, name)
            if name in ROOTS:
                return ROOTS[name]
            declared = self.declared.get(name)
            if declared is None or name in seen:
                return None
            if declared.kind != "equivalent":
                return name
            seen.add(name)
            name = declared.bases[0]

    def column_type(self, column: ast.ColumnDecl) -> Optional[frozenset]:
        if column.declared is None:
            return None
        name = self.canonical(column.declared)
        return None if name is None else frozenset((name,))

    def ancestors(self, name: str) -> frozenset:
        """``name`` and every type that includes it."""
        found = self._ancestors.get(name)
        if found is None:
            seen, stack = {name}, [name]
            while stack:
                for parent in self.parents.get(stack.pop(), ()):
                    if parent not in seen:
                        seen.add(parent)
                        stack.append(parent)
            found = self._ancestors[name] = frozenset(seen)
        return found

    def root(self, types: frozenset) -> Optional[str]:
        """The root (``number``, ``symbol``, ...) of a static type; None if unknown."""
        return next(filter(None, (self._root_of(name, set()) for name in types)), None)

    def _root_of(self, name: str, seen: set) -> Optional[str]:
        name = ast.TYPE_ALIASES.get(name, name)
        if name in ROOTS or name in ROOTS.values():
            return ROOTS.get(name, name)
        declared = self.declared.get(name)
        if declared is None or name in seen or not declared.bases:  # an ADT has no root
            return None
        seen.add(name)
        return self._root_of(declared.bases[0], seen)

    def leq(self, sub: frozenset, sup: frozenset) -> bool:
        """Whether every value of ``sub`` is of type ``sup``."""
        return all(self.ancestors(s) & sup for s in sub)

    def meet(self, one: frozenset, other: frozenset) -> frozenset:
        """The values of both types (empty: the types are different)."""
        if self.leq(one, other):
            return one
        if self.leq(other, one):
            return other
        both = {
            n for n in self.parents if self.leq(frozenset((n,)), one) and self.leq(frozenset((n,)), other)
        }
        return frozenset(n for n in both if not any(m != n and m in self.ancestors(n) for m in both))


def show(types: frozenset) -> str:
    return " | ".join(sorted(types))


class _RuleCheck:
    """The type of each variable of one rule, from the declared columns it is read from."""

    def __init__(self, lattice: Lattice, columns: dict):
        self.lattice, self.columns = lattice, columns
        self.env: dict = {}  # variable name -> (static type, where it comes from)
        self.found: list[DatalogError] = []

    def errors(self, rule: ast.Rule) -> list[DatalogError]:
        for literal in rule.body:
            if type(literal) is ast.Atom:
                self._read(literal)
        comparisons = [lit for lit in rule.body if type(lit) is ast.Comparison]
        for _ in range(2):  # `Y = X, Z = Y`: each pass binds what the one before made known
            for comparison in comparisons:
                self._bind(comparison)
        for comparison in comparisons:
            self._compare(comparison)
        for literal in rule.body:
            if type(literal) is ast.Negation:
                self._write(literal.atom)
        self._write(rule.head)
        self._casts(rule)
        return self.found

    def _error(self, message: str, span: ast.Span) -> None:
        self.found.append(SchemaError(message, span.line or None, span.column or None))

    def term_type(self, term) -> Optional[frozenset]:
        """The static type of a term (None: no type to check)."""
        kind = type(term)
        if kind is ast.Variable:
            return None if term.anonymous else self.env.get(term.name, (None,))[0]
        if kind is ast.Aggregate:
            return self.term_type(term.variable) if term.func in ("min", "max") else None
        if kind is ast.Call and term.name == ast.CAST:
            name = self.lattice.canonical(term.args[1].value)
            return None if name is None else frozenset((name,))
        return None  # a constant or a computed value: of every subtype of its kind

    def _result_root(self, term) -> Optional[str]:
        """A computed value's kind: the functor's result, or its operands' root."""
        result = "operands"
        if type(term) is ast.Call:
            entry: Any = term.functor or functors.FUNCTORS.get(term.name)  # None: an undeclared @f
            if entry is None:
                return None
            result = entry.result
        if result != "operands":
            return ROOTS.get(result)
        args = term.args if type(term) is ast.Call else (term.left, term.right)
        return next((root for root in map(self._root, args) if root is not None), None)

    def _root(self, term) -> Optional[str]:
        if type(term) is ast.Constant:
            return ROOTS.get(term.type)
        if type(term) in ast.OPERATIONS and not (type(term) is ast.Call and term.name == ast.CAST):
            return self._result_root(term)
        known = self.term_type(term)
        return None if known is None else self.lattice.root(known)

    def _read(self, atom: ast.Atom) -> None:
        """A positive atom: each variable's type is narrowed to its column's."""
        for position, arg in enumerate(atom.args):
            name, column = self._column(atom.predicate, position)
            if column is None:
                continue
            origin = f"column '{name}' of relation '{atom.predicate}'"
            if type(arg) is ast.Variable and not arg.anonymous:
                self._narrow(arg, column, origin)
            else:
                given = self.term_type(arg)
                if given is not None and not self.lattice.meet(given, column):
                    self._error(self._given(atom.predicate, position, column, arg, given), _span(arg))

    def _narrow(self, variable: ast.Variable, column: frozenset, origin: str) -> None:
        known = self.env.get(variable.name)
        if known is None:
            self.env[variable.name] = (column, origin)
            return
        both = self.lattice.meet(known[0], column)
        if both:
            self.env[variable.name] = (both, origin if both == column else known[1])
            return
        self._error(
            f"type mismatch for variable {variable}: {show(column)} ({origin}) vs {show(known[0])} "
            f"({known[1]}): values of different types cannot be mixed",
            variable.span,
        )

    def _bind(self, comparison: ast.Comparison) -> None:
        """``X = term`` where X has no type yet: X gets the term's."""
        if comparison.op != "=":
            return
        for variable, other in ((comparison.left, comparison.right), (comparison.right, comparison.left)):
            if type(variable) is ast.Variable and not variable.anonymous and variable.name not in self.env:
                given = self.term_type(other)
                if given is not None:
                    self.env[variable.name] = (given, f"{other} at {_where(other)}")

    def _compare(self, comparison: ast.Comparison) -> None:
        left, right = self.term_type(comparison.left), self.term_type(comparison.right)
        if left is None or right is None or self.lattice.meet(left, right):
            return
        self._error(
            f"'{comparison}' compares {comparison.left} of type {show(left)} with "
            f"{comparison.right} of type {show(right)}: values of different types cannot be compared",
            comparison.span if comparison.span.line else _span(comparison.left),
        )

    def _write(self, atom: ast.Atom) -> None:
        """A head or negated atom: each term's type must be included in its column's."""
        for position, arg in enumerate(atom.args):
            column = self._column(atom.predicate, position)[1]
            given = None if column is None else self.term_type(arg)
            if given is not None and not self.lattice.leq(given, column):
                self._error(self._given(atom.predicate, position, column, arg, given), _span(arg))

    def _given(self, relation: str, position: int, column: frozenset, arg, given: frozenset) -> str:
        name = self._column(relation, position)[0]
        return (
            f"column '{name}' of relation '{relation}' has type {show(column)} but is given {arg} "
            f"of type {show(given)}"
        )

    def _column(self, relation: str, position: int) -> tuple:
        """(name, static type) of a column; the type None when it has none to check."""
        columns = self.columns.get(relation, ())
        return columns[position] if position < len(columns) else (None, None)

    def _casts(self, rule: ast.Rule) -> None:
        """Each cast's type is known and of its expression's kind."""
        for cast in _casts(_terms(rule)):
            expr, type_name = cast.args
            target = self.lattice.canonical(type_name.value)
            if target is None:
                self._error(f"unknown type '{type_name.value}' in {cast}", type_name.span)
                continue
            have, want = self._root(expr), self.lattice.root(frozenset((target,)))
            if have is not None and want is not None and have != want:
                convert = _CONVERSIONS.get((have, want))
                how = f"; convert it with {convert}" if convert else ""
                kind = f" ({want})" if want != type_name.value else ""
                self._error(
                    f"{cast} gives a {have} value the type {type_name.value}{kind}: 'as' changes "
                    f"the type, not the value{how}",
                    cast.span,
                )


def _terms(rule: ast.Rule) -> list:
    """Every top-level term of ``rule``: head and atom arguments, comparison sides."""
    terms = list(rule.head.args)
    for literal in rule.body:
        if type(literal) is ast.Atom:
            terms += literal.args
        elif type(literal) is ast.Negation:
            terms += literal.atom.args
        elif type(literal) is ast.Comparison:
            terms += (literal.left, literal.right)
    return terms


def _casts(terms: list) -> list:
    """The casts in ``terms``, nested ones included."""
    found, stack = [], list(terms)
    while stack:
        term = stack.pop()
        if type(term) is ast.Call:
            if term.name == ast.CAST:
                found.append(term)
                stack.append(term.args[0])
            else:
                stack.extend(term.args)
        elif type(term) is ast.BinaryOp:
            stack.extend((term.left, term.right))
    return found


def _without_casts(rule: ast.Rule) -> ast.Rule:
    if not _casts(_terms(rule)):
        return rule

    def term(node):
        if type(node) is ast.Call:
            if node.name == ast.CAST:
                return term(node.args[0])
            return replace(node, args=tuple(term(a) for a in node.args))
        if type(node) is ast.BinaryOp:
            return replace(node, left=term(node.left), right=term(node.right))
        return node

    def literal(node):
        if type(node) is ast.Atom:
            return replace(node, args=tuple(term(a) for a in node.args))
        if type(node) is ast.Negation:
            return replace(node, atom=literal(node.atom))
        if type(node) is ast.Comparison:
            return replace(node, left=term(node.left), right=term(node.right))
        return node

    return replace(rule, head=literal(rule.head), body=tuple(literal(lit) for lit in rule.body))


def _span(term) -> ast.Span:
    span = getattr(term, "span", ast.NO_SPAN)
    if span.line or type(term) is not ast.BinaryOp:
        return span
    return _span(term.left)


def _where(term) -> str:
    span = _span(term)
    return f"{span.line}:{span.column}"
