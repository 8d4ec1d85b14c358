"""Derivation levels of recursive relations, kept beside their Delta tables.

``<root>/_spark_datalog/levels/<relation>.parquet`` holds every fact of a recursive relation
with a level (``LEVEL``) that ``incremental.levels`` uses to maintain it under removals. Levels
describe one state of the warehouse, so the file records the *key* it was written for: the
program fingerprint and the Delta version of every relation the levels depend on (the
stratum's and those it reads). A reader passes the key of the state it holds and gets the levels
only when the keys are equal: a table committed by any other means (a recomputation, another
program, a run that stopped before writing the levels) makes them stale, and stale levels are
never read. The file is written to a temporary name and then moved over the old one.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Optional

import pyarrow as pa
import pyarrow.parquet as pq

from . import uris
from .runs import META_DIR

log = logging.getLogger("spark_datalog")

_KEY = b"spark_datalog.levels.key"


class LevelStore:
    """The levels files of a warehouse (see the module docstring)."""

    def __init__(self, root: str):
        try:
            self.fs, root_path = uris.filesystem(root)
        except (OSError, ValueError, pa.ArrowException) as error:  # a store pyarrow cannot open
            log.info("no levels kept in %s (%s)", root, error)
            self.fs, root_path = None, root
        self.directory = f"{root_path.rstrip('/')}/{META_DIR}/levels"

    def _path(self, relation: str) -> str:
        return f"{self.directory}/{relation}.parquet"

    def read(self, relation: str, key: dict) -> Optional[pa.Table]:
        """The relation's facts with their ``LEVEL`` when stored for ``key``, else None."""
        if self.fs is None:
            return None
        path = self._path(relation)
        try:
            if self.fs.get_file_info(path).type.name != "File":
                return None
            with self.fs.open_input_file(path) as source:
                stored = pq.read_schema(source).metadata or {}
                if json.loads(stored.get(_KEY, b"null")) != key:
                    return None
                return pq.read_table(source).replace_schema_metadata(None)
        except (OSError, ValueError, pa.ArrowException) as error:
            log.warning("levels of %s unreadable (%s): maintained without them", relation, error)
            return None

    def write(self, relation: str, key: dict, table: pa.Table) -> None:
        """Store ``table`` (the facts and their ``LEVEL``) as the levels of ``key``."""
        if self.fs is None:
            return
        self.fs.create_dir(self.directory, recursive=True)
        temporary = f"{self.directory}/.{relation}.{uuid.uuid4().hex}.tmp"
        metadata = {_KEY: json.dumps(key, sort_keys=True).encode()}
        with self.fs.open_output_stream(temporary) as sink:
            pq.write_table(table.replace_schema_metadata(metadata), sink)
        self.fs.move(temporary, self._path(relation))

    def clear(self, relation: str) -> None:
        """Forget the relation's levels (they no longer describe it)."""
        if self.fs is None:
            return
        path = self._path(relation)
        if self.fs.get_file_info(path).type.name == "File":
            self.fs.delete_file(path)
