"""The local backend's rows (tuples of Python values) to and from Arrow columns."""

from __future__ import annotations

import weakref
from operator import itemgetter
from typing import Iterable, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..reference.terms import NAN

ARROW_TYPES = {
    "int": pa.int32(),
    "long": pa.int64(),
    "double": pa.float64(),
    "string": pa.string(),
    "bool": pa.bool_(),
}


def rows(columns, count: int) -> Iterable[tuple]:
    """The ``count`` rows of Arrow columns as tuples of Python values (doubles canonical:
    ``reference.terms.normal``)."""
    if not columns:
        return [()] * count  # a relation without columns
    return zip(*[values(column) for column in columns], strict=True)


def values(column) -> list:
    """An Arrow column's Python values; in a double column -0.0 is 0.0 and every NaN is the one
    ``reference.terms.NAN`` (so that sets and dicts see one NaN), as in Spark."""
    if not pa.types.is_floating(column.type):
        return column.to_pylist()
    column = pc.add(column, 0.0)  # -0.0 + 0.0 is 0.0
    if not pc.any(pc.is_nan(column)).as_py():
        return column.to_pylist()
    return [NAN if v != v else v for v in column.to_pylist()]


def transposed(facts, width: int) -> list:
    """The columns (lists) of ``facts``, tuples of ``width`` values (``zip(*facts)`` is much
    slower on many facts)."""
    facts = facts if isinstance(facts, list) else list(facts)
    return [list(map(itemgetter(i), facts)) for i in range(width)]


def table_rows(table: pa.Table) -> list:
    """The rows of an Arrow table, as tuples."""
    return list(rows(table.columns, table.num_rows))


def rows_at(table: pa.Table, indexes: list) -> list:
    """The rows of an Arrow table at ``indexes``, as tuples (none, a table without columns:
    both keep their rows)."""
    if not table.num_columns:
        return [()] * len(indexes)
    return table_rows(table.take(pa.array(indexes, pa.int64())))


def arrays(facts: list, column_types) -> list:
    """One Arrow array per column of ``facts`` (tuples), typed by the Datalog ``column_types``;
    an integer computed into a double column becomes a float (as Spark casts it)."""
    columns = transposed(facts, len(column_types))
    result = []
    for values, type_ in zip(columns, column_types, strict=True):
        if type_ == "double":
            values = [None if v is None else float(v) for v in values]
        result.append(pa.array(values, type=ARROW_TYPES[type_]))
    return result


def table(facts: list, column_names, column_types) -> pa.Table:
    """``facts`` (tuples) as an Arrow table with the given column names and Datalog types."""
    if not column_types:
        return without_columns(len(facts))
    return pa.Table.from_arrays(
        arrays(facts, column_types),
        schema=pa.schema(
            [
                pa.field(name, ARROW_TYPES[type_])
                for name, type_ in zip(column_names, column_types, strict=True)
            ]
        ),
    )


def without_columns(count: int) -> pa.Table:
    """An Arrow table of ``count`` rows and no columns (a nullary relation's facts)."""
    return pa.table({"_": pa.nulls(count)}).drop_columns(["_"])


# what a value that Arrow cannot hold or compare in a column raises (a string with a lone
# surrogate has no UTF-8 form)
MISFITS = (
    pa.ArrowInvalid,
    pa.ArrowTypeError,
    pa.ArrowNotImplementedError,
    TypeError,
    OverflowError,
    UnicodeEncodeError,
)


def is_held(rows) -> bool:
    """Whether ``rows`` is a pyarrow Table that the local backend probes by key in bulk
    (``matching``) instead of converting every row to a tuple: one with columns, none of them
    floating point (whose NaN and ``-0.0`` Python sets and Arrow kernels compare differently)."""
    return (
        isinstance(rows, pa.Table)
        and rows.num_columns > 0
        and not any(pa.types.is_floating(f.type) for f in rows.schema)
    )


def matching(table: pa.Table, positions: list, wanted) -> "pa.Table | None":
    """The rows of ``table`` whose values at ``positions`` are among ``wanted`` (bare values
    for one position, tuples for several): one vectorized filter or semi-join. None when a
    wanted value does not fit the column's type, or Arrow cannot join on it (the caller then
    compares tuples)."""
    import pyarrow.compute as pc

    if not wanted:
        return table.slice(0, 0)
    sorted_keys = _sorted_keys(table, tuple(positions))
    if sorted_keys is not None:
        found = sorted_keys.rows(table, wanted, len(positions) == 1)
        if found is not None:
            return found
    try:
        if len(positions) == 1:
            column = table.column(positions[0])
            return table.filter(pc.is_in(column, value_set=pa.array(list(wanted), column.type)))
        names = [table.column_names[p] for p in positions]
        keys = pa.Table.from_arrays(
            [
                pa.array(values, table.schema.field(p).type)
                for values, p in zip(transposed(wanted, len(positions)), positions, strict=True)
            ],
            names=names,
        )
        return table.join(keys, names, join_type="left semi")
    except MISFITS:
        return None


