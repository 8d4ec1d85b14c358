"""Incremental maintenance: after every batch the warehouse equals a full recomputation.

Facts are compared with the reference interpreter over the current inputs; derivation counts of
non-recursive strata with a fresh materialization into a second warehouse.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spark_datalog as sd
from spark_datalog.errors import InputError
from spark_datalog.incremental import update
from spark_datalog.reference import evaluate as reference
from spark_datalog.storage.warehouse import Warehouse

TC = """
.decl arc(x: long, y: long)
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), arc(Y, Z).
src(X) :- arc(X, Y).
two(X, Z) :- arc(X, Y), arc(Y, Z).
"""

NEGATION = """
.decl r(x: long)
.decl q(x: long)
.decl arc(x: long, y: long)
p(X) :- r(X), not q(X).
reach(X, Y) :- arc(X, Y), p(X).
reach(X, Z) :- reach(X, Y), arc(Y, Z).
out(X, count<Y>) :- arc(X, Y), not q(Y).
"""

JOIN = """
.decl a(x: long, y: long)
.decl b(y: long, z: long)
j(X, Z) :- a(X, Y), b(Y, Z).
k(X) :- j(X, X).
"""

SHORTEST = """
.decl arc(x: long, y: long, d: long)
path(X, Y, min<D>) :- arc(X, Y, D).
path(X, Y, min<D>) :- path(X, Z, D1), arc(Z, Y, D2), D = D1 + D2.
"""

TC_EDB = {"arc": [(1, 2), (2, 3), (1, 3), (3, 1)]}
NEGATION_EDB = {"r": [(1,), (2,)], "q": [(1,), (3,)], "arc": [(1, 3), (2, 3), (2, 1), (3, 4)]}
JOIN_EDB = {"a": [(1, 2), (2, 1)], "b": [(2, 1), (1, 2)]}
SHORTEST_SCHEMAS = {"arc": "x long, y long, d long"}
SHORTEST_EDB = {"arc": [(1, 2, 5), (2, 3, 1), (1, 3, 9)]}

SCHEMAS = {
    "arc": "x long, y long",
    "r": "x long",
    "q": "x long",
    "a": "x long, y long",
    "b": "y long, z long",
}


def frame(spark, name, rows, schema=None):
    return spark.createDataFrame(list(rows), schema or SCHEMAS[name])


def change(spark, name, inserts=(), deletes=(), schema=None):
    rows = [tuple(r) + (1,) for r in inserts] + [tuple(r) + (-1,) for r in deletes]
    return spark.createDataFrame(rows, (schema or SCHEMAS[name]) + ", _count long")


def materialized(spark, path, text, edb, schemas=None):
    program = sd.Program.parse(text)
    wh = Warehouse(spark, str(path))
    inputs = {n: frame(spark, n, rows, (schemas or {}).get(n)) for n, rows in edb.items()}
    program.materialize(spark, inputs=inputs, warehouse=wh)
    return program, wh


def stored(wh, name, counts=False):
    if counts:
        return {tuple(r[:-1]): r[-1] for r in wh.read(name, with_counts=True).collect() if r[-1] > 0}
    return {tuple(r) for r in wh.read(name).collect()}


def assert_matches_reference(program, wh, edb: dict):
    expected = reference(program.checked, {n: set(rows) for n, rows in edb.items()})
    for name in program.checked.idb:
        assert stored(wh, name) == expected[name], name


def derivation_counts(key, edb: dict) -> dict:
    """The stored counts a fresh materialization gives: EDB multiplicities, and derivation
    counts of the non-recursive, non-aggregate relations (computed here in Python)."""
    edb = {name: Counter({f: c for f, c in Counter(rows).items() if c > 0}) for name, rows in edb.items()}
    counts = {name: dict(c) for name, c in edb.items()}
    if key == "tc":
        arc = edb["arc"]
        src, two = Counter(), Counter()
        for (x, y), c in arc.items():
            src[(x,)] += c
            for (y2, z), c2 in arc.items():
                if y2 == y:
                    two[(x, z)] += c * c2
        counts.update(src=dict(src), two=dict(two))
    elif key == "join":
        j = Counter()
        for (x, y), c in edb["a"].items():
            for (y2, z), c2 in edb["b"].items():
                if y2 == y:
                    j[(x, z)] += c * c2
        counts.update(j=dict(j), k={(x,): c for (x, z), c in j.items() if x == z})
    elif key == "negation":
        counts["p"] = {f: c for f, c in edb["r"].items() if f not in edb["q"]}
    return counts


def assert_counts(wh, key, edb: dict):
    for name, expected in derivation_counts(key, edb).items():
        assert stored(wh, name, counts=True) == expected, name


class Bases:
    """Warehouses materialized once per module; each test updates its own copy."""

    def __init__(self, spark, root):
        self.spark, self.root, self.made = spark, root, {}

    def copy(self, key, dest):
        if key not in self.made:
            text, edb, schemas = BASES[key]
            self.made[key] = materialized(self.spark, self.root / key, text, edb, schemas)
        program, _ = self.made[key]
        shutil.copytree(self.root / key, dest)
        return program, Warehouse(self.spark, str(dest))


@pytest.fixture(scope="module")
def bases(spark, tmp_path_factory):
    return Bases(spark, tmp_path_factory.mktemp("bases"))


BASES = {
    "tc": (TC, TC_EDB, None),
    "negation": (NEGATION, NEGATION_EDB, None),
    "join": (JOIN, JOIN_EDB, None),
    "shortest": (SHORTEST, SHORTEST_EDB, SHORTEST_SCHEMAS),
}


DRED_PATHS = ("linear dred in the driver", "dred in one task", "dred in rounds")
# where each path maintains a recursive stratum (``placement.Placement.where``)
DRED_WHERE = dict(zip(DRED_PATHS, ("driver", "one task", "rounds"), strict=True))


def dred_path(datalog_settings, path: str) -> bool:
    """Make ``update`` take one DRed path of ``DRED_PATHS`` through the session's settings (the
    ``datalog_settings`` fixture, restored after the test); returns its ``decompose``: a linear
    stratum runs in the driver by default, in one task with ``spark.datalog.driverMemory=0``,
    and in rounds of Spark joins with ``decompose=False``. Unsets ``driverMemory`` on the other
    paths, so that the examples of one property may take different paths."""
    datalog_settings(driverMemory=0 if path == DRED_PATHS[1] else None)
    return path != DRED_PATHS[2]


def assert_dred_ran(report, path: str) -> None:
    """Every stratum of ``report`` maintained by DRed ran where ``path`` says."""
    for stratum in report.strata:
        if stratum.method == "dred":
            assert stratum.placement.where == DRED_WHERE[path], (stratum.relations, str(stratum.placement))


def tc_placement(report):
    (placement,) = [s.placement for s in report.strata if s.relations == ("tc",)]
    return placement


@pytest.mark.parametrize("path", DRED_PATHS)
def test_two_derivations_survive_and_cycle_loses_closure(spark, bases, tmp_path, datalog_settings, path):
    decompose = dred_path(datalog_settings, path)
    program, wh = bases.copy("tc", tmp_path / "wh")
    # src(1) has two derivations (arc(1,2), arc(1,3)); tc(1,3) two (direct, via 2)
    report = program.update(
        spark, wh, changes={"arc": change(spark, "arc", deletes=[(1, 2)])}, decompose=decompose
    )
    edb = {"arc": [(2, 3), (1, 3), (3, 1)]}
    assert_matches_reference(program, wh, edb)
    assert (1,) in stored(wh, "src") and (1, 3) in stored(wh, "tc")
    assert stored(wh, "src", counts=True)[(1,)] == 1
    methods = {s.relations: s.method for s in report.strata}
    assert methods[("tc",)] == "dred" and methods[("src",)] == "counting"
    assert tc_placement(report).where == DRED_WHERE[path]
    assert report.relations["arc"].deleted == 1
    # the cycle 1 -> 3 -> 1 loses its closure when 3 -> 1 goes (no self-support)
    report = program.update(
        spark, wh, changes={"arc": change(spark, "arc", deletes=[(3, 1)])}, decompose=decompose
    )
    assert tc_placement(report).where == DRED_WHERE[path]
    edb = {"arc": [(2, 3), (1, 3)]}
    assert_matches_reference(program, wh, edb)
    assert (1, 1) not in stored(wh, "tc") and (3, 3) not in stored(wh, "tc")
    assert_counts(wh, "tc", edb)


@pytest.mark.parametrize("path", DRED_PATHS)
def test_dred_on_two_paths_over_several_rounds(spark, bases, tmp_path, datalog_settings, path):
    decompose = dred_path(datalog_settings, path)
    program, wh = bases.copy("tc", tmp_path / "wh")
    # 10 -> 11 -> 12 -> 13 -> 14 and 10 -> 15 -> 16 -> 13: inserting takes several rounds
    chain = [(10, 11), (11, 12), (12, 13), (13, 14), (10, 15), (15, 16), (16, 13)]
    report = update(
        program,
        spark,
        wh,
        changes={"arc": change(spark, "arc", inserts=chain)},
        checkpoint_interval=1,
        decompose=decompose,
    )
    edb = {"arc": TC_EDB["arc"] + chain}
    assert_matches_reference(program, wh, edb)
    assert report.relations["tc"].inserted == 6 + 3 + 2 + 1 + 3 + 2  # from 10, 11, 12, 13, 15, 16
    assert tc_placement(report).where == DRED_WHERE[path]
    # cutting 11 -> 12 over-deletes tc(10, 12..14) and tc(11, 12..14) over three rounds;
    # tc(10, 13) and tc(10, 14) come back through 15 and 16 (re-derived, then re-inserted)
    report = update(
        program,
        spark,
        wh,
        changes={"arc": change(spark, "arc", deletes=[(11, 12)])},
        checkpoint_interval=1,
        decompose=decompose,
    )
    edb["arc"].remove((11, 12))
    assert_matches_reference(program, wh, edb)
    tc = stored(wh, "tc")
    assert {(10, 13), (10, 14), (15, 14)} <= tc and not {(10, 12), (11, 13), (11, 14)} & tc
    assert {s.relations: s.method for s in report.strata}[("tc",)] == "dred"
    assert tc_placement(report).where == DRED_WHERE[path]
    assert (report.relations["tc"].inserted, report.relations["tc"].deleted) == (0, 4)
    assert_counts(wh, "tc", edb)


def test_auto_recomputes_a_stratum_dred_would_mostly_over_delete(
    spark, bases, tmp_path, caplog, datalog_settings
):
    datalog_settings(overDeletionMin=1)
    program, wh = bases.copy("tc", tmp_path / "wh")
    # cutting 3 -> 1 over-deletes the whole cycle's closure: 1 fact plus 40% of tc and more
    with caplog.at_level(logging.INFO, logger="spark_datalog"):
        report = program.update(spark, wh, changes={"arc": change(spark, "arc", deletes=[(3, 1)])})
    assert {s.relations: s.method for s in report.strata}[("tc",)] == "recompute"
    assert any("costs less than DRed" in r.getMessage() for r in caplog.records)
    assert "recompute, " in str(report) and "by evaluating it again: recomputing costs less" in str(report)
    edb = {"arc": [(1, 2), (2, 3), (1, 3)]}
    assert_matches_reference(program, wh, edb)
    assert_counts(wh, "tc", edb)
    # method="dred" keeps DRed however much it over-deletes
    report = program.update(spark, wh, changes={"arc": change(spark, "arc", deletes=[(1, 2)])}, method="dred")
    assert {s.relations: s.method for s in report.strata}[("tc",)] == "dred"
    edb["arc"].remove((1, 2))
    assert_matches_reference(program, wh, edb)


def test_dred_too_large_for_one_task_runs_in_rounds(spark, bases, tmp_path, caplog, datalog_settings):
    # maxLocalFacts limits tasks only: driverMemory=1 (one row) keeps tc out of the driver
    datalog_settings(maxLocalFacts=3, driverMemory=1)
    program, wh = bases.copy("tc", tmp_path / "wh")
    with caplog.at_level(logging.INFO, logger="spark_datalog"):
        report = program.update(spark, wh, changes={"arc": change(spark, "arc", deletes=[(1, 2)])})
    assert any("facts for one task (spark.datalog.taskMemory)" in r.getMessage() for r in caplog.records)
    assert {s.relations: s.method for s in report.strata}[("tc",)] == "dred"
    placement = tc_placement(report)
    assert placement.where == "rounds" and [p.where for p, _ in placement.declined] == ["driver", "one task"]
    assert "rounds of Spark joins: what runs in memory did not fit (not in the driver: " in str(report)
    assert "rows for the driver (spark.datalog.driverMemory)" in str(placement)
    assert_matches_reference(program, wh, {"arc": [(2, 3), (1, 3), (3, 1)]})


def test_delete_and_reinsert_is_a_no_op_and_absent_delete_fails(spark, bases, tmp_path):
    program, wh = bases.copy("tc", tmp_path / "wh")
    versions = {n: wh.version(n) for n in wh.relations()}
    both = change(spark, "arc", inserts=[(1, 2)], deletes=[(1, 2)])
    report = program.update(spark, wh, changes={"arc": both})
    assert {n: wh.version(n) for n in wh.relations()} == versions
    assert report.changed == []
    with pytest.raises(InputError, match=r"arc\(5, 6\)"):
        program.update(spark, wh, changes={"arc": change(spark, "arc", inserts=[(7, 8)], deletes=[(5, 6)])})
    assert {n: wh.version(n) for n in wh.relations()} == versions
    assert wh.pending_run() is None
    # idempotent deletes: the absent one is dropped, the insert goes through
    program.update(
        spark,
        wh,
        on_missing_delete="ignore",
        changes={"arc": change(spark, "arc", inserts=[(7, 8)], deletes=[(5, 6)])},
    )
    edb = {"arc": TC_EDB["arc"] + [(7, 8)]}
    assert_matches_reference(program, wh, edb)
    assert_counts(wh, "tc", edb)


def test_negation_and_aggregate_across_strata(spark, bases, tmp_path):
    program, wh = bases.copy("negation", tmp_path / "wh")
    edb = {name: list(rows) for name, rows in NEGATION_EDB.items()}
    assert stored(wh, "p") == {(2,)}
    report = program.update(spark, wh, changes={"q": change(spark, "q", deletes=[(1,)], inserts=[(4,)])})
    edb["q"] = [(3,), (4,)]
    assert_matches_reference(program, wh, edb)
    assert (1,) in stored(wh, "p")  # deleting q(1) inserted p(1)
    assert report.relations["p"].inserted == 1
    report = program.update(
        spark,
        wh,
        changes={"arc": change(spark, "arc", deletes=[(2, 1)]), "r": change(spark, "r", deletes=[(2,)])},
    )
    edb["arc"], edb["r"] = [(1, 3), (2, 3), (3, 4)], [(1,)]
    assert_matches_reference(program, wh, edb)
    assert_counts(wh, "negation", edb)


def test_min_in_recursion_insert_and_delete(spark, bases, tmp_path):
    program, wh = bases.copy("shortest", tmp_path / "wh")
    schema = SHORTEST_SCHEMAS["arc"]
    edb = {"arc": list(SHORTEST_EDB["arc"])}
    report = program.update(
        spark, wh, changes={"arc": change(spark, "arc", inserts=[(1, 2, 1), (3, 4, 1)], schema=schema)}
    )
    assert {s.relations: s.method for s in report.strata}[("path",)] == "dred"
    edb["arc"] += [(1, 2, 1), (3, 4, 1)]
    assert_matches_reference(program, wh, edb)
    assert (1, 3, 2) in stored(wh, "path")
    # a deletion: the affected groups are computed again in the driver, or, without it, the
    # stratum is recomputed
    for decompose, method in ((True, "dred"), (False, "recompute")):
        report = program.update(
            spark,
            wh,
            changes={"arc": change(spark, "arc", deletes=[(1, 2, 1)], schema=schema)},
            decompose=decompose,
        )
        assert {s.relations: s.method for s in report.strata}[("path",)] == method
        edb["arc"].remove((1, 2, 1))
        assert_matches_reference(program, wh, edb)
        program.update(spark, wh, changes={"arc": change(spark, "arc", inserts=[(1, 2, 1)], schema=schema)})
        edb["arc"].append((1, 2, 1))


def test_crash_between_commits_then_rerun(spark, bases, tmp_path):
    program, wh = bases.copy("join", tmp_path / "wh")
    changes = {
        "a": change(spark, "a", inserts=[(3, 2)], deletes=[(2, 1)]),
        "b": change(spark, "b", inserts=[(2, 3)]),
    }
    commits = []

    def crash(name, version):
        commits.append(name)
        if len(commits) == 2:
            raise RuntimeError("injected crash")

    wh.after_commit = crash
    with pytest.raises(RuntimeError, match="injected"):
        program.update(spark, wh, changes=changes, run_id="batch-1")
    wh.after_commit = None
    assert wh.pending_run()["run_id"] == "batch-1"
    report = program.update(spark, wh, changes=changes, run_id="batch-1")
    edb = {"a": [(1, 2), (3, 2)], "b": [(2, 1), (1, 2), (2, 3)]}
    assert_matches_reference(program, wh, edb)
    assert_counts(wh, "join", edb)
    assert wh.last_run()["run_id"] == "batch-1" and report.consumed["a"] == wh.version("a")
    # committed: running it again changes nothing
    versions = {n: wh.version(n) for n in wh.relations()}
    again = program.update(spark, wh, changes=changes, run_id="batch-1")
    assert again.already_committed
    assert {n: wh.version(n) for n in wh.relations()} == versions
    assert_counts(wh, "join", edb)


def test_changes_since_last_consumed_version(spark, bases, tmp_path):
    program, wh = bases.copy("join", tmp_path / "wh")
    # someone changes the warehouse's own input table, then asks for an update
    with wh.run(program.fingerprint, mode="incremental") as run:
        wh.apply_changes(
            "b", [("y", "long"), ("z", "long")], change(spark, "b", inserts=[(2, 6)], deletes=[(2, 1)]), run
        )
    report = program.update(spark, wh)
    edb = {"a": JOIN_EDB["a"], "b": [(1, 2), (2, 6)]}
    assert_matches_reference(program, wh, edb)
    assert_counts(wh, "join", edb)
    assert report.consumed["b"] == wh.version("b")
    # nothing changed since: the next update has nothing to do
    again = program.update(spark, wh)
    assert again.changed == []


PROGRAMS = {"tc": ("arc",), "negation": ("r", "q", "arc"), "join": ("a", "b")}
_EXAMPLES = int(os.environ.get("SD_HYPOTHESIS_EXAMPLES", "3"))


@st.composite
def scenarios(draw):
    key = draw(st.sampled_from(sorted(PROGRAMS)))
    inputs = PROGRAMS[key]

    def facts(name, size):
        arity = SCHEMAS[name].count(",") + 1
        return st.sets(st.tuples(*[st.integers(1, 4)] * arity), max_size=size)

    batches = [
        {name: (draw(facts(name, 4)), draw(facts(name, 4))) for name in inputs}
        for _ in range(draw(st.integers(1, 2)))
    ]
    return key, batches, draw(st.sampled_from(["auto", "recompute"])), draw(st.sampled_from(DRED_PATHS))


@settings(
    max_examples=_EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(scenarios())
def test_random_batches_equal_recomputation(spark, bases, tmp_path_factory, datalog_settings, scenario):
    """Random insert/delete/mixed batches (deletes of absent facts are dropped) from a base
    warehouse; after each, the facts equal the reference's and the counts a fresh run's."""
    key, batches, method, path = scenario
    _random_batches(spark, bases, tmp_path_factory, key, batches, method, path, datalog_settings)


def _random_batches(spark, bases, tmp_path_factory, key, batches, method, path, datalog_settings):
    decompose = dred_path(datalog_settings, path)
    program, wh = bases.copy(key, tmp_path_factory.mktemp("random") / "wh")
    current = {name: Counter(BASES[key][1][name]) for name in PROGRAMS[key]}
    for batch in batches:
        changes = {}
        for name, (inserts, deletes) in batch.items():
            deletes = {d for d in deletes if current[name][d] > 0}
            if inserts or deletes:
                changes[name] = change(spark, name, inserts=sorted(inserts), deletes=sorted(deletes))
            current[name].update(inserts)
            current[name].subtract(deletes)
        report = program.update(spark, wh, changes=changes, method=method, decompose=decompose)
        assert_dred_ran(report, path)
        facts = {n: [f for f, c in current[n].items() if c > 0] for n in current}
        assert_matches_reference(program, wh, facts)
        assert_counts(wh, key, {n: list(current[n].elements()) for n in current})


UNDIRECTED = """
.decl arc(x: long, y: long)
edge(X, Y) :- arc(X, Y).
edge(Y, X) :- arc(X, Y).
"""


def test_a_small_change_of_large_relations_is_counted_in_the_driver(spark, tmp_path, datalog_settings):
    """arc (300 rows) and edge (600) are more than the driver reads whole (driverMemory of
    19,200 bytes: 50 rows), but the change meets a few files of 16 rows: edge is counted in
    the driver, reading only those files (arc's state is not read: its rules read only its
    change), and the warehouse equals a recomputation."""
    arcs = [(i, (7 * i + 3) % 301) for i in range(300)]
    datalog_settings(rowsPerFile=16)
    program, wh = materialized(spark, tmp_path / "wh", UNDIRECTED, {"arc": arcs})
    datalog_settings(driverMemory=19_200)
    batch = change(spark, "arc", inserts=[(500, 501)], deletes=[arcs[10]])
    report = program.update(spark, wh, changes={"arc": batch})
    (edge,) = [s for s in report.strata if s.relations == ("edge",)]
    assert (edge.method, edge.placement.where) == ("counting", "driver"), str(edge.placement)
    edb = {"arc": [a for a in arcs if a != arcs[10]] + [(500, 501)]}
    assert_matches_reference(program, wh, edb)
    expected = Counter(edb["arc"]) + Counter((y, x) for x, y in edb["arc"])
    assert stored(wh, "edge", counts=True) == dict(expected)
