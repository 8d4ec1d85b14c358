"""The kernel's vectorised greedy choice equals the reference's sequential one."""

from __future__ import annotations

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from programs import settings
from spark_datalog.kernel.choice import greedy as kernel_greedy
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
