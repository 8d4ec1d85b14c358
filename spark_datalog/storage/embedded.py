"""The embedded commit path: Spark writes Parquet, delta-rs commits it to the Delta log.

Used when the delta-spark jar is not on the classpath (the default here). A write goes in two
steps: Spark writes the rows as ``part-*.parquet`` files under a fresh folder inside the table
directory (``<root>/<relation>/run-<sequence>-<random>/``); then one delta-rs commit adds those
files (exact size, modification time in ms, ``{"numRecords": n}`` stats read from the Parquet
footers) and retires the files they replace, with the run's application transaction and its
metadata (as ``userMetadata``). Files of a write that failed before its commit are in no Delta
version: readers never see them and ``VACUUM`` removes them.

Reads pin a version and hand its files (``DeltaTable.file_uris()``) to ``spark.read.parquet``
with an explicit schema. Tables that need deletion vectors or column mapping cannot be read that
way and are refused.

Changes between two versions (``table_changes``) come from the table's change data feed when it
is enabled on every commit in between (its ``_change_data`` files, found in the commit files of
``_delta_log``), otherwise from the files added and removed between the two snapshots.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import dataclass
from functools import reduce
from typing import Optional, Type
from urllib.parse import quote, unquote

from ..errors import DatalogError, WarehouseError
from . import uris
from .runs import CommitResult
from .schema import (COUNT_COLUMN, Columns, columns_from_delta, conform, delta_schema,
                     spark_schema)

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


def open_table(uri: str, version: Optional[int] = None, storage_options: Optional[dict] = None,
               error: Type[DatalogError] = WarehouseError):
    """The ``deltalake.DeltaTable`` at ``uri`` (at ``version``), or ``None`` when there is none."""
    from deltalake import DeltaTable

    if not is_delta_table(uri, storage_options):
        return None
    try:
        return DeltaTable(uri, version=version, storage_options=storage_options)
    except Exception as exc:  # delta-rs raises several types for a missing version
        raise error(f"cannot open Delta table {uri}" +
                    (f" at version {version}" if version is not None else "") + f": {exc}") from exc


def check_readable(table, uri: str, error: Type[DatalogError] = WarehouseError) -> None:
    """Refuse tables whose files alone do not give their rows (deletion vectors, column mapping)."""
    features = set(table.protocol().reader_features or ())
    mapping = (table.metadata().configuration or {}).get("delta.columnMapping.mode", "none")
    used = sorted(features & set(UNSUPPORTED_READER_FEATURES))
    if mapping not in (None, "none") and "columnMapping" not in used:
        used.append("columnMapping")
    if used:
        raise error(f"Delta table {uri} uses {', '.join(used)}, which the embedded path (without "
                    f"the delta-spark jar) cannot read; put the delta-spark jar on the classpath "
                    f"or rewrite the table without these features")


def table_spark_schema(table):
    """The Spark ``StructType`` of a Delta table (Delta's schema JSON is Spark's)."""
    from pyspark.sql.types import StructType

    return StructType.fromJson(json.loads(table.schema().to_json()))


def read_table(spark, table, uri: str, error: Type[DatalogError] = WarehouseError):
    """All rows of a pinned ``deltalake.DeltaTable`` as a Spark DataFrame with the table's schema."""
    check_readable(table, uri, error)
    if not table.metadata().partition_columns:
        files = [uris.for_spark(u) for u in table.file_uris()]
        schema = table_spark_schema(table)
        return spark.read.schema(schema).parquet(*files) if files else spark.createDataFrame([], schema)
    return read_files(spark, table, uri, _add_actions(table))


def read_files(spark, table, uri: str, actions: list[dict], extra: tuple = ()):
    """The rows of some files (``_add_actions`` entries) of ``table``, with the table's schema.

    Partition columns are not in the Parquet files: files are read per partition value and the
    value added as a literal column. ``extra`` are ``StructField``s the files hold after the
    table's columns (``_change_type`` in change data files); they come last.
    """
    from pyspark.sql import functions as F

    schema = table_spark_schema(table)
    partition_columns = list(table.metadata().partition_columns or ())
    data_schema = type(schema)([f for f in schema.fields if f.name not in partition_columns]
                               + list(extra))
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
        for column, value in zip(partition_columns, key):
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


