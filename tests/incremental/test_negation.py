"""Incremental maintenance under changed negated relations.

Recursive strata stay on DRed: a fact appearing under ``not`` over-deletes, one disappearing
seeds insertions. Non-recursive strata stay on counting, also for ``not q(X, _)``. After every
batch the warehouse equals a full recomputation (the reference interpreter), and the derivation
counts of the non-recursive relations equal those counted here.
"""

from __future__ import annotations

from collections import Counter

import pytest

from .helpers import Bases, assert_recomputed, methods
from .test_update import change, stored

BLOCKED = """
.decl start(x: long)
.decl arc(x: long, y: long)
.decl blocked(x: long)
reach(X) :- start(X).
reach(Y) :- reach(X), arc(X, Y), not blocked(Y).
"""
OWNER = """
.decl start(x: long)
.decl arc(x: long, y: long)
.decl owner(x: long, o: long)
open(X) :- start(X).
open(Y) :- open(X), arc(X, Y), not owner(Y, _).
free(X, Y) :- arc(X, Y), not owner(Y, _).
sink(X) :- arc(_, X), not arc(X, _).
"""
ARCS = [(1, 2), (2, 3), (3, 4), (1, 5), (5, 3), (4, 6)]
BLOCKED_EDB = {"start": [(1,)], "arc": ARCS, "blocked": [(5,)]}
OWNER_EDB = {"start": [(1,)], "arc": ARCS, "owner": [(3, 1)]}

SHORTEST = """
.decl start(x: long)
.decl road(x: long, y: long, d: long)
.decl closed(x: long)
dist(X, min<D>) :- start(X), D = 0.
dist(Y, min<D>) :- dist(X, D1), road(X, Y, L), not closed(Y), D = D1 + L.
"""
SHORTEST_EDB = {"start": [(1,)], "road": [(1, 2, 1), (2, 3, 1), (1, 3, 5)], "closed": [(2,)]}

SCHEMAS = {
    "start": "x long",
    "arc": "x long, y long",
    "blocked": "x long",
    "owner": "x long, o long",
    "road": "x long, y long, d long",
    "closed": "x long",
}


@pytest.fixture(scope="module")
def bases(spark, tmp_path_factory):
    return Bases(
        spark,
        tmp_path_factory.mktemp("bases"),
        {
            "blocked": (BLOCKED, BLOCKED_EDB, SCHEMAS),
            "owner": (OWNER, OWNER_EDB, SCHEMAS),
            "shortest": (SHORTEST, SHORTEST_EDB, SCHEMAS),
        },
    )


class Inputs:
    """The current inputs, with multiplicities, and updates that keep them."""

    def __init__(self, spark, program, wh, edb):
        self.spark, self.program, self.wh = spark, program, wh
        self.counts = {name: Counter(rows) for name, rows in edb.items()}

    @property
    def facts(self) -> dict:
        return {name: [f for f, c in counts.items() if c > 0] for name, counts in self.counts.items()}

    def update(self, decompose=True, **batch):
        changes = {}
        for name, (inserts, deletes) in batch.items():
            changes[name] = change(self.spark, name, inserts=inserts, deletes=deletes, schema=SCHEMAS[name])
            self.counts[name].update(inserts)
            self.counts[name].subtract(deletes)
        report = self.program.update(self.spark, self.wh, changes=changes, decompose=decompose)
        assert_recomputed(self.program, self.wh, self.facts)
        return report


def assert_counts(wh, inputs: Inputs):
    """Derivation counts of free and sink: the multiplicities of the arcs deriving them."""
    arc = {f: c for f, c in inputs.counts["arc"].items() if c > 0}
    owned = {x for (x, _), c in inputs.counts["owner"].items() if c > 0}
    free, sink = Counter(), Counter()
    for (x, y), c in arc.items():
        if y not in owned:
            free[(x, y)] += c
        if not any(a == y for a, _ in arc):
            sink[(y,)] += c
    assert stored(wh, "free", counts=True) == dict(free)
    assert stored(wh, "sink", counts=True) == dict(sink)


