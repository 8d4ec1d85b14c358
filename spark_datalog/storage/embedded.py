"""The embedded commit path: Spark or pyarrow writes Parquet, delta-rs commits it to the Delta log.

Used when the delta-spark jar is not on the classpath (the default here). A write goes in two
steps: the rows are written, sorted on the relation's columns, as ``part-*.parquet`` files of at
most ``rows_per_file`` rows under a fresh folder inside the table directory
(``<root>/<relation>/run-<sequence>-<random>/``) — by pyarrow on the driver for small frames, by
Spark otherwise (``datafiles``); then one delta-rs commit adds those files (exact size,
modification time in ms, Delta statistics from the Parquet footers: ``numRecords``,
``minValues``, ``maxValues``, ``nullCount``) and retires the files they replace, with the run's
application transaction and its metadata (as ``userMetadata``). Files of a write that failed
before its commit are in no Delta version: readers never see them and ``VACUUM`` removes them.
Changes (``apply_changes``) find the files they may touch from those statistics and rewrite only
the files that hold touched facts.

Reads pin a version and hand its files (``DeltaTable.file_uris()``) to ``spark.read.parquet``
with an explicit schema. Tables that need deletion vectors or column mapping cannot be read that
way and are refused.

Changes between two versions (``table_changes``) come from the table's change data feed when it
is enabled on every commit in between (its ``_change_data`` files, found in the commit files of
``_delta_log``), otherwise from the files added and removed between the two snapshots.

What ``deltalake`` does here, and what it cannot (measured in ``benchmarks/STORAGE_LIBS.md``):
delta-rs reads every table (``DeltaTable``: versions, schemas, file lists and statistics,
application transactions, history), makes every commit (``create_table_with_add_actions``,
``create_write_transaction`` with ``CommitProperties(app_transactions=...)``) and merges the
run log (``DeltaTable.merge``). Two things stay here:

- Applying signed changes to a relation (``apply_changes``) is not ``DeltaTable.merge``. The
  merge writes every row it touches into one unsorted file: after one change spread over an
  8M-fact relation, the relation is a single 8M-row file, so every later change rewrites all of
  it (1.0 s for a 2,000-fact change against 0.2 s here, which rewrites one sorted file of
  1M rows, the file size then; 0.7 s against 0.2 s before any spread change). Its predicate is SQL
  text, which would have to quote the program's column names (delta-rs folds unquoted names
  to lower case), and it runs in this process only, where a change larger than the driver needs
  Spark. Where the merge wins: a change spread over every file of a large relation is merged
  here by Spark (``_apply_spark``: 10 s on 8M facts on 2 cores, against 1.0 s for the merge and
  1.6 s for this module's driver merge, which is not used above ``spark.datalog.driverMergeRows``).
- Reading a change data feed (``table_changes``) is not ``DeltaTable.load_cdf``: that returns
  the rows in this process, so they reach Spark through the driver (2x slower at 0.2M changed
  rows, 6x at 4M, and bounded by the driver's memory); here Spark reads the feed's files.
  delta-rs has no API listing a commit's actions, so the commit files are read as JSON
  (``change_feed_files``).
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING, Optional, Type
from urllib.parse import unquote

from ..errors import DatalogError, WarehouseError
from ..settings import settings_of
from . import datafiles, uris
from .runs import CommitResult
from .schema import (
    COUNT_COLUMN,
    Columns,
    arrow_schema,
    columns_from_delta,
    conform,
    delta_schema,
    spark_schema,
)

if TYPE_CHECKING:
    import pyarrow as pa
    from deltalake import DeltaTable
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

UNSUPPORTED_READER_FEATURES = ("deletionVectors", "columnMapping")


# --------------------------------------------------------------------------------------------
# reading any Delta table (also used for inputs given by location)


def is_delta_table(uri: str, storage_options: Optional[dict] = None) -> bool:
    """True when ``uri`` holds a Delta log (``False`` for a plain file or a missing path)."""
    from deltalake import DeltaTable

    try:
        return DeltaTable.is_deltatable(uri, storage_options=storage_options)
    except OSError:  # delta-rs cannot walk a file path as a directory
        return False


def open_table(
    uri: str,
    version: Optional[int] = None,
    storage_options: Optional[dict] = None,
    error: Type[DatalogError] = WarehouseError,
) -> "Optional[DeltaTable]":
    """The ``deltalake.DeltaTable`` at ``uri`` (at ``version``), or ``None`` when there is none."""
    from deltalake import DeltaTable

    if not is_delta_table(uri, storage_options):
        return None
    try:
        return DeltaTable(uri, version=version, storage_options=storage_options)
    except Exception as exc:  # delta-rs raises several types for a missing version
        raise error(
            f"cannot open Delta table {uri}"
            + (f" at version {version}" if version is not None else "")
            + f": {exc}"
        ) from exc


def unreadable_features(table) -> list[str]:
    """The features of ``table`` that make its files alone not give its rows (deletion vectors,
    column mapping); empty when delta-rs and the embedded path read it as it is."""
    features = set(table.protocol().reader_features or ())
    mapping = (table.metadata().configuration or {}).get("delta.columnMapping.mode", "none")
    used = sorted(features & set(UNSUPPORTED_READER_FEATURES))
    if mapping not in (None, "none") and "columnMapping" not in used:
        used.append("columnMapping")
    return used


def check_readable(table, uri: str, error: Type[DatalogError] = WarehouseError) -> None:
    """Refuse tables whose files alone do not give their rows (deletion vectors, column mapping)."""
    used = unreadable_features(table)
    if used:
        raise error(
            f"Delta table {uri} uses {', '.join(used)}, which the embedded path (without "
            f"the delta-spark jar) cannot read; put the delta-spark jar on the classpath "
            f"or rewrite the table without these features"
        )


def table_spark_schema(table) -> "StructType":
    """The Spark ``StructType`` of a Delta table (Delta's schema JSON is Spark's)."""
    from pyspark.sql.types import StructType

    return StructType.fromJson(json.loads(table.schema().to_json()))


def read_table(spark, table, uri: str, error: Type[DatalogError] = WarehouseError) -> "DataFrame":
    """All rows of a pinned ``deltalake.DeltaTable`` as a Spark DataFrame with the table's schema."""
    check_readable(table, uri, error)
    if not table.metadata().partition_columns:
        files = [uris.for_spark(u) for u in table.file_uris()]
        schema = table_spark_schema(table)
        return spark.read.schema(schema).parquet(*files) if files else spark.createDataFrame([], schema)
    return read_files(spark, table, uri, _add_actions(table))


