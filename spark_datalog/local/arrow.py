"""The local backend's rows (tuples of Python values) to and from Arrow columns."""

from __future__ import annotations

import pyarrow as pa

ARROW_TYPES = {
    "int": pa.int32(),
    "long": pa.int64(),
    "double": pa.float64(),
    "string": pa.string(),
    "bool": pa.bool_(),
}


def rows(columns, count: int):
    """The ``count`` rows of Arrow columns as tuples of Python values."""
    if not columns:
        return [()] * count  # a relation without columns
    return zip(*[column.to_pylist() for column in columns])


def table_rows(table: pa.Table) -> list:
    """The rows of an Arrow table, as tuples."""
    return list(rows(table.columns, table.num_rows))


def arrays(facts: list, column_types) -> list:
    """One Arrow array per column of ``facts`` (tuples), typed by the Datalog ``column_types``;
    an integer computed into a double column becomes a float (as Spark casts it)."""
    columns = [list(values) for values in zip(*facts)] if facts else [[] for _ in column_types]
    result = []
    for values, type_ in zip(columns, column_types):
        if type_ == "double":
            values = [None if v is None else float(v) for v in values]
        result.append(pa.array(values, type=ARROW_TYPES[type_]))
    return result


def table(facts: list, column_names, column_types) -> pa.Table:
    """``facts`` (tuples) as an Arrow table with the given column names and Datalog types."""
    return pa.Table.from_arrays(arrays(facts, column_types), schema=pa.schema(
        [pa.field(name, ARROW_TYPES[type_]) for name, type_ in zip(column_names, column_types)]))
