"""The magic-set rewrite: a program that derives only what one query needs.

Each derived relation the query reaches is *adorned* with the pattern of its bound (``b``) and
free (``f``) arguments, e.g. ``tc_bf`` for ``tc(1, X)``. An adorned relation's rules keep their
body, read in sideways-information-passing order (:mod:`.sips`), and gain a first atom over a
*magic* relation holding the bindings asked for: ``tc_bf(X, Z) :- magic_tc_bf(X), ...``. For every
derived atom of a body, a magic rule passes the bindings known just before it on:
``magic_tc_bf(Y) :- magic_tc_bf(X), arc(X, Y).`` The query itself seeds the magic relations with
its constants (``magic_tc_bf(1).``). A body prefix that joins several atoms before a derived
one is kept in a *supplementary* relation that both rules read, rather than joined twice.

Soundness with the rest of the language:

- A negated atom only tests facts whose arguments are all known, so it is adorned like a
  positive one: its adorned relation holds exactly the facts asked for. The aggregated
  position of a relation is never bound (the aggregate is known only over the whole group).
- A relation with a rule calling ``autoinc()`` is computed in full, by its own rules, with
  everything they read: its numbers depend on all of its rules' bindings. So is a relation
  with a greedy ``choice-domain``: what it keeps depends on all of its candidates.
- The rewritten program is checked like any program. Magic relations can close a cycle
  through negation or an aggregate; then the rewrite is tried again with the relations under
  negation computed in full, by their own rules (a lower stratum, which cannot depend on the
  adorned relations), then also with aggregate relations computed in full; where that is not
  stratified either, the query is answered by full evaluation, with the reason.

Example::

    >>> import spark_datalog as sd
    >>> p = sd.Program.parse(".input arc. tc(X, Y) :- arc(X, Y). tc(X, Z) :- tc(X, Y), arc(Y, Z).")
    >>> print("\\n".join(map(str, rewrite(p.checked, query_rule(p.checked, "tc(1, X)")).rules)))
    ... # doctest: +SKIP
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace
from typing import Optional

from ..analysis.checked import CheckedProgram, RelationSchema
from ..syntax import ast
from ..syntax.autoinc import has_autoinc
from .factoring import factor
from .sips import binds, is_bound, sips_order


class NotRewritable(Exception):
    """The magic-set rewrite does not apply; ``str(exc)`` says why."""


@dataclass
class _Names:
    """Fresh relation names, unique in the program: ``tc_bf``, ``magic_tc_bf``, ``tc_stated``."""

    taken: set
    given: dict = field(default_factory=dict)

    def name(self, key: tuple, base: str) -> str:
        if key not in self.given:
            candidate, n = base, 1
            while candidate in self.taken:
                n += 1
                candidate = f"{base}_{n}"
            self.taken.add(candidate)
            self.given[key] = candidate
        return self.given[key]


@dataclass
class _Rewrite:
    """One rewrite in progress: the adorned relations asked for and the output built so far."""

    checked: CheckedProgram
    names: _Names
    todo: deque = field(default_factory=deque)
    rules: list = field(default_factory=list)
    facts: list = field(default_factory=list)
    declarations: dict = field(default_factory=dict)  # name -> ast.Declaration
    full: set = field(default_factory=set)  # relations computed in full (under negation)
    magic_of: dict = field(default_factory=dict)  # adorned name -> (its magic relation, pattern)
    adorn_negation: bool = True
    adorn_aggregates: bool = True
    caller: str = ""  # the adorned relation whose rule is being rewritten ("" for the query's)
    magic_sources: dict = field(default_factory=dict)  # magic relation -> callers feeding it

    # relations with a rule calling autoinc(), a greedy choice-domain, a subsumption each
    # round applies, or a .limitsize: never adorned
    numbered: set = field(default_factory=set)

    def in_full(self, relation: str) -> bool:
        """True when ``relation`` is read as computed in full, not adorned: a relation with a
        rule calling ``autoinc()`` (its numbers depend on all its rule's bindings), a greedy
        ``choice-domain``, a subsumption in recursion or a ``.limitsize`` (what it keeps depends
        on all its candidates) always."""
        if relation in self.numbered:
            return True
        return not self.adorn_aggregates and self.checked.relations[relation].aggregate is not None

    def adorned(self, relation: str, pattern: str) -> str:
        key = ("adorned", relation, pattern)
        if key not in self.names.given:
            name = self.names.name(key, f"{relation}_{pattern}")
            self.declare(name, self.checked.relations[relation].columns)
            self.magic_of[name] = (self.magic(relation, pattern), pattern)
            self.todo.append((relation, pattern))
        return self.names.given[key]

    def magic(self, relation: str, pattern: str) -> str:
        key = ("magic", relation, pattern)
        if key not in self.names.given:
            name = self.names.name(key, f"magic_{relation}_{pattern}")
            columns = self.checked.relations[relation].columns
            self.declare(name, [c for c, p in zip(columns, pattern, strict=True) if p == "b"])
        return self.names.given[key]

    def declare(self, name: str, columns) -> None:
        decls = tuple(ast.ColumnDecl(c.name, c.type) for c in columns)
        self.declarations[name] = ast.Declaration(name, decls)


def rewrite(
    checked: CheckedProgram, answer: str, adorn_negation: bool = True, adorn_aggregates: bool = True
) -> ast.Program:
    """The magic-set program for the rule(s) of relation ``answer`` (the query's answer rule,
    see :func:`.text.checked_query`), whose only output is ``answer``. A negated atom is
    adorned like a positive one (its bindings are all known: it only tests) unless
    ``adorn_negation`` is false; then its relation is computed in full, as aggregate relations
    are without ``adorn_aggregates``. Raises :class:`NotRewritable` when the query reads no
    derived relation."""
    names = _Names(set(checked.relations))
    state = _Rewrite(checked, names, adorn_negation=adorn_negation, adorn_aggregates=adorn_aggregates)
    state.numbered = {rule.head.predicate for rule in checked.rules if has_autoinc(rule)}
    state.numbered |= set(checked.choices) | set(checked.subsumed) | set(checked.limits)
    for rule in _rules_of(checked, answer):
        state.rules.extend(_rewritten_rule(state, rule, None, ""))
    if not state.todo:
        raise NotRewritable("the query reads no derived relation")
    while state.todo:
        relation, pattern = state.todo.popleft()
        _rewrite_relation(state, relation, pattern)
    factor(state, answer)
    _add_full(state)
    return _program(state, answer)


def _rules_of(checked: CheckedProgram, relation: str) -> list:
    return [rule for rule in checked.rules if rule.head.predicate == relation]


def _rewrite_relation(state: _Rewrite, relation: str, pattern: str) -> None:
    guard = state.magic(relation, pattern)
    for rule in _rules_of(state.checked, relation):
        state.rules.extend(_rewritten_rule(state, rule, guard, pattern))
    facts = state.checked.facts.get(relation)
    if facts:
        state.rules.append(_stated_rule(state, relation, pattern, guard, facts))


def _rewritten_rule(state: _Rewrite, rule: ast.Rule, guard: Optional[str], pattern: str) -> list:
    """The adorned version of ``rule`` (head renamed, guarded by its magic atom) and one magic
    rule per derived atom of its body. ``guard`` is None for the query's own rule."""
    head_args, tests = _guard_arguments(rule, pattern)
    state.caller = state.adorned(rule.head.predicate, pattern) if guard else ""
    body: list = [ast.Atom(guard, head_args)] if guard else []
    bound = {a.name for a in head_args if isinstance(a, ast.Variable)}
    out: list = []
    order = sips_order(rule.body, bound, frozenset(state.checked.idb))
    for position, index in enumerate(order):
        literal = rule.body[index]
        if _is_adorned(state, literal):
            later = [rule.head, *tests, *(rule.body[i] for i in order[position:])]
            body = _supplemented(state, body, later, out)
        if isinstance(literal, ast.Atom) and literal.predicate in state.checked.idb:
            if state.in_full(literal.predicate):
                state.full.add(literal.predicate)
            else:
                literal = _adorned_atom(state, literal, bound, body, out)
        elif isinstance(literal, ast.Negation) and literal.atom.predicate in state.checked.idb:
            if state.adorn_negation and literal.atom.predicate not in state.numbered:
                literal = replace(literal, atom=_adorned_atom(state, literal.atom, bound, body, out))
            else:
                state.full.add(literal.atom.predicate)
        body.append(_as_written(literal))
        bound |= binds(literal, bound)
    if guard is None:
        out.append(_rule(rule.head, body + tests))
        return out
    head = replace(rule.head, predicate=state.adorned(rule.head.predicate, pattern))
    out.append(_rule(head, _unguarded(body, state.magic_of) + tests))
    return out


def _is_adorned(state: _Rewrite, literal) -> bool:
    """True when ``literal`` is read over an adorned relation (and so gets a magic rule)."""
    if isinstance(literal, ast.Negation):
        name = literal.atom.predicate
        return state.adorn_negation and name in state.checked.idb and name not in state.numbered
    if isinstance(literal, ast.Atom):
        return literal.predicate in state.checked.idb and not state.in_full(literal.predicate)
    return False


# A body prefix joining this many atoms (the guard included) is kept in a supplementary relation
# rather than joined twice, once for the magic rule and once for the rule itself.
SUPPLEMENTARY_ATOMS = 3


def _supplemented(state: _Rewrite, body: list, later: list, out: list) -> list:
    """``body`` itself, or, when it joins at least ``SUPPLEMENTARY_ATOMS`` atoms, one atom over a
    new supplementary relation holding its variables that ``later`` literals use (its rule is
    appended to ``out``): ``sup_1(X, Y) :- magic_p_bf(X), a(X, Z), b(Z, Y).``"""
    if sum(isinstance(lit, (ast.Atom, ast.Negation)) for lit in body) < SUPPLEMENTARY_ATOMS:
        return body
    used = {v.name for lit in later for v in ast.literal_variables(lit)}
    known = [v for lit in body for v in ast.literal_variables(lit) if not v.anonymous]
    kept = tuple(ast.Variable(name) for name in dict.fromkeys(v.name for v in known) if name in used)
    number = len([key for key in state.names.given if key[0] == "supplementary"]) + 1
    name = state.names.name(("supplementary", str(number), ""), f"sup_{number}")
    head = ast.Atom(name, kept)
    out.append(_rule(head, body))
    return [head]


def _unguarded(body: list, magic_of: dict) -> list:
    """``body`` without its guard (its first atom) when another atom implies it: an atom over
    an adorned relation whose magic relation is the guard's, reading the guard's arguments at
    its bound positions (every fact of an adorned relation passed its guard). So the
    recursive rule of ``tc(1, X)`` joins no magic relation: ``tc_bf(X, Z) :- tc_bf(X, Y), arc(Y, Z).``"""
    guard = body[0]
    for literal in body[1:]:
        if isinstance(literal, ast.Atom) and literal.predicate in magic_of:
            magic, pattern = magic_of[literal.predicate]
            passed = tuple(a for a, p in zip(literal.args, pattern, strict=True) if p == "b")
            if magic == guard.predicate and passed == guard.args:
                return body[1:]
    return body


def _adorned_atom(state: _Rewrite, atom: ast.Atom, bound: set, body: list, out: list) -> ast.Atom:
    """``atom`` over its adorned relation; appends the magic rule (or seed fact) that passes
    the bindings ``body`` has so far on to it."""
    schema = state.checked.relations[atom.predicate]
    pattern = _pattern(atom, bound, schema)
    name = state.adorned(atom.predicate, pattern)
    magic = state.magic(atom.predicate, pattern)
    passed = tuple(a for a, p in zip(atom.args, pattern, strict=True) if p == "b")
    magic_head = ast.Atom(magic, passed, atom.span)
    if tuple(body) == (magic_head,):  # `magic_p(X) :- magic_p(X).` says nothing
        return replace(atom, predicate=name)
    state.magic_sources.setdefault(magic, set()).add(state.caller)
    if body:
        out.append(_rule(magic_head, body))
    else:
        state.facts.append(ast.Fact(magic_head, atom.span))
    return replace(atom, predicate=name)


def _pattern(atom: ast.Atom, bound: set, schema: RelationSchema) -> str:
    """``b`` for each argument known from ``bound`` (a constant, a bound variable, an
    expression of bound variables), ``f`` otherwise and at an aggregated position."""
    aggregated = schema.aggregate.position if schema.aggregate else None
    return "".join("b" if i != aggregated and _passes(arg, bound) else "f" for i, arg in enumerate(atom.args))


def _passes(arg, bound: set) -> bool:
    if isinstance(arg, ast.Constant):
        return True
    if isinstance(arg, ast.OPERATIONS):  # an expression of bound variables (not a constant one)
        return bool(ast.term_variables(arg)) and is_bound(arg, bound)
    return is_bound(arg, bound)


def _guard_arguments(rule: ast.Rule, pattern: str) -> tuple:
    """(arguments of the magic atom guarding ``rule``, tests appended to its body): the head's
    arguments at bound positions; an expression there becomes a fresh variable tested equal to
    it once the body has bound its variables."""
    args: list = []
    tests: list = []
    taken = {v.name for v in ast.term_variables(rule.head)} | {
        v.name for lit in rule.body for v in ast.literal_variables(lit)
    }
    for arg, mark in zip(rule.head.args, pattern or "f" * len(rule.head.args), strict=True):
        if mark != "b":
            continue
        if isinstance(arg, (ast.Variable, ast.Constant)):
            args.append(arg)
            continue
        fresh = _fresh_variable(taken)
        args.append(fresh)
        tests.append(ast.Comparison("=", fresh, arg, arg.span))
    return tuple(args), tests


def _fresh_variable(taken: set) -> ast.Variable:
    n = 1
    while f"_M{n}" in taken:
        n += 1
    taken.add(f"_M{n}")
    return ast.Variable(f"_M{n}")


def _stated_rule(state: _Rewrite, relation: str, pattern: str, guard: str, facts) -> ast.Rule:
    """``p_bf(V0, V1) :- magic_p_bf(V0), p_stated(V0, V1).`` over the facts the program states
    for ``relation``, kept in an input relation of their own."""
    schema = state.checked.relations[relation]
    stated = state.names.name(("stated", relation, ""), f"{relation}_stated")
    if stated not in state.declarations:
        state.declare(stated, schema.columns)
        state.facts.extend(ast.Fact(ast.Atom(stated, tuple(map(_constant, row)))) for row in sorted(facts))
    variables = tuple(ast.Variable(f"V{i}") for i in range(schema.arity))
    passed = tuple(v for v, p in zip(variables, pattern, strict=True) if p == "b")
    head = ast.Atom(state.adorned(relation, pattern), variables)
    return _rule(head, [ast.Atom(guard, passed), ast.Atom(stated, variables)])


def _constant(value) -> ast.Constant:
    if isinstance(value, bool):
        return ast.Constant(value, "bool")
    if isinstance(value, int):
        return ast.Constant(value, "long")
    if isinstance(value, float):
        return ast.Constant(value, "double")
    return ast.Constant(value, "string")


def _add_full(state: _Rewrite) -> None:
    """The rules and facts of the relations read under negation, and of everything they read,
    under their own names."""
    todo = list(state.full)
    subsumed = {relation: names for relation, *names in state.checked.program.subsumed}
    while todo:
        relation = todo.pop()
        for name in subsumed.get(relation, ()):  # its subsumption's rules, which nothing reads
            if name not in state.full:
                state.full.add(name)
                todo.append(name)
        for rule in _rules_of(state.checked, relation):
            state.rules.append(_rule(rule.head, [_as_written(lit) for lit in rule.body]))
            for literal in rule.body:
                atom = literal.atom if isinstance(literal, ast.Negation) else literal
                name = atom.predicate if isinstance(atom, ast.Atom) else None
                if name in state.checked.idb and name not in state.full:
                    state.full.add(name)
                    todo.append(name)
        for row in sorted(state.checked.facts.get(relation, ())):
            state.facts.append(ast.Fact(ast.Atom(relation, tuple(map(_constant, row)))))


def _as_written(literal):
    """A normalised literal as a parser would produce it (assignments are ``=`` comparisons)."""
    if isinstance(literal, ast.Assignment):
        return ast.Comparison("=", literal.variable, literal.expr, literal.span)
    return literal


def _rule(head: ast.Atom, body) -> ast.Rule:
    rule = ast.Rule(head, tuple(body), head.span)
    return replace(rule, text=str(rule))


def _program(state: _Rewrite, answer: str) -> ast.Program:
    checked = state.checked
    declarations = [
        ast.Declaration(
            name,
            columns := tuple(ast.ColumnDecl(c.name, c.type) for c in checked.relations[name].columns),
            choice_domains=tuple(
                tuple(columns[i].name for i in key) for key in checked.choices.get(name, ())
            ),
        )
        for name in checked.relations
        if name in checked.edb or name in state.full
    ]
    declarations += state.declarations.values()
    directives = [d for d in checked.program.directives if d.kind == "input"]
    directives += [d for d in checked.program.directives if d.kind == "limitsize" and d.name in state.full]
    directives.append(ast.Directive("output", answer))
    edb_facts = [f for f in checked.program.facts if f.atom.predicate in checked.edb]
    return ast.Program(
        declarations=tuple(declarations),
        directives=tuple(directives),
        facts=tuple(edb_facts + state.facts),
        rules=tuple(state.rules),
        subsumed=tuple(names for names in checked.program.subsumed if names[0] in state.full),
    )
