"""local.columnar (plans over Arrow tables) against local.compile (the same plans on tuples),
without Spark.

Whatever a plan and its rows, the columnar evaluation gives the same multiset of rows as the
tuple backend, or declines (None) and the tuple backend runs: never different rows.
"""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from programs import settings
from spark_datalog.local import compile
from spark_datalog.local.columnar import ColumnarPlan
from spark_datalog.local.compile import compile_plan
from spark_datalog.plan import ir

DYNAMIC = frozenset({"d"})
values = st.integers(-3, 3)
pairs = st.lists(st.tuples(values, values), max_size=25)
OPERATORS = ("=", "!=", "<", "<=", ">", ">=")


def _x(name="x"):
    return ir.ColumnRef(name)


def _plans():
    """Plans over a delta ``d(x, y)`` and full relations ``r(y, z)`` and ``s(x, y)``."""
    delta = ir.Scan("d", ("x", "y"), "delta")
    r, s = ir.Scan("r", ("y", "z")), ir.Scan("s", ("x", "y"))
    join = ir.Join(delta, r, ("y",))
    yield join
    yield ir.Join(r, delta, ("y",))  # the delta on the right
    yield ir.Join(delta, s, ("x", "y"))  # whole rows
    yield ir.Project(join, (("a", _x("z")), ("b", _x("x")), ("c", _x("x"))))
    for op in OPERATORS:
        yield ir.Select(join, (ir.Compare(op, _x("x"), _x("z")),))
        yield ir.Select(delta, (ir.Compare(op, _x("y"), ir.Literal(1, "long")),))
    yield ir.AntiJoin(delta, r, ("y",))
    yield ir.Union_((delta, ir.Project(s, (("x", _x("y")), ("y", _x("x"))))))
    yield ir.Distinct(ir.Project(join, (("x", _x("x")), ("z", _x("z")))))
    yield ir.Join(ir.Join(delta, r, ("y",)), ir.Scan("s", ("z", "w")), ("z",))


def _held(facts, type_):
    facts = sorted(set(facts))
    return pa.Table.from_arrays([pa.array([f[i] for f in facts], type_) for i in range(2)], names=["a", "b"])


@settings(default=100)
@given(
    delta=pairs, r=pairs, s=pairs, held=st.sampled_from([None, pa.int32(), pa.int64()]), text=st.booleans()
)
def test_columnar_rows_are_the_rows_of_tuples(delta, r, s, held, text):
    """Integers (full relations as tuples, or held as int32/int64 tables) or strings."""
    if text:
        delta, r, s = ([(str(a), str(b)) for a, b in rows] for rows in (delta, r, s))
    frames = {("d", "delta"): delta, ("r", "full"): sorted(set(r)), ("s", "full"): sorted(set(s))}
    if held is not None and not text:
        frames[("r", "full")] = _held(r, held)
        frames[("s", "full")] = _held(s, held)
    tuple_frames = {
        key: sorted(set(r if key[0] == "r" else s)) if key[1] == "full" else rows
        for key, rows in frames.items()
    }
    for node in _plans():
        if text and any(isinstance(c.right, ir.Literal) for c in getattr(node, "conditions", ())):
            continue  # a string column against an integer literal: declined, tested below
        table = ColumnarPlan(node, DYNAMIC).table(frames)
        assert table is not None, node
        assert table.column_names == list(node.columns)
        expected = Counter(compile_plan(node, DYNAMIC).rows(tuple_frames))
        assert (
            Counter(zip(*[c.to_pylist() for c in table.columns], strict=True)) == expected
            if table.num_rows
            else not expected
        )


@pytest.mark.parametrize(
    "rows, why",
    [
        ([(1.5, 2)], "doubles"),
        ([(True, 2)], "booleans"),
        ([(1, "a"), ("b", 2)], "mixed types"),
        ([(2**70, 1)], "an integer beyond 64 bits"),
        ([("\ud800", "a")], "a string without a UTF-8 form"),
    ],
)
def test_values_it_cannot_hold_exactly_are_declined(rows, why):
    node = ir.Join(ir.Scan("d", ("x", "y"), "delta"), ir.Scan("r", ("y", "z")), ("y",))
    frames = {("d", "delta"): rows, ("r", "full"): [(2, 3)]}
    assert ColumnarPlan(node, DYNAMIC).table(frames) is None, why


def test_nodes_it_does_not_evaluate_are_declined():
    delta = ir.Scan("d", ("x", "y"), "delta")
    for node in (
        ir.Project(delta, (("x", ir.Arithmetic("+", _x(), _x("y"))),)),
        ir.Aggregate(delta, ("x",), "min", "y", "m"),
        ir.Join(delta, ir.Scan("r", ("z",)), ()),
    ):  # a product
        assert not ColumnarPlan(node, DYNAMIC).supported
        assert ColumnarPlan(node, DYNAMIC).table({}) is None
    compared = ir.Select(delta, (ir.Compare("<", _x(), ir.Literal(1, "long")),))
    assert ColumnarPlan(compared, DYNAMIC).table({("d", "delta"): [("a", "b")]}) is None


def test_a_compiled_plan_runs_columnar_from_its_threshold(monkeypatch):
    """``compile_plan(..., columnar=True)``: Arrow from ``COLUMNAR_ROWS`` delta rows on, the
    same rows either way; without ``columnar``, never."""
    node = ir.Join(ir.Scan("d", ("x", "y"), "delta"), ir.Scan("r", ("y", "z")), ("y",))
    frames = {("d", "delta"): [(1, 2), (3, 2)], ("r", "full"): [(2, 5), (2, 6)]}
    evaluated = []
    original = ColumnarPlan.table
    monkeypatch.setattr(ColumnarPlan, "table", lambda self, f: evaluated.append(1) or original(self, f))
    expected = Counter(compile_plan(node, DYNAMIC).rows(frames))
    for threshold, runs in ((3, 0), (2, 1)):
        monkeypatch.setattr(compile, "COLUMNAR_ROWS", threshold)
        evaluated.clear()
        assert Counter(compile_plan(node, DYNAMIC, columnar=True).rows(frames)) == expected
        assert len(evaluated) == runs
    assert compile_plan(node, DYNAMIC).columnar is None