def table_changes(spark, uri: str, from_version: int, to_version: Optional[int] = None,
                  storage_options: Optional[dict] = None,
                  error: Type[DatalogError] = WarehouseError) -> ChangeSet:
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
    log.info("changes of the Delta table %s from version %d to %d: %s", uri, from_version,
             new.version(), "change data feed" if method == "cdf" else "snapshot difference")
    return ChangeSet(df, method, new.version())


def snapshot_changes(spark, uri: str, from_version: int, to_version: Optional[int] = None,
                     storage_options: Optional[dict] = None,
                     error: Type[DatalogError] = WarehouseError):
    """The signed rows that turn version ``from_version`` of a Delta table into ``to_version``.

    Only the files added or removed between the two versions are read: rows of added files
    count +1 (or their ``_count`` when the table has one), rows of removed files -1 (or minus
    their ``_count``). Rows are not netted: a rewritten file gives a row twice with opposite
    signs, so callers sum per fact. Columns: the table's columns, then ``_count``.
    """
    old, new = _open_pair(uri, from_version, to_version, storage_options, error)
    return _snapshot_rows(spark, old, new, uri)


def _open_pair(uri: str, from_version: int, to_version: Optional[int],
               storage_options: Optional[dict], error: Type[DatalogError]):
    """The table at both versions, readable and with the same schema."""
    old = open_table(uri, from_version, storage_options, error)
    new = open_table(uri, to_version, storage_options, error)
    if old is None or new is None:
        raise error(f"no Delta table at {uri}")
    for table in (old, new):
        check_readable(table, uri, error)
    if old.schema().to_json() != new.schema().to_json():
        raise error(f"the schema of the Delta table {uri} changed between versions "
                    f"{from_version} and {new.version()}; changes cannot be computed")
    return old, new


def _snapshot_rows(spark, old, new, uri: str):
    before = {a["path"]: a for a in _add_actions(old)}
    after = {a["path"]: a for a in _add_actions(new)}
    added = [a for p, a in after.items() if p not in before]
    removed = [a for p, a in before.items() if p not in after]
    data, counted = _data_columns(new)
    return _union(spark, new, [_weighted(read_files(spark, new, uri, files), data, counted, sign)
                               for files, sign in ((added, 1), (removed, -1)) if files])


def _change_feed_rows(spark, table, uri: str, files: ChangeFeedFiles):
    from pyspark.sql.types import StringType, StructField

    data, counted = _data_columns(table)
    parts = [_weighted(read_files(spark, table, uri, actions), data, counted, sign)
             for actions, sign in ((files.inserted, 1), (files.deleted, -1)) if actions]
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


def signed_change_feed(rows, data: list, counted: bool):
    """Change data rows (with ``_change_type``) as signed rows: data columns + ``_count``.

    ``insert`` / ``update_postimage`` weigh +1, ``delete`` / ``update_preimage`` -1 (times the
    row's ``_count`` when ``counted``); rows of another change type are left out.
    """
    from pyspark.sql import functions as F

    kind = F.col(CHANGE_TYPE_COLUMN)
    sign = F.when(kind.isin(*ENTERING), F.lit(1)).when(kind.isin(*LEAVING), F.lit(-1))
    count = F.col(COUNT_COLUMN) * sign if counted else sign
    return (rows.select(*data, count.cast("long").alias(COUNT_COLUMN))
            .where(F.col(COUNT_COLUMN).isNotNull()))