def read_files(spark, table, uri: str, actions: list[dict], extra: tuple = ()) -> "DataFrame":
    """The rows of some files (``_add_actions`` entries) of ``table``, with the table's schema.

    Partition columns are not in the Parquet files: files are read per partition value and the
    value added as a literal column. ``extra`` are ``StructField``s the files hold after the
    table's columns (``_change_type`` in change data files); they come last.
    """
    from pyspark.sql import functions as F

    schema = table_spark_schema(table)
    partition_columns = list(table.metadata().partition_columns or ())
    data_schema = type(schema)([f for f in schema.fields if f.name not in partition_columns] + list(extra))
    names = schema.fieldNames() + [f.name for f in extra]
    groups: dict[tuple, list[str]] = {}
    for action in actions:
        values = action["partition_values"]
        key = tuple(values.get(c) for c in partition_columns)
        groups.setdefault(key, []).append(uris.for_spark(_absolute(uri, action["path"])))
    if not groups:
        return spark.createDataFrame([], type(schema)(list(schema.fields) + list(extra)))
    frames = []
    for key, files in sorted(groups.items(), key=lambda kv: [str(v) for v in kv[0]]):
        frame = spark.read.schema(data_schema).parquet(*files)
        for column, value in zip(partition_columns, key, strict=True):
            frame = frame.withColumn(column, F.lit(value).cast(schema[column].dataType))
        frames.append(frame.select(*names))
    return reduce(lambda a, b: a.unionByName(b), frames)


# --------------------------------------------------------------------------------------------
# changes between two versions: the change data feed where it exists, else the snapshot difference

log = logging.getLogger("spark_datalog")

CDF_PROPERTY = "delta.enableChangeDataFeed"
CHANGE_TYPE_COLUMN = "_change_type"
# The Delta protocol's four change types: rows that enter the table and rows that leave it.
ENTERING = ("insert", "update_postimage")
LEAVING = ("delete", "update_preimage")


@dataclass
class ChangeSet:
    """Signed rows (table columns + ``_count``, not netted) turning one version into another.

    ``method`` says where they came from: ``"cdf"`` (the table's change data feed) or
    ``"snapshot"`` (the files added and removed between the two versions). ``version`` is the
    version the changes lead to.
    """

    df: object
    method: str
    version: int


@dataclass
class ChangeFeedFiles:
    """What the change data feed of a range of commits is made of (``_add_actions``-like dicts).

    ``cdc``: change data files of commits that have them; ``inserted`` / ``deleted``: the
    ``dataChange`` files added / removed by the other commits. ``deletion_vectors`` is True when
    a file of the range carries a deletion vector (its rows are not all live).
    """

    cdc: list
    inserted: list
    deleted: list
    deletion_vectors: bool = False


