"""Aggregate relations of non-recursive strata, maintained per touched group.

An aggregate fact depends only on its group's contributions (the distinct satisfying body
assignments of the relation's rules, and its stated facts). So a change of the relations the
rules read is folded in three steps:

1. Touched groups. A contribution appears or disappears only where some body literal changes
   truth, so the groups of such contributions are found like the terms of the counting
   algorithm's telescoping sum, on sets: for each literal over a relation with facts that
   appeared or disappeared, the rule with that literal replaced by a positive atom over those
   facts (a negated literal too: ``not q(…)`` changes truth only where a ``q`` fact of its
   pattern did), the literals before it read from the new state and those after it from the
   old, projected to the group columns. The result may hold groups whose value stays the same;
   it holds every group whose value changes.
2. Their new rows. Each rule is re-planned with one more body atom, over the touched keys, which
   the planner joins first (as it does a semi-naive delta), so only the touched groups'
   contributions are computed, from the new state; they are aggregated as the driver does.
   (A rule whose group argument is arithmetic or bound by an assignment keeps its plan, and
   its contributions are semi-joined with the keys; a relation without group columns has one
   group, evaluated whole once touched.)
3. The change: -1 for the old rows of the touched groups, +1 for their new rows; identical rows
   cancel, and a group without contributions any more has no new row, so it is deleted.
   Aggregate facts keep ``_count`` 1 (``eval.commit``).
"""

from __future__ import annotations

import dataclasses
from functools import reduce

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..analysis.checked import RelationSchema
from ..eval.checkpoint import materialise
from ..eval.driver import conform
from ..plan.order_atoms import binding_variables
from ..plan.translate import plan_rule
from ..spark.compile import aggregate_frame, compile_node
from ..spark.counted import COUNT
from ..spark.inputs import facts_frame
from ..spark.types import spark_type
from ..syntax import ast
from .changes import diff
from ..plan.maintenance import touched_plans
from .counting import telescoping_frames

TOUCHED = "@touched"


def aggregate_changes(
    spark, checked, stratum_plan, old: dict, new: dict, changed: dict, stored: dict
) -> dict:
    """Relation -> change of each aggregate relation of a non-recursive stratum.

    ``old`` / ``new``: relation -> facts (plain frames) of every relation the stratum reads;
    ``changed``: relation -> the facts that appeared or disappeared, for the relations with
    such facts; ``stored``: aggregate relation -> its old state (counted frame). A relation
    whose groups all keep their rows gets no entry.
    """
    frames = telescoping_frames(old, new, changed)
    touched = {}
    for name in stratum_plan.aggregates:
        keys = _touched_keys(checked, stratum_plan, name, frames, set(changed))
        if keys is not None:
            touched[name] = keys
    if not touched:
        return {}
    touched, sizes, _ = materialise(touched)
    result = {}
    for name, keys in touched.items():
        if sizes[name]:
            result[name] = _group_change(spark, checked, stratum_plan, name, keys, new, stored[name])
    return result


def _group_columns(schema: RelationSchema, spec) -> list:
    return [c for i, c in enumerate(schema.column_names) if i != spec.position]


def _touched_keys(checked, stratum_plan, name, frames, changed: set):
    """The group keys (distinct, typed as the group columns) of the contributions to ``name``
    that may have appeared or disappeared through the ``changed`` relations; None when no rule
    reads one."""
    schema = checked.relations[name]
    group = _group_columns(schema, stratum_plan.aggregates[name])
    parts = [
        compile_node(plan, frames).toDF(*schema.column_names).select(*group)
        for plan in touched_plans(checked, stratum_plan, name, changed)
    ]
    if not parts:
        return None
    types = {c.name: spark_type(c.type) for c in schema.columns}
    return (
        reduce(DataFrame.union, parts).select(*[F.col(c).cast(types[c]).alias(c) for c in group]).distinct()
    )


def _group_change(spark, checked, stratum_plan, name, keys, new, stored) -> DataFrame:
    """The change of aggregate relation ``name`` on the touched groups ``keys``."""
    schema = checked.relations[name]
    spec = stratum_plan.aggregates[name]
    columns = list(schema.column_names)
    group = _group_columns(schema, spec)
    fresh = _aggregated(spark, checked, stratum_plan, name, keys if group else None, new)
    if group:
        stored = stored.join(keys, group, "left_semi")
    return diff(stored, fresh.withColumn(COUNT, F.lit(1).cast("long")), columns)


def _aggregated(spark, checked, stratum_plan, name, keys, new) -> DataFrame:
    """The rows of aggregate relation ``name`` over the new state, for the groups in ``keys``
    (every group when ``keys`` is None: a relation without group columns has one group)."""
    schema = checked.relations[name]
    spec = stratum_plan.aggregates[name]
    group = _group_columns(schema, spec)
    # count/sum/avg contributions keep the aggregated variable's own type, as in the driver
    keep = spec.position if spec.func not in ("min", "max") else None
    scans = {(relation, "full"): frame for relation, frame in new.items()}
    restricted = checked
    if keys is not None:
        alias = name + TOUCHED
        scans[(alias, "delta")] = keys
        columns = tuple(c for c in schema.columns if c.name in group)
        relations = dict(checked.relations)
        relations[alias] = dataclasses.replace(schema, name=alias, columns=columns, aggregate=None)
        restricted = dataclasses.replace(checked, relations=relations)
    parts = []
    for rule_plan in stratum_plan.rules:
        if rule_plan.relation != name:
            continue
        if keys is None:
            parts.append(conform(compile_node(rule_plan.plan, scans), schema, keep))
            continue
        rule = _restricted(rule_plan.rule, spec, name + TOUCHED)
        if rule is not None:
            plan = plan_rule(rule, restricted, delta_position=len(rule.body) - 1).plan
            parts.append(conform(compile_node(plan, scans), schema, keep))
        else:
            parts.append(
                conform(compile_node(rule_plan.plan, scans), schema, keep).join(keys, group, "left_semi")
            )
    facts = checked.facts.get(name)
    if facts:
        frame = facts_frame(spark, schema, facts)
        parts.append(frame.join(keys, group, "left_semi") if keys is not None else frame)
    contributions = reduce(DataFrame.union, parts)
    value = schema.column_names[spec.position]
    return conform(
        aggregate_frame(contributions, group, spec.func, value, value, schema.name).select(
            *schema.column_names
        ),
        schema,
    )


def _restricted(rule: ast.Rule, spec, alias: str):
    """``rule`` with one more body atom, over the touched keys, to be joined first; or None.

    The atom's arguments are the head's group arguments. When each is a constant or a variable
    a positive body atom binds, the contributions are the same rows, only those of the touched
    groups, and the join starts from the (few) keys. Otherwise (an arithmetic group argument, or
    a variable bound by an assignment) starting there would be a product: None, and the caller
    semi-joins the rule's contributions with the keys instead.
    """
    args = tuple(a for i, a in enumerate(rule.head.args) if i != spec.position)
    bound = set()
    for literal in rule.body:
        if isinstance(literal, ast.Atom):
            bound |= binding_variables(literal)
    if not all(
        isinstance(a, ast.Constant) or (isinstance(a, ast.Variable) and a.name in bound) for a in args
    ):
        return None
    return dataclasses.replace(rule, body=rule.body + (ast.Atom(alias, args),))
