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

A negated atom with ``_`` (``not q(X, _)``) tests the existence of a matching fact: its change
is the change of existence of the keys (its named variables) of ``q``'s facts, read as a
positive atom over those keys (:func:`_existence_change`).

Aggregate relations are left out (``.aggregates`` maintains them per touched group), and
recursive strata (DRed's).
"""

from __future__ import annotations

import dataclasses
from functools import reduce
from typing import Any, Optional

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..analysis.checked import Column, RelationSchema
from ..plan.scan_atom import fresh_name, is_fresh, scan_atom
from ..plan.translate import binds_nothing, plan_rule
from ..spark.compile import compile_node, match
from ..spark.counted import COUNT, count_derivations
from ..syntax import ast
from .changes import net

OLD, NEW, DELTA, NEG_DELTA = "@old", "@new", "@delta", "@negdelta"


def telescoping_frames(old: dict, new: dict, deltas: dict) -> dict:
    """The scan frames of the telescoping terms: every relation's old and new state, and the
    deltas of the changed ones, keyed as ``term`` reads them."""
    frames = {}
    for name in set(old) | set(new):
        frames[(name + OLD, "full")] = old[name]
        frames[(name + NEW, "full")] = new[name]
    for name, delta in deltas.items():
        frames[(name + DELTA, "delta")] = delta
    return frames


def counting_changes(
    spark, checked, stratum_plan, old: dict, new: dict, changes: dict, negation_changes: dict
) -> dict:
    """Relation -> change of derivation counts of every non-aggregate relation of a
    non-recursive stratum.

    ``old`` / ``new``: relation -> state (counted frame) of every relation the stratum reads;
    ``changes``: relation -> change of counts of the relations that changed (non-empty);
    ``negation_changes``: relation -> the condition change of ``not r(…)`` (+1 became absent,
    -1 became present) for changed relations that occur negated.
    """
    frames = telescoping_frames(old, new, changes)
    for name, change in negation_changes.items():
        frames[(name + NEG_DELTA, "delta")] = change
    patched = aliased(checked, frames)
    parts: dict = {}
    for number, rule_plan in enumerate(stratum_plan.rules):
        if rule_plan.relation in stratum_plan.aggregates:
            continue
        rule = rule_plan.rule
        for i, literal in enumerate(rule.body):
            atom = body_atom(literal)
            if atom is None or atom.predicate not in changes:
                continue
            variant, position = term(rule, i)
            planned_with = patched
            negated = isinstance(literal, ast.Negation)
            # a test of existence (``not q(X, _)``, ``q(_, _)``, ``m()``): its change is a factor
            if binds_nothing(atom) or (negated and not _plain_negation(atom)):
                alias = f"{atom.predicate}@exists{number}_{i}"
                key_atom, schema, change = _existence_change(
                    checked,
                    atom,
                    i,
                    alias,
                    (old[atom.predicate], new[atom.predicate]),
                    changes[atom.predicate],
                    negated,
                )
                frames[(alias, "delta")] = change
                body = variant.body[:i] + (key_atom,) + variant.body[i + 1 :]
                variant = dataclasses.replace(variant, body=body)
                relations = dict(patched.relations)
                relations[alias] = schema
                planned_with = dataclasses.replace(patched, relations=relations)
            plan = plan_rule(variant, planned_with, delta_position=position).plan
            parts.setdefault(rule_plan.relation, []).append(count_derivations(plan, frames, spark))
    result = {}
    for name, frames_of in parts.items():
        columns = checked.relations[name].column_names
        union = reduce(DataFrame.unionByName, [f.toDF(*columns, COUNT) for f in frames_of])
        result[name] = net(union, columns)
    return result


def negation_change(inserted: DataFrame, deleted: DataFrame) -> DataFrame:
    """The change of ``not r(…)``: +1 per fact that became absent, -1 per fact that appeared."""
    return deleted.withColumn(COUNT, F.lit(1).cast("long")).unionByName(
        inserted.withColumn(COUNT, F.lit(-1).cast("long"))
    )


def _existence_change(
    checked, atom: ast.Atom, i: int, alias: str, states: tuple, changed: DataFrame, negated: bool
) -> tuple:
    """The condition change of ``not q(X, _)`` (body literal ``i``; ``negated``) or of an
    existence test ``q(_, _)``, as a positive atom joined as a factor.

    The literal tests whether some ``q`` fact matches the pattern for a binding of its named
    variables (and arithmetic arguments): the keys are ``q``'s facts through the atom's scan
    (constants and repeated variables selected, ``_`` dropped). A key's condition changes when
    its existence does, which only the keys of changed ``q`` facts can: for a negation +1 for
    such a key with facts before and none after, -1 for the reverse (the opposite for an
    existence test). ``states``: ``q``'s old and new counted frames. Returns (an atom over
    ``alias`` binding the key's variables, ``alias``'s schema, the change as a counted frame of
    ``alias``). A key of no variables gets one column binding a variable of its own, so the
    planner joins the change as a factor instead of testing its existence.
    """
    schema = checked.relations[atom.predicate]
    node = scan_atom(atom, i, schema.types)
    columns = list(node.columns)
    keys = {}
    old, new = states
    for name, frame in (("changed", changed), ("old", old), ("new", new)):
        plain = frame.select(*schema.column_names)
        keys[name] = compile_node(node, {(atom.predicate, "full"): plain}).distinct()
    before = match(keys["old"], keys["changed"], columns, "left_semi")
    after = match(keys["new"], keys["changed"], columns, "left_semi")
    sign = 1 if negated else -1
    change = (
        match(before, after, columns, "left_anti")
        .withColumn(COUNT, F.lit(sign).cast("long"))
        .unionByName(match(after, before, columns, "left_anti").withColumn(COUNT, F.lit(-sign).cast("long")))
    )
    # the key atom: the named variables in the scan's order, then the arithmetic arguments
    positions = {}
    for position, arg in enumerate(atom.args):
        if isinstance(arg, ast.BinaryOp):
            positions[fresh_name(i, position)] = position
        elif isinstance(arg, ast.Variable) and not arg.anonymous:
            positions.setdefault(arg.name, position)
    args = tuple(atom.args[positions[c]] if is_fresh(c) else ast.Variable(c) for c in columns)
    key_columns = tuple(Column(f"k{k}", schema.types[positions[c]]) for k, c in enumerate(columns))
    if not columns:  # the condition of the whole rule: a factor of one row
        args, key_columns = (ast.Variable(f"{alias}@factor"),), (Column("k0", "bool"),)
        change = change.select(F.lit(True).alias("k0"), COUNT)
    key_schema = RelationSchema(alias, key_columns, "idb")
    return ast.Atom(alias, args), key_schema, change.toDF(*[c.name for c in key_columns], COUNT)


def term(rule: ast.Rule, i: int, negated_suffix: str = NEG_DELTA) -> tuple:
    """Rule ``rule`` rewritten as the i-th term of the telescoping sum; (rule, delta index).

    Atoms before literal i read ``<relation>@new``, after it ``<relation>@old``; literal i
    becomes a positive atom over ``<relation>@delta`` (``negated_suffix`` for a negated one).
    """
    body = []
    for j, literal in enumerate(rule.body):
        atom = body_atom(literal)
        if atom is None:
            body.append(literal)
        elif j == i:
            suffix = negated_suffix if isinstance(literal, ast.Negation) else DELTA
            body.append(dataclasses.replace(atom, predicate=atom.predicate + suffix))
        else:
            renamed = dataclasses.replace(atom, predicate=atom.predicate + (NEW if j < i else OLD))
            body.append(
                dataclasses.replace(literal, atom=renamed) if isinstance(literal, ast.Negation) else renamed
            )
    return dataclasses.replace(rule, body=tuple(body)), i


def body_atom(literal) -> Optional[ast.Atom]:
    """The atom of a positive or negated body literal, else None."""
    if isinstance(literal, ast.Atom):
        return literal
    if isinstance(literal, ast.Negation):
        return literal.atom
    return None


def _plain_negation(atom: ast.Atom) -> bool:
    """No ``_`` among the arguments (so ``not`` tests one fact, and its change joins as a fact)."""
    return not any(
        isinstance(v, ast.Variable) and v.anonymous for arg in atom.args for v in ast.term_variables(arg)
    )


def aliased(checked, frames) -> Any:
    """``checked`` knowing the aliases (``arc@old`` …) of the frames' keys, with their bases'
    schemas."""
    relations = dict(checked.relations)
    for alias, _ in frames:
        base = alias.rsplit("@", 1)[0]
        relations[alias] = dataclasses.replace(checked.relations[base], name=alias)
    return dataclasses.replace(checked, relations=relations)
