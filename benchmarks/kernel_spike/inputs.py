"""The spike's workloads: issue 21's table, built by the benchmark generators (``workloads``)
with the seeds of ``cases``, as Arrow tables cached in IPC files (generation is not measured)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pyarrow as pa

from .. import workloads as w

CACHE = Path(os.environ.get("KERNEL_SPIKE_CACHE", "/tmp/kernel_spike_inputs"))
SOURCE = [(0,)]
SCHEMAS = {"arc": ("src", "dst"), "source": ("node",), "warc": ("src", "dst", "weight")}


@dataclass(frozen=True)
class Workload:
    name: str
    program: str  # key of loops.PROGRAMS and of the DuckDB anchor's queries
    label: str
    make: Callable[[], dict]  # relation -> list of tuples
    big: bool = False  # run for the best two libraries only
    issue: str = ""  # the issue's figure for comparison


WORKLOADS = (
    Workload("tc-tree10", "tc", "tc, 3-ary tree depth 10", lambda: {"arc": w.tree(3, 10)}, issue="841,449"),
    Workload(
        "reach-rmat1M",
        "reach",
        "reach from 0, R-MAT 2^17, 1M edges (seed 11)",
        lambda: {"arc": w.rmat(17, 1_000_000, seed=11), "source": SOURCE},
        issue="63,752",
    ),
    Workload("sg-tree6", "sg", "sg, 3-ary tree depth 6", lambda: {"arc": w.tree(3, 6)}, issue="596,778"),
    Workload(
        "cc-rmat1M",
        "cc",
        "cc by min label, R-MAT 2^17, 1M edges (seed 5)",
        lambda: {"arc": w.rmat(17, 1_000_000, seed=5)},
    ),
    Workload(
        "sssp-rmat1M",
        "sssp",
        "sssp from 0, R-MAT 2^17, 1M edges (seed 3), weights 1..10 (seed 4)",
        lambda: {"warc": w.weighted(w.rmat(17, 1_000_000, seed=3), seed=4), "source": SOURCE},
    ),
    Workload(
        "reach-chain1000",
        "reach",
        "reach on a chain of 1,000 edges: 1,000 rounds of one fact (per-round overhead)",
        lambda: {"arc": w.chain(1000), "source": SOURCE},
    ),
    Workload(
        "tc-tree12",
        "tc",
        "tc, 3-ary tree depth 12",
        lambda: {"arc": w.tree(3, 12)},
        big=True,
        issue="9,167,358",
    ),
    Workload(
        "reach-rmat4M",
        "reach",
        "reach from 0, R-MAT 2^19, 4M edges (seed 11)",
        lambda: {"arc": w.rmat(19, 4_000_000, seed=11), "source": SOURCE},
        big=True,
    ),
)
BY_NAME = {wl.name: wl for wl in WORKLOADS}


def cached(name: str) -> dict:
    """The workload's relations as Arrow tables, generated and written once."""
    CACHE.mkdir(parents=True, exist_ok=True)
    wl = BY_NAME[name]
    done = CACHE / f"{name}.done"  # written last: a run stopped while generating leaves no half set
    if not done.exists():
        for rel, rows in wl.make().items():
            cols = SCHEMAS[rel]
            table = pa.table({c: pa.array([r[i] for r in rows], pa.int64()) for i, c in enumerate(cols)})
            part = CACHE / f"{name}.{rel}.part"
            with pa.ipc.new_file(part, table.schema) as sink:
                sink.write_table(table)
            part.rename(CACHE / f"{name}.{rel}.arrow")
        done.touch()
    files = sorted(CACHE.glob(f"{name}.*.arrow"))
    return {f.name.split(".")[1]: pa.ipc.open_file(pa.OSFile(str(f))).read_all() for f in files}
