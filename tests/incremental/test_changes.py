"""changes.assess_in_driver against changes.assess (Spark) on the same changes and states.

``update`` assesses a small change in the driver, before its run, instead of with Spark: the
assessed rows (counts, counts before, presence, problems) and the tallies must be the same,
for every ``on_missing_delete`` mode, with duplicate rows per fact, null columns, null counts
and deletions of absent facts or of more copies than there are.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spark_datalog as sd
from spark_datalog.incremental.changes import (
    ON_MISSING_DELETE,
    assess,
    assess_in_driver,
    conform_changes,
    store_assessed,
)
from spark_datalog.spark.counted import COUNT

SCHEMA = sd.Program.parse(".decl arc(x: long, s: string)\nq(X) :- arc(X, _).").checked.relations["arc"]
VALUES = st.tuples(st.one_of(st.none(), st.integers(0, 3)), st.one_of(st.none(), st.sampled_from(["a", "b"])))


@settings(
    max_examples=int(os.environ.get("SD_SPARK_EXAMPLES", "4")) * 3,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    old=st.dictionaries(
        st.tuples(st.integers(0, 3), st.sampled_from(["a", "b"])), st.integers(1, 3), max_size=6
    ),
    rows=st.lists(st.tuples(VALUES, st.one_of(st.none(), st.integers(-3, 3))), max_size=8),
    mode=st.sampled_from(ON_MISSING_DELETE + (None,)),
)
def test_assessed_in_the_driver_as_by_spark(spark, old, rows, mode):
    change = spark.createDataFrame([(x, s, n) for (x, s), n in rows], f"x long, s string, {COUNT} long")
    state = spark.createDataFrame([(x, s, n) for (x, s), n in old.items()], f"x long, s string, {COUNT} long")
    conformed = conform_changes(SCHEMA, change)
    leaves, tallies = store_assessed({"arc": assess(SCHEMA, conformed, state, mode)})
    table, tally = assess_in_driver(SCHEMA, conformed.toArrow(), state.toArrow(), mode)
    columns = leaves["arc"].columns
    assert table.column_names == columns
    by_spark = sorted((tuple(r) for r in leaves["arc"].collect()), key=repr)
    in_driver = sorted((tuple(r.values()) for r in table.to_pylist()), key=repr)
    assert in_driver == by_spark
    assert tally == tallies["arc"]
