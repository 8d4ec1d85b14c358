"""DRed of a small recursive stratum as one Spark task (``kernel.dred``).

``incremental.dred`` runs each phase as rounds of Spark joins, one or two jobs per round: on a
small stratum those jobs' fixed cost is the whole update (a deletion that over-deletes most of a
reachable set takes dozens of rounds). Here the stratum's old facts, the lower relations before,
and their changes are sent, tagged, into one partition (not the lower relations after: the task
makes them from the others), whose task runs the three phases in memory and yields the inserted
and deleted facts: one Spark job. When the inputs are
more than ``spark.datalog.taskMemory`` allows a task (``settings.Settings.local_facts``), or the
executors cannot import the kernel, the caller runs the Spark rounds instead (the result is the
same).
"""

from __future__ import annotations

import logging
from typing import Mapping, Optional, Union

from ..eval.stats import non_termination
from ..eval import partitioned
from ..eval.checkpoint import release
from ..kernel.dred import DredTask, run_dred
from ..plan.maintenance import dred_plans, relation_shape
from ..placement import Declined
from ..settings import KERNEL_VALUE_BYTES, TASK_MEMORY_SETTING, settings_of
from ..spark.labels import labelled

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
    ``incremental.dred.dred_changes`` computes them (same arguments; ``new`` is not read: the
    task makes the new lower states from the old ones and the changes), or
    ``placement.Declined`` when the stratum is too large for one task (or the executors cannot
    run it)."""
    relations = tuple(stratum_plan.relations)
    plans = dred_plans(checked, stratum_plan, set(inserted), set(deleted))
    parts = [("old", name, old[name]) for name in relations]
    parts += [("old", name, frame) for name, frame in old.items() if name not in relations]
    parts += [("inserted", name, frame) for name, frame in inserted.items()]
    parts += [("deleted", name, frame) for name, frame in deleted.items()]
    inputs = tuple(relation_shape(checked, stratum_plan, name, kind) for kind, name, _ in parts)
    outputs = tuple(
        relation_shape(checked, stratum_plan, name, kind)
        for name in relations
        for kind in ("inserted", "deleted")
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
