"""Arrow in and out of the kernel: relations as Polars frames, results as Arrow tables.

``pl.from_arrow`` takes an Arrow table's buffers without copying them. On the way in, doubles
are made canonical (``-0.0`` is ``0.0``; Polars hashes every NaN alike already) and a table
without columns becomes a frame of one :data:`~.types.UNIT` column, so that it keeps its rows.
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence

import polars as pl
import pyarrow as pa

from ..record_types import as_struct, is_record
from ..reference.terms import coerce
from ..storage.schema import without_columns
from .expressions import canonical
from .types import ARROW_TYPES, UNIT, polars_type


def to_frame(table: pa.Table, types: Optional[Sequence[str]] = None) -> pl.DataFrame:
    """The rows of an Arrow table as a Polars frame; ``types``: the relation's Datalog types,
    which the columns are cast to (an input may hold a narrower integer type).

    >>> to_frame(pa.table({"x": [-0.0]}))["x"].to_list()
    [0.0]
    """
    if table.num_columns == 0:
        return unit_frame(table.num_rows)
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    casts = []
    for position, (name, dtype) in enumerate(frame.schema.items()):
        target = polars_type(types[position]) if types is not None else dtype
        column = pl.col(name) if target == dtype else pl.col(name).cast(target)
        if target.is_float():
            casts.append(canonical(column).alias(name))
        elif target != dtype:
            casts.append(column.alias(name))
    return frame.with_columns(casts) if casts else frame


def distinct_rows(table: pa.Table) -> pa.Table:
    """``table`` without repeated rows, its schema unchanged (a table without columns keeps
    at most one row).

    >>> distinct_rows(pa.table({"x": [1, 1, 2]})).num_rows
    2
    """
    if table.num_columns == 0:
        return without_columns(min(table.num_rows, 1))
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    # Polars: 2M rows of two longs in 0.12-0.22 s; pyarrow's group_by took 0.5-0.57 s
    return frame.unique().to_arrow().cast(table.schema)


def unit_frame(rows: int) -> pl.DataFrame:
    """A frame of a relation without columns holding ``rows`` rows (0 or 1 for a set)."""
    return pl.DataFrame({UNIT: pl.repeat(True, rows, dtype=pl.Boolean, eager=True)})


def to_table(frame: pl.DataFrame, names: Sequence[str], types: Sequence[str]) -> pa.Table:
    """A kernel frame (its columns in relation order) as an Arrow table with the relation's
    column ``names`` and exactly its Datalog ``types``.

    >>> to_table(pl.DataFrame({"a": [1]}), ["x"], ["int"]).schema.types
    [DataType(int32)]
    """
    if not names:
        return without_columns(frame.height)
    columns = [
        pl.nth(i).cast(polars_type(t)).alias(n) for i, (n, t) in enumerate(zip(names, types, strict=True))
    ]
    table = frame.select(columns).to_arrow()
    schema = pa.schema([(n, ARROW_TYPES[t]) for n, t in zip(names, types, strict=True)])
    return table.cast(schema) if table.schema != schema else table


def facts_table(names: Sequence[str], types: Sequence[str], rows: Iterable[tuple]) -> pa.Table:
    """The stated facts of a relation (program constants, few) as an Arrow table; a value
    its column's type cannot hold raises TypeError.

    >>> facts_table(["x"], ["long"], [(3,)]).to_pylist()
    [{'x': 3}]
    """
    return rows_table(
        names, types, [tuple(coerce(v, t) for v, t in zip(row, types, strict=True)) for row in rows]
    )


def rows_table(names: Sequence[str], types: Sequence[str], rows: Iterable[tuple]) -> pa.Table:
    """Rows (tuples of Python values; None is null, an int in a double column a float) as an
    Arrow table with the relation's column ``names`` and Datalog ``types``.

    >>> rows_table(["x", "y"], ["double", "string"], [(1, None)]).to_pylist()
    [{'x': 1.0, 'y': None}]
    """
    rows = rows if isinstance(rows, list) else list(rows)
    if not names:
        return without_columns(len(rows))
    schema = {name: polars_type(t) for name, t in zip(names, types, strict=True)}
    if any(map(is_record, types)):  # Polars reads a nested tuple as a list: records as dicts
        rows = [tuple(as_struct(v, t) for v, t in zip(row, types, strict=True)) for row in rows]
    return to_table(pl.DataFrame(rows, schema=schema, orient="row"), names, types)
