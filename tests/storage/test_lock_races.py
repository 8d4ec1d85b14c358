"""Races on the writer lock: several processes acquire it in a loop and must never hold it together.

No Spark: the workers are plain Python processes. Each worker, while it believes it holds the
lock, creates a marker file with ``O_EXCL``; finding the marker already there means two holders.
Between rounds, workers plant locks of a dead process of this host, so waiters race to take a
stale lock over. A second race starts and commits real runs (``Warehouse.start_run`` on the
embedded backend, no Spark) and checks that no two runs got the same sequence number.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from spark_datalog.storage.runs import RunLog

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WORKERS = 5
ROUNDS = 200
PLANT_EVERY = 7  # a worker plants a dead process's lock after every 7th release

LOCK_WORKER = """
import json, os, random, socket, sys, time, uuid
from spark_datalog.storage.runs import WarehouseLock

root, marker, rounds, dead_pid, plant_every, seed = sys.argv[1:]
rounds, dead_pid, plant_every = int(rounds), int(dead_pid), int(plant_every)
random.seed(seed)
lock = WarehouseLock(root)

def plant_dead_lock():
    # a complete lock file of a process of this host that has exited, put in place atomically;
    # True when planted (no lock was there)
    tmp = lock.path + "." + uuid.uuid4().hex
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump({"run_id": "dead", "pid": dead_pid, "host": socket.gethostname(),
                   "since": "2026-01-01T00:00:00+00:00", "token": uuid.uuid4().hex}, handle)
    try:
        os.link(tmp, lock.path)
        return True
    except FileExistsError:
        return False
    finally:
        os.unlink(tmp)

print("ready", flush=True)
sys.stdin.readline()
overlaps = held = planted = 0
for i in range(rounds):
    lock.acquire(f"{seed}-{i}", timeout=60, poll=0.001)
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        overlaps += 1  # another worker believes it holds the lock too
        mine = False
    else:
        os.close(fd)
        mine = True
    held += 1
    time.sleep(random.random() * 0.0005)
    if mine:
        os.unlink(marker)
    lock.release()
    if i % plant_every == plant_every - 1:
        planted += plant_dead_lock()
print(json.dumps({"overlaps": overlaps, "held": held, "planted": planted}), flush=True)
"""

RUN_WORKER = """
import functools, sys
from spark_datalog.storage.warehouse import Warehouse

root, runs, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
wh = Warehouse(None, root, backend="embedded", lock_timeout=120)
wh._lock.acquire = functools.partial(wh._lock.acquire, poll=0.002)  # contend hard
print("ready", flush=True)
sys.stdin.readline()
for i in range(runs):
    run = wh.start_run("fp", run_id=f"{name}-{i}")
    wh.commit_run(run)
print("done", flush=True)
"""


def _start(code: str, *args) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=REPO)
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _race(workers: list[subprocess.Popen], timeout: float = 120) -> list[str]:
    """Start ``workers`` together (after each says ready); the last stdout line of each."""
    try:
        for worker in workers:
            assert worker.stdout.readline().strip() == "ready", worker.stderr.read()
        for worker in workers:
            worker.stdin.write("go\n")
            worker.stdin.flush()
        results = []
        for worker in workers:
            out, err = worker.communicate(timeout=timeout)
            assert worker.returncode == 0, err
            results.append(out.strip().splitlines()[-1])
        return results
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_racing_processes_never_hold_the_lock_together(tmp_path):
    root, marker = tmp_path / "wh", tmp_path / "holder"
    dead = _dead_pid()
    workers = [_start(LOCK_WORKER, root, marker, ROUNDS, dead, PLANT_EVERY, f"w{n}") for n in range(WORKERS)]
    results = [json.loads(line) for line in _race(workers)]
    assert sum(r["held"] for r in results) == WORKERS * ROUNDS
    assert sum(r["overlaps"] for r in results) == 0, results
    # planted dead locks were found and taken over (about 60 of the 140 tries find no lock there)
    assert sum(r["planted"] for r in results) >= 10, results
    assert not marker.exists()


def test_racing_runs_never_share_a_sequence_number(tmp_path):
    root, workers, runs = tmp_path / "wh", 4, 5
    results = _race([_start(RUN_WORKER, root, runs, f"p{n}") for n in range(workers)])
    assert results == ["done"] * workers
    records = RunLog(str(root)).records()  # one row per run, updated when it commits
    assert len(records) == workers * runs and {r["status"] for r in records} == {"committed"}
    sequences = sorted(r["sequence"] for r in records)
    assert sequences == list(range(1, workers * runs + 1)), sequences
