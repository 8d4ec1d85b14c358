"""The run log and the writer lock of a warehouse.

Run log. ``<root>/_spark_datalog/runs`` is a small Delta table (written with delta-rs from Arrow)
with one row per run: added with status ``started`` when a run begins, and updated in place (a
Delta MERGE on ``run_id``) to ``committed`` when all its tables are committed. A row records the
program fingerprint, the run's sequence number, the mode, the versions of the warehouse's
relations when the run first started (``base_versions``), whether it replaces another program's
tables, the versions consumed (EDB inputs; ``sources`` says where they came from) and produced
(tables written), and ``details``. The mappings are typed Delta maps (relation -> version, or
-> source) and ``details`` a struct (``method``, ``retired``, ``unchanged_since``), so that every
Delta reader (Spark, DuckDB, polars) can query them; the README lists the columns. A log written
before these columns (JSON strings, a row per run event) is read as it is and rewritten in the
typed form, one overwrite commit, by the first run that writes it. (A table rather than commit
metadata: one place answers "which runs, which versions" without scanning every relation's log.)

Sequence numbers and application transactions. Every run gets a sequence number, one more than
any number seen in the log or in a table's transactions, read and recorded (its ``started`` row)
while the run holds the lock, so two runs of a local warehouse never get the same number (a new
run that finds its number taken by another run id, a writer without the lock, fails). Every
table commit of the run carries the Delta application transaction ``(APP_ID, sequence)``; before
committing, the warehouse skips a table whose ``transaction_version(APP_ID)`` is already at least
the run's sequence. So re-running a run id that failed half-way resumes it with its sequence
number and commits only what is missing; re-running a committed run id changes nothing.

Lock. Local warehouses are written by one run at a time: ``<root>/_spark_datalog/lock`` holds the
run id, pid, host and time (JSON). It is written complete under a private name and hard-linked
into place (``link`` fails when the lock exists), so it never appears empty; the holder keeps an
``flock`` on it while it holds it (released by the OS when the holder dies). A second writer fails
with ``WarehouseError`` (or waits up to ``timeout`` seconds). A lock is stale, and taken over, when
its holder is a dead process of this host, when it is unreadable (empty or garbled) and its file
is older than ``LOCK_GRACE`` (60 s), or, for another host's lock (whose holder cannot be checked),
only when ``stale_after`` is set and it is older than that; otherwise another host's lock is held
until ``unlock`` (``spark-datalog unlock``, ``Warehouse.break_lock``) removes it. Whoever removes
a lock file (release, takeover, unlock) holds its ``flock`` and checks it is still the file at the
lock's path, so two waiters that find the same stale lock never both take it. File systems
without hard links create the lock in place (an empty file for a moment, which counts as held);
without ``flock`` only the content decides. Why not the ``filelock`` package: its lock is the
``flock`` alone, and it opens the lock file with ``O_TRUNC``, so every waiter empties it: the file
cannot say who holds the lock (the messages and ``unlock`` need that), and a holder record kept in
a second file is not taken atomically with the lock. Its ``SoftFileLock`` (the file's existence)
cannot tell a dead holder from a live one, so a crashed run would block the warehouse. And on
shared storage whose ``flock`` does not reach other hosts, a ``flock``-only lock lets a writer of
another host in; the presence of this lock file does not.
Object stores have no atomic create-if-absent through this code, so they are not locked: serialise
runs outside (one scheduler slot per warehouse, e.g. Airflow ``max_active_runs=1``); Delta's
optimistic concurrency still fails a conflicting commit rather than corrupting a table.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import json
import logging
import os
import socket
import stat
import time
import uuid
from dataclasses import dataclass, field
from types import ModuleType
from typing import Optional

from ..errors import WarehouseError
from . import uris

fcntl: Optional[ModuleType]
try:
    import fcntl
except ImportError:  # not POSIX: the lock file's content alone decides
    fcntl = None

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

_VERSIONS = ("base_versions", "consumed", "produced")  # relation -> Delta version (or None)
_MAPPINGS = (*_VERSIONS, "sources")
# ``details``: what a run records besides versions (a struct: every Delta reader shows it).
DETAILS = {"method": "string", "retired": "strings", "unchanged_since": "string"}


def _log_schema():
    """The run log's Arrow schema: one row per run, mappings as maps, ``details`` a struct."""
    import pyarrow as pa

    ts = pa.timestamp("us", tz="UTC")
    versions = pa.map_(pa.string(), pa.int64())
    kinds = {"string": pa.string(), "strings": pa.list_(pa.string())}
    details = pa.struct([(name, kinds[kind]) for name, kind in DETAILS.items()])
    return pa.schema(
        [
            ("run_id", pa.string()),
            ("sequence", pa.int64()),
            ("status", pa.string()),
            ("fingerprint", pa.string()),
            ("mode", pa.string()),
            ("started_at", ts),
            ("finished_at", ts),
            *((name, versions) for name in _VERSIONS),
            ("sources", pa.map_(pa.string(), pa.string())),
            ("details", details),
            ("replaces_program", pa.bool_()),
            ("host", pa.string()),
            ("pid", pa.int64()),
        ]
    )


