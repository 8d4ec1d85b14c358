"""Data files of the embedded path: Parquet files clustered by key, with Delta statistics.

Every write sorts the rows on the relation's columns and cuts them into files of at most
``rows_per_file`` rows, so that a file holds a narrow range of facts. Each file's AddAction
carries the Delta statistics of its Parquet footer (``numRecords``, ``minValues``,
``maxValues``, ``nullCount``; see ``file_stats``). From them a change finds the files it may
touch in the log alone (``candidates``), and Spark and delta-rs readers skip files by them too.

Two writers, one layout: Arrow tables the driver already holds, and frames of at most
``spark.datalog.driverRows`` rows (collected: the only Spark job), are written with pyarrow from the driver,
larger frames by Spark (a global sort, then ``maxRecordsPerFile``). Such changes are also netted
and merged with the files they touch on the driver (``net_rows``, ``merge_rows``), grouping as
Spark does: nulls equal each other, ``-0.0`` equals ``0.0`` and NaN equals NaN, and struct
columns (records) field by field (``_keys``: Arrow joins and groups take no struct keys).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence
from urllib.parse import quote

from ..errors import SchemaError
from . import uris
from .schema import COUNT_COLUMN, Columns, arrow_schema, without_columns

if TYPE_CHECKING:
    import pyarrow as pa

# Rows per data file: ``spark.datalog.rowsPerFile`` (``settings``, 131,072 by default). A change
# rewrites the files holding facts it touches, so a file is the unit of rewrite cost, and the facts
# of one small change are often spread (deleting one edge of a tree removes a fact of every
# ancestor: 12 files of tc over the 3-ary tree of depth 12). Measured there (9.2M facts,
# ``benchmarks/results/scale-incremental-tc-tree3-12.md``): at 1M rows per file (about 8 MB for
# two long columns) the 1-edge delete rewrote 8.4M rows in 2.6 s; at 131,072 rows, 1.6M rows in
# 0.4 s; at 65,536, 0.8M rows in 0.2 s. Materializing took 31-33 s at each size (one run each; an
# A/B of old and new code hinted at ~1 s more for 131,072, within this machine's noise). Spark
# packs small files into 128 MB splits when it scans; 131,072 keeps a 100M-fact
# relation at ~800 files.
# How many rows are collected, merged in the driver or broadcast: ``spark_datalog.settings``
# (driverRows, driverMergeRows, lookupBroadcastRows).
# Longer strings get no maximum in the statistics (Delta readers truncate to 32 characters too).
STATS_STRING_CHARS = 32

_FILE = "__file"
_UNIT = "__unit"
_ROW = "__row"
_PYTHON_TYPES = {"int": int, "long": int, "string": str, "bool": bool}


@dataclass
class DataFile:
    """A written data file: its Delta ``AddAction`` and its number of rows."""

    action: object
    rows: int


def new_folder(sequence: int) -> str:
    """A fresh folder name for the files of one write of run ``sequence``."""
    return f"run-{sequence:06d}-{uuid.uuid4().hex[:12]}"


# --------------------------------------------------------------------------------------------
# writing


# Above this estimated size (Spark's optimizer statistics) a frame of unknown row count is
# counted before it is collected, rather than collected through ``limit``, which moves every row
# to one partition: 1M rows of two longs (16 MB) took 0.55-0.9 s through the limit, 0.3-0.45 s
# counted then collected; a small frame is cheaper in the one job of the limit.
COUNT_FIRST_BYTES = 8 << 20
# What Spark estimates for a plan it cannot size (``spark.sql.defaultSizeInBytes``): frames
# built from Python data, for one.
_UNKNOWN_BYTES = (1 << 63) - 1


def collect_small(df, limit: int, count_first_bytes: int = COUNT_FIRST_BYTES) -> "Optional[pa.Table]":
    """``df`` as an Arrow table when it has at most ``limit`` rows, else ``None``.

    A frame whose row count Spark knows (``plan_statistics``) or that Spark estimates at over
    ``count_first_bytes`` is collected as it is once its count is known (such a frame is
    counted first), or not at all when it has too many rows; any other is collected through
    ``limit(limit + 1)`` (one job).

    >>> collect_small(spark.range(3), 2) is None  # doctest: +SKIP
    True
    """
    if limit <= 0:
        return None
    rows, size = plan_statistics(df)
    if rows is None and count_first_bytes < size < _UNKNOWN_BYTES:
        rows = df.count()
    if rows is not None and rows > limit:
        return None
    table = collect_arrow(df if rows is not None else df.limit(limit + 1))
    return table if table.num_rows <= limit else None


def plan_statistics(df) -> tuple:
    """``(rows, bytes)``: the row count Spark's optimizer gives ``df``'s plan (None when it
    has none) and its estimated size in bytes (0 when unknown).

    Spark knows the row count exactly for cached frames once computed and carries it through
    renaming projections; filters, joins, unions and distinct drop it. Table statistics
    (``ANALYZE TABLE``) can be stale: callers that act on a count check what they read.
    """
    # a new frame, so a new plan: a plan keeps the statistics it was first asked for (a cache
    # asked before it was computed would answer None ever after)
    jdf = getattr(df.select("*"), "_jdf", None)  # Spark Connect frames have no JVM plan
    if jdf is None:
        return None, 0
    stats = jdf.queryExecution().optimizedPlan().stats()
    count = stats.rowCount()
    return (int(str(count.get())) if count.isDefined() else None), int(str(stats.sizeInBytes()))


def collect_arrow(df) -> "pa.Table":
    """``df`` collected as an Arrow table (one job). A frame without columns keeps its rows
    (Spark's ``toArrow`` returns none for it), so a nullary fact stays true."""
    if df.columns:
        return df.toArrow()
    return without_columns(df.count())


def is_arrow(rows) -> bool:
    """Whether ``rows`` is a pyarrow Table (rows held by this process) rather than a Spark frame."""
    import pyarrow as pa

    return isinstance(rows, pa.Table)


def conform_arrow(table, columns: Columns, relation: str) -> "pa.Table":
    """``schema.conform`` of a pyarrow Table: the declared columns and ``_count``, in order, cast
    to their exact types; ``SchemaError`` naming the missing columns."""
    wanted = [name for name, _ in columns] + [COUNT_COLUMN]
    missing = [name for name in wanted if name not in table.column_names]
    if missing:
        raise SchemaError(
            f"relation {relation}: the table lacks column(s) {', '.join(missing)} "
            f"(it has {', '.join(table.column_names) or 'none'})"
        )
    return table.select(wanted).cast(arrow_schema(columns))


def write_with_spark(
    df, columns: Columns, table_uri: str, folder: str, rows_per_file: int, net: bool = False
) -> list:
    """Write ``df`` sorted on ``columns`` under ``table_uri/folder`` with Spark; its ``DataFile``s.

    The rows are range-partitioned on the columns, so the files of different tasks hold disjoint
    key ranges, sorted within each task and cut into bounded files by ``maxRecordsPerFile``.
    ``net=True`` sums the counts per fact and drops zeros on the way; the range partitioning
    already groups each fact, so that costs no second shuffle.
    """
    from pyarrow.fs import FileSelector
    from pyspark.sql import functions as F

    names = [name for name, _ in columns]
    # a relation without columns has one fact: nothing to range over
    rows = df.repartitionByRange(*names) if names else df.coalesce(1)
    if net:
        rows = (
            rows.groupBy(*names)
            .agg(F.sum(COUNT_COLUMN).cast("long").alias(COUNT_COLUMN))
            .where(F.col(COUNT_COLUMN) != 0)
        )
    location = uris.join(table_uri, folder)
    (
        (rows.sortWithinPartitions(*names) if names else rows)
        .write.mode("errorifexists")
        .option("maxRecordsPerFile", rows_per_file)
        .parquet(uris.for_spark(location))
    )
    fs, path = uris.filesystem(location)
    infos = sorted(fs.get_file_info(FileSelector(path)), key=lambda i: i.base_name)
    files = [
        _described(fs, info, folder, columns)
        for info in infos
        if info.base_name.startswith("part-") and info.base_name.endswith(".parquet")
    ]
    files = [f for f in files if f.rows]  # Spark writes an empty file for an empty frame
    if not files:
        fs.delete_dir(path)  # the fresh folder holds nothing any version will need
    return files


def _sorted(table, names: list):
    """``table`` sorted on the columns ``names`` (none: a relation without columns)."""
    return table.sort_by([(name, "ascending") for name in names]) if names else table


def write_with_arrow(tables, columns: Columns, table_uri: str, folder: str, rows_per_file: int) -> list:
    """Write Arrow tables under ``table_uri/folder``; their ``DataFile``s.

    ``tables`` is one table or a list of them; each is sorted on ``columns`` and cut into files
    of at most ``rows_per_file`` rows on its own (no file mixes rows of two tables). The files
    are what Spark writes for the same rows: the exact column types of ``columns`` (``int``
    int32, ``long`` int64, ...) plus ``_count`` int64, all optional, snappy-compressed.
    """
    import pyarrow.parquet as pq

    names = [name for name, _ in columns]
    tables = [tables] if not isinstance(tables, (list, tuple)) else tables
    tables = [
        _sorted(t.select(names + [COUNT_COLUMN]).cast(arrow_schema(columns)), names)
        for t in tables
        if t.num_rows
    ]
    if not tables:
        return []
    fs, path = uris.filesystem(uris.join(table_uri, folder))
    fs.create_dir(path, recursive=True)
    prefix = uuid.uuid4().hex
    paths: list = []
    for table in tables:
        for start in range(0, table.num_rows, rows_per_file):
            paths.append(f"{path}/part-{len(paths):05d}-{prefix}.snappy.parquet")
            pq.write_table(table.slice(start, rows_per_file), paths[-1], filesystem=fs, compression="snappy")
    return [_described(fs, info, folder, columns) for info in fs.get_file_info(paths)]


def _described(fs, info, folder: str, columns: Columns) -> DataFile:
    """The ``DataFile`` of a written file: exact size, mtime in ms, footer statistics."""
    import pyarrow.parquet as pq
    from deltalake.transaction import AddAction

    stats = file_stats(pq.read_metadata(info.path, filesystem=fs), columns)
    action = AddAction(
        path=quote(f"{folder}/{info.base_name}"),
        size=info.size,
        partition_values={},
        modification_time=info.mtime_ns // 1_000_000,
        data_change=True,
        stats=json.dumps(stats),
    )
    return DataFile(action, stats["numRecords"])


def file_stats(metadata, columns: Columns) -> dict:
    """The Delta statistics of a Parquet file, from its footer.

    ``numRecords``, and for every column (``_count`` included) its ``nullCount`` and, where the
    footer bounds it, ``minValues`` / ``maxValues``. Double columns get no bounds: Parquet
    statistics leave NaN out and need not order ``-0.0`` and ``0.0``, while Delta readers take NaN
    as the largest value. A string longer than ``STATS_STRING_CHARS`` gives its prefix as the
    minimum and no maximum (a prefix is a lower bound, not an upper one).
    """
    stats: dict = {"numRecords": metadata.num_rows, "minValues": {}, "maxValues": {}, "nullCount": {}}
    if not metadata.num_row_groups:
        return stats
    first = metadata.row_group(0)
    position = {first.column(j).path_in_schema: j for j in range(first.num_columns)}
    for name, type_ in tuple(columns) + ((COUNT_COLUMN, "long"),):
        if name not in position:
            continue
        nulls, low, high = _column_stats(metadata, position[name], type_)
        if nulls is not None:
            stats["nullCount"][name] = nulls
        if low is not None:
            if type_ == "string" and len(low) > STATS_STRING_CHARS:
                low = low[:STATS_STRING_CHARS]
            stats["minValues"][name] = low
        if high is not None and not (type_ == "string" and len(high) > STATS_STRING_CHARS):
            stats["maxValues"][name] = high
    return stats


def _column_stats(metadata, j: int, type_: str) -> tuple:
    """(null count, minimum, maximum) of column ``j`` over all row groups; ``None`` if unknown."""
    wanted = _PYTHON_TYPES.get(type_)
    nulls: Optional[int] = 0
    low, high, bounded = None, None, wanted is not None
    for index in range(metadata.num_row_groups):
        group = metadata.row_group(index)
        found = group.column(j).statistics
        if found is None or not found.has_null_count:
            nulls = None
        elif nulls is not None:
            nulls += found.null_count
        if found is not None and found.has_min_max:
            values = (found.min, found.max)
            if wanted is None or not all(type(v) is wanted for v in values):
                bounded = False
            elif bounded:
                low = values[0] if low is None else min(low, values[0])
                high = values[1] if high is None else max(high, values[1])
        elif not (
            found is not None and found.has_null_count and found.null_count == group.num_rows
        ):  # an all-null group bounds nothing
            bounded = False
    return (nulls, low, high) if bounded else (nulls, None, None)


# --------------------------------------------------------------------------------------------
# finding the files a change may touch


def bounded(type_: str) -> bool:
    """Whether files are pruned by a column's bounds: only primitive columns other than doubles
    (struct columns, records or others, have no bounds of their own in the statistics).

    >>> bounded("long"), bounded("double"), bounded("[x: long]")
    (True, False, False)
    """
    return type_ in _PYTHON_TYPES


def bounds(table, columns: Columns) -> dict:
    """Per column with bounds (not double): (minimum, maximum, has nulls) of an Arrow table."""
    import pyarrow.compute as pc

    found = {}
    for name, type_ in columns:
        if not bounded(type_):
            continue
        values = table.column(name)
        extremes = pc.min_max(values).as_py()
        found[name] = (extremes["min"], extremes["max"], values.null_count > 0)
    return found


def overlapping(files: list, ranges: dict) -> list:
    """The files whose statistics do not rule out every value range of ``ranges``.

    ``files`` are ``embedded._add_actions`` entries (``min`` / ``max`` / ``null_count`` dicts,
    ``num_records``); ``ranges`` maps columns to (minimum, maximum, has nulls) as ``bounds``
    gives them (minimum ``None``: no non-null value).
    """
    return [f for f in files if all(_may_overlap(f, name, *limits) for name, limits in ranges.items())]


def _may_overlap(f: dict, name: str, low, high, has_nulls: bool) -> bool:
    file_low, file_high = f["min"].get(name), f["max"].get(name)
    nulls = f["null_count"].get(name)
    if has_nulls and (nulls is None or nulls > 0):
        return True
    if low is None:  # the change has only nulls here, the file none
        return False
    if file_low is None and file_high is None:
        return not _only_nulls(f, name)
    return (file_low is None or high >= file_low) and (file_high is None or low <= file_high)


def _only_nulls(f: dict, name: str) -> bool:
    nulls = f["null_count"].get(name)
    return nulls is not None and f["num_records"] is not None and nulls == f["num_records"]


def candidates(files: list, change, columns: Columns) -> list:
    """The files that may hold a fact of ``change`` (an Arrow table), judged by statistics.

    A file is a candidate when one fact of the change lies within the file's bounds on every
    bounded column (a null value: when the file has nulls there). Files without statistics are
    always candidates. Costs one vectorised comparison per file and column, on the driver.
    """
    import pyarrow.compute as pc

    found = []
    for f in overlapping(files, bounds(change, columns)):
        mask = None
        for name, type_ in columns:
            if not bounded(type_):
                continue
            match = _matches(f, name, change.column(name))
            if match is None:
                continue
            mask = match if mask is None else pc.and_(mask, match)
        if mask is None or pc.any(mask).as_py():
            found.append(f)
    return found


def _matches(f: dict, name: str, values):
    """Which values may occur in column ``name`` of file ``f`` (``None``: all of them)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    low, high = f["min"].get(name), f["max"].get(name)
    nulls = f["null_count"].get(name)
    if low is None and high is None:
        return pc.is_null(values) if _only_nulls(f, name) else None
    checks = []
    if low is not None:
        checks.append(pc.greater_equal(values, pa.scalar(low, values.type)))
    if high is not None:
        checks.append(pc.less_equal(values, pa.scalar(high, values.type)))
    inside = pc.fill_null(checks[0] if len(checks) == 1 else pc.and_(*checks), False)
    if nulls is None or nulls > 0:
        inside = pc.or_(inside, pc.is_null(values))
    return inside


# --------------------------------------------------------------------------------------------
# netting and merging on the driver


def read_rows(path: str, columns: Columns) -> "pa.Table":
    """The rows of one data file (relation columns + ``_count``) as an Arrow table."""
    import pyarrow.parquet as pq

    fs, where = uris.filesystem(path)
    names = [name for name, _ in columns] + [COUNT_COLUMN]
    return pq.read_table(where, filesystem=fs, columns=names).cast(arrow_schema(columns))


def net_rows(table, columns: Columns) -> "pa.Table":
    """Sum the signed counts per fact and drop facts whose sum is 0 (``net_changes`` in Arrow)."""
    import pyarrow.compute as pc

    names = [name for name, _ in columns]
    summed = _summed(_normalised(table.select(names + [COUNT_COLUMN]), columns), names)
    return summed.filter(pc.not_equal(summed.column(COUNT_COLUMN), 0)).cast(arrow_schema(columns))


def batched(files: list, rows: int) -> list:
    """``files`` (log entries with ``num_records``) in consecutive batches of at most ``rows``
    rows together; a file of more rows is a batch of its own.

    >>> [len(b) for b in batched([{"num_records": n} for n in (3, 3, 5, 1)], 6)]
    [2, 2]
    """
    batches: list = []
    total = 0
    for f in files:
        if not batches or total + f["num_records"] > rows:
            batches.append([])
            total = 0
        batches[-1].append(f)
        total += f["num_records"]
    return batches


def merge_rows(stored: list, change, columns: Columns) -> tuple:
    """Merge a net ``change`` into the ``stored`` tables (the rows of candidate files).

    Returns (the indexes of the tables holding a fact of the change, sorted; the rows replacing
    them, as one table per touched file followed by one table of the facts no file held). Facts
    of the change get the sum of their stored and changed counts (left out when 0); the other
    rows of a touched file are kept as they are. Keeping each file's facts apart keeps the
    rewritten files as narrow in key range as the files they replace. Facts are matched with
    hash joins on their ``_keys`` (nulls match nulls; struct columns by their fields), so the
    cost is linear in the rows of the candidate files.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    names = [name for name, _ in columns]

    def tagged(table, index):
        return _normalised(table.select(names + [COUNT_COLUMN]), columns).append_column(
            _FILE, pa.repeat(pa.scalar(index, pa.int32()), table.num_rows)
        )

    change = tagged(change, -1)
    filled = [i for i, part in enumerate(_parts(change, names)) if part.null_count]
    wanted = _keys(change, names, filled)
    wanted = wanted.select([c for c in wanted.column_names if c != _ROW])
    rows = pa.concat_tables([tagged(t, i) for i, t in enumerate(stored)] or [change.slice(0, 0)])

    def joined(table, how: str):
        """The rows of ``table`` whose fact is (``left semi``) or is not (``left anti``) changed."""
        found = _keys(table, names, filled).join(wanted, wanted.column_names, join_type=how)
        return table.take(found.column(_ROW))

    matched = joined(rows, "left semi")
    touched = sorted(pc.unique(matched.column(_FILE)).to_pylist())
    kept = joined(
        rows.filter(pc.is_in(rows.column(_FILE), value_set=pa.array(touched, pa.int32()))), "left anti"
    )
    # the facts of the change: stored and changed counts summed, kept with a file that held them
    summed = _summed(pa.concat_tables([matched, change]), names, [(_FILE, "max")])
    summed = summed.filter(pc.not_equal(summed.column(COUNT_COLUMN), 0))
    parts = []
    for index in touched + [-1]:
        part = pa.concat_tables([t.filter(pc.equal(t.column(_FILE), index)) for t in (kept, summed)])
        parts.append(part.select(names + [COUNT_COLUMN]).cast(arrow_schema(columns)))
    return touched, parts


def _summed(table, names: list, others: Sequence = ()) -> "pa.Table":
    """One row per fact of ``table`` (columns ``names``, ``_count`` and those of ``others``):
    the fact, its counts summed and the ``others`` aggregated ((column, "max"), ...), grouped
    on the facts' ``_keys`` (so a struct column groups by its fields)."""
    import pyarrow as pa

    keyed = _keys(table, names)
    keys = [c for c in keyed.column_names if c != _ROW]
    aggregates = [(COUNT_COLUMN, "sum"), (_ROW, "min"), *others]
    grouped = keyed.append_column(COUNT_COLUMN, table.column(COUNT_COLUMN))
    for column, _ in others:
        grouped = grouped.append_column(column, table.column(column))
    grouped = grouped.group_by(keys, use_threads=False).aggregate(list(aggregates))
    first = grouped.column(f"{_ROW}_min")
    found = {name: table.column(name).take(first) for name in names}
    for column, how in ((COUNT_COLUMN, "sum"), *others):
        found[column] = grouped.column(f"{column}_{how}")
    return pa.table(found)


def _keys(table, names: list, filled: Sequence = ()) -> "pa.Table":
    """The join and grouping keys of ``table``'s facts (columns ``names``), and ``_ROW``, the
    row's position: one primitive column per ``_parts`` of the fact (Arrow joins and groups
    take no struct keys), a part whose position is in ``filled`` as a null-free value and a
    null flag (Arrow joins never match nulls); a constant for a relation without columns.

    >>> import pyarrow as pa
    >>> t = pa.table({"r": [{"x": 1}, None]})
    >>> _keys(t, ["r"], [1]).column_names
    ['__key0', '__key1', '__null1', '__row']
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    keys: dict = {}
    for i, part in enumerate(_parts(table, names)):
        if i in filled:
            keys[f"__key{i}"] = pc.fill_null(part, pa.scalar(_fill(part.type)).cast(part.type))
            keys[f"__null{i}"] = pc.is_null(part)
        else:
            keys[f"__key{i}"] = part
    if not keys:  # a relation without columns: its one fact matches itself
        keys[_UNIT] = pa.repeat(pa.scalar(True), table.num_rows)
    keys[_ROW] = pa.array(np.arange(table.num_rows, dtype=np.int64))
    return pa.table(keys)


def _parts(table, names: list) -> list:
    """The primitive columns that tell ``table``'s facts apart: a primitive column itself; a
    struct column, whether it is null, then its fields' parts (a field of a null struct is null),
    doubles normalised as ``_normalised`` does."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def parts(values) -> list:
        if not pa.types.is_struct(values.type):
            return [_normal_double(values) if pa.types.is_floating(values.type) else values]
        found = [pc.is_null(values)]
        for j in range(values.type.num_fields):
            found += parts(pc.struct_field(values, [j]))
        return found

    return [part for name in names for part in parts(table.column(name))]


def _fill(type_) -> object:
    """A stand-in for null in a join key of Arrow type ``type_`` (a flag tells it from a value)."""
    import pyarrow as pa

    if pa.types.is_string(type_) or pa.types.is_large_string(type_):
        return ""
    if pa.types.is_boolean(type_):
        return False
    return 0


def _normalised(table, columns: Columns):
    """Double columns with ``-0.0`` as ``0.0`` and one NaN, as Spark groups and joins them."""

    for name, type_ in columns:
        if type_ != "double":
            continue
        values = _normal_double(table.column(name))
        table = table.set_column(table.schema.get_field_index(name), name, values)
    return table


def _normal_double(values):
    """Double values with ``-0.0`` as ``0.0`` and one NaN."""
    import pyarrow.compute as pc

    values = pc.if_else(pc.is_nan(values), float("nan"), values)
    return pc.if_else(pc.equal(values, 0.0), 0.0, values)
