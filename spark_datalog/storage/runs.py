"""The run log and the writer lock of a warehouse.

Run log. ``<root>/_spark_datalog/runs`` is a small Delta table (written with delta-rs from Arrow)
with one row per run event: a ``started`` row when a run begins and a ``committed`` row when all
its tables are committed. The latest row of a run id is its state. A row records the program
fingerprint, the run's sequence number, the mode, the versions of the warehouse's relations when
the run first started (``base_versions``), whether it replaces another program's tables, the
versions consumed (EDB inputs; ``sources`` says where they came from) and produced (tables
written), and free-form ``details``. Mappings are stored as JSON strings so that every Delta
reader can show them. (A table rather than commit metadata: one place answers "which runs, which
versions" without scanning every relation's log.)

Sequence numbers and application transactions. Every run gets a sequence number, one more than
any number seen in the log or in a table's transactions. Every table commit of the run carries
the Delta application transaction ``(APP_ID, sequence)``; before committing, the warehouse skips a
table whose ``transaction_version(APP_ID)`` is already at least the run's sequence. So re-running
a run id that failed half-way resumes it with its sequence number and commits only what is
missing; re-running a committed run id changes nothing.

Lock. Local warehouses are written by one run at a time: ``<root>/_spark_datalog/lock`` is
created with ``O_CREAT | O_EXCL`` and holds the run id, pid, host and time. A second writer fails
with ``WarehouseError`` (or waits up to ``timeout`` seconds). A lock whose holder is a dead process
on this host is stale and taken over; a lock from another host is stale only after
``stale_after`` seconds when that is set, or when broken explicitly (``Warehouse.break_lock``).
Object stores have no atomic create-if-absent through this code, so they are not locked: serialise
runs outside (one scheduler slot per warehouse, e.g. Airflow ``max_active_runs=1``); Delta's
optimistic concurrency still fails a conflicting commit rather than corrupting a table.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import socket
import time
import uuid
from dataclasses import dataclass, field
from typing import Optional

from ..errors import WarehouseError
from . import uris

APP_ID = "spark_datalog"
META_DIR = "_spark_datalog"
STARTED, COMMITTED = "started", "committed"


def now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


@dataclass
class RunInfo:
    """One run writing a warehouse: what the engine passes to every write.

    ``sequence`` is the application-transaction version of every commit of the run.
    ``base_versions`` are the versions of the warehouse's relations when the run first started
    (kept when a failed run is resumed, so an incremental run can recompute from the same state).
    ``consumed`` and ``produced`` map relation names to Delta versions (``None`` for an input
    that is not a Delta table). ``already_committed`` is set when the run id was committed
    before: every write of such a run is skipped, so the caller may skip its work entirely.
    A run writes each table at most once (one commit, one application transaction).
    ``replaces_program``: the run was started with ``replace=True``; its ``replace`` writes may
    change a table's columns.
    """

    run_id: str
    sequence: int
    fingerprint: str
    mode: str = "full"
    started_at: _dt.datetime = field(default_factory=now)
    base_versions: dict = field(default_factory=dict)
    consumed: dict = field(default_factory=dict)
    produced: dict = field(default_factory=dict)
    sources: dict = field(default_factory=dict)
    details: dict = field(default_factory=dict)
    resumed: bool = False
    already_committed: bool = False
    replaces_program: bool = False  # started with replace=True
    written: set = field(default_factory=set, repr=False)  # tables written by this attempt

    def consume(self, name: str, version: Optional[int], source: Optional[str] = None) -> None:
        """Record that the run read input ``name`` at ``version`` (from ``source`` if external)."""
        self.consumed[name] = version
        if source is not None:
            self.sources[name] = source

    def commit_metadata(self, relation: str) -> dict:
        """What every table commit of this run records (as Delta ``userMetadata``)."""
        return {
            "run_id": self.run_id,
            "run_sequence": self.sequence,
            "fingerprint": self.fingerprint,
            "mode": self.mode,
            "relation": relation,
        }


# --------------------------------------------------------------------------------------------
# run log

_JSON_FIELDS = ("base_versions", "consumed", "produced", "sources", "details")


def _log_schema():
    import pyarrow as pa

    ts = pa.timestamp("us", tz="UTC")
    return pa.schema(
        [
            ("run_id", pa.string()),
            ("sequence", pa.int64()),
            ("status", pa.string()),
            ("fingerprint", pa.string()),
            ("mode", pa.string()),
            ("started_at", ts),
            ("finished_at", ts),
            ("base_versions", pa.string()),
            ("consumed", pa.string()),
            ("produced", pa.string()),
            ("sources", pa.string()),
            ("details", pa.string()),
            ("replaces_program", pa.bool_()),
            ("host", pa.string()),
            ("pid", pa.int64()),
        ]
    )


class RunLog:
    """The ``runs`` Delta table of a warehouse (see the module docstring)."""

    def __init__(self, root: str, storage_options: Optional[dict] = None):
        self.uri = uris.join(root, META_DIR, "runs")
        self.storage_options = storage_options

    def _table(self):
        from deltalake import DeltaTable

        if not DeltaTable.is_deltatable(self.uri, storage_options=self.storage_options):
            return None
        return DeltaTable(self.uri, storage_options=self.storage_options)

    def records(self) -> list[dict]:
        """Every row, oldest first, with the JSON fields decoded."""
        table = self._table()
        if table is None:
            return []
        rows = table.to_pyarrow_table().to_pylist()
        for row in rows:
            for name in _JSON_FIELDS:
                row[name] = json.loads(row[name]) if row[name] else {}
        rows.sort(
            key=lambda r: (r["sequence"], r["status"] == COMMITTED, r["finished_at"] or r["started_at"])
        )
        return rows

    def runs(self) -> list[dict]:
        """The latest state of every run, in sequence order."""
        latest: dict[str, dict] = {}
        for row in self.records():
            previous = latest.get(row["run_id"])
            if previous is None or previous["status"] != COMMITTED:
                latest[row["run_id"]] = row
        return sorted(latest.values(), key=lambda r: r["sequence"])

    def append(self, run: RunInfo, status: str) -> dict:
        """Append one event row for ``run`` and return it."""
        import pyarrow as pa
        from deltalake import write_deltalake
        from deltalake.transaction import CommitProperties

        row = {
            "run_id": run.run_id,
            "sequence": run.sequence,
            "status": status,
            "fingerprint": run.fingerprint,
            "mode": run.mode,
            "started_at": run.started_at,
            "finished_at": now() if status == COMMITTED else None,
            "replaces_program": run.replaces_program,
            "host": socket.gethostname(),
            "pid": os.getpid(),
        }
        for name in _JSON_FIELDS:
            row[name] = json.dumps(getattr(run, name), sort_keys=True, default=str)
        table = pa.Table.from_pylist([row], schema=_log_schema())
        write_deltalake(
            self.uri,
            table,
            mode="append",
            storage_options=self.storage_options,
            commit_properties=CommitProperties(
                custom_metadata={"userMetadata": json.dumps({"run_id": run.run_id, "status": status})}
            ),
        )
        return {**row, **{name: getattr(run, name) for name in _JSON_FIELDS}}


# --------------------------------------------------------------------------------------------
# lock


@dataclass
class LockHolder:
    run_id: str
    pid: int
    host: str
    since: str
    token: str

    def describe(self) -> str:
        return f"run {self.run_id} since {self.since} (pid {self.pid} on {self.host})"


class WarehouseLock:
    """The exclusive writer lock of a local warehouse (see the module docstring)."""

    def __init__(self, root: str, stale_after: Optional[float] = None):
        self.enabled = uris.is_local(root)
        self.path = os.path.join(root, META_DIR, "lock") if self.enabled else None
        self.stale_after = stale_after
        self.token: Optional[str] = None

    def holder(self) -> Optional[LockHolder]:
        """Who holds the lock, or ``None``."""
        if not self.enabled:
            return None
        try:
            with open(self.path, encoding="utf-8") as handle:
                data = json.load(handle)
            return LockHolder(**{k: data[k] for k in ("run_id", "pid", "host", "since", "token")})
        except FileNotFoundError:
            return None
        except (ValueError, KeyError, TypeError):
            # Half-written by a writer that died between create and write: treat as a dead holder.
            return LockHolder("?", -1, socket.gethostname(), "?", "?")

    def acquire(self, run_id: str, timeout: float = 0.0, poll: float = 0.2) -> None:
        """Take the lock for ``run_id``; raise ``WarehouseError`` if it stays held ``timeout`` s."""
        if not self.enabled:
            return
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        deadline = time.monotonic() + timeout
        token = uuid.uuid4().hex
        while True:
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                holder = self.holder()
                if holder is not None and self._is_stale(holder):
                    self._break(holder)
                    continue
                if time.monotonic() >= deadline:
                    what = holder.describe() if holder else "another run"
                    raise WarehouseError(
                        f"warehouse is being written by {what}; lock file {self.path}"
                    ) from None
                time.sleep(poll)
                continue
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(
                    {
                        "run_id": run_id,
                        "pid": os.getpid(),
                        "host": socket.gethostname(),
                        "since": now().isoformat(timespec="seconds"),
                        "token": token,
                    },
                    handle,
                )
                handle.flush()
                os.fsync(handle.fileno())
            self.token = token
            return

    def release(self) -> None:
        """Release the lock if this object holds it (a lock broken by someone else is left alone)."""
        if not self.enabled or self.token is None:
            return
        holder = self.holder()
        if holder is not None and holder.token == self.token:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
        self.token = None

    def break_lock(self) -> Optional[LockHolder]:
        """Remove the lock whoever holds it; return the former holder."""
        holder = self.holder()
        if holder is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
        return holder

    def _is_stale(self, holder: LockHolder) -> bool:
        if holder.host == socket.gethostname() and not _pid_alive(holder.pid):
            return True
        if self.stale_after is not None:
            try:
                since = _dt.datetime.fromisoformat(holder.since)
            except ValueError:
                return True
            return (now() - since).total_seconds() > self.stale_after
        return False

    def _break(self, stale: LockHolder) -> None:
        # Several waiters may find the same stale lock: they take turns on a guard and re-check
        # under it, so none of them removes a fresh lock another one has just created.
        with _guard(self.path + ".guard"):
            current = self.holder()
            if current is not None and current.token == stale.token and self._is_stale(current):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.path)


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def _guard(path: str):
    try:
        import fcntl
    except ImportError:  # not POSIX: no guard, the race is only between stale-lock breakers
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass
class CommitResult:
    """What one table write of a run did.

    ``version`` is the table's version after the write (the one the run produced). ``skipped`` is
    ``None`` when a commit was made, ``"already committed"`` when the run's transaction was found
    in the table, ``"no change"`` when a change set was empty. ``rows_added`` / ``rows_removed``
    count the rows of the files added and retired (from file statistics, no Spark job).
    """

    relation: str
    version: Optional[int]
    skipped: Optional[str] = None
    files_added: int = 0
    files_removed: int = 0
    rows_added: int = 0
    rows_removed: int = 0

    @property
    def committed(self) -> bool:
        return self.skipped is None