def _stored(row: dict) -> dict:
    """``row`` as the run log stores it: mappings as ``(key, value)`` lists, known ``details``."""
    unknown = set(row["details"]) - set(DETAILS)
    if unknown:
        raise ValueError(f"run details without a run log column: {', '.join(sorted(unknown))}")
    stored = {**row, "details": {name: row["details"].get(name) for name in DETAILS}}
    for name in _MAPPINGS:
        stored[name] = sorted(row[name].items())
    return stored


def _decoded(row: dict, legacy: bool) -> dict:
    """A stored row as the warehouse reads it: mappings as dicts, ``details`` without empty
    fields. ``legacy``: a row of a log written before the typed columns (JSON strings)."""
    for name in (*_MAPPINGS, "details"):
        value = row[name]
        if legacy:
            row[name] = json.loads(value) if value else {}
        elif name == "details":
            row[name] = {key: item for key, item in (value or {}).items() if item is not None}
        else:
            row[name] = dict(value or ())
    return row


class RunLog:
    """The ``runs`` Delta table of a warehouse: one row per run, updated in place when the run
    commits (see the module docstring).

    Example::

        log = RunLog("/data/wh")
        log.runs()[-1]["produced"]   # {'arc': 3, 'tc': 3}
    """

    def __init__(self, root: str, storage_options: Optional[dict] = None):
        self.uri = uris.join(root, META_DIR, "runs")
        self.storage_options = storage_options

    def _table(self):
        from deltalake import DeltaTable

        if not DeltaTable.is_deltatable(self.uri, storage_options=self.storage_options):
            return None
        return DeltaTable(self.uri, storage_options=self.storage_options)

    def records(self) -> list[dict]:
        """Every row, oldest first, mappings as dicts (a log written before the typed columns
        has a row per run event, ``started`` and ``committed``)."""
        table = self._table()
        if table is None:
            return []
        data = table.to_pyarrow_table()
        legacy = _is_legacy(data.schema)
        rows = [_decoded(row, legacy) for row in data.to_pylist()]
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
        """Record ``run`` in ``status``: a new row when it starts, its row updated when it
        commits. Returns the row."""
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
            **{name: dict(getattr(run, name)) for name in (*_MAPPINGS, "details")},
        }
        self._write(_stored(row), status)
        return row

    def _write(self, row: dict, status: str) -> None:
        """Insert ``row``, or replace the row of its run id (one commit)."""
        import pyarrow as pa
        from deltalake import write_deltalake

        table = self._table()
        if table is not None and _is_legacy(pa.schema(table.schema().to_arrow())):
            self._upgrade()
            table = self._table()
        source = pa.Table.from_pylist([row], schema=_log_schema())
        properties = _commit_properties(row["run_id"], status)
        if table is None or status != COMMITTED:
            write_deltalake(
                self.uri,
                source,
                mode="append",
                storage_options=self.storage_options,
                commit_properties=properties,
            )
            return
        merge = table.merge(
            source,
            predicate="target.run_id = source.run_id",  # constant text: no value is spliced in
            source_alias="source",
            target_alias="target",
            commit_properties=properties,
        )
        merge.when_matched_update_all().when_not_matched_insert_all().execute()

    def _upgrade(self) -> None:
        """Rewrite a log of JSON strings and event rows as typed columns, one row per run (one
        overwrite commit; the old rows stay in the table's history)."""
        import pyarrow as pa
        from deltalake import write_deltalake

        rows = [_stored({**row, "details": _known(row["details"])}) for row in self.runs()]
        write_deltalake(
            self.uri,
            pa.Table.from_pylist(rows, schema=_log_schema()),
            mode="overwrite",
            schema_mode="overwrite",
            storage_options=self.storage_options,
            commit_properties=_commit_properties(None, "typed columns"),
        )


