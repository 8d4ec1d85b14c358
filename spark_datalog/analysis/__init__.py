"""Program analysis: from a parsed program to a :class:`CheckedProgram` every back end reads.

The passes, one per module, each a pure function:

- :mod:`.declarations` — ``.decl`` / ``.input`` / ``.output`` statements are consistent, and
  every relation an atom reads is defined (by a rule, a fact, a ``.decl`` or an ``.input``);
- :mod:`.arity` — every use of a predicate has its arity;
- :mod:`.normalise` — ``V = expr`` that binds ``V`` becomes an assignment, bodies are ordered;
- :mod:`.safety` — range restriction;
- :mod:`.aggregates` — one head aggregate per relation;
- :mod:`.dependencies` — dependency graph, SCCs, strata, negation/aggregation through recursion;
- :mod:`.types` — column types.

Every error of every pass is collected and raised together (the types pass is skipped when the
declarations or arities are already wrong, since it would only repeat those errors).

Decisions: a relation named by ``.input`` may have facts but not rules (an error); conflicting
aggregates and count/sum/avg relations with plain rules or facts are stratification errors; a column
nothing constrains has type ``long``. A relation is IDB when it has at least one rule, EDB otherwise;
an atom over a relation with no rule, fact, ``.decl`` or ``.input`` is a schema error.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from ..errors import DatalogError, raise_collected
from ..syntax import ast
from ..syntax.auxiliary import read_relations
from .aggregates import relation_aggregates
from .arity import check_arity
from .checked import CheckedProgram, relation_schema
from .declarations import check_declarations, check_defined
from .dependencies import stratify
from ..syntax.autoinc import has_autoinc, autoinc_errors
from .describe import describe
from .facts import fact_tuples
from .limits import limit_errors
from .mentions import atom_mentions, relation_order
from .normalise import normalised
from .safety import check_safety
from .types import fixed_columns, infer_types

__all__ = ["analyse", "describe"]


def analyse(program: ast.Program, input_types: Optional[dict] = None) -> CheckedProgram:
    """Check ``program`` and return its checked form.

    ``input_types`` maps an input relation to the type names of its DataFrame's columns (one of
    ``int long double string bool`` each); they must agree with the relation's ``.decl``.
    Raises the first error found (sorted by position) with all of them in ``.errors``.

    Example::

        >>> from spark_datalog.syntax.parser import parse
        >>> checked = analyse(parse("e(1, 2). t(X, Y) :- e(X, Y). t(X, Z) :- t(X, Y), e(Y, Z)."))
        >>> [s.relations for s in checked.strata], checked.edb
        ([('t',)], ('e',))
    """
    mentions = atom_mentions(program)
    structural = check_declarations(program, mentions) + check_arity(program, input_types, mentions)
    rules, bound = _normalised(program.rules)
    errors: list[DatalogError] = [*structural, *check_defined(program, mentions)]
    errors += check_safety(rules, bound)
    del bound  # a set per rule, no longer needed: not kept through the passes below

    order = relation_order(program, mentions)
    idb = {rule.head.predicate for rule in rules}
    aggregates, aggregate_errors = relation_aggregates(rules, program.facts)
    errors += aggregate_errors
    strata, strata_errors = stratify(rules, order, idb, aggregates, _subsumption_reads(program, rules))
    errors += strata_errors
    if any(has_autoinc(rule) for rule in rules):
        errors += autoinc_errors(strata)
    if program.limits:
        errors += limit_errors(program, idb, aggregates)

    columns: dict = {}
    typed = rules
    if not structural:
        fixed, fixed_errors = fixed_columns(program, input_types)
        columns, type_errors, typed = infer_types(program, rules, fixed)
        errors += fixed_errors + type_errors
    raise_collected(errors, program.source, program.filename)
    rules, strata = _with_typed_rules(rules, typed, strata)

    declared = {d.name for d in program.declarations}
    relations = {
        name: relation_schema(
            name,
            columns.get(name, ()),
            "idb" if name in idb else "edb",
            name in declared,
            aggregates.get(name),
        )
        for name in order
    }
    outputs = tuple(dict.fromkeys(program.outputs)) or tuple(n for n in order if n in idb)
    return CheckedProgram(
        program=program,
        relations=relations,
        strata=strata,
        rules=rules,
        facts=fact_tuples(program, relations),
        queries=program.queries,
        outputs=outputs,
    )


def _subsumption_reads(program: ast.Program, rules: tuple) -> tuple:
    """``(s, r)`` for every relation ``s`` a subsumption on the recursive ``r`` reads in its
    rounds: ``r`` is evaluated after ``s`` (:mod:`spark_datalog.syntax.subsumption`)."""
    if not program.subsumed:
        return ()
    pairs = []
    for relation, every, dominated in program.subsumed:
        for rule in rules:
            if rule.head.predicate == dominated:
                reads = set().union(*(read_relations(literal) for literal in rule.body))
                pairs += [(read, relation) for read in sorted(reads - {every})]
    return tuple(pairs)


def _normalised(rules: tuple) -> tuple[tuple, list]:
    """The normalised rules, and the names bound in each (see :func:`.normalise.normalised`)."""
    pairs = [normalised(rule) for rule in rules]
    return tuple([rule for rule, _ in pairs]), [bound for _, bound in pairs]


def _with_typed_rules(rules: tuple, typed: tuple, strata: tuple) -> tuple:
    """``(typed, strata)`` with every stratum's rules replaced by their typed versions (a stratum
    whose rules typing left as they were is kept)."""
    by_identity = {id(rule): new for rule, new in zip(rules, typed, strict=True) if new is not rule}
    if not by_identity:
        return typed, strata
    return typed, tuple(_retyped(stratum, by_identity) for stratum in strata)


def _retyped(stratum, by_identity: dict):
    """``stratum`` with the rules ``by_identity`` (id of a rule -> its typed version) replaced."""
    if not any(id(rule) in by_identity for rule in stratum.rules):
        return stratum
    return replace(stratum, rules=tuple(by_identity.get(id(rule), rule) for rule in stratum.rules))