# A table probed this often on the same integer key columns gets them sorted once
# (``SortedKeys``): each later probe costs a binary search per wanted key instead of a pass
# over the whole table. Sorting 400,000 keys costs about as much as 8 to 10 such passes
# (measured: 26 ms against 2-3 ms), so it pays once as many probes were made (rent or buy).
SORT_AFTER_PROBES = 8
SORT_MIN_ROWS = 20_000
# (id(table), positions) -> probes so far, the table's SortedKeys, or None (not sortable)
_probes: dict = {}


class SortedKeys:
    """The rows of a table ordered by integer key columns, packed into one int64 per row
    (each column's value less its minimum, times the spans of the columns after it)."""

    def __init__(self, order, keys, lows, spans):  # no reference to the table: see _probes
        self.order, self.keys, self.lows, self.spans = order, keys, lows, spans

    @classmethod
    def build(cls, table: pa.Table, positions: tuple) -> "Optional[SortedKeys]":
        """None when a key column is not a signed integer column without nulls, or the packed
        keys would not fit in an int64."""
        import pyarrow.compute as pc

        if not table.num_rows:
            return None
        columns, lows, spans = [], [], []
        for position in positions:
            column = table.column(position)
            if not pa.types.is_signed_integer(column.type) or column.null_count:
                return None
            bounds = pc.min_max(column)
            low, high = bounds["min"].as_py(), bounds["max"].as_py()
            columns.append(column.to_numpy().astype(np.int64))
            lows.append(low)
            spans.append(high - low + 1)
        total = 1
        for span in spans:
            total *= span
        if total >= 2**62:
            return None
        keys = np.zeros(table.num_rows, dtype=np.int64)
        for column, low, span in zip(columns, lows, spans, strict=True):
            keys = keys * span + (column - low)
        order = np.argsort(keys, kind="stable")
        return cls(order, keys[order], lows, spans)

    def rows(self, table: pa.Table, wanted, single: bool) -> "Optional[pa.Table]":
        """The rows of ``table`` (the one sorted) whose key is among ``wanted`` (bare values
        when ``single``, else tuples), in the table's order; None when a wanted value is not
        an int of 64 bits."""
        columns = [list(wanted)] if single else transposed(wanted, len(self.lows))
        probes = inside = None
        for values, low, span in zip(columns, self.lows, self.spans, strict=True):
            values = np.array(values)
            if values.dtype.kind != "i":  # bools, floats, strings, ints beyond 64 bits
                return None
            fits = (values >= low) & (values <= low + span - 1)  # before any overflow
            inside = fits if inside is None else inside & fits
            values = np.where(fits, values, low).astype(np.int64) - low
            probes = values if probes is None else probes * span + values
        assert probes is not None and inside is not None  # one key column at least
        probes = probes[inside]
        if not probes.size:
            return table.slice(0, 0)
        starts = np.searchsorted(self.keys, probes, "left")
        counts = np.searchsorted(self.keys, probes, "right") - starts
        total = int(counts.sum())
        if not total:
            return table.slice(0, 0)
        # the positions of every run [start, start + count) in one array
        offsets = np.repeat(starts - (np.cumsum(counts) - counts), counts)
        return table.take(np.sort(self.order[np.arange(total) + offsets]))


def _sorted_keys(table: pa.Table, positions: tuple) -> "Optional[SortedKeys]":
    """The table's ``SortedKeys`` on ``positions`` once it was probed ``SORT_AFTER_PROBES``
    times on them, else None (kept while the table lives)."""
    if table.num_rows < SORT_MIN_ROWS:
        return None
    entry = (id(table), positions)
    if entry not in _probes:
        _probes[entry] = 0
        weakref.finalize(table, _probes.pop, entry, None)
    seen = _probes[entry]
    if seen is None or isinstance(seen, SortedKeys):  # None: keys that cannot be sorted
        return seen
    if seen + 1 < SORT_AFTER_PROBES:
        _probes[entry] = seen + 1
        return None
    _probes[entry] = SortedKeys.build(table, positions)
    return _probes[entry]


def like(table: pa.Table, facts) -> pa.Table:
    """``facts`` (tuples) as a table of ``table``'s schema."""
    columns = transposed(facts, table.num_columns)
    return pa.Table.from_arrays(
        [pa.array(values, f.type) for values, f in zip(columns, table.schema, strict=True)],
        schema=table.schema,
    )


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
