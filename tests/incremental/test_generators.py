"""Incremental maintenance through rules with generators (``range``): after every batch the
warehouse equals a full recomputation (the reference interpreter's), on the counting path of a
non-recursive stratum and the DRed path of a recursive one, with and without the kernel
(``decompose``), and the stored derivation counts are those counted here."""

from __future__ import annotations

from collections import Counter

import pytest

from .helpers import Bases, assert_recomputed, methods
from .test_update import change, stored

TEXT = """
.decl span(a: long, b: long)
.decl arc(x: long, y: long)
cell(A, X) :- span(A, B), X = range(A, B).
reach(X) :- cell(_, X).
reach(Z) :- reach(X), arc(X, Y), Z = range(Y, Y + 2).
"""
EDB = {"span": [(1, 3), (1, 4), (10, 8)], "arc": [(2, 20), (21, 30)]}
SCHEMAS = {"span": "a long, b long", "arc": "x long, y long"}


@pytest.fixture(scope="module")
def bases(spark, tmp_path_factory):
    return Bases(spark, tmp_path_factory.mktemp("bases"), {"range": (TEXT, EDB, SCHEMAS)})


def _cell_counts(spans: Counter) -> dict:
    """Derivations of cell(A, X): one per span(A, B) (with its multiplicity) with X in range(A, B)."""
    counts: Counter = Counter()
    for (a, b), c in spans.items():
        if c > 0:
            for x in range(a, b) if a <= b else range(a, b, -1):
                counts[(a, x)] += c
    return dict(counts)


@pytest.mark.parametrize("decompose", [True, False], ids=["kernel", "spark"])
def test_updates_through_range_equal_recomputation(spark, bases, tmp_path, decompose):
    program, wh = bases.copy("range", tmp_path / "wh")
    counts = {name: Counter(rows) for name, rows in EDB.items()}
    assert stored(wh, "cell", counts=True) == _cell_counts(counts["span"])

    def update(**batch):
        changes = {}
        for name, (inserts, deletes) in batch.items():
            changes[name] = change(spark, name, inserts=inserts, deletes=deletes, schema=SCHEMAS[name])
            counts[name].update(inserts)
            counts[name].subtract(deletes)
        report = program.update(spark, wh, changes=changes, decompose=decompose)
        assert_recomputed(program, wh, {n: [f for f, c in cs.items() if c > 0] for n, cs in counts.items()})
        assert stored(wh, "cell", counts=True) == _cell_counts(counts["span"])
        return report

    # a wider span adds cells and reaches 20, 21 and from 21 on 30, 31
    report = update(span=([(2, 5)], []))
    assert {(21,), (30,), (31,)} <= stored(wh, "reach")
    assert methods(report)[("cell",)] == "counting"
    assert methods(report)[("reach",)] == "dred"
    # every span that reaches 2 goes (span(1, 3)'s cells lose one of two derivations first):
    # 20, 21, 30, 31 are over-deleted and not re-derived; the descending span goes too
    update(span=([(0, 0)], [(1, 3), (1, 4), (2, 5), (10, 8)]), arc=([(9, 1)], []))
    assert stored(wh, "reach") == set()
