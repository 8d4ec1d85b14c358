"""Program.materialize: inputs in, every derived relation out (and, optionally, into a warehouse).

This module only wires the pieces together: input typing and checking (spark.inputs), the
fixpoint driver (eval.driver) and the warehouse (storage). It holds no evaluation logic.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Mapping, Optional, TypeGuard

from .. import progress
from ..bounds import MAX_ITERATIONS
from ..errors import InputError
from ..spark.labels import group_id, labelled

if TYPE_CHECKING:
    from ..program import Materialization

log = logging.getLogger("spark_datalog")

STRATEGIES = ("seminaive", "naive")
ON_NULL = ("error", "drop")


def materialize(
    program,
    spark,
    inputs: Mapping[str, object],
    strategy: str = "seminaive",
    max_iterations: Optional[int] = MAX_ITERATIONS,
    checkpoint_interval: int = 10,
    on_null: str = "error",
    warehouse=None,
    run_id: Optional[str] = None,
    replace: bool = False,
    decompose: bool = True,
) -> "Materialization":
    """See :meth:`spark_datalog.Program.materialize`."""
    from ..spark.inputs import input_types, prepare_inputs
    from .former_names import refuse_former_names
    from .driver import evaluate

    _check_arguments(program, inputs, strategy, on_null, checkpoint_interval)
    if warehouse is not None:  # an unwritable warehouse fails now, not after the evaluation
        warehouse.check_writable()
        done = _stored_result(program, warehouse, run_id)  # a committed run id is not run again
        if done is not None:
            return done
    with labelled(spark, f"inputs · {', '.join(inputs) or 'program facts'}", group_id("inputs")):
        frames_in, consumed = read_located_inputs(spark, program.checked, inputs)

    # Undeclared relations take their column types from the input frames.
    program = program.with_input_types(input_types(program.checked, frames_in))
    checked = program.checked
    if warehouse is not None:  # refuse a foreign program before spending the evaluation on it
        refuse_former_names(warehouse, program, run_id, replace)
        warehouse.check_program(program.fingerprint, replace=replace)
        done = _stored_result(program, warehouse, run_id, set(inputs), consumed, replace)
        if done is not None:
            return done
    with labelled(spark, f"inputs · check {', '.join(checked.edb) or 'no inputs'}", group_id("inputs")):
        frames = prepare_inputs(spark, checked, frames_in, on_null=on_null)
    results, stats = evaluate(
        spark,
        checked,
        program.plans,
        frames,
        strategy=strategy,
        max_iterations=max_iterations,
        checkpoint_interval=checkpoint_interval,
        decompose=decompose,
    )
    derived = {name: results[name] for name in checked.idb if name in results}
    facts = {**frames, **derived}
    returned_frames = {name: facts[name] for name in checked.returned}
    answers = _answers(spark, program, facts)
    result = _result(program, frames=returned_frames, stats=stats, run_id=run_id, answers=answers)
    if warehouse is not None:  # the outputs and every relation they need
        from .commit import commit_materialization

        progress.step("committing %d relations to %s", len(frames) + len(derived), warehouse.root)
        with labelled(spark, "commit", group_id("commit")):
            result.warehouse_versions = commit_materialization(
                warehouse, program, frames, derived, run_id=run_id, replace=replace, consumed=consumed
            )
    for name, frame in derived.items():  # what only the outputs needed: no longer held
        if name not in returned_frames:
            frame.unpersist(blocking=False)
    return result


def _check_arguments(program, inputs, strategy: str, on_null: str, checkpoint_interval) -> None:
    from ..spark.inputs import require_mapping
    from ..spark.limits import check_spark_limits

    check_spark_limits(program.checked)

    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, not {strategy!r}")
    if on_null not in ON_NULL:
        raise ValueError(f"on_null must be one of {ON_NULL}, not {on_null!r}")
    if checkpoint_interval is not None and checkpoint_interval < 1:
        raise ValueError("checkpoint_interval must be a positive number of iterations")
    require_mapping(inputs, "inputs")
    unknown = sorted(set(inputs) - set(program.checked.relations))
    if unknown:
        raise InputError(f"inputs given for relations the program does not mention: {', '.join(unknown)}")
    not_edb = sorted(n for n in inputs if program.checked.relations[n].kind != "edb")
    if not_edb:
        raise InputError(
            f"inputs given for derived (IDB) relations: {', '.join(not_edb)}; "
            "only EDB relations (declared .input or never in a rule head) take inputs"
        )


def _stored_result(program, warehouse, run_id, given=None, consumed=None, replace: bool = False):
    """Without evaluating: the result of run ``run_id`` when it has committed; with ``given``
    (the relations with inputs), the result recorded as a new run when nothing changed since
    the last committed run (``commit.record_if_unchanged``). ``None`` when there is work to do."""
    from .commit import committed_versions, record_if_unchanged

    versions = committed_versions(warehouse, program, run_id)
    skipped = "already committed"
    if versions is None and given is not None:
        versions = record_if_unchanged(warehouse, program, given, consumed, run_id=run_id, replace=replace)
        skipped = "unchanged"
    if versions is None:
        return None
    if skipped == "already committed":
        log.info("run %s is already committed; nothing done", run_id)
    stored = {name: version for name, version in versions.items() if version is not None}
    frames = {
        name: warehouse.read(name, version=stored[name])
        for name in program.checked.returned
        if name in stored
    }
    queried = {q.atom.predicate for q in program.checked.queries} & set(stored)
    read = {name: warehouse.read(name, version=stored[name]) for name in queried}
    answers = _answers(warehouse.spark, program, read)
    return _result(
        program, frames=frames, warehouse_versions=versions, skipped=skipped, run_id=run_id, answers=answers
    )


def _answers(spark, program, facts: Mapping) -> list:
    """The answers of the program's ``?-`` queries, read from the relations' ``facts``."""
    from ..query.run import read_answers

    answers = []
    for query in program.checked.queries:
        if query.atom.predicate in facts:
            with labelled(spark, f"query · {query.atom}", group_id("query")):
                answers.append(read_answers(spark, program, query, facts[query.atom.predicate]))
    return answers


def _result(program, **fields):
    from ..program import Materialization

    return Materialization(program=program, **fields)


def read_located_inputs(spark, checked, inputs: Mapping[str, object]) -> tuple:
    """Inputs given as a location (``"path"`` or ``("path", "csv")``) read into DataFrames;
    DataFrames pass through unchanged, pandas DataFrames and pyarrow Tables are converted
    (``spark.inputs.input_frame``; anything else is an ``InputError``). Returns (frames,
    consumed) where ``consumed`` maps each relation read from a Delta table to (version read, uri)."""
    from ..spark.inputs import input_frame
    from ..storage.locations import load_input

    frames, consumed = {}, {}
    for name, value in inputs.items():
        if isinstance(value, str) or _is_location_pair(value):
            uri, fmt = (value, None) if isinstance(value, str) else value
            schema = checked.relations[name]
            columns = list(zip(schema.column_names, schema.types, strict=True))
            table = load_input(spark, uri, fmt, columns, name)
            frames[name] = table.df
            if table.version is not None:
                consumed[name] = (table.version, table.uri)
        else:
            frames[name] = input_frame(spark, name, value)
    return frames, consumed


def _is_location_pair(value: object) -> TypeGuard[tuple[str, str]]:
    return isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, str) for v in value)
