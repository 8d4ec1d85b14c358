"""The promises ``update`` makes to ``Warehouse.apply_changes``: one row per fact (``netted``) and,
for set-valued relations whose change only adds facts, facts with no stored row
(``new_facts_only``). A broken promise leaves duplicate rows or wrong counts, so after every batch
every table must hold exactly the rows a full recomputation stores: one per fact, with its count.
Changes are written by Spark (no driver-side netting), where both promises are taken at their word.
"""

from __future__ import annotations

from collections import Counter

import pytest

import spark_datalog as sd
from spark_datalog.errors import InputError
from spark_datalog.reference import evaluate as reference
from spark_datalog.storage.warehouse import Warehouse

from .test_update import change, frame

PROGRAM = """
.decl arc(x: long, y: long)
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), arc(Y, Z).
two(X, Z) :- arc(X, Y), arc(Y, Z).
reach(X, count<Y>) :- tc(X, Y).
"""
ARCS = [(1, 2), (2, 3), (1, 3), (3, 1)]


def expected_rows(program, arcs: Counter) -> dict:
    """Relation -> the sorted rows (facts + ``_count``) a fresh materialization stores."""
    present = {f: c for f, c in arcs.items() if c > 0}
    derived = reference(program.checked, {"arc": set(present)})
    two = Counter()
    for (x, y), c in present.items():
        for (y2, z), c2 in present.items():
            if y2 == y:
                two[(x, z)] += c * c2
    rows = {"arc": present, "two": two}
    rows.update({name: {f: 1 for f in derived[name]} for name in ("tc", "reach")})
    return {name: sorted(f + (c,) for f, c in facts.items()) for name, facts in rows.items()}


def assert_stored_like_recomputation(program, wh, arcs: Counter):
    for name, rows in expected_rows(program, arcs).items():
        assert sorted(tuple(r) for r in wh.read(name, with_counts=True).collect()) == rows, name


def test_promised_changes_store_one_row_per_fact(spark, tmp_path, monkeypatch, datalog_settings):
    program = sd.Program.parse(PROGRAM)
    wh = Warehouse(spark, str(tmp_path / "wh"))
    program.materialize(spark, inputs={"arc": frame(spark, "arc", ARCS)}, warehouse=wh)
    datalog_settings(driverRows=0)  # every change is written by Spark
    promises = {}
    apply_changes = Warehouse.apply_changes

    def recorded(self, name, columns, changes, run, **kwargs):
        promises[name] = kwargs
        return apply_changes(self, name, columns, changes, run, **kwargs)

    monkeypatch.setattr(Warehouse, "apply_changes", recorded)
    arcs = Counter(ARCS)

    # refused before the run (nulls are named before absent deletions): no trace
    for rows in ([(1, None, 1), (5, 6, -1)], [(7, 8, None)]):
        refused = spark.createDataFrame(rows, "x long, y long, _count long")
        with pytest.raises(InputError, match="holds nulls"):
            program.update(spark, wh, changes={"arc": refused})
    with pytest.raises(InputError, match=r"arc\(5, 6\): deleting 1 of 0 copies"):
        program.update(spark, wh, changes={"arc": change(spark, "arc", inserts=[(7, 8)], deletes=[(5, 6)])})
    assert wh.pending_run() is None and not promises

    # insertions only: a new component (new tc facts, new reach groups), an arc whose closure
    # is there already, and a second copy of an arc (counts of stored facts grow)
    inserts = [(20, 21), (21, 22), (2, 1), (1, 2)]
    program.update(spark, wh, changes={"arc": change(spark, "arc", inserts=inserts)})
    arcs.update(inserts)
    assert_stored_like_recomputation(program, wh, arcs)
    assert {n: p["new_facts_only"] for n, p in promises.items()} == {
        "arc": False,
        "two": False,
        "tc": True,
        "reach": True,
    }
    assert all(p["netted"] for p in promises.values())

    # then deletions (of facts the insertions added, and one of two copies) and a join of the
    # components: duplicates left by a broken promise would survive here
    promises.clear()
    deletes = [(21, 22), (1, 2)]
    program.update(spark, wh, changes={"arc": change(spark, "arc", inserts=[(3, 20)], deletes=deletes)})
    arcs.update([(3, 20)])
    arcs.subtract(deletes)
    assert_stored_like_recomputation(program, wh, arcs)
    assert not any(p["new_facts_only"] for p in promises.values())