def _known(details: dict) -> dict:
    """``details`` without the keys the run log has no column for."""
    return {name: value for name, value in details.items() if name in DETAILS}


def _is_legacy(schema) -> bool:
    """Whether a run log's Arrow schema is the one before the typed columns (JSON strings)."""
    import pyarrow as pa

    produced = schema.field("produced").type
    return pa.types.is_string(produced) or pa.types.is_large_string(produced)


def _commit_properties(run_id: Optional[str], status: str):
    from deltalake.transaction import CommitProperties

    metadata = json.dumps({"run_id": run_id, "status": status})
    return CommitProperties(custom_metadata={"userMetadata": metadata})


# --------------------------------------------------------------------------------------------
# lock

LOCK_GRACE = 60.0  # seconds an empty or garbled lock file counts as held (by its modification time)

_HOLDER_FIELDS = {"run_id": str, "pid": int, "host": str, "since": str, "token": str}
_NO_HARD_LINKS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS}
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # never wait on a FIFO put at the lock's path

log = logging.getLogger("spark_datalog")


@dataclass
class LockHolder:
    """Who holds a warehouse lock, as its lock file says.

    ``readable`` is False for an empty or garbled lock file: then only ``since`` (the file's
    modification time) is known. Example::

        LockHolder("nightly", 4242, "etl-1", "2026-11-25T13:00:00+00:00", "ab12").describe()
        # 'run nightly since 2026-11-25T13:00:00+00:00 (pid 4242 on etl-1)'
    """

    run_id: str
    pid: int
    host: str
    since: str
    token: str
    readable: bool = True

    def describe(self) -> str:
        if not self.readable:
            return f"an unknown writer (unreadable lock file, last written {self.since})"
        return f"run {self.run_id} since {self.since} (pid {self.pid} on {self.host})"

    def age(self) -> float:
        """Seconds since the lock was taken (``since``)."""
        return (now() - _dt.datetime.fromisoformat(self.since)).total_seconds()

    def is_this_host(self) -> bool:
        return self.readable and self.host == socket.gethostname()


@dataclass
class _Candidate:
    """A complete lock file under a private name, flocked, waiting to be linked into place."""

    path: str
    fd: int
    content: bytes