def test_blocked_inserted_deleted_and_mixed(spark, bases, tmp_path):
    program, wh = bases.copy("blocked", tmp_path / "wh")
    inputs = Inputs(spark, program, wh, BLOCKED_EDB)
    assert stored(wh, "reach") == {(1,), (2,), (3,), (4,), (6,)}

    # blocking 2 cuts 3 off too (5 is blocked): over-deleted, and nothing re-derives them
    report = inputs.update(blocked=([(2,)], []))
    assert stored(wh, "reach") == {(1,)}
    assert methods(report)[("reach",)] == "dred"
    assert (report.relations["reach"].inserted, report.relations["reach"].deleted) == (0, 4)

    # mixed, with the arcs: 2 and 5 unblocked, 4 blocked, 1 -> 5 goes, 6 -> 7 comes
    report = inputs.update(blocked=([(4,)], [(2,), (5,)]), arc=([(6, 7)], [(1, 5)]))
    assert stored(wh, "reach") == {(1,), (2,), (3,)}
    assert methods(report)[("reach",)] == "dred"

    # 2 blocked and 4 unblocked while 1 -> 5 comes back: 3 is over-deleted, then re-derived
    # through 5; only 2 goes
    report = inputs.update(blocked=([(2,)], [(4,)]), arc=([(1, 5)], []))
    assert stored(wh, "reach") == {(1,), (5,), (3,), (4,), (6,), (7,)}
    assert (report.relations["reach"].inserted, report.relations["reach"].deleted) == (4, 1)
    assert methods(report)[("reach",)] == "dred"


def test_negated_atom_with_anonymous_variable(spark, bases, tmp_path):
    program, wh = bases.copy("owner", tmp_path / "wh")
    inputs = Inputs(spark, program, wh, OWNER_EDB)
    assert stored(wh, "open") == {(1,), (2,), (5,)}

    # 3 changes owner: not owner(3, _) stays false, nothing above changes
    versions = {name: wh.version(name) for name in ("open", "free")}
    report = inputs.update(owner=([(3, 2)], [(3, 1)]))
    assert methods(report)[("open",)] == "dred" and methods(report)[("free",)] == "counting"
    assert {name: wh.version(name) for name in versions} == versions
    assert_counts(wh, inputs)

    # the last owner going opens 3 and what lies behind it
    report = inputs.update(owner=([], [(3, 2)]))
    assert stored(wh, "open") == {(1,), (2,), (5,), (3,), (4,), (6,)}
    assert report.relations["free"].inserted == 2  # free(2, 3), free(5, 3)
    assert_counts(wh, inputs)

    # 4 gets an owner while 4 -> 6 gains a second copy, 6 -> 8 appears and 5 -> 3 goes: open
    # loses 4 and 6, 5 and 8 become sinks and 6 stops being one, free(4, 6) has two derivations
    report = inputs.update(owner=([(4, 1)], []), arc=([(4, 6), (6, 8)], [(5, 3)]))
    assert stored(wh, "open") == {(1,), (2,), (5,), (3,)}
    assert methods(report)[("open",)] == "dred" and methods(report)[("sink",)] == "counting"
    assert stored(wh, "sink") == {(5,), (8,)} and stored(wh, "free", counts=True)[(4, 6)] == 2
    assert_counts(wh, inputs)


def test_min_recursion_under_negation(spark, bases, tmp_path):
    program, wh = bases.copy("shortest", tmp_path / "wh")
    inputs = Inputs(spark, program, wh, SHORTEST_EDB)
    assert stored(wh, "dist") == {(1, 0), (3, 5)}
    # reopening 2 only improves groups: DRed's insertion phase
    report = inputs.update(closed=([], [(2,)]))
    assert stored(wh, "dist") == {(1, 0), (2, 1), (3, 2)}
    assert methods(report)[("dist",)] == "dred"
    # closing 3 removes a group: the groups it reaches are computed again, in the driver
    report = inputs.update(closed=([(3,)], []))
    assert stored(wh, "dist") == {(1, 0), (2, 1)}
    assert methods(report)[("dist",)] == "dred"
    # without the driver (decompose=False), such a removal recomputes the stratum
    inputs.update(closed=([], [(3,)]))
    report = inputs.update(closed=([(3,)], []), decompose=False)
    assert stored(wh, "dist") == {(1, 0), (2, 1)}
    assert methods(report)[("dist",)] == "recompute"
