"""Record columns (Soufflé's records, Spark and Delta struct columns) in the warehouse:
materialized into struct columns, read back, and maintained by ``update`` (counting, DRed) on
both commit paths, equal to the reference interpreter on the changed inputs."""

from __future__ import annotations

import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spark_datalog as sd
from dialect_programs import ADTS, FLOAT_LISTS, LEAF_C, LISTS, RECORDS, SHAPES, encoded, term
from spark_datalog.errors import InputError
from spark_datalog.spark.types import schema
from spark_datalog.storage.warehouse import Warehouse

from storage.helpers import warehouse_on
from .helpers import assert_recomputed, methods

pytestmark = pytest.mark.spark

# nested records (seg), records in join keys (hop, named), a recursive relation of nested
# records (path), records under negation (open, free) and a derivation count above 1 (ends)
PROGRAM = """
.type Point = [x: number, y: number]
.type Seg = [a: Point, b: Point]
.decl seg(s: Seg)
.decl tag(p: Point, t: symbol)
.decl blocked(p: Point)
.decl path(s: Seg)
.decl hop(s: Seg)
.decl named(p: Point, t: symbol, q: Point)
.decl open(s: Seg)
.decl ends(p: Point)
.decl free(p: Point)
path(S) :- seg(S).
path([A, C]) :- path([A, B]), seg([B, C]).
hop([A, C]) :- seg([A, B]), seg([B, C]).
named(A, T, B) :- path([A, B]), tag(A, T).
open(S) :- seg(S), S = [A, _], !blocked(A).
ends(B) :- path([_, B]).
free(P) :- tag(P, _), !ends(P).
tag([9, 9], "p").
"""
EDB = {
    "seg": [(((0, 0), (1, 1)),), (((1, 1), (2, 0)),), (((5, 5), (6, 6)),)],
    "tag": [((0, 0), "o"), ((5, 5), "f"), ((7, 7), "z"), ((2, 0), "t")],
    "blocked": [((5, 5),)],
}
# (relation, inserts, deletes): a segment joining two paths, a tag and a block removed; the
# joining segment and one of a path deleted; a cycle, a block and a tag added
STEPS = [
    [("seg", [(((2, 0), (5, 5)),)], []), ("tag", [], [((7, 7), "z")]), ("blocked", [], [((5, 5),)])],
    [("seg", [], [(((1, 1), (2, 0)),), (((2, 0), (5, 5)),)])],
    [("seg", [(((6, 6), (5, 5)),), (((1, 1), (2, 0)),)], []), ("blocked", [((1, 1),)], [])],
    [("tag", [((6, 6), "s")], []), ("seg", [], [(((0, 0), (1, 1)),)])],
]
# (backend, spark.datalog settings, decompose, steps): the driver's paths (DRed and counting in
# the driver, the change merged into the files with pyarrow); Spark's (DRed in rounds, counting
# and the merge by Spark jobs); the native path (DRed in one task, a Delta MERGE). The Spark
# paths take fewer steps (suite time: a step costs them 20-40 s here)
# Two paths: the embedded storage with DRed in the driver (Arrow netting and merging of structs),
# and the native one with DRed in Spark rounds (struct columns in Spark plans, Delta MERGE on
# struct keys). DRed in one task runs the kernel, whose struct handling tests/kernel checks.
PATHS = {
    "embedded-driver": ("embedded", {}, True, STEPS),
    "native-rounds": ("native", {"driverMemory": 0, "driverRows": 0}, False, STEPS[:1]),
}
WHERE = {"embedded-driver": "driver", "native-rounds": "rounds"}


def _frame(spark, program, name, rows, counts=None):
    relation = program.relations[name]
    if counts is None:
        return spark.createDataFrame(sorted(rows, key=repr), schema(relation.column_names, relation.types))
    struct = schema([*relation.column_names, "_count"], [*relation.types, "long"])
    return spark.createDataFrame([(*row, count) for row, count in zip(rows, counts, strict=True)], struct)


def _change(spark, program, name, inserts, deletes):
    rows = [*inserts, *deletes]
    return _frame(spark, program, name, rows, [1] * len(inserts) + [-1] * len(deletes))


def _stored(wh, name) -> set:
    return {tuple(row) for row in wh.read(name).collect()}


def test_records_in_the_warehouse(spark, tmp_path):
    program = sd.Program.parse(RECORDS.text)
    segments = set(RECORDS.edb["seg"])
    wh = Warehouse(spark, str(tmp_path / "wh"))
    result = program.materialize(spark, inputs={"seg": _frame(spark, program, "seg", segments)}, warehouse=wh)
    assert result["reach"].schema["a"].dataType.simpleString() == "struct<x:bigint,y:bigint>"
    assert {tuple(row) for row in result["far"].collect()} == RECORDS.expected["far"]
    for name, rows in RECORDS.expected.items():
        assert _stored(wh, name) == rows, name
    # a segment from the origin's reach to the far points: reach, far, common change
    joining = (((2, 0), (5, 5)),)
    program.update(spark, warehouse=wh, changes={"seg": _change(spark, program, "seg", [joining], [])})
    assert_recomputed(program, wh, {"seg": segments | {joining}})
    assert _stored(wh, "far") == set()


