"""Warehouses written when relations without ``.decl`` had columns ``c0, c1, ...``.

Such relations are now named after the head variables of their first rule
(``analysis.naming``), so the stored tables of an older run lack the columns the program
expects. ``refuse_former_names`` says so, and what to do, before a run starts.
"""

from __future__ import annotations

from typing import Optional

from ..analysis.checked import positional_schema
from ..errors import WarehouseError


def refuse_former_names(warehouse, program, run_id: Optional[str] = None, replace: bool = False) -> None:
    """Refuse, with ``WarehouseError`` saying what to do, a warehouse whose run ``run_id`` (or,
    for a new run without ``replace``, whose latest run) wrote ``program`` when relations without
    ``.decl`` had columns ``c0, c1, ...``: their stored tables lack the columns named after the
    head variables now (see ``analysis.naming``)."""
    former = program.former_fingerprint
    if former is None:
        return
    runs = warehouse.runs()
    same_id = [r for r in runs if run_id is not None and r["run_id"] == run_id]
    if not (same_id or replace):
        same_id = runs[-1:]
    if not same_id or same_id[0]["fingerprint"] != former:
        return
    # every one of them: the former fingerprint is that of all of them named so
    renamed = [s for s in program.checked.relations.values() if positional_schema(s) is not s]
    raise WarehouseError(
        f"the warehouse {warehouse.root} holds this program's relations as an earlier "
        f"spark_datalog wrote them, with columns c0, c1, ... for relations without .decl; these "
        f"are now named after the variables of the relation's first rule "
        f"({', '.join(map(_signature, renamed))}). Materialize again with replace=True "
        f"(--replace) to rewrite the tables with the new names, or keep them by declaring the "
        f"old names, each just before the relation's first mention (the order of the relations "
        f"is part of the program's fingerprint): "
        f"{' '.join(_signature(positional_schema(s), decl=True) for s in renamed)}"
    )


def _signature(schema, decl: bool = False) -> str:
    """``tc(X, Y)``, or with ``decl`` its declaration ``.decl tc(c0: long, c1: long)``."""
    if decl:
        return f".decl {schema.name}({', '.join(f'{c.name}: {c.type}' for c in schema.columns)})"
    return f"{schema.name}({', '.join(schema.column_names)})"
