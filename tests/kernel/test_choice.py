"""The kernel's vectorised greedy choice equals the reference's sequential one."""

from __future__ import annotations

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from programs import settings
from spark_datalog.kernel.choice import greedy as kernel_greedy
from spark_datalog.kernel.frames import rows_table
from spark_datalog.record_types import Record
from spark_datalog.reference.choice import greedy, taken_keys

COLUMNS = ["a", "b", "c"]
ROWS = st.lists(st.tuples(*[st.integers(0, 4)] * 3), max_size=30)
KEYS = st.lists(
    st.lists(st.sampled_from((0, 1, 2)), min_size=1, max_size=2, unique=True).map(tuple),
    min_size=1,
    max_size=3,
)


def frame(rows) -> pl.DataFrame:
    return pl.DataFrame(sorted(set(rows)), schema={c: pl.Int64 for c in COLUMNS}, orient="row")


@settings(default=60)
@given(candidates=ROWS, known=ROWS, keys=KEYS)
def test_kernel_greedy_is_the_sequential_greedy(candidates, known, keys):
    keys = tuple(keys)
    accepted = greedy(known, keys, taken_keys(keys, []))  # earlier rounds' facts: a choice too
    fresh = set(candidates) - set(accepted)
    expected = greedy(fresh, keys, taken_keys(keys, accepted))
    names = [[COLUMNS[i] for i in key] for key in keys]
    found = kernel_greedy(frame(fresh), names, frame(accepted).lazy())
    assert sorted(found.rows()) == expected


# records (structs, nested) in value order: field by field, as the reference's Record tuples
RECORD_TYPES = ["[x: long, y: string]", "long", "[t: bool, u: [v: long, w: string]]"]
RECORD_ROWS = st.lists(
    st.tuples(
        st.tuples(st.integers(-1, 1), st.sampled_from(("B", "a", "é"))).map(Record),
        st.integers(0, 1),
        st.tuples(st.booleans(), st.tuples(st.integers(-1, 0), st.sampled_from(("a", "b"))).map(Record)).map(
            Record
        ),
    ),
    max_size=30,
)


def record_frame(rows) -> pl.DataFrame:
    return pl.from_arrow(rows_table(COLUMNS, RECORD_TYPES, sorted(set(rows))))  # type: ignore[return-value]


def as_records(value):
    """A struct value (a dict) as the reference's Record."""
    return Record(as_records(v) for v in value.values()) if isinstance(value, dict) else value


@settings(default=60)
@given(candidates=RECORD_ROWS, known=RECORD_ROWS, keys=KEYS)
def test_kernel_greedy_on_record_columns_is_the_sequential_greedy(candidates, known, keys):
    keys = tuple(keys)
    accepted = greedy(known, keys, taken_keys(keys, []))
    fresh = set(candidates) - set(accepted)
    expected = greedy(fresh, keys, taken_keys(keys, accepted))
    names = [[COLUMNS[i] for i in key] for key in keys]
    found = kernel_greedy(record_frame(fresh), names, record_frame(accepted).lazy())
    assert sorted(tuple(map(as_records, row)) for row in found.rows()) == expected


@settings(default=30)
@given(rows=RECORD_ROWS)
def test_polars_sorts_records_as_the_reference_does(rows):
    found = record_frame(rows).sort(COLUMNS[::-1]).rows()
    assert [tuple(map(as_records, row)) for row in found] == sorted(set(rows), key=lambda row: row[::-1])
