"""The native commit path: delta-spark's ``format("delta")`` writes and ``DeltaTable`` merges.

Used only when the delta-spark jar is on the classpath (``detect.choose_backend``). Same interface
as ``embedded.EmbeddedBackend``. Idempotence uses delta-spark's own application transactions:
the ``txnAppId`` / ``txnVersion`` writer options for overwrites and the
``spark.databricks.delta.write.txnAppId`` / ``txnVersion`` session settings for MERGE; the run's
metadata goes in ``userMetadata``. Log metadata (versions, transactions, history) is read with
delta-rs like on the embedded path, so both paths report the same things. Changes between two
versions are read with delta-spark's change data feed reader when the feed covers the range
(decided from the log as on the embedded path), otherwise as on the embedded path.
"""

from __future__ import annotations

import json
from functools import reduce
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    import pyarrow as pa

from ..errors import WarehouseError
from . import datafiles
from .embedded import (
    ChangeSet,
    EmbeddedBackend,
    change_feed_files,
    log,
    net_changes,
    signed_change_feed,
    unreadable_features,
)
from .runs import CommitResult
from .schema import COUNT_COLUMN, Columns, columns_from_delta, conform

_TXN_CONF = (
    "spark.databricks.delta.write.txnAppId",
    "spark.databricks.delta.write.txnVersion",
    "spark.databricks.delta.commitInfo.userMetadata",
)


class NativeBackend(EmbeddedBackend):
    """Tables of one warehouse written and merged by delta-spark."""

    name = "native"

    def read(self, name: str, version: Optional[int] = None) -> tuple:
        table = self._open(name, version)
        if table is None:
            raise WarehouseError(f"no relation {name} in the warehouse {self.root}")
        columns = columns_from_delta(table.schema(), name)[0]
        reader = self.spark.read.format("delta")
        if version is not None:
            reader = reader.option("versionAsOf", version)
        return columns, reader.load(self.table_uri(name))

    def read_facts(
        self,
        name: str,
        version: Optional[int] = None,
        max_rows: Optional[int] = None,
        with_counts: bool = False,
        meeting: "Optional[pa.Table]" = None,
    ) -> "Optional[pa.Table]":
        """As on the embedded path (delta-rs, in this process) when the table uses no feature
        delta-rs cannot read; None when it does (deletion vectors, column mapping: its facts
        are then read through Spark)."""
        table = self._open(name, version)
        if table is not None and unreadable_features(table):
            return None
        return super().read_facts(name, version, max_rows, with_counts, meeting)

    def changes(self, name: str, from_version: int, to_version: Optional[int] = None) -> ChangeSet:
        """Signed rows from ``from_version`` to ``to_version``: delta-spark's ``readChangeFeed``
        when the feed is enabled on every commit in between, else the embedded snapshot
        difference. Untested here (needs the delta-spark jar); mirrors ``embedded.table_changes``.
        """
        old, new = self._open(name, from_version), self._open(name, to_version)
        if old is None or new is None:
            raise WarehouseError(f"no relation {name} in the warehouse {self.root}")
        uri = self.table_uri(name)
        if from_version >= new.version() or change_feed_files(uri, old, new.version()) is None:
            return super().changes(name, from_version, new.version())
        rows = (
            self.spark.read.format("delta")
            .option("readChangeFeed", "true")
            .option("startingVersion", from_version + 1)
            .option("endingVersion", new.version())
            .load(uri)
        )
        columns, counted = columns_from_delta(new.schema(), name)
        log.info(
            "changes of the Delta table %s from version %d to %d: change data feed",
            uri,
            from_version,
            new.version(),
        )
        return ChangeSet(signed_change_feed(rows, [c for c, _ in columns], counted), "cdf", new.version())

    def replace(
        self, name: str, columns: Columns, df, txn: tuple, metadata: dict, new_schema: bool = False
    ) -> CommitResult:
        before = self._open(name)
        removed = 0 if before is None else before.count()
        (
            conform(df, columns, name)
            .write.format("delta")
            .mode("overwrite")
            .option("overwriteSchema", str(new_schema).lower())
            .option("txnAppId", txn[0])
            .option("txnVersion", txn[1])
            .option("userMetadata", json.dumps(metadata, sort_keys=True))
            .save(self.table_uri(name))
        )
        after = self._open(name)
        return CommitResult(
            name,
            after.version(),
            None,
            len(after.file_uris()),
            0 if before is None else len(before.file_uris()),
            after.count(),
            removed,
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
        """One MERGE of the net change; ``new_facts_only`` is not needed by a MERGE (ignored),
        ``netted`` skips netting (see ``EmbeddedBackend.apply_changes``)."""
        from delta.tables import DeltaTable
        from pyspark.sql import functions as F

        if datafiles.is_arrow(changes):  # computed in the driver: MERGE reads it as a frame
            changes = self.spark.createDataFrame(datafiles.conform_arrow(changes, columns, name))
        net = conform(changes, columns, name)
        if not netted:
            net = net_changes(net, columns)
        if not self.exists(name):
            return self.replace(name, columns, net, txn, metadata)
        if net.isEmpty():
            return CommitResult(name, self.version(name), "no change")
        names = [c for c, _ in columns]
        # A nullary relation holds at most one row: every row matches it.
        on = reduce(
            lambda a, b: a & b, [F.col(f"t.{c}").eqNullSafe(F.col(f"s.{c}")) for c in names], F.lit(True)
        )
        total = F.col(f"t.{COUNT_COLUMN}") + F.col(f"s.{COUNT_COLUMN}")
        conf = self.spark.conf
        saved = {key: conf.get(key, None) for key in _TXN_CONF}
        try:
            conf.set(_TXN_CONF[0], txn[0])
            conf.set(_TXN_CONF[1], str(txn[1]))
            conf.set(_TXN_CONF[2], json.dumps(metadata, sort_keys=True))
            (
                DeltaTable.forPath(self.spark, self.table_uri(name))
                .alias("t")
                .merge(net.alias("s"), on)
                .whenMatchedUpdate(condition=total != 0, set={COUNT_COLUMN: total})
                .whenMatchedDelete()
                .whenNotMatchedInsertAll()
                .execute()
            )
        finally:
            for key, value in saved.items():
                if value is None:
                    conf.unset(key)
                else:
                    conf.set(key, value)
        return CommitResult(name, self.version(name))
