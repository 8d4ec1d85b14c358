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
from typing import Mapping

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..analysis.checked import Column, RelationSchema
from ..plan.scan_atom import fresh_name, is_fresh, scan_atom
from ..counting import counted_changes
from ..plan import ir
from ..plan.maintenance import DELTA, NEG_DELTA, NEW, OLD, aliased, counting_terms
from ..plan.translate import plan_rule
from ..spark.compile import compile_node, match
from ..spark.counted import COUNT, count_derivations
from ..syntax import ast
from .changes import net


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
    terms = counting_terms(checked, stratum_plan, changes)
    return counted_changes(SparkCounting(spark, checked, (old, new, changes)), checked, terms, frames)


class SparkCounting:
    """Spark's counted frames (``spark.counted``), for the one counting
    (``spark_datalog.counting.Backend``); ``states``: (old, new, changes) as for
    :func:`counting_changes`, which an existence test's change is made from."""

    def __init__(self, spark, checked, states: tuple):
        self.spark, self.checked, self.states = spark, checked, states

    def plan_of(self, term, frames: dict) -> ir.Node:
        if term.plan is not None:
            return term.plan
        old, new, changes = self.states
        return _existence_plan(self.checked, term, old, new, changes, frames)

    def derivations(self, plan, frames: Mapping, schema) -> DataFrame:
        return count_derivations(plan, dict(frames), self.spark).toDF(*schema.column_names, COUNT)

    def net(self, parts: list, schema) -> DataFrame:
        return net(reduce(DataFrame.unionByName, parts), schema.column_names)


def _existence_plan(checked, counted, old: dict, new: dict, changes: dict, frames: dict):
    """The plan of a term whose literal tests existence (``plan.maintenance.CountingTerm``):
    the literal replaced by a key atom over an alias whose change (added to ``frames``) is the
    change of the condition (:func:`_existence_change`)."""
    i = counted.position
    original = counted.rule.body[i]
    atom = dataclasses.replace(original, predicate=original.predicate.rsplit("@", 1)[0])
    negated = original.predicate.endswith(NEG_DELTA)
    alias = f"{atom.predicate}@exists{counted.rule_number}_{i}"
    states = (old[atom.predicate], new[atom.predicate])
    key_atom, schema, change = _existence_change(
        checked, atom, i, alias, states, changes[atom.predicate], negated
    )
    frames[(alias, "delta")] = change
    variant = dataclasses.replace(
        counted.rule, body=counted.rule.body[:i] + (key_atom,) + counted.rule.body[i + 1 :]
    )
    return plan_rule(variant, aliased(checked, variant, {alias: schema}), delta_position=i).plan


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
        if isinstance(arg, ast.OPERATIONS):
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
