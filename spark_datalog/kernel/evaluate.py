"""A whole program on the kernel, stratum by stratum (what tests compare with the reference)."""

from __future__ import annotations

from typing import Mapping, Optional

import polars as pl
import pyarrow as pa

from ..bounds import MAX_ITERATIONS
from .fixpoint import evaluate_stratum
from .frames import facts_table, to_frame, to_table
from .index import DEFAULT, IndexPolicy


def evaluate_program(
    program,
    inputs: Mapping[str, pa.Table],
    max_iterations: Optional[int] = MAX_ITERATIONS,
    index: IndexPolicy = DEFAULT,
) -> dict:
    """The relations ``program`` (an ``sd.Program``) returns, as Arrow tables, from ``inputs``
    (EDB relation -> Arrow table; a missing one is empty), planned as the Spark path plans it
    (``program.plans``); ``index``: when relations index their known facts.

    >>> import spark_datalog as sd
    >>> p = sd.Program.parse(".input e\\ntc(X, Y) :- e(X, Y).\\ntc(X, Z) :- tc(X, Y), e(Y, Z).")
    >>> sorted(evaluate_program(p, {"e": pa.table({"a": [1, 2], "b": [2, 3]})})["tc"].to_pylist(),
    ...        key=lambda r: (r["X"], r["Y"]))
    [{'X': 1, 'Y': 2}, {'X': 1, 'Y': 3}, {'X': 2, 'Y': 3}]
    """
    checked = program.checked
    inputs = checked.bound_inputs(inputs)
    relations = {name: _edb(checked, name, inputs.get(name)) for name in checked.edb}
    for plan in program.plans:
        relations.update(evaluate_stratum(plan, checked, relations, max_iterations, index))
    return {name: relations[name] for name in checked.returned if name in relations}


def _edb(checked, name: str, table: Optional[pa.Table]) -> pa.Table:
    """The input of an EDB relation with the program's facts of it, as a set."""
    schema = checked.relations[name]
    names, types = schema.column_names, schema.types
    parts = [to_frame(facts_table(names, types, checked.facts.get(name, ())), types)]
    if table is not None:
        parts.append(
            to_frame(table, types).rename(dict(zip(table.column_names, parts[0].columns, strict=True)))
        )
    return to_table(pl.concat(parts, how="vertical").unique(), names, types)
