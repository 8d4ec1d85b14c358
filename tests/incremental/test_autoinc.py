"""Incremental maintenance of strata calling ``autoinc()``: a change shifts the numbers of other
facts, so such a stratum is recomputed and diffed (the placement says why), and after every
batch the warehouse equals a full recomputation (the reference interpreter's); the strata
above are maintained as usual, by counting and DRed."""

from __future__ import annotations

import pytest

from .helpers import Bases, assert_recomputed, methods
from .test_update import change, stored

TEXT = """
.decl person(name: symbol, age: long)
.decl link(a: symbol, b: symbol)
id(N, autoinc()) :- person(N, _).
adult(N, I) :- id(N, I), person(N, A), A >= 18.
lab(X, autoinc()) :- link(X, _).
lab(Y, I) :- lab(X, I), link(X, Y).
"""
EDB = {"person": [("bob", 40), ("dave", 12), ("carol", 25)], "link": [("b", "c"), ("c", "d")]}
SCHEMAS = {"person": "name string, age long", "link": "a string, b string"}


@pytest.fixture(scope="module")
def bases(spark, tmp_path_factory):
    return Bases(spark, tmp_path_factory.mktemp("bases"), {"autoinc": (TEXT, EDB, SCHEMAS)})


def test_updates_of_numbered_strata_equal_recomputation(spark, bases, tmp_path):
    program, wh = bases.copy("autoinc", tmp_path / "wh")
    facts = {name: set(rows) for name, rows in EDB.items()}
    # sites: id 0, lab 1 (K = 2); names in order bob, carol, dave
    assert stored(wh, "id") == {("bob", 0), ("carol", 2), ("dave", 4)}

    def update(**batch):
        changes = {}
        for name, (inserts, deletes) in batch.items():
            changes[name] = change(spark, name, inserts=inserts, deletes=deletes, schema=SCHEMAS[name])
            facts[name] |= set(inserts)
            facts[name] -= set(deletes)
        report = program.update(spark, wh, changes=changes)
        assert_recomputed(program, wh, facts)
        return report

    # alice sorts first: every id moves
    report = update(person=([("alice", 30)], []))
    assert stored(wh, "id") == {("alice", 0), ("bob", 2), ("carol", 4), ("dave", 6)}
    assert methods(report)[("id",)] == "recompute"
    assert "autoinc()" in next(s for s in report.strata if s.relations == ("id",)).placement.reason
    assert methods(report)[("adult",)] == "counting"
    # a link that sorts first renumbers lab; removing bob shifts the ids back
    report = update(link=([("a", "b")], []), person=([], [("bob", 40)]))
    assert methods(report)[("lab",)] == "recompute"
    assert stored(wh, "lab") == {(x, i) for i, x in ((1, "a"), (3, "b"), (5, "c"))} | {
        ("b", 1),
        ("c", 1),
        ("c", 3),
        ("d", 1),
        ("d", 3),
        ("d", 5),
    }
