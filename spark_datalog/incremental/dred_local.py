"""DRed of a small recursive stratum as one Spark task (``kernel.dred``).

``incremental.dred`` runs each phase as rounds of Spark joins, one or two jobs per round: on a
small stratum those jobs' fixed cost is the whole update (a deletion that over-deletes most of a
reachable set takes dozens of rounds). Here the stratum's old facts, the lower relations before
and after, and their changes are sent, tagged, into one partition, whose task runs the three
phases in memory and yields the inserted and deleted facts: one Spark job. When the inputs are
more than ``spark.datalog.taskMemory`` allows a task (``settings.Settings.local_facts``), or the
executors cannot import the kernel, the caller runs the Spark rounds instead (the result is the
same).
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Mapping, Optional, Union

from ..eval.stats import non_termination
from ..eval import partitioned
from ..eval.checkpoint import release
from ..kernel.dred import DredPlans, DredTask, Seed, run_dred
from ..kernel.partition import LocalRelation
from ..plan import ir
from ..plan.translate import plan_rule
from ..placement import Declined
from ..settings import KERNEL_VALUE_BYTES, TASK_MEMORY_SETTING, settings_of
from ..spark.labels import labelled
from ..syntax import ast
from .dred import seed_plans

log = logging.getLogger("spark_datalog")


def local_dred_changes(
    spark,
    checked,
    stratum_plan,
    old: Mapping,
    new: dict,
    inserted: dict,
    deleted: dict,
    max_iterations: Optional[int] = None,
) -> Union[dict, Declined]:
    """Relation -> (inserted facts, deleted facts) of the stratum, as
    ``incremental.dred.dred_changes`` computes them (same arguments), or ``placement.Declined``
    when the stratum is too large for one task (or the executors cannot run it)."""
    relations = tuple(stratum_plan.relations)
    plans = dred_plans(checked, stratum_plan, set(inserted), set(deleted))
    parts = [("old", name, old[name]) for name in relations]
    parts += [("old", name, frame) for name, frame in old.items() if name not in relations]
    parts += [("new", name, frame) for name, frame in new.items()]
    parts += [("inserted", name, frame) for name, frame in inserted.items()]
    parts += [("deleted", name, frame) for name, frame in deleted.items()]
    inputs = tuple(_block(checked, stratum_plan, name, kind) for kind, name, _ in parts)
    outputs = tuple(
        _block(checked, stratum_plan, name, kind) for name in relations for kind in ("inserted", "deleted")
    )
    width = max(len(block.column_names) for block in inputs)
    max_facts = settings_of(spark).local_facts(max(width, 1), KERNEL_VALUE_BYTES)
    task = DredTask(plans, inputs, outputs, max_iterations, max_facts)
    wide = partitioned.wide_frame(
        [
            (tag, frame.select(*checked.relations[name].column_names))
            for tag, (_, name, frame) in enumerate(parts)
        ],
        inputs,
    )
    assert wide is not None  # the stratum's old facts are parts
    frame = wide.coalesce(1)
    label = f"update · stratum {stratum_plan.index} · {', '.join(relations)}"
    with labelled(spark, f"{label} · DRed in one task"):
        stored, reports = partitioned.run_tasks(
            frame,
            lambda batches, accumulator: run_dred(batches, task, accumulator),
            outputs,
            spark.sparkContext.getCheckpointDir() is not None,
            f"stratum {stratum_plan.index} · {', '.join(relations)}",
        )
    if stored is None:
        return Declined("Spark's Python workers cannot import spark_datalog")
    if any(report.overflow for report in reports.values()):
        release(stored)
        return Declined(f"more than {max_facts} facts for one task ({TASK_MEMORY_SETTING})", warn=True)
    if any(report.exceeded for report in reports.values()):
        assert max_iterations is not None  # the fixpoints only stop early under a bound
        release(stored)
        raise non_termination(stratum_plan, max_iterations, what="incremental iterations")
    frames = partitioned.split_wide(stored, outputs)
    return {name: (frames[f"inserted:{name}"], frames[f"deleted:{name}"]) for name in relations}


def dred_plans(checked, stratum_plan, inserted: set, deleted: set) -> DredPlans:
    """The plans of ``kernel.dred`` for the stratum, when the lower relations ``inserted`` gained
    facts and those of ``deleted`` lost some."""

    def seeds(positive, negated, positive_kind, negated_kind):
        return tuple(
            Seed(relation, plan, lower, positive_kind if is_positive else negated_kind)
            for relation, plan, lower, is_positive in seed_plans(checked, stratum_plan, positive, negated)
        )

    return DredPlans(
        relations=tuple(_block(checked, stratum_plan, name) for name in stratum_plan.relations),
        rules=tuple((r.relation, r.plan) for r in stratum_plan.rules),
        delta_rules=tuple((r.relation, r.plan) for r in stratum_plan.delta_rules),
        # phase 1: deleted facts under positive atoms, appeared ones under negated atoms
        over_seeds=seeds(deleted, inserted, "deleted", "inserted"),
        # phase 3: the other way round
        insert_seeds=seeds(inserted, deleted, "inserted", "deleted"),
        facts={name: tuple(checked.facts.get(name, ())) for name in stratum_plan.relations},
        group_rules=_group_rules(checked, stratum_plan),
    )


def _group_rules(checked, stratum_plan) -> tuple:
    """(relation, plan) of each rule of a min/max relation read from its head's groups: phase 2
    of group repair (``kernel.dred``)."""
    own = frozenset(stratum_plan.relations)
    aggregates = stratum_plan.aggregates
    return tuple(
        (r.relation, rederive_plan(checked, r.rule, own, aggregates[r.relation].position))
        for r in stratum_plan.rules
        if r.relation in aggregates
    )


def rederive_plan(checked, rule: ast.Rule, own: frozenset, position: Optional[int] = None) -> ir.Node:
    """The plan of ``rule`` restricted to heads among the over-deleted facts: the head atom is
    added to the body, read from ``(relation, "delta")`` and joined first, and the atoms of the
    stratum (``own``) are joined last, so the join starts from the over-deleted facts and only
    looks the stratum's remaining facts up. With ``position`` (a min/max relation's value),
    the head atom matches the group only: any value there."""
    body = rule.body
    lower = tuple(
        literal for literal in body if not (isinstance(literal, ast.Atom) and literal.predicate in own)
    )
    mine = tuple(literal for literal in body if isinstance(literal, ast.Atom) and literal.predicate in own)
    args = rule.head.args
    if position is not None:
        anonymous = ast.Variable("_#group", rule.head.span, anonymous=True)
        args = args[:position] + (anonymous,) + args[position + 1 :]
    head = ast.Atom(rule.head.predicate, args, rule.head.span)
    restricted = dataclasses.replace(rule, body=(head,) + lower + mine)
    return plan_rule(restricted, checked, delta_position=0).plan


def _block(checked, stratum_plan, name: str, kind: Optional[str] = None) -> LocalRelation:
    """The columns of relation ``name`` as a block of the task (``kind:name``), or as the
    stratum's relation (with its min/max) when there is no ``kind``."""
    schema = checked.relations[name]
    spec = stratum_plan.aggregates.get(name) if kind is None else None
    return LocalRelation(
        name if kind is None else f"{kind}:{name}",
        tuple(schema.column_names),
        tuple(schema.types),
        (spec.func, spec.position) if spec is not None else None,
    )