def table_changes(
    spark,
    uri: str,
    from_version: int,
    to_version: Optional[int] = None,
    storage_options: Optional[dict] = None,
    error: Type[DatalogError] = WarehouseError,
) -> ChangeSet:
    """The signed rows that turn version ``from_version`` of a Delta table into ``to_version``.

    When every commit in ``(from_version, to_version]`` has the change data feed enabled
    (``delta.enableChangeDataFeed = true`` in the table's properties after that commit), the
    changes are read from it: a commit with change data files (``_change_data/``) contributes
    their rows (``insert`` and ``update_postimage`` +1, ``delete`` and ``update_preimage`` -1),
    any other commit its ``dataChange`` added files (+1) and removed files (-1). Otherwise (a
    commit without the feed, a commit file removed by log cleanup, a schema change or a deletion
    vector in the range) the snapshot difference is used (``snapshot_changes``). Rows of a table
    with ``_count`` weigh their count. Rows are not netted: sum them per fact (``net_changes``).
    The method used is in the result and logged (INFO, logger ``spark_datalog``). Change data
    files, like removed files, must not have been vacuumed.
    """
    old, new = _open_pair(uri, from_version, to_version, storage_options, error)
    files = None
    if from_version < new.version():
        files = change_feed_files(uri, old, new.version())
    if files is not None and not files.deletion_vectors:
        df, method = _change_feed_rows(spark, new, uri, files), "cdf"
    else:
        df, method = _snapshot_rows(spark, old, new, uri), "snapshot"
    log.info(
        "changes of the Delta table %s from version %d to %d: %s",
        uri,
        from_version,
        new.version(),
        "change data feed" if method == "cdf" else "snapshot difference",
    )
    return ChangeSet(df, method, new.version())


def snapshot_changes(
    spark,
    uri: str,
    from_version: int,
    to_version: Optional[int] = None,
    storage_options: Optional[dict] = None,
    error: Type[DatalogError] = WarehouseError,
) -> "DataFrame":
    """The signed rows that turn version ``from_version`` of a Delta table into ``to_version``.

    Only the files added or removed between the two versions are read: rows of added files
    count +1 (or their ``_count`` when the table has one), rows of removed files -1 (or minus
    their ``_count``). Rows are not netted: a rewritten file gives a row twice with opposite
    signs, so callers sum per fact. Columns: the table's columns, then ``_count``.
    """
    old, new = _open_pair(uri, from_version, to_version, storage_options, error)
    return _snapshot_rows(spark, old, new, uri)


def _open_pair(
    uri: str,
    from_version: int,
    to_version: Optional[int],
    storage_options: Optional[dict],
    error: Type[DatalogError],
):
    """The table at both versions, readable and with the same schema."""
    old = open_table(uri, from_version, storage_options, error)
    new = open_table(uri, to_version, storage_options, error)
    if old is None or new is None:
        raise error(f"no Delta table at {uri}")
    for table in (old, new):
        check_readable(table, uri, error)
    if old.schema().to_json() != new.schema().to_json():
        raise error(
            f"the schema of the Delta table {uri} changed between versions "
            f"{from_version} and {new.version()}; changes cannot be computed"
        )
    return old, new


def _snapshot_rows(spark, old, new, uri: str):
    before = {a["path"]: a for a in _add_actions(old)}
    after = {a["path"]: a for a in _add_actions(new)}
    added = [a for p, a in after.items() if p not in before]
    removed = [a for p, a in before.items() if p not in after]
    data, counted = _data_columns(new)
    return _union(
        spark,
        new,
        [
            _weighted(read_files(spark, new, uri, files), data, counted, sign)
            for files, sign in ((added, 1), (removed, -1))
            if files
        ],
    )


def _change_feed_rows(spark, table, uri: str, files: ChangeFeedFiles):
    from pyspark.sql.types import StringType, StructField

    data, counted = _data_columns(table)
    parts = [
        _weighted(read_files(spark, table, uri, actions), data, counted, sign)
        for actions, sign in ((files.inserted, 1), (files.deleted, -1))
        if actions
    ]
    if files.cdc:
        change_type = StructField(CHANGE_TYPE_COLUMN, StringType(), True)
        cdc = read_files(spark, table, uri, files.cdc, extra=(change_type,))
        parts.append(signed_change_feed(cdc, data, counted))
    return _union(spark, table, parts)


