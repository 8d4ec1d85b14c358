"""The warehouse: a directory of Delta tables, one per relation, with signed counts.

``<root>/<relation>`` holds the relation's declared columns plus ``_count`` (long). A fact is
present iff its count is positive. ``<root>/_spark_datalog/`` holds the run log and the writer
lock (see ``runs``), and the derivation levels of recursive relations (``levels``; each valid
only for the versions it names). Writes happen inside a run::

    wh = Warehouse(spark, "/data/wh")
    with wh.run(fingerprint, run_id="2024-06-01") as run:
        wh.replace("arc", [("x", "long"), ("y", "long")], arcs_with_counts, run)
        wh.apply_changes("tc", [("x", "long"), ("y", "long")], signed_changes, run)
    wh.read("tc").show()

Every table commit of a run carries the application transaction ``("spark_datalog", run
sequence)``; a table that already has it is skipped, so a failed run re-run with the same run id
finishes the rest without duplicates, and a committed run re-run changes nothing.

Test hook: ``after_commit`` (a callable ``(relation, version)``) runs after every table commit,
and the environment variable ``SPARK_DATALOG_FAIL_AFTER_COMMITS=n`` makes the n-th table commit
of a ``Warehouse`` object raise ``InjectedFailure`` — a crash between two table commits.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import uuid
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Mapping, Optional

from ..errors import WarehouseError
from . import catalog, uris
from .detect import choose_backend
from .levels import LevelStore
from .runs import APP_ID, COMMITTED, META_DIR, CommitResult, RunInfo, RunLog, WarehouseLock
from ..recursive_records import stored_type
from .schema import COUNT_COLUMN, Columns, check_same_columns, normalise_columns

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

FAIL_AFTER_COMMITS_ENV = "SPARK_DATALOG_FAIL_AFTER_COMMITS"


class InjectedFailure(RuntimeError):
    """Raised by the crash-injection test hook between two table commits."""


class Warehouse:
    """A directory (or object-store prefix) of Delta tables, one per relation.

    ``backend`` is ``"auto"`` (native delta-spark when its jar is loadable, else embedded
    delta-rs), ``"native"`` or ``"embedded"``; by default the session's
    ``spark.datalog.warehouse.backend`` setting, else ``"auto"``. ``storage_options`` go to
    delta-rs for object stores. ``lock_timeout`` is how long a run waits for another writer of
    a local warehouse before failing; ``lock_stale_after`` lets a lock from another host expire (seconds).
    With ``database`` the relations are also tables of that Spark catalog database (created
    when missing; the warehouse's location defaults to the database's): ``spark.table(
    "reasoning.tc")`` reads one (see ``storage.catalog``; native path only).
    ``rows_per_file`` bounds the rows of each data file the embedded path writes (default
    ``spark.datalog.rowsPerFile``, 131,072): a change rewrites only the files holding
    facts it touches, so smaller files make small changes cheaper and the table's log longer.

    Example::

        wh = Warehouse(spark, "/tmp/wh")
        wh.relations()          # ['arc', 'tc']
        wh.read("tc").show()
        wh.history("tc")[0]     # {'version': 3, 'operation': 'WRITE', 'run_id': ..., ...}
    """

    def __init__(
        self,
        spark,
        root=None,
        backend: Optional[str] = None,
        storage_options: Optional[dict] = None,
        lock_timeout: float = 0.0,
        lock_stale_after: Optional[float] = None,
        rows_per_file: Optional[int] = None,
        database: Optional[str] = None,
    ):
        self.spark = spark
        self.database = database
        self.backend_name = choose_backend(spark, backend)
        if database is not None:
            root = self._catalog_root(root)
        elif root is None:
            raise WarehouseError("a warehouse needs a location (root) or a catalog database")
        self.root = uris.normalise(root)
        if uris.is_local(self.root) and os.path.exists(self.root) and not os.path.isdir(self.root):
            raise WarehouseError(f"the warehouse location {self.root} is a file, not a directory")
        self.storage_options = storage_options
        backend_class: type
        if self.backend_name == "native":
            from .native import NativeBackend as backend_class
        else:
            from .embedded import EmbeddedBackend as backend_class
        self._backend = backend_class(spark, self.root, storage_options, rows_per_file=rows_per_file)
        self._log = RunLog(self.root, storage_options)
        self.levels = LevelStore(self.root)  # derivation levels (``incremental.levels``)
        self._lock = WarehouseLock(self.root, stale_after=lock_stale_after)
        self.lock_timeout = lock_timeout
        self.after_commit: Optional[Callable[[str, int], None]] = None
        self._commits = 0
        self._active: Optional[RunInfo] = None
        self._retired_cache: Optional[dict] = None  # see retired()

    def _catalog_root(self, root):
        """``root``, or the location of the catalog database ``self.database`` (created when
        missing); catalog tables need the native path."""
        catalog.check_database_name(self.database)
        if self.backend_name != "native":
            raise WarehouseError(
                f"catalog tables (database={self.database!r}) need the native Delta path: the "
                f"delta-spark jar on the classpath (see README, 'Which Delta path')"
            )
        located = catalog.database_location(self.spark, self.database)
        return root if root is not None else located

    def __repr__(self) -> str:
        return f"Warehouse({self.root!r}, backend={self.backend_name!r})"

    # ---------------------------------------------------------------------------- reading

    def relations(self) -> list[str]:
        """Names of the relations stored in the warehouse, sorted."""
        from pyarrow.fs import FileSelector, FileType

        fs, path = uris.filesystem(self.root)
        try:
            infos = fs.get_file_info(FileSelector(path, allow_not_found=True))
        except FileNotFoundError:
            return []
        names = [i.base_name for i in infos if i.type == FileType.Directory and _valid_name(i.base_name)]
        retired = self.retired()
        return sorted(n for n in names if n not in retired and self._backend.exists(n))

    def exists(self, name: str) -> bool:
        """True when ``name`` is a (not retired) Delta table of the warehouse."""
        return _valid_name(name) and name not in self._retired_names() and self._backend.exists(name)

    def retired(self) -> dict:
        """Relations whose tables belong to a program the warehouse no longer holds -> the run
        that retired them (a run that replaced the program by one without them). Their tables
        are kept, history and all, but ``relations``, ``exists`` and ``read`` no longer offer
        them; a later program that has the relation again writes it and makes it current."""
        self.runs()
        assert self._retired_cache is not None  # runs() sets it
        return dict(self._retired_cache)

    def version(self, name: str) -> Optional[int]:
        """The latest Delta version of ``name`` (``None`` when it does not exist)."""
        _check_name(name)
        return self._backend.version(name)

    def schema(self, name: str, version: Optional[int] = None) -> Columns:
        """The declared ``(name, type)`` columns of ``name`` (without ``_count``)."""
        self._require(name)
        return self._backend.columns(name, version)

    def read(self, name: str, with_counts: bool = False, version: Optional[int] = None) -> "DataFrame":
        """The facts of ``name`` (rows with a positive count), declared columns only.

        With ``with_counts=True`` every stored row is returned with its signed ``_count``.
        ``version`` pins a Delta version (time travel); the latest by default.
        """
        from pyspark.sql import functions as F

        self._require(name)
        columns, df = self._backend.read(name, version)
        if with_counts:
            return df
        return df.where(F.col(COUNT_COLUMN) > 0).select(*[c for c, _ in columns])

    def read_facts(
        self,
        name: str,
        version: Optional[int] = None,
        max_rows: Optional[int] = None,
        with_counts: bool = False,
        meeting: "Optional[pa.Table]" = None,
    ) -> "Optional[pa.Table]":
        """The facts of ``name`` (with their ``_count`` when ``with_counts``) as a pyarrow Table
        read without Spark, where the backend can (the embedded one, by delta-rs), else None;
        None too when the files read store more than ``max_rows`` rows. For callers that need a
        stored relation in this process. ``meeting`` (a table with the relation's columns):
        read only the data files whose statistics say they may hold one of its facts, so a
        small change is looked up in a few files of a large relation, e.g.
        ``wh.read_facts("arc", meeting=pa.table({"src": [1], "dst": [2]}))``.
        """
        self._require(name)
        return self._backend.read_facts(name, version, max_rows, with_counts, meeting)

    def read_version(self, name: str, version: int, with_counts: bool = False) -> "DataFrame":
        """``read`` at a given Delta version."""
        return self.read(name, with_counts=with_counts, version=version)

    def changes(self, name: str, from_version: int, to_version: Optional[int] = None) -> "DataFrame":
        """The net signed changes of ``name`` from ``from_version`` to ``to_version`` (latest).

        Declared columns plus ``_count`` (new count minus old count, facts with no change left
        out). Read from the table's change data feed when it is enabled on every commit in
        between, otherwise from the files added or removed in between (the method is logged on
        the ``spark_datalog`` logger, see ``embedded.table_changes``); those files must not be
        vacuumed.
        """
        from .embedded import net_changes

        self._require(name)
        columns = self._backend.columns(name, to_version)
        return net_changes(self._backend.changes(name, from_version, to_version).df, columns)

    def history(self, name: str, limit: Optional[int] = None) -> list[dict]:
        """The Delta versions of ``name``, newest first, with what produced them.

        Each entry: ``version``, ``timestamp`` (UTC datetime), ``operation``,
        ``operation_parameters``, and from the run: ``run_id``, ``run_sequence``,
        ``fingerprint``, ``mode`` (``None`` for commits not made by spark_datalog).
        """
        self._require(name)
        return [_history_entry(commit) for commit in self._backend.history(name, limit)]

    def runs(self) -> list[dict]:
        """Every run's latest record (status ``started`` or ``committed``), oldest first."""
        runs = self._log.runs()
        self._retired_cache = _retired_relations(runs)
        return runs

    def _retired_names(self) -> dict:
        """``retired()`` as of the last time this object read the run log."""
        if self._retired_cache is None:
            self.runs()
        assert self._retired_cache is not None  # runs() sets it
        return self._retired_cache

    def last_run(self) -> Optional[dict]:
        """The latest committed run, or ``None``."""
        committed = [r for r in self.runs() if r["status"] == COMMITTED]
        return committed[-1] if committed else None

    def committed_run(self, run_id: Optional[str]) -> Optional[dict]:
        """The record of run ``run_id`` when it committed, else ``None``."""
        if run_id is None:
            return None
        return next((r for r in self.runs() if r["run_id"] == run_id and r["status"] == COMMITTED), None)

    def pending_run(self) -> Optional[dict]:
        """The latest run that started after the last committed one and did not finish."""
        runs = self.runs()
        last = max((r["sequence"] for r in runs if r["status"] == COMMITTED), default=0)
        pending = [r for r in runs if r["status"] != COMMITTED and r["sequence"] > last]
        return pending[-1] if pending else None

    # ---------------------------------------------------------------------------- runs

    def check_writable(self) -> None:
        """Refuse, with ``WarehouseError``, a local warehouse that cannot be created or written
        (under a regular file, in a read-only directory): callers check it before any work.
        Object stores are not checked (their permissions show at the first write)."""
        if not uris.is_local(self.root):
            return
        existing = self.root
        while not os.path.exists(existing) and os.path.dirname(existing) != existing:
            existing = os.path.dirname(existing)
        if not os.path.isdir(existing):
            raise WarehouseError(
                f"the warehouse {self.root} cannot be created: {existing} is a file, not a directory"
            )
        for path in (existing, os.path.join(self.root, META_DIR)):
            if os.path.isdir(path) and not os.access(path, os.W_OK | os.X_OK):
                raise WarehouseError(f"the warehouse {self.root} cannot be written: {path} is not writable")

    def check_program(self, fingerprint: str, replace: bool = False) -> None:
        """Refuse a program other than the one the warehouse holds, unless ``replace``.

        The warehouse holds the program of its latest run (committed or not).
        """
        runs = self.runs()
        if not runs or replace:
            return
        latest = runs[-1]
        if latest["fingerprint"] != fingerprint:
            raise WarehouseError(
                f"the warehouse {self.root} holds the results of another program (fingerprint "
                f"{latest['fingerprint'][:12]}, run {latest['run_id']}); this program has "
                f"fingerprint {fingerprint[:12]}. Pass replace=True to replace it"
            )

    def start_run(
        self, fingerprint: str, run_id: Optional[str] = None, mode: str = "full", replace: bool = False
    ) -> RunInfo:
        """Take the writer lock and begin (or resume) a run; return its ``RunInfo``.

        A new ``run_id`` (default: a fresh uuid) gets the next sequence number and a ``started``
        record. A run id that started before and did not commit is resumed with its sequence
        number and base versions; one that committed comes back with ``already_committed``.
        ``replace=True`` accepts another program's warehouse: the run's ``replace`` writes may
        then also change a table's columns. Refused with ``WarehouseError``: another writer holds
        the lock, another program's fingerprint without ``replace``, the same run id with another
        fingerprint, or a non-``full`` run while another run is unfinished.
        """
        if self._active is not None:
            raise WarehouseError(
                f"run {self._active.run_id} is still open on this warehouse object; commit or abort it first"
            )
        run_id = run_id or uuid.uuid4().hex
        self._lock.acquire(run_id, timeout=self.lock_timeout)
        try:
            run = self._begin(fingerprint, run_id, mode, replace)
        except BaseException:
            self._lock.release()
            raise
        self._active = run
        return run

    def _begin(self, fingerprint: str, run_id: str, mode: str, replace: bool) -> RunInfo:
        runs = self.runs()
        previous = next((r for r in runs if r["run_id"] == run_id), None)
        if previous is not None:
            if previous["fingerprint"] != fingerprint:
                raise WarehouseError(
                    f"run {run_id} was started with another program (fingerprint "
                    f"{previous['fingerprint'][:12]}); use a new run id"
                )
            last = max((r["sequence"] for r in runs if r["status"] == COMMITTED), default=0)
            if previous["status"] != COMMITTED and previous["sequence"] < last:
                raise WarehouseError(
                    f"run {run_id} did not finish and later runs have committed "
                    f"since; it cannot be resumed, use a new run id"
                )
            return RunInfo(
                run_id=run_id,
                sequence=previous["sequence"],
                fingerprint=fingerprint,
                mode=previous["mode"],
                started_at=previous["started_at"],
                base_versions=dict(previous["base_versions"]),
                consumed=dict(previous["consumed"]),
                produced=dict(previous["produced"]),
                sources=dict(previous["sources"]),
                details=dict(previous["details"]),
                resumed=previous["status"] != COMMITTED,
                already_committed=previous["status"] == COMMITTED,
                replaces_program=bool(previous["replaces_program"]),
            )
        self.check_program(fingerprint, replace)
        pending = self.pending_run()
        if pending is not None and mode != "full":
            raise WarehouseError(
                f"run {pending['run_id']} did not finish; re-run it with the same "
                f"run id (or run a full materialization) before a {mode} run"
            )
        relations = self.relations()
        table_sequences = [self._backend.transaction_version(n, APP_ID) or 0 for n in relations]
        sequence = 1 + max([r["sequence"] for r in runs] + table_sequences, default=0)
        run = RunInfo(
            run_id=run_id,
            sequence=sequence,
            fingerprint=fingerprint,
            mode=mode,
            base_versions={n: self._backend.version(n) for n in relations},
            replaces_program=bool(replace),
        )
        self._log.append(run, "started")
        self._check_sequence_unique(run)
        return run

    def _check_sequence_unique(self, run: RunInfo) -> None:
        """Refuse a run whose new sequence number another run got too (a writer that did not hold
        the lock: object stores, or a lock removed by force): its commits would be skipped."""
        others = sorted(
            {r["run_id"] for r in self._log.records() if r["sequence"] == run.sequence} - {run.run_id}
        )
        if others:
            raise WarehouseError(
                f"run {run.run_id} and run {others[0]} got the same sequence number {run.sequence}: "
                f"another writer is writing the warehouse {self.root} at the same time; re-run with a "
                f"new run id when it is done"
            )

    def commit_run(self, run: RunInfo, details: Optional[Mapping] = None) -> dict:
        """Record the run as committed (versions consumed and produced) and release the lock."""
        self._check_active(run)
        try:
            if run.already_committed:
                record = next(r for r in self.runs() if r["run_id"] == run.run_id)
            else:
                run.details.update(details or {})
                record = self._log.append(run, COMMITTED)
                run.already_committed = True
        finally:
            self._active = None
            self._retired_cache = None  # the run may have written (or retired) relations
            self._lock.release()
        return record

    def abort_run(self, run: RunInfo) -> None:
        """Release the lock without committing; re-running the run id resumes it."""
        if self._active is run:
            self._active = None
            self._lock.release()

    @contextlib.contextmanager
    def run(
        self, fingerprint: str, run_id: Optional[str] = None, mode: str = "full", replace: bool = False
    ) -> Iterator[RunInfo]:
        """``start_run`` … ``commit_run``, or ``abort_run`` when the body raises."""
        info = self.start_run(fingerprint, run_id=run_id, mode=mode, replace=replace)
        try:
            yield info
        except BaseException:
            self.abort_run(info)
            raise
        self.commit_run(info)

    def break_lock(self, force: bool = False) -> Optional[dict]:
        """Remove the writer lock left by a crashed run (of another host, or a dead process);
        return its holder (``None`` when unlocked). Refused with ``WarehouseError`` while a live
        process of this host holds it, unless ``force``. ``spark-datalog unlock`` does this."""
        holder = self._lock.unlock(force=force)
        return None if holder is None else dict(holder.__dict__)

    # ---------------------------------------------------------------------------- writing

    def replace(self, name: str, columns: Iterable, df, run: RunInfo) -> CommitResult:
        """Make ``df`` (the declared columns plus ``_count``) the whole content of ``name``.

        One new Delta version; the table is created when missing. Rows should be unique on the
        declared columns (the engine writes one row per fact). ``SchemaError`` when the table
        exists with other columns, unless the run replaces another program (``start_run(...,
        replace=True)``): then the table is replaced with the new columns, keeping its history.
        """
        columns = self._prepare(name, columns, run, new_schema_allowed=run.replaces_program)
        new_schema = self._backend.exists(name) and self._backend.columns(name) != columns
        return self._commit(
            name, run, lambda txn, meta: self._backend.replace(name, columns, df, txn, meta, new_schema)
        )

    def write_relations(self, tables: Mapping[str, tuple], run: RunInfo) -> dict[str, CommitResult]:
        """``replace`` every ``name -> (columns, df)`` in order (one commit per table)."""
        return {name: self.replace(name, columns, df, run) for name, (columns, df) in tables.items()}

    def apply_changes(
        self,
        name: str,
        columns: Iterable,
        changes,
        run: RunInfo,
        *,
        new_facts_only: bool = False,
        netted: bool = False,
    ) -> CommitResult:
        """Add the signed counts of ``changes`` (declared columns + ``_count``; a Spark frame,
        or a pyarrow Table the caller computed in this process) to ``name``.

        Several rows of one fact are summed; a fact's new count is old + change; facts reaching
        0 are deleted (negative counts are stored as they are: such facts are absent). No new
        version when the net change is empty. A missing table is created from the changes.
        Only the data files holding changed facts are rewritten.

        Promises that make it cheaper (a broken promise gives a wrong table): ``new_facts_only``
        — no fact of ``changes`` has a stored row, not even one with a count <= 0 (e.g. facts
        that a presence diff against the table found inserted); when all their counts are
        positive they are then appended without reading the table. ``netted`` — ``changes`` has
        one row per fact and no zero count (saves the shuffle that sums a large change).
        """
        columns = self._prepare(name, columns, run)
        return self._commit(
            name,
            run,
            lambda txn, meta: self._backend.apply_changes(
                name, columns, changes, txn, meta, new_facts_only=new_facts_only, netted=netted
            ),
        )

    def _prepare(
        self, name: str, columns: Iterable, run: RunInfo, new_schema_allowed: bool = False
    ) -> Columns:
        _check_name(name)
        self._check_active(run)
        # a recursive record column is stored as its encoded texts (recursive_records)
        columns = tuple((column, stored_type(type_)) for column, type_ in normalise_columns(columns, name))
        if self._backend.exists(name) and not new_schema_allowed:
            check_same_columns(name, columns, self._backend.columns(name), "the stored table")
        return columns

    def _commit(self, name: str, run: RunInfo, write) -> CommitResult:
        if name in run.written:
            raise WarehouseError(
                f"relation {name} was already written by run {run.run_id}; a "
                f"run writes each table once (combine the changes)"
            )
        if run.already_committed:
            run.written.add(name)
            return CommitResult(name, run.produced.get(name, self.version(name)), "already committed")
        done = self._backend.transaction_version(name, APP_ID)
        if done is not None and done >= run.sequence:
            result = CommitResult(name, self._backend.version(name), "already committed")
        else:
            result = write((APP_ID, run.sequence), run.commit_metadata(name))
        run.produced[name] = result.version
        run.written.add(name)
        if self.database is not None and self._backend.exists(name):
            catalog.register_table(self.spark, self.database, name, self._backend.table_uri(name))
        if result.committed and result.version is not None:
            self._after_commit(name, result.version)
        return result

    def _after_commit(self, name: str, version: int) -> None:
        self._commits += 1
        if self.after_commit is not None:
            self.after_commit(name, version)
        limit = os.environ.get(FAIL_AFTER_COMMITS_ENV)
        if limit and self._commits >= int(limit):
            raise InjectedFailure(
                f"{FAIL_AFTER_COMMITS_ENV}={limit}: failing after the commit of {name} version {version}"
            )

    def _check_active(self, run: RunInfo) -> None:
        if self._active is not run:
            raise WarehouseError(
                f"run {run.run_id} is not the open run of this warehouse object; "
                f"writes happen between start_run and commit_run"
            )

    def _require(self, name: str) -> None:
        _check_name(name)
        retired_by = self._retired_names().get(name)
        if retired_by is not None:
            raise WarehouseError(
                f"relation {name} is retired: run {retired_by} replaced the program of the warehouse "
                f"{self.root} by one without {name}. Its Delta table is kept (not current) at "
                f"{uris.join(self.root, name)}; read it with deltalake or delta-spark, or delete it"
            )
        if not self._backend.exists(name):
            known = ", ".join(self.relations()) or "none"
            raise WarehouseError(f"no relation {name} in the warehouse {self.root} (relations: {known})")


def _retired_relations(runs: list) -> dict:
    """Relation -> the committed run that retired it and that no later run wrote again."""
    retired: dict = {}
    for run in runs:
        if run["status"] != COMMITTED:
            continue
        for name in (run.get("details") or {}).get("retired", ()):
            retired[name] = run["run_id"]
        for name in run.get("produced") or {}:
            retired.pop(name, None)
    return retired


def _valid_name(name: str) -> bool:
    return bool(name) and name[0] not in "_." and "/" not in name and "\\" not in name and name != META_DIR


def _check_name(name: str) -> None:
    if not _valid_name(name):
        raise WarehouseError(
            f"{name!r} cannot be a relation name in a warehouse (names must not "
            f"be empty, start with '_' or '.', or contain '/')"
        )


def _history_entry(commit: dict) -> dict:
    meta = commit.get("userMetadata")
    if isinstance(meta, str):
        try:
            meta = json.loads(meta)
        except ValueError:
            meta = {}
    meta = meta if isinstance(meta, dict) else {}
    timestamp = commit.get("timestamp")
    return {
        "version": commit.get("version"),
        "timestamp": (
            _dt.datetime.fromtimestamp(timestamp / 1000, _dt.timezone.utc) if timestamp is not None else None
        ),
        "operation": commit.get("operation"),
        "operation_parameters": commit.get("operationParameters", {}),
        "run_id": meta.get("run_id"),
        "run_sequence": meta.get("run_sequence"),
        "fingerprint": meta.get("fingerprint"),
        "mode": meta.get("mode"),
    }