def test_adts_in_the_warehouse(spark, tmp_path):
    """An ADT column is a record column: a Delta struct of its tag and branches, equal values
    one representation, so stored relations are the expected sets, and updates maintain them."""
    program = sd.Program.parse(ADTS.text)
    relation = program.relations["raw"]
    raw = spark.createDataFrame(sorted(ADTS.edb["raw"]), schema(relation.column_names, relation.types))
    wh = Warehouse(spark, str(tmp_path / "wh"))
    program.materialize(spark, inputs={"raw": raw}, warehouse=wh)
    for name, rows in ADTS.expected.items():
        assert _stored(wh, name) == rows, name
    assert (
        Warehouse(spark, str(tmp_path / "wh"))
        .read("same")
        .schema["s"]
        .dataType.simpleString()
        .startswith("struct<$Shape|Circle|Empty|Label|Rect:bigint,")
    )
    row = ("rect", 1, 1)
    program.update(spark, warehouse=wh, changes={"raw": _change(spark, program, "raw", [row], [])})
    assert_recomputed(program, wh, {"raw": set(ADTS.edb["raw"]) | {row}})


def test_lists_in_the_warehouse(spark, tmp_path):
    """A recursive record column is a string column of encoded lists: stored as the expected
    sets, and an update (a list added, one removed, a number added) equals recomputation."""
    program = sd.Program.parse(LISTS.text)
    wh = Warehouse(spark, str(tmp_path / "wh"))
    inputs = {name: _frame(spark, program, name, rows) for name, rows in LISTS.edb.items()}
    program.materialize(spark, inputs=inputs, warehouse=wh)
    assert wh.read("suffix").schema["l"].dataType.simpleString() == "string"
    for name, rows in LISTS.expected.items():
        assert _stored(wh, name) == rows, name
    added, removed = (encoded(4, 3, 2, 1),), (encoded(9, 8),)
    changes = {
        "given": _change(spark, program, "given", [added], [removed]),
        "n": _change(spark, program, "n", [(4,)], []),
    }
    program.update(spark, warehouse=wh, changes=changes)
    edb = {"given": LISTS.edb["given"] - {removed} | {added}, "n": LISTS.edb["n"] | {(4,)}}
    assert_recomputed(program, wh, edb)
    assert (encoded(4, 3, 2, 1),) in _stored(wh, "shared") and (encoded(8),) not in _stored(wh, "suffix")


def test_float_lists_in_the_warehouse(spark, tmp_path):
    """Lists of floats (their fields' encoded bits): an update (a list added whose -0.0 is a
    stored list's 0.0, a list removed) equals recomputation."""
    program = sd.Program.parse(FLOAT_LISTS.text)
    wh = Warehouse(spark, str(tmp_path / "wh"))
    program.materialize(
        spark, inputs={"given": _frame(spark, program, "given", FLOAT_LISTS.edb["given"])}, warehouse=wh
    )
    for name, rows in FLOAT_LISTS.expected.items():
        assert _stored(wh, name) == rows, name
    added, removed = (encoded(2.5, -0.0),), (encoded(0.75),)
    changes = {"given": _change(spark, program, "given", [added], [removed])}
    program.update(spark, warehouse=wh, changes=changes)
    assert_recomputed(program, wh, {"given": FLOAT_LISTS.edb["given"] - {removed} | {added}})
    assert (encoded(5.0, 0.0),) in _stored(wh, "fresh") and (0.75,) not in _stored(wh, "elem")


def test_recursive_adts_in_the_warehouse(spark, tmp_path):
    """A recursive ADT column is a string column of encoded terms: an update (a tree added
    under one that stays, a leaf removed) equals recomputation."""
    program = sd.Program.parse(SHAPES.text)
    wh = Warehouse(spark, str(tmp_path / "wh"))
    program.materialize(
        spark, inputs={"given": _frame(spark, program, "given", SHAPES.edb["given"])}, warehouse=wh
    )
    assert _stored(wh, "count") == SHAPES.expected["count"]
    added = (term(2, encoded(term(1, "d", True), LEAF_C)),)
    changes = {"given": _change(spark, program, "given", [added], [(LEAF_C,)])}
    program.update(spark, warehouse=wh, changes=changes)
    assert_recomputed(program, wh, {"given": SHAPES.edb["given"] - {(LEAF_C,)} | {added}})
    assert ("d",) in _stored(wh, "lit") and (added[0], 2) in _stored(wh, "count")