def _union(spark, table, frames: list):
    """The union of signed-row frames; an empty frame of the table's columns + ``_count``."""
    if frames:
        return reduce(lambda a, b: a.unionByName(b), frames)
    data, _ = _data_columns(table)
    return _weighted(read_files(spark, table, "", []), data, False, 1)


def _data_columns(table) -> tuple:
    """(the table's columns other than ``_count``, whether it has ``_count``)."""
    names = table_spark_schema(table).fieldNames()
    return [n for n in names if n != COUNT_COLUMN], COUNT_COLUMN in names


def _weighted(rows, data: list, counted: bool, sign: int):
    from pyspark.sql import functions as F

    count = F.col(COUNT_COLUMN) * sign if counted else F.lit(sign)
    return rows.select(*data, count.cast("long").alias(COUNT_COLUMN))


def signed_change_feed(rows, data: list, counted: bool) -> "DataFrame":
    """Change data rows (with ``_change_type``) as signed rows: data columns + ``_count``.

    ``insert`` / ``update_postimage`` weigh +1, ``delete`` / ``update_preimage`` -1 (times the
    row's ``_count`` when ``counted``); rows of another change type are left out.
    """
    from pyspark.sql import functions as F

    kind = F.col(CHANGE_TYPE_COLUMN)
    sign = F.when(kind.isin(*ENTERING), F.lit(1)).when(kind.isin(*LEAVING), F.lit(-1))
    count = F.col(COUNT_COLUMN) * sign if counted else sign
    return rows.select(*data, count.cast("long").alias(COUNT_COLUMN)).where(F.col(COUNT_COLUMN).isNotNull())


def change_feed_files(uri: str, old, to_version: int) -> Optional[ChangeFeedFiles]:
    """The change data feed of the commits after ``old`` (a pinned table) up to ``to_version``.

    Reads the commit files ``_delta_log/<version>.json``. ``None`` when the feed does not cover
    the whole range: a commit after which ``delta.enableChangeDataFeed`` is not ``true``, a
    missing commit file (log cleanup), or a change of the table's schema.
    """
    config = dict(old.metadata().configuration or {})
    schema = table_spark_schema(old)
    feed = _FeedReader(old)
    for version in range(old.version() + 1, to_version + 1):
        actions = _commit_actions(uri, version)
        if actions is None:
            return None
        meta, adds, removes, cdc = _split_actions(actions)
        if meta is not None:
            config = dict(meta.get("configuration") or {})
            if _schema_of(meta) != schema:
                return None
        if str(config.get(CDF_PROPERTY, "false")).lower() != "true":
            return None
        feed.add_commit(adds, removes, cdc)
    return feed.files


def _split_actions(actions: list) -> tuple:
    """(the last ``metaData`` or None, the adds, the removes, the cdc files) of one commit."""
    meta, adds, removes, cdc = None, [], [], []
    for action in actions:
        if "metaData" in action:
            meta = action["metaData"]
        elif "add" in action:
            adds.append(action["add"])
        elif "remove" in action:
            removes.append(action["remove"])
        elif "cdc" in action:
            cdc.append(action["cdc"])
    return meta, adds, removes, cdc


class _FeedReader:
    """The change feed files of successive commits after ``old`` (a pinned table)."""

    def __init__(self, old):
        self.old = old
        self.files = ChangeFeedFiles([], [], [])
        # path -> partition values, for removes that do not carry them (the log makes them optional)
        self.known: Optional[dict] = None
        self.added: dict = {}

    def add_commit(self, adds: list, removes: list, cdc: list) -> None:
        """Takes one commit's actions: its cdc files, else its data-changing adds and removes."""
        files = self.files
        if any(a.get("deletionVector") for a in adds + removes):
            files.deletion_vectors = True
        if cdc:
            files.cdc += [_file(a) for a in cdc]
        else:
            files.inserted += [_file(a) for a in adds if a.get("dataChange", True)]
            files.deleted += [_file(self._located(r)) for r in removes if r.get("dataChange", True)]
        self.added.update((unquote(a["path"]), a.get("partitionValues") or {}) for a in adds)

    def _located(self, remove: dict) -> dict:
        """``remove`` with its partition values, from the add of its file when it lacks them."""
        if remove.get("partitionValues") is not None or not self.old.metadata().partition_columns:
            return remove
        key = unquote(remove["path"])
        if key not in self.added and self.known is None:
            self.known = {unquote(a["path"]): a["partition_values"] for a in _add_actions(self.old)}
        values = self.added[key] if key in self.added else (self.known or {}).get(key)
        return dict(remove, partitionValues=values)


