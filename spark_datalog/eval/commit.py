"""Write a materialization into a warehouse: EDB inputs and IDB relations with signed counts.

What ``_count`` holds (the warehouse's storage model):

- EDB relations: the multiplicity of each fact (how often it occurs in the inputs and the
  program's facts).
- IDB relations of non-recursive strata without aggregates: the number of derivations — over all
  rules, the number of satisfying body assignments, each weighted by the product of the counts
  of the positive body facts it uses (negated atoms are conditions, not factors). This is what
  the counting algorithm maintains.
- IDB relations of recursive strata, aggregate relations, and strata run as a whole (numbering
  their bindings, ``autoinc()``, or making a greedy ``choice-domain``): 1 for every present
  fact. DRed maintains recursive strata by over-deletion and re-derivation and needs no counts;
  an aggregate fact has exactly one derivation, its group; a stratum run as a whole is
  recomputed (``StratumPlan.set_valued``).

Then the derivation levels of the recursive strata that keep them are computed and stored
(``incremental.levels``): the next removals reaching such a stratum over-delete only the facts
that lose their support.

Every relation gets one Delta commit in the run, all carrying the run's application transaction,
so a retried run finishes what a failed one left (see ``storage.warehouse``).
"""

from __future__ import annotations

from typing import Mapping, Optional

from pyspark.sql import functions as F

from ..incremental.levels import computed_levels, keep_levels, levels_apply
from ..spark.counted import COUNT, count_derivations
from ..spark.inputs import facts_frame
from ..spark.labels import describe


def commit_materialization(
    warehouse,
    program,
    edb_frames: Mapping,
    idb_frames: Mapping,
    run_id=None,
    replace: bool = False,
    consumed: Optional[Mapping] = None,
) -> dict:
    """Write every EDB and IDB relation of ``program`` in one warehouse run.

    ``edb_frames`` are the prepared inputs (facts included, duplicates kept as multiplicity),
    ``idb_frames`` the materialized relations. ``consumed`` maps input relations read from Delta
    tables to (version, uri). Returns relation -> Delta version produced (or kept). Run inside
    a ``spark.labels.labelled`` block: each table's Spark jobs are described by its name.
    """
    checked = program.checked
    spark = warehouse.spark
    counted = _counted_relations(spark, program, edb_frames, idb_frames)
    with warehouse.run(program.fingerprint, run_id=run_id, mode="full", replace=replace) as run:
        for name, (version, uri) in (consumed or {}).items():
            run.consume(name, version, uri)
        for name in checked.idb:  # levels kept for tables made before are not theirs
            warehouse.levels.clear(name)
        retired = sorted(set(warehouse.relations()) - set(checked.relations))
        if retired and not run.already_committed:  # another program's tables: kept, not current
            run.details["retired"] = retired
        for name, frame in counted.items():
            describe(spark, f"commit · {name}")
            schema = checked.relations[name]
            result = warehouse.replace(
                name, list(zip(schema.column_names, schema.types, strict=True)), frame, run
            )
            if name in checked.edb and name not in (consumed or {}):
                run.consume(name, result.version)
        versions = dict(run.produced)
        versions.update({n: warehouse.version(n) for n in counted if n not in versions})
    for stratum_plan in program.plans:
        if levels_apply(checked, stratum_plan):
            describe(spark, f"commit · levels of {', '.join(stratum_plan.relations)}")
            tables = computed_levels(warehouse, checked, stratum_plan, versions)
            if tables is not None:
                keep_levels(warehouse, program.fingerprint, stratum_plan, versions, tables)
    return versions