class WarehouseLock:
    """The exclusive writer lock of a local warehouse (see the module docstring).

    Example::

        lock = WarehouseLock("/data/wh")
        lock.acquire("nightly-7", timeout=60)   # WarehouseError when still held after 60 s
        ...
        lock.release()
    """

    def __init__(self, root: str, stale_after: Optional[float] = None, grace: float = LOCK_GRACE):
        self.enabled = uris.is_local(root)
        self.path = os.path.join(root, META_DIR, "lock") if self.enabled else ""  # "": no lock
        self.stale_after = stale_after
        self.grace = grace
        self.token: Optional[str] = None
        self._handle: Optional[int] = None  # descriptor of the held lock file, flocked

    def holder(self) -> Optional[LockHolder]:
        """Who holds the lock, or ``None``."""
        if not self.enabled:
            return None
        fd = self._open()
        if fd is None:
            return None
        try:
            return _read_holder(fd)
        finally:
            os.close(fd)

    def acquire(self, run_id: str, timeout: float = 0.0, poll: float = 0.2) -> None:
        """Take the lock for ``run_id``; raise ``WarehouseError`` if it stays held ``timeout`` s."""
        if not self.enabled:
            return
        self._make_dir()
        deadline = time.monotonic() + timeout
        token = uuid.uuid4().hex
        candidate = self._write_candidate(run_id, token)
        fd = None
        try:
            while (fd := self._place(candidate)) is None:
                holder = self._take_over_if_stale()
                if holder is None:
                    continue  # gone, or stale and removed: try again at once
                if time.monotonic() >= deadline:
                    raise self._held(holder)
                time.sleep(poll)
            self._handle, self.token = fd, token
        finally:
            _discard(candidate, keep=fd == candidate.fd)

    def release(self) -> None:
        """Release the lock if this object holds it (a lock broken by someone else is left alone)."""
        if not self.enabled or self.token is None:
            return
        fd, self._handle, self.token = self._handle, None, None
        assert fd is not None  # held: acquire set both
        try:
            if self._is_current(fd):  # we hold its flock: nobody else removes it meanwhile
                self._remove()
        finally:
            os.close(fd)

    def unlock(self, force: bool = False) -> Optional[LockHolder]:
        """Remove the lock and return who held it (``None`` when there was no lock).

        For a lock left by another host or by a dead process. Refused with ``WarehouseError``
        while a live process of this host holds it, unless ``force``. Example::

            WarehouseLock("/data/wh").unlock()   # LockHolder(run_id='nightly', pid=4242, ...)
        """
        if not self.enabled:
            return None
        while True:
            fd = self._open()
            if fd is None:
                return None
            try:
                free = _try_flock(fd)
                holder = _read_holder(fd)
                if not force and (not free or (holder.is_this_host() and _pid_alive(holder.pid))):
                    raise WarehouseError(
                        f"the warehouse lock {self.path} is held by {holder.describe()}, a live process; "
                        f"pass --force (force=True) to remove it anyway"
                    )
                if self._is_current(fd):
                    self._remove()
                    return holder
            finally:
                os.close(fd)

    # ---------------------------------------------------------------------- taking it

    def _write_candidate(self, run_id: str, token: str) -> _Candidate:
        """The lock file's content under a private name, flocked before anyone can see it."""
        holder = {
            "run_id": run_id,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": now().isoformat(timespec="seconds"),
            "token": token,
        }
        path = os.path.join(os.path.dirname(self.path), f".lock-{token}")
        content = json.dumps(holder).encode("utf-8")
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o644)
        except OSError as err:
            raise self._error("create", err) from None
        candidate = _Candidate(path, fd, content)
        try:
            _try_flock(fd)
            os.write(fd, content)
            os.fsync(fd)
        except OSError as err:
            _discard(candidate, keep=False)
            raise self._error("write", err) from None
        return candidate

    def _place(self, candidate: _Candidate) -> Optional[int]:
        """Put the candidate in place unless a lock exists: its descriptor, else ``None``.

        ``link`` fails when the target exists, so the lock file appears complete and only once.
        """
        try:
            os.link(candidate.path, self.path)
            return candidate.fd
        except FileExistsError:
            return None
        except OSError as err:
            if err.errno in _NO_HARD_LINKS:
                return self._create_in_place(candidate.content)
            raise self._error("create", err) from None

    def _create_in_place(self, content: bytes) -> Optional[int]:
        """For file systems without hard links: create, flock, then write (a reader may see it
        empty for a moment, which counts as held for ``grace`` seconds)."""
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o644)
        except FileExistsError:
            return None
        except OSError as err:
            raise self._error("create", err) from None
        try:
            _try_flock(fd)
            os.write(fd, content)
            os.fsync(fd)
        except OSError as err:
            os.close(fd)
            self._remove()
            raise self._error("write", err) from None
        return fd

    def _take_over_if_stale(self) -> Optional[LockHolder]:
        """Remove the lock file if its holder is gone; the holder that keeps it, else ``None``.

        Whoever removes a lock file holds its flock while checking and removing it, so two
        waiters that find the same stale lock cannot both remove it (nor the next one's lock).
        """
        fd = self._open()
        if fd is None:
            return None
        try:
            if not _try_flock(fd):  # its holder is alive, or another waiter is taking it over
                return _read_holder(fd)
            if not self._is_current(fd):
                return None
            holder = _read_holder(fd)
            if not self._is_stale(holder):
                return holder
            self._remove()
        finally:
            os.close(fd)
        log.warning("took over the warehouse lock %s from %s", self.path, holder.describe())
        return None

    def _held(self, holder: LockHolder) -> WarehouseError:
        """The error of a writer that found the lock held by ``holder``."""
        message = f"warehouse is being written by {holder.describe()}; lock file {self.path}"
        if not holder.readable:
            message += f" (taken over once it is {self.grace:g} s old)"
        elif not holder.is_this_host():
            root = os.path.dirname(os.path.dirname(self.path))
            message += (
                f" (held until that run ends or, if it is gone, `spark-datalog unlock {root}` removes it)"
            )
        return WarehouseError(message)

    def _is_stale(self, holder: LockHolder) -> bool:
        """An unreadable lock after ``grace`` s, a dead process of this host, another host's lock
        after ``stale_after`` s (never when that is ``None``)."""
        if not holder.readable:
            return holder.age() > self.grace
        if holder.is_this_host():
            return not _pid_alive(holder.pid)
        return self.stale_after is not None and holder.age() > self.stale_after

    # ---------------------------------------------------------------------- file operations

    def _make_dir(self) -> None:
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
        except OSError as err:
            raise self._error("create the directory of", err) from None

    def _open(self) -> Optional[int]:
        """A descriptor of the lock file, or ``None`` when there is none.

        Read-write where allowed: NFS emulates ``flock`` with POSIX locks, which need it.
        """
        try:
            try:
                fd = os.open(self.path, os.O_RDWR | _NONBLOCK)
            except (PermissionError, IsADirectoryError) as err:
                if isinstance(err, IsADirectoryError):
                    raise self._not_a_file() from None
                fd = os.open(self.path, os.O_RDONLY | _NONBLOCK)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as err:
            raise self._error("read", err) from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise self._not_a_file()
        return fd

    def _not_a_file(self) -> WarehouseError:
        return WarehouseError(f"the warehouse lock {self.path} is not a file; remove it")

    def _is_current(self, fd: int) -> bool:
        """True when ``fd`` is the file now at the lock's path."""
        try:
            here = os.stat(self.path)
        except FileNotFoundError:
            return False
        except OSError as err:
            raise self._error("read", err) from None
        mine = os.fstat(fd)
        return (here.st_dev, here.st_ino) == (mine.st_dev, mine.st_ino)

    def _remove(self) -> None:
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        except OSError as err:
            raise self._error("remove", err) from None

    def _error(self, doing: str, err: OSError) -> WarehouseError:
        return WarehouseError(f"cannot {doing} the warehouse lock {self.path}: {err.strerror or err}")