def _commit_actions(uri: str, version: int) -> Optional[list]:
    """The actions of one commit of the Delta log at ``uri``; ``None`` when it cannot be read."""
    try:
        fs, path = uris.filesystem(uris.join(uri, "_delta_log", f"{version:020d}.json"))
        with fs.open_input_stream(path) as stream:
            text = stream.read().decode("utf-8")
    except (OSError, ValueError):  # removed by log cleanup, or a store pyarrow cannot reach
        return None
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _schema_of(meta: dict):
    from pyspark.sql.types import StructType

    return StructType.fromJson(json.loads(meta["schemaString"]))


def _file(action: dict) -> dict:
    """A log action (``add``, ``remove``, ``cdc``) as the ``path`` / ``partition_values`` dict."""
    return {"path": action["path"], "partition_values": dict(action.get("partitionValues") or {})}


def _add_actions(table) -> list[dict]:
    """Every file of ``table``: ``path`` (as in the log), ``size``, ``num_records`` (``None`` when
    unknown), ``partition_values``, and its statistics: ``min``, ``max`` and ``null_count`` dicts
    holding the columns that have them."""
    import pyarrow as pa

    rows = pa.table(table.get_add_actions(flatten=True)).to_pylist()
    out = []
    for row in rows:
        partitions = {k[len("partition.") :]: v for k, v in row.items() if k.startswith("partition.")}
        stats = {
            kind: {
                k[len(kind) + 1 :]: v for k, v in row.items() if k.startswith(kind + ".") and v is not None
            }
            for kind in ("min", "max", "null_count")
        }
        out.append(
            {
                "path": row["path"],
                "size": row["size_bytes"],
                "num_records": row.get("num_records"),
                "partition_values": {k: None if v is None else str(v) for k, v in partitions.items()},
                **stats,
            }
        )
    return out


def _absolute(table_uri: str, path: str) -> str:
    if uris.scheme(path):  # absolute URIs in the log (shallow clones)
        return path
    return uris.join(table_uri, unquote(path))


# --------------------------------------------------------------------------------------------
# the backend