def change_feed_files(uri: str, old, to_version: int) -> Optional[ChangeFeedFiles]:
    """The change data feed of the commits after ``old`` (a pinned table) up to ``to_version``.

    Reads the commit files ``_delta_log/<version>.json``. ``None`` when the feed does not cover
    the whole range: a commit after which ``delta.enableChangeDataFeed`` is not ``true``, a
    missing commit file (log cleanup), or a change of the table's schema.
    """
    config = dict(old.metadata().configuration or {})
    schema = table_spark_schema(old)
    # path -> partition values, for removes that do not carry them (the log makes them optional)
    known: Optional[dict] = None
    added: dict = {}
    files = ChangeFeedFiles([], [], [])
    for version in range(old.version() + 1, to_version + 1):
        actions = _commit_actions(uri, version)
        if actions is None:
            return None
        adds, removes, cdc = [], [], []
        for action in actions:
            if "metaData" in action:
                meta = action["metaData"]
                config = dict(meta.get("configuration") or {})
                if _schema_of(meta) != schema:
                    return None
            elif "add" in action:
                adds.append(action["add"])
            elif "remove" in action:
                removes.append(action["remove"])
            elif "cdc" in action:
                cdc.append(action["cdc"])
        if str(config.get(CDF_PROPERTY, "false")).lower() != "true":
            return None
        if any(a.get("deletionVector") for a in adds + removes):
            files.deletion_vectors = True
        if cdc:
            files.cdc += [_file(a) for a in cdc]
        else:
            files.inserted += [_file(a) for a in adds if a.get("dataChange", True)]
            for remove in removes:
                if not remove.get("dataChange", True):
                    continue
                if remove.get("partitionValues") is None and old.metadata().partition_columns:
                    key = unquote(remove["path"])
                    if key not in added and known is None:
                        known = {unquote(a["path"]): a["partition_values"]
                                 for a in _add_actions(old)}
                    values = added[key] if key in added else known.get(key)
                    remove = dict(remove, partitionValues=values)
                files.deleted.append(_file(remove))
        added.update((unquote(a["path"]), a.get("partitionValues") or {}) for a in adds)
    return files


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
    return {"path": action["path"],
            "partition_values": dict(action.get("partitionValues") or {})}


