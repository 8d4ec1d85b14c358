"""Probes of a held table by binary search over its sorted keys (``arrow.SortedKeys``).

Once a table has been probed ``SORT_AFTER_PROBES`` times on the same columns, ``arrow.matching``
finds rows by binary search instead of a pass over the table. Both must give exactly the rows a
Python filter gives, in the table's order: integer keys of any width, several columns packed
into one key, values outside the columns' range (up to the limits of 64 bits), and wanted values
that are not plain 64-bit integers (then the probe declines and the filter runs).
"""

from __future__ import annotations

import contextlib

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from programs import settings
from spark_datalog.local import arrow

LIMIT = 2**63
small = st.integers(-4, 4)
extreme = st.sampled_from([-LIMIT, -LIMIT + 1, LIMIT - 1, LIMIT - 2, 2**31, -(2**31) - 1])


@contextlib.contextmanager
def sorting_at_once():
    """Every table sorted on its first probe, however small."""
    saved = arrow.SORT_AFTER_PROBES, arrow.SORT_MIN_ROWS
    arrow.SORT_AFTER_PROBES, arrow.SORT_MIN_ROWS = 1, 0
    try:
        yield
    finally:
        arrow.SORT_AFTER_PROBES, arrow.SORT_MIN_ROWS = saved


def _filtered(rows, positions, wanted) -> list:
    single = len(positions) == 1
    return [
        row for row in rows if (row[positions[0]] if single else tuple(row[p] for p in positions)) in wanted
    ]


@settings(default=150)
@given(
    rows=st.lists(st.tuples(st.one_of(small, extreme), small), max_size=40),
    positions=st.sampled_from([[0], [1], [0, 1], [1, 0]]),
    wanted=st.lists(st.tuples(st.one_of(small, extreme), st.one_of(small, extreme)), max_size=6),
    narrow=st.booleans(),
)
def test_sorted_probes_give_the_rows_of_a_filter(rows, positions, wanted, narrow):
    second = pa.int32() if narrow else pa.int64()
    table = pa.Table.from_arrays(
        [pa.array([r[0] for r in rows], pa.int64()), pa.array([r[1] for r in rows], second)], names=["a", "b"]
    )
    wanted = {w[0] for w in wanted} if len(positions) == 1 else set(wanted)
    expected = _filtered(rows, positions, wanted)
    with sorting_at_once():
        for _ in range(2):  # the first probe sorts, the second reuses the sorted keys
            found = arrow.matching(table, positions, wanted)
            if found is not None:  # None: a value the column cannot hold (tuples compare)
                assert arrow.table_rows(found) == expected


@pytest.mark.parametrize("wanted", [{True}, {1.0}, {"1"}, {2**70}, {1, 2**64}])
def test_values_that_are_not_64_bit_integers_are_not_searched(wanted):
    """The probe declines (the filter decides, as before sorting existed)."""
    table = pa.table({"a": pa.array([1, 2, 3], pa.int64())})
    with sorting_at_once():
        sorted_keys = arrow._sorted_keys(table, (0,))
        assert sorted_keys is not None
        assert sorted_keys.rows(table, wanted, True) is None


def test_a_table_is_sorted_only_after_enough_probes_and_forgotten_with_it():
    table = pa.table({"a": pa.array(range(arrow.SORT_MIN_ROWS), pa.int64())})
    entry = (id(table), (0,))
    for probe in range(arrow.SORT_AFTER_PROBES):
        assert not isinstance(arrow._probes.get(entry), arrow.SortedKeys), probe
        assert arrow.table_rows(arrow.matching(table, [0], {5, 7})) == [(5,), (7,)]
    assert isinstance(arrow._probes[entry], arrow.SortedKeys)
    del table
    assert entry not in arrow._probes


def test_columns_that_cannot_be_sorted_are_filtered():
    """Strings, unsigned integers, and integers whose packed key would not fit in 64 bits: no
    SortedKeys."""
    strings = pa.table({"a": ["x", "y"]})
    unsigned = pa.table({"a": pa.array([1, 2**64 - 1], pa.uint64())})
    wide = pa.table({"a": pa.array([-LIMIT, LIMIT - 1]), "b": pa.array([-LIMIT, LIMIT - 1])})
    with sorting_at_once():
        assert arrow._sorted_keys(strings, (0,)) is None
        assert arrow._sorted_keys(unsigned, (0,)) is None
        assert arrow._sorted_keys(wide, (0, 1)) is None
        assert arrow.table_rows(arrow.matching(strings, [0], {"y"})) == [("y",)]
        assert arrow.table_rows(arrow.matching(wide, [0, 1], {(LIMIT - 1, LIMIT - 1)})) == [
            (LIMIT - 1, LIMIT - 1)
        ]