@pytest.mark.slow
@pytest.mark.parametrize("path", list(PATHS))
def test_updates_of_records_equal_recomputation(spark, tmp_path, datalog_settings, path):
    backend, values, decompose, steps = PATHS[path]
    datalog_settings(**values)
    program = sd.Program.parse(PROGRAM)
    wh = warehouse_on(spark, tmp_path / "wh", backend)
    edb = {name: set(rows) for name, rows in EDB.items()}
    inputs = {name: _frame(spark, program, name, rows) for name, rows in edb.items()}
    program.materialize(spark, inputs=inputs, warehouse=wh, decompose=decompose)
    assert_recomputed(program, wh, edb)
    used: set = set()
    for step in steps:
        changes = {name: _change(spark, program, name, ins, dels) for name, ins, dels in step}
        report = program.update(spark, warehouse=wh, changes=changes, decompose=decompose)
        for name, inserts, deletes in step:
            edb[name] = edb[name] - set(deletes) | set(inserts)
        assert_recomputed(program, wh, edb)
        used |= set(methods(report).values())
        assert all(s.placement.where == WHERE[path] for s in report.strata if s.method == "dred"), path
    assert {"counting", "dred"} <= used, used
    stored_type = wh.read("ends", with_counts=True).schema["p"].dataType
    assert stored_type.simpleString() == "struct<x:bigint,y:bigint>"
    if path == "embedded-driver":  # a fact the program states is not deleted by a change
        changes = {"tag": _change(spark, program, "tag", [], [((9, 9), "p")])}
        with pytest.raises(InputError, match=r"deletes tag\(") as refused:
            program.update(spark, warehouse=wh, changes=changes)
        assert (refused.value.line, refused.value.column) == (20, 1)


_POINT = st.tuples(st.integers(0, 2), st.integers(0, 2))
_SEGMENT = st.tuples(st.tuples(_POINT, _POINT))
_TAG = st.tuples(_POINT, st.sampled_from(["o", "a"]))


@pytest.fixture
def base(spark, tmp_path):
    """The warehouse of ``PROGRAM`` over ``EDB``, materialized once for every example."""
    program = sd.Program.parse(PROGRAM)
    wh = Warehouse(spark, str(tmp_path / "base"))
    inputs = {name: _frame(spark, program, name, rows) for name, rows in EDB.items()}
    program.materialize(spark, inputs=inputs, warehouse=wh)
    return program, tmp_path / "base"


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    segments=st.sets(_SEGMENT, max_size=4),
    tags=st.sets(_TAG, max_size=2),
    deleted=st.sets(st.integers(0, 9), max_size=4),
)
def test_random_record_changes_equal_recomputation(spark, tmp_path_factory, base, segments, tags, deleted):
    """Random inserts of segments and tags (of points on a 3x3 grid) and deletes of stored ones."""
    program, root = base
    dest = tmp_path_factory.mktemp("wh") / "wh"
    shutil.copytree(root, dest)
    wh = Warehouse(spark, str(dest))
    stored = [("seg", row) for row in sorted(EDB["seg"])] + [("tag", row) for row in sorted(EDB["tag"])]
    gone = [stored[i] for i in sorted(deleted) if i < len(stored)]
    changes, edb = {}, {name: set(rows) for name, rows in EDB.items()}
    for name, inserts in (("seg", segments), ("tag", tags)):
        deletes = [row for n, row in gone if n == name]
        inserts = sorted(set(inserts) - edb[name])
        changes[name] = _change(spark, program, name, inserts, deletes)
        edb[name] = edb[name] - set(deletes) | set(inserts)
    program.update(spark, warehouse=wh, changes=changes)
    assert_recomputed(program, wh, edb)


# nil (a struct of nulls) in join keys (known), under negation (bare), compared (some)
NIL_PROGRAM = """
.type P = [x: number, y: number]
.decl pt(p: P)
.decl tag(p: P, t: symbol)
.decl known(p: P, t: symbol)
.decl bare(t: symbol)
.decl some(p: P)
known(p, t) :- pt(p), tag(p, t).
bare(t) :- tag(p, t), !pt(p).
some(p) :- pt(p), p != nil.
"""
NIL = (None, None)


@pytest.mark.parametrize("path", list(PATHS))
def test_updates_of_nil_records_equal_recomputation(spark, tmp_path, datalog_settings, path):
    backend, values, decompose, _ = PATHS[path]
    datalog_settings(**values)
    program = sd.Program.parse(NIL_PROGRAM, dialect="souffle")
    wh = warehouse_on(spark, tmp_path / "wh", backend)
    edb = {"pt": {((1, 2),), (NIL,)}, "tag": {(NIL, "n"), ((1, 2), "a"), ((3, 4), "b")}}
    inputs = {name: _frame(spark, program, name, rows) for name, rows in edb.items()}
    program.materialize(spark, inputs=inputs, warehouse=wh, decompose=decompose)
    assert_recomputed(program, wh, edb)
    assert _stored(wh, "known") == {(NIL, "n"), ((1, 2), "a")}
    changes = {"pt": _change(spark, program, "pt", [((3, 4),)], [(NIL,)])}
    program.update(spark, warehouse=wh, changes=changes, decompose=decompose)
    edb["pt"] = {((1, 2),), ((3, 4),)}
    assert_recomputed(program, wh, edb)
    assert _stored(wh, "bare") == {("n",)}