class EmbeddedBackend:
    """Tables of one warehouse written by Spark (Parquet) and committed by delta-rs."""

    name = "embedded"

    def __init__(
        self, spark, root: str, storage_options: Optional[dict] = None, rows_per_file: Optional[int] = None
    ):
        if rows_per_file is not None and (
            isinstance(rows_per_file, bool) or not isinstance(rows_per_file, int) or rows_per_file < 1
        ):
            raise ValueError(f"rows_per_file must be a positive integer, not {rows_per_file!r}")
        self.spark = spark
        self.root = root
        self.storage_options = storage_options
        self.rows_per_file = rows_per_file

    def table_uri(self, name: str) -> str:
        return uris.join(self.root, name)

    def _open(self, name: str, version: Optional[int] = None):
        return open_table(self.table_uri(name), version, self.storage_options)

    # ---- metadata (shared with the native path: delta-rs reads any plain Delta log)

    def exists(self, name: str) -> bool:
        return is_delta_table(self.table_uri(name), self.storage_options)

    def version(self, name: str) -> Optional[int]:
        table = self._open(name)
        return None if table is None else table.version()

    def columns(self, name: str, version: Optional[int] = None) -> Columns:
        table = self._open(name, version)
        if table is None:
            raise WarehouseError(f"no relation {name} in the warehouse {self.root}")
        return columns_from_delta(table.schema(), name)[0]

    def transaction_version(self, name: str, app_id: str) -> Optional[int]:
        table = self._open(name)
        return None if table is None else table.transaction_version(app_id)

    def history(self, name: str, limit: Optional[int] = None) -> list[dict]:
        table = self._open(name)
        return [] if table is None else table.history(limit)

    # ---- reading

    def read(self, name: str, version: Optional[int] = None) -> tuple:
        """``(columns, DataFrame of all stored rows with _count)`` at ``version`` (latest if None)."""
        table = self._open(name, version)
        if table is None:
            raise WarehouseError(f"no relation {name} in the warehouse {self.root}")
        columns = columns_from_delta(table.schema(), name)[0]
        check_readable(table, self.table_uri(name))
        files = [uris.for_spark(u) for u in table.file_uris()]
        schema = spark_schema(columns)
        if not files:
            return columns, self.spark.createDataFrame([], schema)
        return columns, self.spark.read.schema(schema).parquet(*files)

    def read_facts(
        self,
        name: str,
        version: Optional[int] = None,
        max_rows: Optional[int] = None,
        with_counts: bool = False,
        meeting: "Optional[pa.Table]" = None,
    ) -> "Optional[pa.Table]":
        """The facts of ``name`` at ``version`` (declared columns of the rows with a positive
        count, and ``_count`` too ``with_counts``) as a pyarrow Table, read by delta-rs in this
        process, without Spark; None when the files read hold more than ``max_rows`` stored
        rows (or their log cannot count them). With ``meeting`` (a table with the relation's
        columns), only the files whose statistics say they may hold one of its facts are read
        (``datafiles.candidates``): every stored fact of ``meeting`` is among those read."""
        import pyarrow as pa
        import pyarrow.compute as pc

        table = self._open(name, version)
        if table is None:
            raise WarehouseError(f"no relation {name} in the warehouse {self.root}")
        columns = columns_from_delta(table.schema(), name)[0]
        check_readable(table, self.table_uri(name))
        files = _add_actions(table) if max_rows is not None or meeting is not None else []
        if meeting is not None:
            files = datafiles.candidates(files, meeting, columns)
        if max_rows is not None:
            counts = [action["num_records"] for action in files]
            if None in counts or sum(counts) > max_rows:
                return None
        names = [c for c, _ in columns] + ([COUNT_COLUMN] if with_counts else [])
        if meeting is None:
            return table.to_pyarrow_dataset().to_table(columns=names, filter=pc.field(COUNT_COLUMN) > 0)
        uri = self.table_uri(name)
        rows = [datafiles.read_rows(_absolute(uri, f["path"]), columns) for f in files]
        stored = pa.concat_tables(rows) if rows else arrow_schema(columns).empty_table()
        return stored.filter(pc.field(COUNT_COLUMN) > 0).select(names)

    def changes(self, name: str, from_version: int, to_version: Optional[int] = None) -> ChangeSet:
        """Signed rows from ``from_version`` to ``to_version`` (see ``table_changes``)."""
        return table_changes(self.spark, self.table_uri(name), from_version, to_version, self.storage_options)

    # ---- writing

    @property
    def file_rows(self) -> int:
        """At most this many rows per written data file (``spark.datalog.rowsPerFile`` unless
        the warehouse was given ``rows_per_file``)."""
        return self.rows_per_file or settings_of(self.spark).rows_per_file

    def replace(
        self, name: str, columns: Columns, df, txn: tuple, metadata: dict, new_schema: bool = False
    ) -> CommitResult:
        """Make ``df`` (declared columns + ``_count``) the whole content of ``name`` in one commit.

        ``new_schema`` replaces the table's definition too (``CREATE OR REPLACE``, history kept).
        The rows are written sorted on the columns, in files of at most ``file_rows`` rows.
        """
        from deltalake.transaction import create_table_with_add_actions

        table = self._open(name)
        if table is not None and not new_schema:
            check_readable(table, self.table_uri(name))
        if datafiles.is_arrow(df):
            rows = local = datafiles.conform_arrow(df, columns, name)
        else:
            rows = conform(df, columns, name)
            local = datafiles.collect_small(rows, settings_of(self.spark).driver_rows)
        written = self._write_files(name, columns, rows if local is None else local, txn)
        adds = [f.action for f in written]
        props = _commit_properties(txn, metadata)
        removed = _add_actions(table) if table is not None else []
        if table is None or new_schema:
            create_table_with_add_actions(
                self.table_uri(name),
                delta_schema(columns),
                adds,
                mode="error" if table is None else "overwrite",
                name=name,
                description="spark_datalog relation: declared columns + signed count _count",
                storage_options=self.storage_options,
                commit_properties=props,
            )
        else:
            table.create_write_transaction(adds, "overwrite", delta_schema(columns), commit_properties=props)
        return CommitResult(
            name,
            self.version(name),
            None,
            len(adds),
            len(removed),
            sum(f.rows for f in written),
            sum(r["num_records"] or 0 for r in removed),
        )

    def apply_changes(
        self,
        name: str,
        columns: Columns,
        changes,
        txn: tuple,
        metadata: dict,
        new_facts_only: bool = False,
        netted: bool = False,
    ) -> CommitResult:
        """Add signed counts to ``name``: rewrite only the files holding touched rows.

        The net change per fact (the sum of its signed counts) is added to its stored count; rows
        reaching 0 are deleted; an empty net change commits nothing. The files that may hold a
        changed fact are found from their statistics in the log (``datafiles.candidates``); of
        those, the ones that do are rewritten with the change merged in, and one commit adds the
        new files and retires the rewritten ones.

        A change given as a pyarrow Table (computed in this process), or a Spark frame of at most
        ``spark.datalog.driverRows`` rows (one Spark job, collecting it), is netted, merged with
        the candidate files' rows and written with pyarrow on the driver, without Spark, in
        batches of files of at most ``spark.datalog.driverMergeRows`` rows; of a collected
        frame, only when the candidate files hold at most that many rows together (a Table was
        computed from the relation in this process, so its files are the driver's work anyway).
        Otherwise the change is netted, looked up in the candidate files, merged and written by
        Spark. ``new_facts_only=True``
        promises that no fact of the change has a stored row (not even one with a count <= 0):
        when every net count is positive the change is then only appended, without looking at
        the table's files. ``netted=True`` promises one row per
        fact and no zero count (saves netting a large change with a shuffle).
        """
        arrow = datafiles.is_arrow(changes)
        change = (datafiles.conform_arrow if arrow else conform)(changes, columns, name)
        table = self._open(name)
        if table is None:
            if arrow:
                return self.replace(name, columns, datafiles.net_rows(change, columns), txn, metadata)
            return self.replace(
                name, columns, change if netted else net_changes(change, columns), txn, metadata
            )
        check_readable(table, self.table_uri(name))
        if table.metadata().partition_columns:
            raise WarehouseError(
                f"relation {name}: the Delta table is partitioned, so it was not "
                f"written by spark_datalog; changes cannot be applied to it"
            )
        files = _add_actions(table)
        limits = settings_of(self.spark)
        local = change if arrow else datafiles.collect_small(change, limits.driver_rows)
        if local is None:
            net = change if netted else net_changes(change, columns).localCheckpoint()
            return self._apply_spark(name, columns, table, files, net, txn, metadata, new_facts_only)
        local = datafiles.net_rows(local, columns)
        if not local.num_rows:
            return CommitResult(name, table.version(), "no change")
        if new_facts_only and _all_positive(local):
            return self._commit_files(
                name, columns, table, txn, metadata, self._write_files(name, columns, local, txn), []
            )
        found = datafiles.candidates(files, local, columns)
        sizes = [f["num_records"] for f in found]
        if None in sizes or (not arrow and sum(sizes) > limits.driver_merge_rows):
            from pyspark.sql import functions as F

            change = F.broadcast(self.spark.createDataFrame(local, schema=spark_schema(columns)))
            return self._apply_spark(name, columns, table, found, change, txn, metadata, pruned=True)
        written, touched = self._merge_in_driver(name, columns, found, local, txn, limits.driver_merge_rows)
        return self._commit_files(name, columns, table, txn, metadata, written, touched)

    def _merge_in_driver(
        self, name: str, columns: Columns, found: list, change, txn: tuple, batch_rows: int
    ) -> tuple:
        """Merge a net ``change`` (Arrow) into the candidate files ``found`` with pyarrow, a
        batch of files of at most ``batch_rows`` rows at a time (one file when it is larger);
        (the files written, the files they replace). A fact is stored in one file at most, so
        the facts a batch holds leave the change, and what no batch held is written last."""
        written: list = []
        touched: list = []
        for batch in datafiles.batched(found, batch_rows):
            stored = [datafiles.read_rows(_absolute(self.table_uri(name), f["path"]), columns) for f in batch]
            held, merged = datafiles.merge_rows(stored, change, columns)
            written += self._write_files(name, columns, merged[:-1], txn)
            touched += [batch[i] for i in held]
            change = merged[-1]
        return written + self._write_files(name, columns, change, txn), touched

    def _apply_spark(
        self,
        name: str,
        columns: Columns,
        table,
        files: list,
        net,
        txn: tuple,
        metadata: dict,
        new_facts_only: bool = False,
        pruned: bool = False,
    ) -> CommitResult:
        """``apply_changes`` of a net change with Spark; ``files`` are the candidates when
        ``pruned``, else all files of the table (pruned here by the change's bounds)."""
        from pyspark.sql import functions as F

        if new_facts_only:
            written = self._write_files(name, columns, net, txn)
            if not written:
                return CommitResult(name, table.version(), "no change")
            if all(_stats(f)["minValues"].get(COUNT_COLUMN, 0) > 0 for f in written):
                return self._commit_files(name, columns, table, txn, metadata, written, [])
            # a count <= 0: those files are never committed, the change takes the general way
        if not pruned:
            rows, ranges = _spark_bounds(net, columns)
            if not rows:
                return CommitResult(name, table.version(), "no change")
            files = datafiles.overlapping(files, ranges)
            if (
                rows <= settings_of(self.spark).lookup_broadcast_rows
            ):  # the lookup then scans the files map-side only
                net = F.broadcast(net)
        touched: list = []
        if files:
            by_key = {uris.location_key(_absolute(self.table_uri(name), f["path"])): f for f in files}
            stored = self._read_files(name, columns, files).select(
                *[F.col(c).alias(f"__s{i}") for i, (c, _) in enumerate(columns)],
                F.col("_metadata.file_path").alias("__file"),
            )
            key = reduce(  # a relation without columns: its one fact matches itself
                lambda a, b: a & b,
                [stored[f"__s{i}"].eqNullSafe(net[c]) for i, (c, _) in enumerate(columns)],
                F.lit(True),
            )
            holders = stored.join(net, key, "left_semi").select("__file").distinct().collect()
            touched = [by_key[uris.location_key(row["__file"])] for row in holders]
        if touched:  # their rows and the change, summed per fact
            written = self._write_files(
                name, columns, self._read_files(name, columns, touched).unionByName(net), txn, net=True
            )
        else:
            written = self._write_files(name, columns, net, txn)
        if not written and not touched:
            return CommitResult(name, table.version(), "no change")
        return self._commit_files(name, columns, table, txn, metadata, written, touched)

    def _read_files(self, name: str, columns: Columns, files: list):
        return self.spark.read.schema(spark_schema(columns)).parquet(
            *[uris.for_spark(_absolute(self.table_uri(name), f["path"])) for f in files]
        )

    def _write_files(self, name: str, columns: Columns, rows, txn: tuple, net: bool = False) -> list:
        """Write ``rows`` under a fresh folder of the table; their ``datafiles.DataFile``s.

        Arrow tables (one or a list: each gets files of its own) are written with pyarrow on the
        driver, a Spark frame by Spark (summed per fact first when ``net``).
        """
        import pyarrow as pa

        folder = datafiles.new_folder(txn[1])
        if isinstance(rows, (pa.Table, list)):
            return datafiles.write_with_arrow(rows, columns, self.table_uri(name), folder, self.file_rows)
        return datafiles.write_with_spark(
            rows, columns, self.table_uri(name), folder, self.file_rows, net=net
        )

    def _commit_files(
        self, name: str, columns: Columns, table, txn: tuple, metadata: dict, written: list, touched: list
    ) -> CommitResult:
        """One commit adding the ``written`` files and retiring the ``touched`` ones."""
        now_ms = int(time.time() * 1000)
        removes = [_remove_action(a, now_ms) for a in touched]
        table.create_write_transaction(
            [f.action for f in written] + removes,
            "append",
            delta_schema(columns),
            commit_properties=_commit_properties(txn, metadata),
        )
        return CommitResult(
            name,
            self.version(name),
            None,
            len(written),
            len(removes),
            sum(f.rows for f in written),
            sum(a["num_records"] or 0 for a in touched),
        )


