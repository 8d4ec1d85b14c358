"""The writer lock and the run log (no Spark: other processes are plain Python)."""

from __future__ import annotations

import errno
import json
import os
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from spark_datalog.errors import WarehouseError
from spark_datalog.storage.runs import LOCK_GRACE, RunInfo, RunLog, WarehouseLock

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _python(code: str, *args: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=REPO)
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        env=env,
        stdout=subprocess.PIPE,
        stdin=subprocess.PIPE,
        text=True,
    )


def test_second_writer_in_another_process_is_refused_then_admitted(tmp_path):
    holder = _python(
        """
        import sys
        from spark_datalog.storage.runs import WarehouseLock
        lock = WarehouseLock(sys.argv[1])
        lock.acquire("nightly-7")
        print("locked", flush=True)
        sys.stdin.readline()
        lock.release()
        """,
        str(tmp_path),
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        lock = WarehouseLock(str(tmp_path))
        with pytest.raises(WarehouseError, match=r"being written by run nightly-7 since .*pid"):
            lock.acquire("other")
        assert lock.holder().run_id == "nightly-7"
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.wait(timeout=30) == 0
        lock.acquire("other")
        assert lock.holder().run_id == "other"
        lock.release()
        assert lock.holder() is None
    finally:
        holder.kill()
        holder.wait()


def test_lock_of_a_dead_process_is_stale_and_taken_over(tmp_path):
    dead = _python(
        """
        import sys
        from spark_datalog.storage.runs import WarehouseLock
        WarehouseLock(sys.argv[1]).acquire("crashed")   # exits without releasing
        """,
        str(tmp_path),
    )
    assert dead.wait(timeout=30) == 0
    lock = WarehouseLock(str(tmp_path))
    assert lock.holder().run_id == "crashed"
    lock.acquire("next")
    assert lock.holder().run_id == "next"
    lock.release()


def _plant(root, text: str, age: float = 0.0) -> str:
    """Put a lock file with ``text`` into warehouse ``root``, last modified ``age`` seconds ago."""
    path = os.path.join(str(root), "_spark_datalog", "lock")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    when = time.time() - age
    os.utime(path, (when, when))
    return path


def _record(**fields) -> str:
    record = {"run_id": "r", "pid": os.getpid(), "host": socket.gethostname()}
    record.update(since="2026-01-01T00:00:00+00:00", token="t0")
    record.update(fields)
    return json.dumps(record)


def test_release_leaves_alone_a_lock_taken_after_a_forced_unlock(tmp_path):
    first = WarehouseLock(str(tmp_path))
    first.acquire("a")
    assert WarehouseLock(str(tmp_path)).unlock(force=True).run_id == "a"
    second = WarehouseLock(str(tmp_path))
    second.acquire("b")
    first.release()  # no longer the holder: must not remove b's lock
    assert second.holder().run_id == "b"
    second.release()
    assert second.holder() is None


def test_lock_of_another_host_is_held_until_unlocked(tmp_path):
    _plant(tmp_path, _record(run_id="far", host="elsewhere", pid=1), age=10 * 24 * 3600)
    lock = WarehouseLock(str(tmp_path))
    with pytest.raises(
        WarehouseError,
        match=r"run far since 2026-01-01T00:00:00\+00:00 \(pid 1 on elsewhere\).*spark-datalog unlock",
    ):
        lock.acquire("b", timeout=0.3, poll=0.1)
    assert lock.holder().host == "elsewhere"
    held = lock.unlock()  # another host's lock needs no force
    assert (held.run_id, held.pid, held.host) == ("far", 1, "elsewhere")
    assert lock.holder() is None and lock.unlock() is None
    lock.acquire("b")
    assert lock.holder().run_id == "b"
    lock.release()


def test_lock_of_another_host_expires_after_stale_after(tmp_path):
    _plant(tmp_path, _record(run_id="far", host="elsewhere", since="2000-01-01T00:00:00+00:00"))
    with pytest.raises(WarehouseError, match="run far"):
        WarehouseLock(str(tmp_path), stale_after=100 * 365 * 24 * 3600.0).acquire("b")
    patient = WarehouseLock(str(tmp_path), stale_after=3600)
    patient.acquire("b")
    assert patient.holder().run_id == "b"
    patient.release()


@pytest.mark.parametrize(
    "text",
    [
        "",  # a writer of an older version died between creating the file and writing it
        _record(pid="12x"),  # of this host: the old code compared "12x" <= 0 (TypeError)
        _record(pid=None),
        _record(pid=True),
        _record(since="yesterday"),
        "[1, 2]",
        "\x00\xff garbage",
    ],
    ids=["empty", "pid-text", "pid-null", "pid-bool", "since-garbled", "list", "binary"],
)
def test_unreadable_lock_is_held_for_the_grace_period_then_taken_over(tmp_path, text):
    path = _plant(tmp_path, text)
    lock = WarehouseLock(str(tmp_path))
    with pytest.raises(
        WarehouseError,
        match=r"by an unknown writer \(unreadable lock file, last written 20.*once it is 60 s old",
    ):
        lock.acquire("b", timeout=0.2, poll=0.05)
    assert lock.holder().readable is False
    when = time.time() - LOCK_GRACE - 5
    os.utime(path, (when, when))
    lock.acquire("b")
    assert lock.holder().run_id == "b"
    lock.release()


def test_a_pid_beyond_the_range_of_pids_is_a_dead_process(tmp_path):
    _plant(tmp_path, _record(pid=2**70))
    lock = WarehouseLock(str(tmp_path))
    lock.acquire("b")
    assert lock.holder().run_id == "b"
    lock.release()


def test_unlock_refuses_a_live_holder_of_this_host_unless_forced(tmp_path):
    holder = WarehouseLock(str(tmp_path))
    holder.acquire("live")
    other = WarehouseLock(str(tmp_path))
    with pytest.raises(WarehouseError, match=r"held by run live .*a live process; pass --force"):
        other.unlock()
    assert other.holder().run_id == "live"
    _plant(tmp_path, _record(run_id="old-writer"))  # our live pid, no flock (an older version)
    with pytest.raises(WarehouseError, match="held by run old-writer"):
        other.unlock()
    assert other.unlock(force=True).run_id == "old-writer"
    assert other.holder() is None


def test_lock_path_that_is_a_directory_is_a_warehouse_error(tmp_path):
    os.makedirs(tmp_path / "_spark_datalog" / "lock")
    lock = WarehouseLock(str(tmp_path))
    with pytest.raises(WarehouseError, match="is not a file; remove it"):
        lock.acquire("b")
    with pytest.raises(WarehouseError, match="is not a file"):
        lock.holder()
    assert os.listdir(tmp_path / "_spark_datalog") == ["lock"]  # no private lock file left behind


def test_warehouse_location_that_is_a_file_is_a_warehouse_error(tmp_path):
    (tmp_path / "wh").write_text("not a directory")
    lock = WarehouseLock(str(tmp_path / "wh"))
    with pytest.raises(WarehouseError, match="cannot create the directory of the warehouse lock"):
        lock.acquire("b")
    assert lock.holder() is None and lock.unlock() is None


def test_warehouse_directory_is_created_when_missing(tmp_path):
    lock = WarehouseLock(str(tmp_path / "new" / "wh"))
    lock.acquire("b")
    assert lock.holder().run_id == "b"
    lock.release()


def test_permission_denied_is_a_warehouse_error(tmp_path, monkeypatch):
    def denied(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    lock = WarehouseLock(str(tmp_path))
    monkeypatch.setattr(os, "link", denied)
    with pytest.raises(WarehouseError, match="cannot create the warehouse lock .*: Permission denied"):
        lock.acquire("b")
    monkeypatch.setattr(os, "makedirs", denied)
    with pytest.raises(WarehouseError, match="cannot create the directory of .*: Permission denied"):
        lock.acquire("b")


def test_file_system_without_hard_links_creates_the_lock_in_place(tmp_path, monkeypatch):
    def unsupported(*args, **kwargs):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", unsupported)
    first = WarehouseLock(str(tmp_path))
    first.acquire("a")
    assert first.holder().run_id == "a"
    with pytest.raises(WarehouseError, match="being written by run a"):
        WarehouseLock(str(tmp_path)).acquire("b")
    first.release()
    assert first.holder() is None
    assert os.listdir(tmp_path / "_spark_datalog") == []


def test_object_store_roots_are_not_locked():
    lock = WarehouseLock("s3://bucket/wh")
    lock.acquire("r")
    assert lock.holder() is None


def test_run_log_keeps_the_latest_state_per_run(tmp_path):
    log = RunLog(str(tmp_path))
    assert log.runs() == []
    one = RunInfo("r1", 1, "fp", base_versions={"arc": None})
    log.append(one, "started")
    one.consume("arc", 3, source="/data/arc")
    one.produced["tc"] = 4
    log.append(one, "committed")
    two = RunInfo("r2", 2, "fp", mode="incremental")
    log.append(two, "started")
    runs = log.runs()
    assert [(r["run_id"], r["status"]) for r in runs] == [("r1", "committed"), ("r2", "started")]
    assert runs[0]["consumed"] == {"arc": 3} and runs[0]["sources"] == {"arc": "/data/arc"}
    assert runs[0]["produced"] == {"tc": 4} and runs[0]["finished_at"] is not None
    assert runs[1]["mode"] == "incremental" and runs[1]["finished_at"] is None
    assert len(log.records()) == 2  # one row per run: r1 committed in place


def test_run_that_gets_the_sequence_of_a_concurrent_run_is_refused(tmp_path, monkeypatch):
    """Two writers that did not exclude each other (object store, lock removed by force) read the
    log before either recorded its run: the second to record must fail, not commit nothing."""
    from spark_datalog.storage.warehouse import Warehouse

    first = Warehouse(None, str(tmp_path), backend="embedded")
    second = Warehouse(None, str(tmp_path), backend="embedded")
    seen_before = second.runs()  # [] : what the second writer read before the first recorded
    run = first.start_run("fp", run_id="a")
    assert first._lock.unlock(force=True).run_id == "a"
    monkeypatch.setattr(second, "runs", lambda: seen_before)
    with pytest.raises(WarehouseError, match=r"run b and run a got the same sequence number 1"):
        second.start_run("fp", run_id="b")
    assert second._lock.holder() is None  # released on the way out
    first.commit_run(run)
    monkeypatch.undo()
    assert second.start_run("fp", run_id="c").sequence == 2
