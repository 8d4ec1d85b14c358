"""``spark-datalog unlock WAREHOUSE``: show and remove a writer lock left by a crashed run."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

from spark_datalog.cli import main
from spark_datalog.storage.runs import WarehouseLock

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_cli(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def plant(root, **fields) -> str:
    """A lock file in warehouse ``root`` (this process, this host, unless ``fields`` say else;
    ``text`` gives the whole content)."""
    text = fields.pop("text", None)
    record = {"run_id": "nightly-7", "pid": os.getpid(), "host": socket.gethostname()}
    record.update(since="2026-11-20T03:00:00+00:00", token="t0")
    record.update(fields)
    path = os.path.join(str(root), "_spark_datalog", "lock")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(record) if text is None else text)
    return path


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_unlock_removes_the_lock_of_another_host_and_says_whose_it_was(tmp_path, capsys):
    path = plant(tmp_path, host="etl-worker-3", pid=4242)
    status, out, err = run_cli(capsys, "unlock", tmp_path)
    assert status == 0, err
    assert (
        "removed the lock of run nightly-7 since 2026-11-20T03:00:00+00:00 (pid 4242 on etl-worker-3)" in out
    )
    assert not os.path.exists(path)
    lock = WarehouseLock(str(tmp_path))
    lock.acquire("next")  # the warehouse can be written again
    lock.release()


def test_unlock_removes_the_lock_of_a_dead_process(tmp_path, capsys):
    pid = dead_pid()
    path = plant(tmp_path, pid=pid)
    status, out, err = run_cli(capsys, "unlock", tmp_path)
    assert status == 0, err
    assert f"(pid {pid} on {socket.gethostname()})" in out and "run nightly-7" in out
    assert not os.path.exists(path)


def test_unlock_refuses_a_live_holder_of_this_host_unless_forced(tmp_path, capsys):
    holder = WarehouseLock(str(tmp_path))
    holder.acquire("running-now")
    try:
        status, out, err = run_cli(capsys, "unlock", tmp_path)
        assert status == 1 and out == ""
        assert "held by run running-now" in err and f"pid {os.getpid()}" in err and "--force" in err
        assert "Traceback" not in err
        assert holder.holder().run_id == "running-now"
        status, out, err = run_cli(capsys, "unlock", tmp_path, "--force")
        assert status == 0, err
        assert "removed the lock of run running-now" in out
        assert holder.holder() is None
    finally:
        holder.release()


def test_unlock_without_a_lock_says_so(tmp_path, capsys):
    status, out, err = run_cli(capsys, "unlock", tmp_path)
    assert (status, err) == (0, "")
    assert "not locked" in out


def test_unlock_of_an_unreadable_lock(tmp_path, capsys):
    path = plant(tmp_path, text='{"pid": "not a number"')
    status, out, err = run_cli(capsys, "unlock", tmp_path)
    assert status == 0, err
    assert "removed the lock of an unknown writer (unreadable lock file, last written 20" in out
    assert not os.path.exists(path)


def test_unlock_errors_are_reported_with_exit_status_1(tmp_path, capsys):
    status, out, err = run_cli(capsys, "unlock", tmp_path / "missing")
    assert status == 1 and "no warehouse at" in err and "Traceback" not in err
    os.makedirs(tmp_path / "_spark_datalog" / "lock")
    status, out, err = run_cli(capsys, "unlock", tmp_path)
    assert status == 1 and "is not a file; remove it" in err and "Traceback" not in err


def test_unlock_of_an_object_store_warehouse_has_nothing_to_do(capsys):
    status, out, err = run_cli(capsys, "unlock", "s3://bucket/wh")
    assert status == 0 and "no lock" in out


def test_unlock_exit_status_of_the_command(tmp_path):
    holder = WarehouseLock(str(tmp_path))
    holder.acquire("running-now")
    env = dict(os.environ, PYTHONPATH=REPO)
    command = [sys.executable, "-m", "spark_datalog.cli", "unlock", str(tmp_path)]
    try:
        refused = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
        assert refused.returncode == 1, refused.stderr
        assert "held by run running-now" in refused.stderr
    finally:
        holder.release()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "not locked" in done.stdout