def _add_actions(table) -> list[dict]:
    """``path`` (as in the log), ``size``, ``num_records`` and ``partition_values`` of every file."""
    import pyarrow as pa

    rows = pa.table(table.get_add_actions(flatten=True)).to_pylist()
    out = []
    for row in rows:
        partitions = {k[len("partition."):]: v for k, v in row.items() if k.startswith("partition.")}
        out.append({"path": row["path"], "size": row["size_bytes"],
                    "num_records": row.get("num_records") or 0,
                    "partition_values": {k: None if v is None else str(v)
                                         for k, v in partitions.items()}})
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

    def __init__(self, spark, root: str, storage_options: Optional[dict] = None):
        self.spark = spark
        self.root = root
        self.storage_options = storage_options

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

    def read(self, name: str, version: Optional[int] = None):
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

    def changes(self, name: str, from_version: int, to_version: Optional[int] = None) -> ChangeSet:
        """Signed rows from ``from_version`` to ``to_version`` (see ``table_changes``)."""
        return table_changes(self.spark, self.table_uri(name), from_version, to_version,
                             self.storage_options)

    # ---- writing

    def replace(self, name: str, columns: Columns, df, txn: tuple, metadata: dict,
                new_schema: bool = False) -> CommitResult:
        """Make ``df`` (declared columns + ``_count``) the whole content of ``name`` in one commit.

        ``new_schema`` replaces the table's definition too (``CREATE OR REPLACE``, history kept).
        """
        from deltalake.transaction import create_table_with_add_actions

        table = self._open(name)
        if table is not None and not new_schema:
            check_readable(table, self.table_uri(name))
        adds, rows = self._write_files(name, conform(df, columns, name), txn)
        props = _commit_properties(txn, metadata)
        removed = _add_actions(table) if table is not None else []
        if table is None or new_schema:
            create_table_with_add_actions(
                self.table_uri(name), delta_schema(columns), adds,
                mode="error" if table is None else "overwrite", name=name,
                description="spark_datalog relation: declared columns + signed count _count",
                storage_options=self.storage_options, commit_properties=props)
        else:
            table.create_write_transaction(adds, "overwrite", delta_schema(columns),
                                           commit_properties=props)
        return CommitResult(name, self.version(name), None, len(adds), len(removed), rows,
                            sum(r["num_records"] for r in removed))

    def apply_changes(self, name: str, columns: Columns, changes, txn: tuple,
                      metadata: dict) -> CommitResult:
        """Add signed counts to ``name``: rewrite only the files holding touched rows.

        The net change per fact (the sum of its signed counts) is added to its stored count; rows
        reaching 0 are deleted. One Spark job finds the touched files (and whether the change is
        empty: then nothing is committed), one writes the rewritten rows; one commit adds the new
        files and retires the touched ones.
        """
        from pyspark.sql import functions as F

        table = self._open(name)
        net = net_changes(conform(changes, columns, name), columns)
        if table is None:
            return self.replace(name, columns, net, txn, metadata)
        check_readable(table, self.table_uri(name))
        names = [c for c, _ in columns]
        existing = {uris.location_key(_absolute(self.table_uri(name), a["path"])): a
                    for a in _add_actions(table)}
        touched: list[dict] = []
        if existing:
            stored = self.spark.read.schema(spark_schema(columns)).parquet(
                *[uris.for_spark(_absolute(self.table_uri(name), a["path"]))
                  for a in existing.values()])
            stored = stored.select(*[F.col(c).alias(f"__s{i}") for i, c in enumerate(names)],
                                   F.col("_metadata.file_path").alias("__file"))
            key = reduce(lambda a, b: a & b,
                         [stored[f"__s{i}"].eqNullSafe(net[c]) for i, c in enumerate(names)])
            # One job answers both questions: the null marker row is there iff the change is
            # not empty, the other rows name the files holding touched facts.
            marker = net.select(F.lit(None).cast("string").alias("__file")).limit(1)
            found = (stored.join(net, key, "left_semi").select("__file").distinct()
                     .unionByName(marker).collect())
            if not found:
                return CommitResult(name, table.version(), "no change")
            for row in found:
                if row["__file"] is not None:
                    touched.append(existing[uris.location_key(row["__file"])])
        elif net.isEmpty():
            return CommitResult(name, table.version(), "no change")
        merged = net
        if touched:
            kept = self.spark.read.schema(spark_schema(columns)).parquet(
                *[uris.for_spark(_absolute(self.table_uri(name), a["path"])) for a in touched])
            merged = net_changes(kept.unionByName(net), columns)
        adds, rows = self._write_files(name, merged, txn)
        now_ms = int(time.time() * 1000)
        removes = [_remove_action(a, now_ms) for a in touched]
        table.create_write_transaction(adds + removes, "append", delta_schema(columns),
                                       commit_properties=_commit_properties(txn, metadata))
        return CommitResult(name, self.version(name), None, len(adds), len(removes), rows,
                            sum(a["num_records"] for a in touched))

    def _write_files(self, name: str, df, txn: tuple):
        """Write ``df`` with Spark under a fresh folder; the AddActions of its non-empty files."""
        import pyarrow.parquet as pq
        from deltalake.transaction import AddAction
        from pyarrow.fs import FileSelector

        folder = f"run-{txn[1]:06d}-{uuid.uuid4().hex[:12]}"
        location = uris.join(self.table_uri(name), folder)
        df.write.mode("errorifexists").parquet(uris.for_spark(location))
        fs, path = uris.filesystem(location)
        adds, total = [], 0
        infos = sorted(fs.get_file_info(FileSelector(path)), key=lambda i: i.base_name)
        for info in infos:
            if not (info.base_name.startswith("part-") and info.base_name.endswith(".parquet")):
                continue
            rows = pq.read_metadata(info.path, filesystem=fs).num_rows
            if rows == 0:  # Spark writes an empty file for an empty frame; the table needs none
                continue
            total += rows
            adds.append(AddAction(
                path=quote(f"{folder}/{info.base_name}"), size=info.size, partition_values={},
                modification_time=info.mtime_ns // 1_000_000, data_change=True,
                stats=json.dumps({"numRecords": rows})))
        return adds, total


def net_changes(df, columns: Columns):
    """Sum the signed counts per fact and drop facts whose sum is 0."""
    from pyspark.sql import functions as F

    names = [c for c, _ in columns]
    return (df.groupBy(*names).agg(F.sum(COUNT_COLUMN).cast("long").alias(COUNT_COLUMN))
            .where(F.col(COUNT_COLUMN) != 0))


def _remove_action(add: dict, now_ms: int):
    from deltalake.transaction import RemoveAction

    return RemoveAction(path=add["path"], data_change=True, deletion_timestamp=now_ms,
                        size=add["size"], partition_values=add["partition_values"] or None)


def _commit_properties(txn: tuple, metadata: dict):
    from deltalake.transaction import CommitProperties, Transaction

    app_id, version = txn
    return CommitProperties(custom_metadata={"userMetadata": json.dumps(metadata, sort_keys=True)},
                            app_transactions=[Transaction(app_id, version)])