def _read_holder(fd: int) -> LockHolder:
    """The holder an open lock file names; an unreadable one when it is empty or garbled."""
    info = os.fstat(fd)
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 64 * 1024).decode("utf-8", errors="replace")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if _is_holder_record(data):
        return LockHolder(**{name: data[name] for name in _HOLDER_FIELDS})
    mtime = _dt.datetime.fromtimestamp(info.st_mtime, _dt.timezone.utc).isoformat(timespec="seconds")
    return LockHolder("?", -1, "?", mtime, "", readable=False)


def _is_holder_record(data) -> bool:
    """True for a lock file's JSON with every field of its type and a readable ``since``."""
    if not isinstance(data, dict):
        return False
    for name, kind in _HOLDER_FIELDS.items():
        value = data.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            return False
    try:
        since = _dt.datetime.fromisoformat(data["since"])
    except ValueError:
        return False
    return since.tzinfo is not None


def _try_flock(fd: int) -> bool:
    """Take ``fd``'s exclusive flock without waiting: False when someone else holds it.

    True too where flock is unavailable (not POSIX, or a file system without it): then only the
    lock file's content decides.
    """
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        return True
    return True


def _discard(candidate: _Candidate, keep: bool) -> None:
    """Remove the candidate's private name; close it unless it became the held lock."""
    with contextlib.suppress(OSError):
        os.unlink(candidate.path)
    if not keep:
        os.close(candidate.fd)


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:
        return True
    return True


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
