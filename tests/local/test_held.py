"""Relations held as pyarrow Tables in the local backend (``arrow.is_held``), without Spark.

A join or a fixpoint over a held table must give the same rows as over the same facts as
tuples: the table is only probed in bulk by key (``arrow.matching``) instead of indexed row by
row. Values a column cannot hold (a long against an int column) match nothing, as with tuples.
"""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from programs import settings
from spark_datalog.local import arrow, compile
from spark_datalog.local.compile import compile_plan
from spark_datalog.local.fixpoint import fixpoint
from spark_datalog.plan import ir

values = st.integers(-3, 3)
pairs = st.lists(st.tuples(values, values), max_size=30)


_INTS = (pa.int64(), pa.int64())


def _table(facts, types=_INTS, names=("a", "b")):
    facts = sorted(set(facts))
    return pa.Table.from_arrays(
        [pa.array([f[i] for f in facts], t) for i, t in enumerate(types)], names=list(names)
    )


def _rows(node, frames) -> Counter:
    return Counter(compile_plan(node, frozenset({"l"})).rows(frames))


@settings(default=100)
@given(left=pairs, right=pairs, text=st.booleans(), narrow=st.booleans())
def test_a_join_probing_a_held_table_gives_the_rows_of_tuples(left, right, text, narrow):
    """Probed by key, or joined by Arrow as a whole (``BULK_JOIN_ROWS`` lowered): the same rows,
    with strings, and with keys of a narrower integer type in the table."""
    if text:  # string values throughout
        left = [(str(a), str(b)) for a, b in left]
        right = [(str(a), str(b)) for a, b in right]
        types = (pa.string(), pa.string())
    else:
        types = (pa.int32(), pa.int32()) if narrow else (pa.int64(), pa.int64())
    delta = ir.Scan("l", ("x", "y"), "delta")
    original = compile.BULK_JOIN_ROWS
    for bulk in (original, 0):
        compile.BULK_JOIN_ROWS = bulk
        try:
            for node in (
                ir.Join(delta, ir.Scan("r", ("y", "z")), ("y",)),  # one key column
                ir.Join(delta, ir.Scan("r", ("x", "y")), ("x", "y")),  # whole rows
                ir.Join(delta, ir.Scan("r", ("y", "x")), ("x", "y")),
            ):  # reordered
                as_tuples = _rows(node, {("l", "delta"): left, ("r", "full"): sorted(set(right))})
                held = _rows(node, {("l", "delta"): left, ("r", "full"): _table(right, types=types)})
                assert held == as_tuples
        finally:
            compile.BULK_JOIN_ROWS = original


@settings(default=100)
@given(right=pairs, probes=st.lists(pairs, min_size=1, max_size=8))
def test_a_held_table_probed_many_times_gives_the_rows_of_tuples(right, probes):
    """One compiled join probing the same held table with delta after delta (a fixpoint's
    rounds): the same rows as over tuples, before and after its probes have matched half the
    table and its whole index is built and kept."""
    node = ir.Join(ir.Scan("l", ("x", "y"), "delta"), ir.Scan("r", ("y", "z")), ("y",))
    held, as_tuples = (compile_plan(node, frozenset({"l"})) for _ in range(2))
    table, facts = _table(right), sorted(set(right))
    original, compile.BULK_JOIN_ROWS = compile.BULK_JOIN_ROWS, 10**9  # probes, never bulk
    try:
        for delta in probes:
            assert Counter(held.rows({("l", "delta"): delta, ("r", "full"): table})) == Counter(
                as_tuples.rows({("l", "delta"): delta, ("r", "full"): facts})
            )
    finally:
        compile.BULK_JOIN_ROWS = original
    keys = {y for delta in probes for _, y in delta}
    if 2 * sum(1 for f in facts if f[0] in keys) >= len(facts) > 0:
        assert _index_of(held).complete  # the probes matched half the table: built whole


def _index_of(plan) -> "compile._Index":
    """The ``_Index`` a compiled join keeps (in its ``produce`` closure)."""
    cells = [cell.cell_contents for cell in plan._produce.__closure__]
    return next(c for c in cells if isinstance(c, compile._Index))