def _counted_relations(spark, program, edb_frames: Mapping, idb_frames: Mapping) -> dict:
    """Relation -> frame of its facts with ``_count`` (see the module docstring)."""
    checked = program.checked
    counted = {}
    for name in checked.edb:
        frame = edb_frames[name]
        counted[name] = _present(frame.groupBy(*frame.columns).agg(F.count(F.lit(1)).alias(COUNT)))
    for stratum_plan in program.plans:
        for name in stratum_plan.relations:
            frame = idb_frames[name]
            if stratum_plan.set_valued(name):
                counted[name] = frame.withColumn(COUNT, F.lit(1).cast("long"))
                continue
            frames = {(rel, "full"): f for rel, f in counted.items()}
            parts = [
                count_derivations(rp.plan, frames, spark) for rp in stratum_plan.rules if rp.relation == name
            ]
            facts = checked.facts.get(name)
            if facts:  # an unconditional fact is one derivation
                parts.append(
                    facts_frame(spark, checked.relations[name], facts).withColumn(
                        COUNT, F.lit(1).cast("long")
                    )
                )
            union = parts[0]
            for part in parts[1:]:
                union = union.unionByName(part)
            counted[name] = _present(union.groupBy(*frame.columns).agg(F.sum(COUNT).alias(COUNT)))
    return counted


def _present(counted):
    """The facts of a counted frame: a grouping by no columns (a nullary relation) gives one row
    even over no input, with count 0 or a null sum, which is no fact."""
    return counted.where(F.col(COUNT) > 0) if not counted.columns[:-1] else counted


def committed_versions(warehouse, program, run_id) -> Optional[dict]:
    """The versions run ``run_id`` produced when it committed with this program, else ``None``
    (a run id committed with another program is refused when the run starts)."""
    record = warehouse.committed_run(run_id)
    if record is None or record["fingerprint"] != program.fingerprint:
        return None
    return dict(record["produced"])


def record_if_unchanged(
    warehouse, program, given: set, consumed: Mapping, run_id=None, replace: bool = False
) -> Optional[dict]:
    """When the program and its input versions are those of the last committed run and every
    table is as that run left it, record the run as committed without evaluating or writing
    anything and return the tables' versions; else ``None``.

    ``given`` names the relations with inputs, ``consumed`` maps those read from Delta tables to
    (version, uri): an input of another kind (a DataFrame, CSV, Parquet) has no version, so it
    always counts as changed.
    """
    versions = _unchanged_versions(warehouse, program, given, consumed)
    if versions is None:
        return None
    last = warehouse.last_run()
    with warehouse.run(program.fingerprint, run_id=run_id, mode="full", replace=replace) as run:
        if not run.already_committed:
            for name in program.checked.edb:
                version, uri = consumed.get(name, (versions[name], None))
                run.consume(name, version, uri)
            run.produced.update(versions)
            run.details["unchanged_since"] = last["run_id"]
    return versions


def _unchanged_versions(warehouse, program, given: set, consumed: Mapping) -> Optional[dict]:
    last = warehouse.last_run()
    if last is None or last["fingerprint"] != program.fingerprint or warehouse.pending_run() is not None:
        return None
    checked = program.checked
    for name in checked.edb:
        if name in consumed:
            version, uri = consumed[name]
            if last["consumed"].get(name) != version or last["sources"].get(name) != uri:
                return None
        elif name in given or name in last["sources"]:
            return None
    current = {name: warehouse.version(name) for name in checked.relations}
    left = {name: last["produced"].get(name, last["base_versions"].get(name)) for name in checked.relations}
    if None in current.values() or current != left:
        return None
    return current


def current_versions(warehouse, program) -> Optional[dict]:
    """Relation -> stored version when the warehouse holds ``program``'s relations as its last
    committed run left them (no run pending, no table changed since), else ``None``. Relations
    the run did not store map to ``None``."""
    last = warehouse.last_run()
    if last is None or last["fingerprint"] != program.fingerprint or warehouse.pending_run() is not None:
        return None
    versions = {}
    for name in program.checked.relations:
        left = last["produced"].get(name, last["base_versions"].get(name))
        current = warehouse.version(name) if warehouse.exists(name) else None
        if current != left:
            return None
        versions[name] = current
    return versions
