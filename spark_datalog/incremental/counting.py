"""The counting algorithm for non-recursive strata (seed 004; Gupta, Mumick & Subrahmanian).

A fact's count is its number of derivations. For a rule whose body literals (positive and
negated atoms) are L₁ … Lₖ, the change of the head's counts is the telescoping sum

    Δhead = Σᵢ  L₁ⁿᵉʷ … Lᵢ₋₁ⁿᵉʷ ⋈ ΔLᵢ ⋈ Lᵢ₊₁ᵒˡᵈ … Lₖᵒˡᵈ

with signed counts multiplied through joins (``spark.counted``). For a positive atom ΔLᵢ is the
relation's change of counts; for a negated atom ``not q(…)`` it is the change of the condition:
+1 for a ``q`` fact that became absent, -1 for one that became present, joined like a positive
atom on the (all bound) variables of ``q``.

How the old/new/delta mix is given to the planner: each body atom of a term is renamed to an
alias (``arc@old``, ``arc@new``, ``arc@delta``) that exists only in a patched copy of the
relation map, and ``plan_rule`` plans the term as an ordinary rule with the delta atom first.
So every term is a normal plan and the frames are keyed by alias — the terms are independent of
how the planner orders the atoms.

Not applicable (the caller recomputes the stratum instead): recursive strata, aggregate
relations, and a changed negated relation under a negated atom with ``_`` (its condition is an existence test over a
projection, not a join).
"""

from __future__ import annotations

import dataclasses
from functools import reduce

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..plan.translate import plan_rule
from ..spark.counted import COUNT, count_derivations
from ..syntax import ast
from .changes import net

OLD, NEW, DELTA, NEG_DELTA = "@old", "@new", "@delta", "@negdelta"


def counting_applies(stratum_plan, changed) -> bool:
    """True when :func:`counting_changes` maintains this stratum for changes of ``changed``."""
    if stratum_plan.recursive or stratum_plan.aggregates:
        return False
    for rule_plan in stratum_plan.rules:
        for literal in rule_plan.rule.body:
            if isinstance(literal, ast.Negation) and literal.atom.predicate in changed:
                if not _plain_negation(literal.atom):
                    return False
    return True


def counting_changes(spark, checked, stratum_plan, old: dict, new: dict, changes: dict,
                     negation_changes: dict) -> dict:
    """Relation -> change of derivation counts of every relation of a non-recursive stratum.

    ``old`` / ``new``: relation -> state (counted frame) of every relation the stratum reads;
    ``changes``: relation -> change of counts of the relations that changed (non-empty);
    ``negation_changes``: relation -> the condition change of ``not r(…)`` (+1 became absent,
    -1 became present) for changed relations that occur negated.
    """
    frames = {}
    for name in set(old) | set(new):
        frames[(name + OLD, "full")] = old[name]
        frames[(name + NEW, "full")] = new[name]
    for name, change in changes.items():
        frames[(name + DELTA, "delta")] = change
    for name, change in negation_changes.items():
        frames[(name + NEG_DELTA, "delta")] = change
    patched = _patched(checked, frames)
    parts: dict = {}
    for rule_plan in stratum_plan.rules:
        rule = rule_plan.rule
        for i, literal in enumerate(rule.body):
            atom = _atom(literal)
            if atom is None or atom.predicate not in changes:
                continue
            term, position = _term(rule, i)
            plan = plan_rule(term, patched, delta_position=position).plan
            parts.setdefault(rule_plan.relation, []).append(count_derivations(plan, frames, spark))
    result = {}
    for name, frames_of in parts.items():
        columns = checked.relations[name].column_names
        union = reduce(DataFrame.unionByName, [f.toDF(*columns, COUNT) for f in frames_of])
        result[name] = net(union, columns)
    return result


def negation_change(inserted: DataFrame, deleted: DataFrame) -> DataFrame:
    """The change of ``not r(…)``: +1 per fact that became absent, -1 per fact that appeared."""
    return (deleted.withColumn(COUNT, F.lit(1).cast("long"))
            .unionByName(inserted.withColumn(COUNT, F.lit(-1).cast("long"))))


def _term(rule: ast.Rule, i: int) -> tuple:
    """Rule ``rule`` rewritten as the i-th term of the telescoping sum; (rule, delta index)."""
    body = []
    for j, literal in enumerate(rule.body):
        atom = _atom(literal)
        if atom is None:
            body.append(literal)
        elif j == i:
            suffix = NEG_DELTA if isinstance(literal, ast.Negation) else DELTA
            body.append(dataclasses.replace(atom, predicate=atom.predicate + suffix))
        else:
            renamed = dataclasses.replace(atom, predicate=atom.predicate + (NEW if j < i else OLD))
            body.append(dataclasses.replace(literal, atom=renamed)
                        if isinstance(literal, ast.Negation) else renamed)
    return dataclasses.replace(rule, body=tuple(body)), i


def _atom(literal):
    if isinstance(literal, ast.Atom):
        return literal
    if isinstance(literal, ast.Negation):
        return literal.atom
    return None


def _plain_negation(atom: ast.Atom) -> bool:
    """No ``_`` among the arguments (so ``not`` tests one fact, and its change joins as a fact)."""
    return not any(isinstance(v, ast.Variable) and v.anonymous
                   for arg in atom.args for v in ast.term_variables(arg))


def _patched(checked, frames) -> object:
    relations = dict(checked.relations)
    for alias, _ in frames:
        base = alias.rsplit("@", 1)[0]
        relations[alias] = dataclasses.replace(checked.relations[base], name=alias)
    return dataclasses.replace(checked, relations=relations)
