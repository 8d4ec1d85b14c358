"""Soufflé's subsumption, lowered to a head ``min``/``max`` or to negation.

A subsumptive clause ``r(X, D1) <= r(X, D2) :- D2 < D1.`` removes every tuple of ``r`` that
another tuple of ``r`` dominates (a tuple never dominates itself). Two forms:

- **An order on one column**: both atoms repeat the same variables except in one column, and the
  body is one comparison of the two variables there (``D2 < D1``, ``D2 <= D1``, ``D1 > D2``,
  ...). What survives is, per value of the other columns, the least (or greatest) value: a head
  ``min``/``max`` on that column, in every rule of ``r``. That runs inside recursion too (every
  engine keeps only the best value per group in each round, as Soufflé deletes dominated tuples
  in each round), so shortest paths over cycles terminate::

      path(X, Y, D1) <= path(X, Y, D2) :- D2 <= D1.
      path(X, Y, D) :- e(X, Y, D).            becomes   path(X, Y, min<D>) :- e(X, Y, D).

- **Any other body**, for a relation outside recursion: the relation's rules and facts define
  ``<r>__candidates``, the dominated tuples ``<r>__dominated`` (one rule per clause and per
  column where the two atoms may differ), and ``r`` keeps the candidates that are not dominated::

      r__dominated(A, B) :- r__candidates(A, B), r__candidates(C, D), <body>, A != C.
      r__dominated(A, B) :- r__candidates(A, B), r__candidates(C, D), <body>, B != D.
      r(A, B) :- r__candidates(A, B), not r__dominated(A, B).

- **Any other body, in recursion**: each evaluation round applies the subsumption (the same
  semi-naive rounds on every engine). With ``R`` the facts of ``r`` before the round and ``N``
  the round's new candidates (derived tuples not in ``R``; the stated facts are candidates of
  the first round), ``U = R ∪ N``, ``D`` the tuples of ``U`` that another tuple of ``U``
  dominates, then ``r := U \\ D`` and the round's delta is ``N \\ D``. Facts derived earlier
  from a tuple removed later stay (as in Soufflé); a removed tuple derived again is a candidate
  again. ``D`` is what the rules of ``<r>__dominated`` derive over the pseudo relation
  ``<r>__all`` bound to ``U``; they are planned like every rule (``CheckedProgram.subsumed``,
  ``StratumPlan.subsumed``) and each engine runs them in every round of ``r``'s stratum::

      r__all(A, B) :- r(A, B).
      r__dominated(A, B) :- r__all(A, B), r__all(C, D), <body>, A != C.
      r__dominated(A, B) :- r__all(A, B), r__all(C, D), <body>, B != D.

  (``r__all``'s rule gives it ``r``'s types; over the final ``r`` it derives no dominated
  tuple.) Outside recursion this is the negation above with one round.

Soufflé's lattice qualifiers ``btree_max`` and ``btree_min`` on ``.decl r(..., c: T)`` keep,
per value of the other columns, the greatest (least) value of the last column: they are the
first form's clause ``r(X.., C1) <= r(X.., C2) :- C1 < C2.`` (``C2 < C1`` for ``btree_min``),
added by ``lattice_subsumptions``.

The body may read, negate and aggregate over other relations (analysis evaluates ``r`` after
them). ``r`` itself in the body stands for the tuples being decided on: ``r__candidates``
outside recursion (Soufflé deletes from ``r`` once its rules ran), ``r__all`` (the round's
``U``) in recursion; so ``m(X) <= m(Y) :- !s(X), m(Y).`` stratifies. Refused: reading a
relation that depends on ``r`` (its facts would come from the ``r`` being decided), and in
recursion an aggregate over ``r`` or one whose groups would come from the round's tuples.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Optional

from ..errors import DatalogError, ParseError
from . import ast
from .auxiliary import (
    dependencies,
    fresh_name,
    is_recursive,
    nodes,
    read_relations,
    relation_names,
    renamed_heads,
    renamed_reads,
)

_MIN_WHEN = {"<": "dominating", "<=": "dominating", ">": "dominated", ">=": "dominated"}
LATTICE_QUALIFIERS = ("btree_max", "btree_min")


def has_lattice_qualifier(program: ast.Program) -> bool:
    """Whether a relation of ``program`` is declared ``btree_max`` or ``btree_min``."""
    return any(q in LATTICE_QUALIFIERS for d in program.declarations for q in d.qualifiers)


def lattice_subsumptions(program: ast.Program) -> tuple[ast.Program, list[DatalogError]]:
    """``program`` with the subsumptive clause each ``btree_max``/``btree_min`` relation stands
    for (see the module's docstring).

    Example::

        >>> from spark_datalog.syntax.parser import parse
        >>> text = ".decl p(x: number, c: number) btree_max\\n.decl q(x: number, c: number)"
        >>> [str(rule) for rule in parse(text + "\\np(X, C) :- q(X, C).").rules]
        ['p(X, max<C>) :- q(X, C).']
    """
    clauses: list = []
    errors: list[DatalogError] = []
    for declaration in program.declarations:
        lattice = [q for q in declaration.qualifiers if q in LATTICE_QUALIFIERS]
        if not lattice:
            continue
        problem = _lattice_problem(declaration, lattice, program)
        if problem:
            errors.append(ParseError(problem, declaration.span.line, declaration.span.column))
        else:
            clauses.append(_lattice_clause(declaration, lattice[0]))
    return replace(program, subsumptions=program.subsumptions + tuple(clauses)), errors


def _lattice_problem(declaration: ast.Declaration, lattice: list, program: ast.Program) -> str:
    if len(lattice) > 1:
        return f"'{declaration.name}' has two lattice qualifiers ({', '.join(lattice)})"
    if not declaration.columns:
        return f"{lattice[0]} needs a column to keep the {lattice[0][-3:]} of ('{declaration.name}' has none)"
    if declaration.name in program.inputs:
        return f"{lattice[0]} on an .input relation is not supported yet ('{declaration.name}')"
    return ""


def _lattice_clause(declaration: ast.Declaration, qualifier: str) -> ast.Subsumption:
    """``r(X0.., C1) <= r(X0.., C2) :- C1 < C2.`` (``C2 < C1`` for ``btree_min``)."""
    span = declaration.span
    keys = tuple(ast.Variable(f"_lattice{i}", span) for i in range(len(declaration.columns) - 1))
    low, high = ast.Variable("_lattice_low", span), ast.Variable("_lattice_high", span)
    dominated, dominating = (low, high) if qualifier == "btree_max" else (high, low)
    clause = ast.Subsumption(
        ast.Atom(declaration.name, keys + (dominated,), span),
        ast.Atom(declaration.name, keys + (dominating,), span),
        (ast.Comparison("<", low, high, span),),
        span=span,
    )
    return replace(clause, text=str(clause))


def lower_subsumption(program: ast.Program) -> tuple[ast.Program, list[DatalogError]]:
    """``program`` without subsumptive clauses or lattice qualifiers (see the module's
    docstring)."""
    program, errors = lattice_subsumptions(program)
    by_relation: dict = defaultdict(list)
    for clause in program.subsumptions:
        problem = _problem(clause, program)
        if problem:
            errors.append(ParseError(problem, clause.span.line, clause.span.column))
        else:
            by_relation[clause.dominated.predicate].append(clause)
    program = replace(program, subsumptions=())
    taken = relation_names(program)
    for relation, clauses in by_relation.items():
        order = _column_order(clauses)
        if order is not None:
            program = _facts_as_rule(program, relation, taken)
            program, problems = _with_aggregate(program, relation, *order)
            errors += problems
        else:
            recursive = is_recursive(program, relation)
            refused = _rounds_problem(program, relation, clauses, recursive)
            if refused is not None:
                errors.append(ParseError(refused[0], refused[1].line, refused[1].column))
            elif recursive:
                program = _with_rounds(program, relation, clauses, taken)
            else:
                program = _with_negation(program, relation, clauses, taken)
    return program, errors


def _problem(clause: ast.Subsumption, program: ast.Program) -> str:
    dominated, dominating = clause.dominated, clause.dominating
    if dominated.predicate != dominating.predicate:
        return (
            f"both atoms of a subsumptive clause must be of one relation "
            f"('{dominated.predicate}' and '{dominating.predicate}')"
        )
    if dominated.arity != dominating.arity:
        return f"the atoms of a subsumptive clause on '{dominated.predicate}' have different arities"
    if dominated.predicate in program.inputs:
        return f"subsumption on an .input relation is not supported yet ('{dominated.predicate}')"
    return ""


# ---------------------------------------------------------------------------------------------
# An order on one column: a head min/max


def _column_order(clauses: list) -> Optional[tuple[int, str]]:
    """(column, ``min`` or ``max``) when every clause orders the same column the same way."""
    orders = {_order(clause) for clause in clauses}
    if len(orders) != 1 or None in orders:
        return None
    return orders.pop()


def _order(clause: ast.Subsumption) -> Optional[tuple[int, str]]:
    pairs = list(zip(clause.dominated.args, clause.dominating.args, strict=True))
    if not all(_is_named(a) and _is_named(b) for a, b in pairs):
        return None
    differing = [i for i, (a, b) in enumerate(pairs) if a.name != b.name]
    names = [a.name for a, _ in pairs]
    if len(differing) != 1 or len(set(names)) != len(names) or len(clause.body) != 1:
        return None
    column = differing[0]
    comparison = clause.body[0]
    if not isinstance(comparison, ast.Comparison) or comparison.op not in _MIN_WHEN:
        return None
    sides = (_name(comparison.left), _name(comparison.right))
    low, high = clause.dominating.args[column].name, clause.dominated.args[column].name
    if sides == (low, high) or sides == (high, low):
        smaller_is = "dominating" if sides[0] == low else "dominated"
        keeps_least = (_MIN_WHEN[comparison.op] == "dominating") == (smaller_is == "dominating")
        return column, "min" if keeps_least else "max"
    return None


def _is_named(term) -> bool:
    return isinstance(term, ast.Variable) and not term.anonymous


def _name(term) -> Optional[str]:
    return term.name if _is_named(term) else None


def _facts_as_rule(program: ast.Program, relation: str, taken: set) -> ast.Program:
    """The facts of ``relation`` moved to ``<relation>__candidates``, which a rule reads (so
    that the order applies to them too)."""
    facts = [fact for fact in program.facts if fact.atom.predicate == relation]
    if not facts:
        return program
    candidates = fresh_name(f"{relation}__candidates", taken)
    renamed = replace(program, rules=())
    program = replace(renamed_heads(renamed, {relation: candidates}), rules=program.rules)
    span = facts[0].span
    row = tuple(ast.Variable(f"_column{i}", span) for i in range(facts[0].atom.arity))
    rule = ast.Rule(ast.Atom(relation, row, span), (ast.Atom(candidates, row, span),), span=span)
    declarations = tuple(
        ast.Declaration(candidates, d.columns, d.span) for d in program.declarations if d.name == relation
    )
    return replace(
        program,
        declarations=program.declarations + declarations,
        rules=program.rules + (replace(rule, text=str(rule)),),
    )


def _with_aggregate(
    program: ast.Program, relation: str, column: int, func: str
) -> tuple[ast.Program, list[DatalogError]]:
    """Every rule of ``relation`` with ``func<>`` on ``column``."""
    rules: list = []
    errors: list[DatalogError] = []
    for rule in program.rules:
        if rule.head.predicate != relation:
            rules.append(rule)
        elif rule.aggregate is not None and rule.aggregate != (column, rule.head.args[column]):
            message = (
                f"a rule of '{relation}' has a head aggregate that its subsumption "
                f"({func} on column {column + 1}) contradicts"
            )
            errors.append(ParseError(message, rule.span.line, rule.span.column))
        elif rule.aggregate is not None and rule.aggregate[1].func != func:
            used = rule.aggregate[1].func
            message = f"a rule of '{relation}' has {used}<> where its subsumption keeps the {func}"
            errors.append(ParseError(message, rule.span.line, rule.span.column))
        else:
            rules.append(_aggregated(rule, column, func))
    return replace(program, rules=tuple(rules)), errors


def _aggregated(rule: ast.Rule, column: int, func: str) -> ast.Rule:
    arg = rule.head.args[column]
    if isinstance(arg, ast.Aggregate):
        return rule
    body = rule.body
    if not _is_named(arg):
        value = ast.Variable(f"_subsumed{column}", arg.span)
        body = body + (ast.Comparison("=", value, arg, arg.span),)
        arg = value
    args = rule.head.args[:column] + (ast.Aggregate(func, arg, arg.span),) + rule.head.args[column + 1 :]
    changed = replace(rule, head=replace(rule.head, args=args), body=body)
    return replace(changed, text=str(changed))


# ---------------------------------------------------------------------------------------------
# Any other body, outside recursion: negation


def _with_negation(program: ast.Program, relation: str, clauses: list, taken: set) -> ast.Program:
    candidates = fresh_name(f"{relation}__candidates", taken)
    dominated = fresh_name(f"{relation}__dominated", taken)
    program = renamed_heads(program, {relation: candidates})
    declarations = list(program.declarations)
    for declaration in program.declarations:
        if declaration.name == relation:
            declarations += [
                ast.Declaration(name, declaration.columns, declaration.span)
                for name in (candidates, dominated)
            ]
    rules = list(program.rules)
    for clause in clauses:
        rules += _dominated_rules(clause, candidates, dominated, relation)
    span = clauses[0].span
    row = tuple(ast.Variable(f"_column{i}", span) for i in range(clauses[0].dominated.arity))
    keep = ast.Rule(
        ast.Atom(relation, row, span),
        (ast.Atom(candidates, row, span), ast.Negation(ast.Atom(dominated, row, span), span)),
        span=span,
    )
    rules.append(replace(keep, text=str(keep)))
    return replace(program, declarations=tuple(declarations), rules=tuple(rules))


def _dominated_rules(clause: ast.Subsumption, candidates: str, dominated: str, relation: str) -> list:
    """One rule per column where the two tuples may differ: a tuple does not dominate itself.
    The body reads ``relation`` as ``candidates``: the tuples the subsumption decides among."""
    low, low_terms = _named_args(clause.dominated, "_dominated")
    high, high_terms = _named_args(clause.dominating, "_dominating")
    span = clause.span
    reads = tuple(renamed_reads(literal, {relation: candidates}) for literal in clause.body)
    body = (ast.Atom(candidates, low, span), ast.Atom(candidates, high, span), *low_terms, *high_terms)
    body += reads
    rules = []
    for a, b in zip(low, high, strict=True):
        if isinstance(a, ast.Variable) and isinstance(b, ast.Variable) and a.name == b.name:
            continue  # equal in this column
        rule = ast.Rule(ast.Atom(dominated, low, span), body + (ast.Comparison("!=", a, b, span),), span=span)
        rules.append(replace(rule, text=str(rule)))
    return rules


def _named_args(atom: ast.Atom, prefix: str) -> tuple[tuple, tuple]:
    """``atom``'s arguments with every ``_`` a variable of its own (a head needs them), and
    every record term too, with the comparisons that match it (``_dominated1 = [L, U]``: the
    column's declared type types the pattern, and ``!=`` compares two variables of it)."""
    args, matches = [], []
    for i, arg in enumerate(atom.args):
        if isinstance(arg, ast.RecordTerm) or (isinstance(arg, ast.Variable) and arg.anonymous):
            variable = ast.Variable(f"{prefix}{i}", arg.span)
            if isinstance(arg, ast.RecordTerm):
                matches.append(ast.Comparison("=", variable, arg, arg.span))  # type: ignore[arg-type]
            arg = variable
        args.append(arg)
    return tuple(args), tuple(matches)


# ---------------------------------------------------------------------------------------------
# Any other body, in recursion: the dominated tuples of each round


def _rounds_problem(program: ast.Program, relation: str, clauses: list, recursive: bool) -> Optional[tuple]:
    """(message, span) when a clause on ``relation`` (``recursive`` or not) is not supported."""
    for clause in clauses:
        problem = _body_problem(program, relation, clause, recursive)
        if problem:
            where = "the recursive " if recursive else ""
            return f"a subsumption on {where}'{relation}' {problem}", clause.span
    if not recursive:
        return None
    kept = f"a subsumption in recursion on '{relation}', which has"
    for rule in program.rules:
        if rule.head.predicate == relation and rule.aggregate is not None:
            return f"{kept} a head aggregate, is not supported yet", rule.span
    if any(d.name == relation and d.choice_domains for d in program.declarations):
        return f"{kept} a choice-domain, is not supported yet", clauses[0].span
    return None


def _body_problem(program: ast.Program, relation: str, clause: ast.Subsumption, recursive: bool) -> str:
    """What the body of ``clause`` reads that has no stratified meaning ("" when nothing): a
    relation that depends on ``relation`` (its facts would be derived from the tuples being
    decided on), or in recursion an aggregate (every round would aggregate anew). ``relation``
    itself is read as the round's tuples; a relation it does not depend on is evaluated before
    it (``analysis.dependencies.stratify``'s ``after``)."""
    for literal in clause.body:
        for read in sorted(read_relations(literal) - {relation}):
            if relation in dependencies(program, read):
                return f"reads '{read}', which depends on '{relation}': not supported"
        if recursive:
            for aggregate in (node for node in nodes(literal) if isinstance(node, ast.BodyAggregate)):
                if relation in read_relations(aggregate):
                    return f"aggregates over '{relation}': not supported yet"
                if not _groups_bound(clause, aggregate):
                    return "aggregates over groups its body does not bind: not supported yet"
    return ""


def _groups_bound(clause: ast.Subsumption, aggregate: ast.BodyAggregate) -> bool:
    """Whether the atoms of ``aggregate``'s body bind every variable it shares with the rest of
    ``clause`` (else its groups would come from the round's tuples: ``syntax.body_aggregates``)."""
    inside = _variables(aggregate.body)
    others = tuple(lit for lit in clause.body if all(node is not aggregate for node in nodes(lit)))
    rest = (clause.dominated, clause.dominating, *others)
    bound = _variables(tuple(literal for literal in aggregate.body if isinstance(literal, ast.Atom)))
    return (inside & _variables(rest)) <= bound


def _variables(literals: tuple) -> set:
    return {node.name for node in nodes(*literals) if _is_named(node)}


def _with_rounds(program: ast.Program, relation: str, clauses: list, taken: set) -> ast.Program:
    """``program`` with ``relation``'s facts read by a rule (first-round candidates), and the
    rules of ``<r>__all`` and ``<r>__dominated`` the engines run in every round (none when
    no clause can relate two distinct tuples).

    >>> from spark_datalog.syntax.parser import parse
    >>> [str(rule) for rule in parse("r(1). r(X) :- r(X). r(A) <= r(A) :- A < 2.").rules]
    ['r(X) :- r(X).', 'r(_column0) :- r__candidates(_column0).']
    """
    program = _facts_as_rule(program, relation, taken)
    every = fresh_name(f"{relation}__all", taken)
    dominated = fresh_name(f"{relation}__dominated", taken)
    span = clauses[0].span
    row = tuple(ast.Variable(f"_column{i}", span) for i in range(clauses[0].dominated.arity))
    copy = ast.Rule(ast.Atom(every, row, span), (ast.Atom(relation, row, span),), span=span)
    rules = [rule for clause in clauses for rule in _dominated_rules(clause, every, dominated, relation)]
    if not rules:  # every clause compares a tuple with itself (or no column): nothing goes
        return program
    rules.insert(0, replace(copy, text=str(copy)))
    declarations = tuple(
        ast.Declaration(name, d.columns, d.span)
        for d in program.declarations
        if d.name == relation
        for name in (every, dominated)
    )
    return replace(
        program,
        declarations=program.declarations + declarations,
        rules=program.rules + tuple(rules),
        subsumed=program.subsumed + ((relation, every, dominated),),
    )
