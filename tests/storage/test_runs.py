"""The writer lock and the run log (no Spark: other processes are plain Python)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from spark_datalog.errors import WarehouseError
from spark_datalog.storage.runs import RunInfo, RunLog, WarehouseLock

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


def test_waiting_writer_gets_the_lock_when_released(tmp_path):
    first = WarehouseLock(str(tmp_path))
    first.acquire("a")
    # Simulate another host: an alive-looking lock is only broken when it is older than stale_after.
    with open(first.path, encoding="utf-8") as handle:
        data = json.load(handle)
    data.update(host="elsewhere", since="2000-01-01T00:00:00+00:00")
    with open(first.path, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    with pytest.raises(WarehouseError):
        WarehouseLock(str(tmp_path)).acquire("b", timeout=0.3, poll=0.1)
    patient = WarehouseLock(str(tmp_path), stale_after=3600)
    patient.acquire("b")
    assert patient.holder().run_id == "b"
    first.release()  # no longer the holder: must not remove b's lock
    assert patient.holder().run_id == "b"
    patient.release()


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
    assert len(log.records()) == 3
