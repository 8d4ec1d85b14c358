"""The benchmarks: a Datalog program, a workload family, the sizes of each suite, the systems.

A benchmark's sizes run in increasing order so that the time of a smaller size can predict a
larger one (see runner.extrapolate); sizes marked ``late`` wait until the end of the suite.
``reference_max`` bounds the sizes the reference interpreter
runs on; on exactly those sizes ("small sizes") every system's facts are compared, not only
their number. ``limits`` caps a system's sizes where it is known to be hopeless on this machine
(the cap is reported as a skip, never silently).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import workloads as w

PROGRAMS = Path(__file__).resolve().parent / "programs"

ENGINE = ("engine-seminaive", "engine-rounds", "engine-naive")
SPARK_ANCHORS = ("spark-cte", "pyspark-loop")
PYTHON_ANCHORS = ("reference", "duckdb", "networkx")
# The order systems run in for each size: the quick single-machine ones first, so their fact
# counts are known before the long Spark runs; then the engine, so that whatever the JVM still
# has to warm up counts against the engine, not against the Spark anchors it is compared with.
ALL_SYSTEMS = PYTHON_ANCHORS + ENGINE + SPARK_ANCHORS
# GraphFrames runs only in the scale suite; it comes last.
RUN_ORDER = ALL_SYSTEMS + ("graphframes",)


@dataclass(frozen=True)
class Size:
    """One input size: a label for tables, the number used on plot axes (input rows), and the
    generator parameters."""

    label: str
    x: float
    params: tuple  # ((name, value), ...) so that a Size is hashable

    @property
    def p(self) -> dict:
        return dict(self.params)


@dataclass(frozen=True)
class Benchmark:
    name: str
    problem: str  # key of the anchors' queries; the program is programs/<program>.dl
    program: str
    output: str
    family: str
    description: str
    make_inputs: Callable[[dict], dict]  # generator parameters -> relation -> list of tuples
    sizes: dict  # suite -> tuple of Size
    systems: dict  # suite -> tuple of system names (None: those of the full suite)
    reference_max: float = 0.0  # largest x the reference interpreter runs on
    limits: dict = field(default_factory=dict)  # system -> largest x it runs on
    limit_note: str = ""  # why the limits are what they are (goes into the skip notes)
    # suite -> sizes (x) run after every other benchmark of the suite, so that one long case
    # (issue 3's chain of 1,000) cannot use up the time of the rest of the suite.
    late: dict = field(default_factory=dict)

    @property
    def program_path(self) -> Path:
        return PROGRAMS / f"{self.program}.dl"

    def systems_for(self, suite: str) -> tuple:
        return self.systems.get(suite) or self.systems["full"]

    def sizes_for(self, suite: str) -> tuple:
        """The sizes of ``suite`` (none: the benchmark is not part of it)."""
        return self.sizes.get(suite, ())


def _size(label: str, x: float, **params) -> Size:
    return Size(label, float(x), tuple(sorted(params.items())))


def chain_sizes(*ns: int) -> tuple:
    return tuple(_size(f"chain {n}", n, n=n) for n in ns)


def tree_edges(k: int, depth: int) -> int:
    """The number of edges of ``w.tree(k, depth)``, without building it (a depth-13 tree has
    2.4M edges)."""
    return (k ** (depth + 1) - 1) // (k - 1) - 1


def tree_sizes(k: int, *depths: int) -> tuple:
    return tuple(_size(f"{k}-ary tree depth {d}", tree_edges(k, d), k=k, depth=d) for d in depths)


def gnm_sizes(*nm: tuple) -> tuple:
    return tuple(_size(f"G({n}, {m})", m, n=n, m=m) for n, m in nm)


def rmat_sizes(*scale_m: tuple) -> tuple:
    return tuple(_size(f"R-MAT 2^{s}, {m} edges", m, scale=s, m=m) for s, m in scale_m)


# The scale suite's R-MAT graphs (issue 21, item 5): 1M, 4M and 16M edges at the Graph500 edge
# factor 16 (2^16, 2^18 and 2^20 vertices).
SCALE_RMAT = ((16, 1 << 20), (18, 1 << 22), (20, 1 << 24))
# Who runs in the scale suite: only the default engine (rounds and naive are known to be far
# slower), DuckDB, networkx, the Spark anchors (capped, see SPARK_CAP_NOTE) and GraphFrames.
SCALE_SYSTEMS = ("duckdb", "networkx", "engine-seminaive", "spark-cte", "pyspark-loop", "graphframes")
SPARK_CAP_NOTE = (
    "Spark's recursive CTE and the hand-written PySpark loop are capped for this benchmark in "
    "the scale suite: past the cap the CTE runs into Spark's recursion row limit (1M rows) and "
    "both take far longer than the case's limit (on R-MAT graphs already at 100K edges); the "
    "quick and full suites measure them at smaller sizes"
)


# reach-rmat and sssp-rmat: the same sizes, systems and caps.
RMAT_SETTINGS: dict = dict(
    sizes={
        "smoke": rmat_sizes((6, 200)),
        "quick": rmat_sizes((12, 32768)),
        "full": rmat_sizes((12, 32768), (14, 131072), (16, 524288)),
        "scale": rmat_sizes(*SCALE_RMAT),
    },
    systems={
        "smoke": None,
        "quick": PYTHON_ANCHORS + ("engine-seminaive",),
        "full": ALL_SYSTEMS,
        "scale": SCALE_SYSTEMS,
    },
    reference_max=131072,
    limits={"spark-cte": 524288, "pyspark-loop": 524288},
    limit_note=SPARK_CAP_NOTE,
)

SOURCE = [(0,)]

BENCHMARKS = (
    Benchmark(
        name="tc-chain",
        problem="tc",
        program="tc",
        output="tc",
        family="chain",
        description="transitive closure (linear) on a chain of n edges: n iterations, n(n+1)/2 facts",
        make_inputs=lambda p: {"arc": w.chain(p["n"])},
        sizes={
            "smoke": chain_sizes(5, 20),
            "quick": chain_sizes(100, 1000),
            "full": chain_sizes(10, 100, 1000, 2000),
        },
        systems={"smoke": None, "quick": ALL_SYSTEMS, "full": ALL_SYSTEMS},
        reference_max=1000,
        late={"quick": (1000,)},
    ),
    Benchmark(
        name="tc-tree",
        problem="tc",
        program="tc",
        output="tc",
        family="tree",
        description="transitive closure (linear) on a complete 3-ary tree (seed 001's Tree11/Tree17 shape)",
        make_inputs=lambda p: {"arc": w.tree(p["k"], p["depth"])},
        sizes={
            "smoke": tree_sizes(3, 3),
            "quick": tree_sizes(3, 8),
            "full": tree_sizes(3, 5, 8, 10),
            "scale": tree_sizes(3, 10, 12, 13),
        },
        systems={"smoke": None, "quick": ALL_SYSTEMS, "full": ALL_SYSTEMS, "scale": SCALE_SYSTEMS},
        reference_max=tree_edges(3, 8),
        limits={"spark-cte": tree_edges(3, 12), "pyspark-loop": tree_edges(3, 12)},
        limit_note=SPARK_CAP_NOTE,
    ),
    Benchmark(
        name="tc-gnm",
        problem="tc",
        program="tc",
        output="tc",
        family="gnm",
        description="transitive closure (linear) on a uniform random graph with cycles",
        make_inputs=lambda p: {"arc": w.gnm(p["n"], p["m"], seed=7)},
        sizes={
            "smoke": gnm_sizes((30, 45)),
            "quick": gnm_sizes((200, 300)),
            "full": gnm_sizes((200, 300), (1000, 1500), (3000, 4500)),
        },
        systems={
            "smoke": None,
            "quick": PYTHON_ANCHORS + ("engine-seminaive",) + SPARK_ANCHORS,
            "full": ALL_SYSTEMS,
        },
        reference_max=1500,
    ),
    Benchmark(
        name="tc-nonlinear-chain",
        problem="tc_nonlinear",
        program="tc_nonlinear",
        output="tc",
        family="chain",
        description="transitive closure, non-linear (doubling) form, on a chain: about log2(n) iterations",
        make_inputs=lambda p: {"arc": w.chain(p["n"])},
        sizes={"smoke": chain_sizes(20), "quick": chain_sizes(100), "full": chain_sizes(100, 1000)},
        systems={
            "smoke": None,
            "quick": PYTHON_ANCHORS + ("engine-seminaive", "pyspark-loop"),
            "full": ALL_SYSTEMS,
        },
        reference_max=100,
    ),
    Benchmark(
        name="sg-tree",
        problem="sg",
        program="sg",
        output="sg",
        family="tree",
        description="same generation (seed 001 Program 2) on a complete 3-ary tree",
        make_inputs=lambda p: {"arc": w.tree(p["k"], p["depth"])},
        sizes={
            "smoke": tree_sizes(3, 3),
            "quick": tree_sizes(3, 4),
            "full": tree_sizes(3, 4, 5, 6),
            "scale": tree_sizes(3, 6, 7, 8),
        },
        systems={
            "smoke": None,
            "quick": ("reference", "duckdb", "engine-seminaive"),
            "full": ALL_SYSTEMS,
            "scale": SCALE_SYSTEMS,
        },
        reference_max=tree_edges(3, 5),
        limits={"spark-cte": tree_edges(3, 6), "pyspark-loop": tree_edges(3, 6)},
        limit_note=SPARK_CAP_NOTE,
    ),
    Benchmark(
        name="reach-rmat",
        problem="reach",
        program="reach",
        output="reach",
        family="rmat",
        description="reachability from vertex 0 on an R-MAT power-law graph",
        make_inputs=lambda p: {"arc": w.rmat(p["scale"], p["m"], seed=11), "source": SOURCE},
        **RMAT_SETTINGS,
    ),
    Benchmark(
        name="cc-gnm",
        problem="cc",
        program="cc",
        output="cc",
        family="gnm",
        description="connected components by minimum label (min in recursion) on a sparse random graph",
        make_inputs=lambda p: {"arc": w.gnm(p["n"], p["m"], seed=5)},
        sizes={
            "smoke": gnm_sizes((60, 50)),
            "quick": gnm_sizes((2000, 2000)),
            "full": gnm_sizes((2000, 2000), (20000, 20000), (200000, 200000)),
        },
        systems={"smoke": None, "quick": PYTHON_ANCHORS + ("engine-seminaive",), "full": ALL_SYSTEMS},
        reference_max=20000,
    ),
    Benchmark(
        name="cc-rmat",
        problem="cc",
        program="cc",
        output="cc",
        family="rmat",
        description="connected components by minimum label (min in recursion) on an R-MAT power-law"
        " graph, read as undirected (the program adds both directions of every arc)",
        make_inputs=lambda p: {"arc": w.rmat(p["scale"], p["m"], seed=5)},
        sizes={
            "smoke": rmat_sizes((6, 200)),
            "quick": (),
            "full": (),
            "scale": rmat_sizes(*SCALE_RMAT),
        },
        systems={"smoke": None, "scale": SCALE_SYSTEMS, "full": ALL_SYSTEMS},
        reference_max=200,
        limits={"spark-cte": 524288, "pyspark-loop": 524288},
        limit_note=SPARK_CAP_NOTE,
    ),
    Benchmark(
        name="sssp-rmat",
        problem="sssp",
        program="sssp",
        output="dist",
        family="rmat",
        description="single-source shortest paths from vertex 0 (min in recursion), weights 1..10, R-MAT",
        make_inputs=lambda p: {
            "warc": w.weighted(w.rmat(p["scale"], p["m"], seed=3), seed=4),
            "source": SOURCE,
        },
        **RMAT_SETTINGS,
    ),
    Benchmark(
        name="pymk-gnm",
        problem="pymk",
        program="pymk",
        output="cnt",
        family="gnm",
        description="people you may know: common-friend counts of non-friends (negation + count)",
        make_inputs=lambda p: {"arc": w.gnm(p["n"], p["m"], seed=9)},
        sizes={
            "smoke": gnm_sizes((40, 100)),
            "quick": gnm_sizes((1000, 4000)),
            "full": gnm_sizes((1000, 4000), (10000, 40000)),
        },
        systems={
            "smoke": None,
            "quick": ("reference", "duckdb", "engine-seminaive"),
            "full": ("reference", "duckdb", "spark-cte", "pyspark-loop", "engine-seminaive"),
        },
        reference_max=4000,
    ),
    Benchmark(
        name="pointsto",
        problem="pointsto",
        program="pointsto",
        output="pt",
        family="pointsto",
        description="Andersen-style points-to analysis over generated assign/load/store facts",
        make_inputs=lambda p: w.points_to(p["variables"], seed=13),
        sizes={
            "smoke": (_size("30 variables", 30, variables=30),),
            "quick": (_size("200 variables", 200, variables=200),),
            "full": tuple(_size(f"{v} variables", v, variables=v) for v in (200, 1000, 4000)),
        },
        systems={
            "smoke": None,
            "quick": ("reference", "duckdb", "engine-seminaive"),
            "full": ("reference", "duckdb", "engine-seminaive", "engine-naive"),
        },
        reference_max=200,
    ),
    Benchmark(
        name="rdfs-university",
        problem="rdfs",
        program="rdfs",
        output="t",
        family="university",
        description="RDFS subclass/subproperty/domain/range + transitive property"
        " over a generated university ontology",
        make_inputs=lambda p: {"triple": w.university_ontology(p["universities"], seed=17)},
        sizes={
            "smoke": (_size("1 university", 1, universities=1),),
            "quick": (_size("1 university", 1, universities=1),),
            "full": tuple(
                _size(f"{u} universit{'y' if u == 1 else 'ies'}", u, universities=u) for u in (1, 10, 50)
            ),
        },
        systems={
            "smoke": None,
            "quick": ("reference", "engine-seminaive"),
            "full": ("reference", "engine-seminaive", "engine-naive"),
        },
        reference_max=10,
    ),
)

# Issue 3's benchmark, the core of the quick suite, runs first.
ISSUE_3 = ("tc-chain", "tc-tree")


def by_name(name: str) -> Benchmark:
    for bench in BENCHMARKS:
        if bench.name == name:
            return bench
    raise KeyError(f"no benchmark {name!r}; known: {', '.join(b.name for b in BENCHMARKS)}")
