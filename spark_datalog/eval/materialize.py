"""Program.materialize: inputs in, every derived relation out (and, optionally, into a warehouse).

This module only wires the pieces together: input typing and checking (spark.inputs), the
fixpoint driver (eval.driver) and the warehouse (storage). It holds no evaluation logic.
"""

from __future__ import annotations

import logging
from typing import Mapping, Optional

from ..bounds import MAX_ITERATIONS
from ..errors import InputError

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
):
    """See :meth:`spark_datalog.Program.materialize`."""
    from ..program import Materialization
    from ..spark.inputs import input_types, prepare_inputs
    from .driver import evaluate

    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, not {strategy!r}")
    if on_null not in ON_NULL:
        raise ValueError(f"on_null must be one of {ON_NULL}, not {on_null!r}")
    if checkpoint_interval is not None and checkpoint_interval < 1:
        raise ValueError("checkpoint_interval must be a positive number of iterations")

    unknown = sorted(set(inputs) - set(program.checked.relations))
    if unknown:
        raise InputError(f"inputs given for relations the program does not mention: {', '.join(unknown)}")
    not_edb = sorted(n for n in inputs if program.checked.relations[n].kind != "edb")
    if not_edb:
        raise InputError(
            f"inputs given for derived (IDB) relations: {', '.join(not_edb)}; "
            "only EDB relations (declared .input or never in a rule head) take inputs"
        )

    frames_in, consumed = read_located_inputs(spark, program.checked, inputs)

    # Undeclared relations take their column types from the input frames.
    program = program.with_input_types(input_types(program.checked, frames_in))
    checked = program.checked
    if warehouse is not None:  # refuse a foreign program before spending the evaluation on it
        warehouse.check_program(program.fingerprint, replace=replace)
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
    result = Materialization(frames=returned_frames, stats=stats, program=program)
    if warehouse is not None:  # the outputs and every relation they need
        from .commit import commit_materialization

        result.warehouse_versions = commit_materialization(
            warehouse, program, frames, derived, run_id=run_id, replace=replace, consumed=consumed
        )
    for name, frame in derived.items():  # what only the outputs needed: no longer held
        if name not in returned_frames:
            frame.unpersist(blocking=False)
    return result


def read_located_inputs(spark, checked, inputs: Mapping[str, object]) -> tuple:
    """Inputs given as a location (``"path"`` or ``("path", "csv")``) read into DataFrames;
    DataFrames pass through unchanged. Returns (frames, consumed) where ``consumed`` maps each
    relation read from a Delta table to (version read, uri)."""
    from ..storage.locations import load_input

    frames, consumed = {}, {}
    for name, value in inputs.items():
        if isinstance(value, (str, tuple)):
            uri, fmt = (value, None) if isinstance(value, str) else value
            schema = checked.relations[name]
            table = load_input(spark, uri, fmt, list(zip(schema.column_names, schema.types)), name)
            frames[name] = table.df
            if table.version is not None:
                consumed[name] = (table.version, table.uri)
        else:
            frames[name] = value
    return frames, consumed
