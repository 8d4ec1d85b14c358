"""The local backend's rows (tuples of Python values) to and from Arrow columns."""

from __future__ import annotations

from operator import itemgetter

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


def transposed(facts, width: int) -> list:
    """The columns (lists) of ``facts``, tuples of ``width`` values (``zip(*facts)`` is much
    slower on many facts)."""
    facts = facts if isinstance(facts, list) else list(facts)
    return [list(map(itemgetter(i), facts)) for i in range(width)]


def table_rows(table: pa.Table) -> list:
    """The rows of an Arrow table, as tuples."""
    return list(rows(table.columns, table.num_rows))


def arrays(facts: list, column_types) -> list:
    """One Arrow array per column of ``facts`` (tuples), typed by the Datalog ``column_types``;
    an integer computed into a double column becomes a float (as Spark casts it)."""
    columns = transposed(facts, len(column_types))
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


# what a value that Arrow cannot hold or compare in a column raises (a string with a lone
# surrogate has no UTF-8 form)
MISFITS = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError,
           OverflowError, UnicodeEncodeError)


def is_held(rows) -> bool:
    """Whether ``rows`` is a pyarrow Table that the local backend probes by key in bulk
    (``matching``) instead of converting every row to a tuple: one with columns, none of them
    floating point (whose NaN and ``-0.0`` Python sets and Arrow kernels compare differently)."""
    return (isinstance(rows, pa.Table) and rows.num_columns > 0
            and not any(pa.types.is_floating(f.type) for f in rows.schema))


def matching(table: pa.Table, positions: list, wanted) -> "pa.Table | None":
    """The rows of ``table`` whose values at ``positions`` are among ``wanted`` (bare values
    for one position, tuples for several): one vectorized filter or semi-join. None when a
    wanted value does not fit the column's type, or Arrow cannot join on it (the caller then
    compares tuples)."""
    import pyarrow.compute as pc

    if not wanted:
        return table.slice(0, 0)
    try:
        if len(positions) == 1:
            column = table.column(positions[0])
            return table.filter(pc.is_in(column, value_set=pa.array(list(wanted), column.type)))
        names = [table.column_names[p] for p in positions]
        keys = pa.Table.from_arrays(
            [pa.array(values, table.schema.field(p).type)
             for values, p in zip(transposed(wanted, len(positions)), positions)], names=names)
        return table.join(keys, names, join_type="left semi")
    except MISFITS:
        return None


def like(table: pa.Table, facts) -> pa.Table:
    """``facts`` (tuples) as a table of ``table``'s schema."""
    columns = transposed(facts, table.num_columns)
    return pa.Table.from_arrays([pa.array(values, f.type)
                                 for values, f in zip(columns, table.schema)],
                                schema=table.schema)


def among(table: pa.Table, facts) -> set:
    """The ``facts`` (tuples, whole rows) that ``table`` holds."""
    facts = set(facts)
    wanted = {f[0] for f in facts} if table.num_columns == 1 else facts
    found = matching(table, list(range(table.num_columns)), wanted)
    if found is None:
        return facts & set(table_rows(table))
    return set(table_rows(found))


def without(table: pa.Table, facts) -> pa.Table:
    """``table`` without the rows equal to one of ``facts`` (tuples, whole rows)."""
    if not facts:
        return table
    try:
        return table.join(like(table, list(facts)), table.column_names, join_type="left anti")
    except MISFITS:
        gone = set(facts)
        return like(table, [row for row in table_rows(table) if row not in gone])