def _all_positive(table) -> bool:
    import pyarrow.compute as pc

    return pc.min(table.column(COUNT_COLUMN)).as_py() > 0


def _stats(written) -> dict:
    return json.loads(written.action.stats)


def _spark_bounds(df, columns: Columns) -> tuple:
    """(rows, ``datafiles.bounds``) of a Spark frame, in one aggregation job."""
    from pyspark.sql import functions as F

    bounded = [c for c, t in columns if datafiles.bounded(t)]
    row = df.agg(
        F.count(F.lit(1)), *[agg for c in bounded for agg in (F.min(c), F.max(c), F.max(F.col(c).isNull()))]
    ).first()
    return row[0], {c: (row[1 + 3 * i], row[2 + 3 * i], bool(row[3 + 3 * i])) for i, c in enumerate(bounded)}


def net_changes(df, columns: Columns) -> "DataFrame":
    """Sum the signed counts per fact and drop facts whose sum is 0."""
    from pyspark.sql import functions as F

    names = [c for c, _ in columns]
    return (
        df.groupBy(*names)
        .agg(F.sum(COUNT_COLUMN).cast("long").alias(COUNT_COLUMN))
        .where(F.col(COUNT_COLUMN) != 0)
    )


def _remove_action(add: dict, now_ms: int):
    from deltalake.transaction import RemoveAction

    return RemoveAction(
        path=add["path"],
        data_change=True,
        deletion_timestamp=now_ms,
        size=add["size"],
        partition_values=add["partition_values"] or None,
    )


def _commit_properties(txn: tuple, metadata: dict):
    from deltalake.transaction import CommitProperties, Transaction

    app_id, version = txn
    return CommitProperties(
        custom_metadata={"userMetadata": json.dumps(metadata, sort_keys=True)},
        app_transactions=[Transaction(app_id, version)],
    )