@settings(default=100)
@given(arcs=pairs, start=pairs, known=pairs)
def test_a_fixpoint_knowing_a_held_table_adds_what_a_set_adds(arcs, start, known):
    """tc from ``start`` over ``arcs``, ``known`` facts held before: the same new facts."""
    step = ir.Project(
        ir.Join(ir.Scan("tc", ("x", "y"), "delta"), ir.Scan("arc", ("y", "z")), ("y",)),
        (("x", ir.ColumnRef("x")), ("y", ir.ColumnRef("z"))),
    )
    variants = [("tc", compile_plan(step, frozenset({"tc"})))]
    for static in ({("arc", "full"): sorted(set(arcs))}, {("arc", "full"): _table(arcs)}):
        results = []
        for held in (set(known), _table(known)):
            outcome = fixpoint({"tc": list(start)}, variants, static, known={"tc": held}, only_new=True)
            results.append(sorted(outcome.facts["tc"]))
        assert results[0] == results[1]
        assert not set(results[0]) & set(known)


def test_values_a_column_cannot_hold_match_nothing():
    small = _table([(1, 2), (3, 4)], types=(pa.int32(), pa.int32()))
    assert arrow.matching(small, [0], {1, 2**40}) is None  # the caller compares tuples
    node = ir.Join(ir.Scan("l", ("x",), "delta"), ir.Scan("r", ("x", "y")), ("x",))
    frames = {("l", "delta"): [(1,), (2**40,)], ("r", "full"): small}
    assert _rows(node, frames) == Counter({(1, 2): 1})
    assert arrow.among(small, [(1, 2), (2**40, 2), (3, 5)]) == {(1, 2)}
    assert arrow.table_rows(arrow.without(small, [(1, 2), (2**40, 2)])) == [(3, 4)]


def test_strings_and_single_columns_are_held():
    names = _table([(1, "a"), (2, "b"), (3, "a")], types=(pa.int64(), pa.string()))
    assert arrow.is_held(names)
    assert arrow.among(names, [(1, "a"), (1, "b")]) == {(1, "a")}
    assert sorted(arrow.table_rows(arrow.without(names, [(3, "a")]))) == [(1, "a"), (2, "b")]
    single = pa.table({"x": pa.array([1, 2, 3], pa.int64())})
    assert arrow.among(single, [(2,), (5,)]) == {(2,)}
    assert sorted(arrow.table_rows(arrow.like(single, [(7,)]))) == [(7,)]


def test_floating_point_and_columnless_tables_are_not_held():
    assert not arrow.is_held(pa.table({"x": pa.array([0.0, float("nan")])}))
    assert not arrow.is_held(pa.table({"x": pa.array([1])}).select([]))
    assert not arrow.is_held([(1, 2)])


@settings(default=100)
@given(
    edges=st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8)), max_size=25),
    labels=st.lists(st.tuples(st.integers(0, 8), st.integers(0, 20)), min_size=1, max_size=9),
    func=st.sampled_from(["min", "max"]),
)
def test_a_fixpoint_by_value_reaches_the_same_best_values(edges, labels, func):
    """Label propagation (``label(Y, min<L>) :- label(X, L), edge(X, Y)``) from random seeds:
    propagating the best pending value first gives every group the same best value."""
    step = ir.Project(
        ir.Join(ir.Scan("label", ("x", "l"), "delta"), ir.Scan("edge", ("x", "y")), ("x",)),
        (("x", ir.ColumnRef("y")), ("l", ir.ColumnRef("l"))),
    )
    variants = [("label", compile_plan(step, frozenset({"label"})))]
    results = []
    for by_value in (False, True):
        outcome = fixpoint(
            {"label": list(labels)},
            variants,
            {("edge", "full"): edges},
            best={"label": (func, 1)},
            by_value=by_value,
        )
        results.append(sorted(outcome.facts["label"]))
    assert results[0] == results[1]
