"""One test or more per IR node, on the kernel directly (``compile_node`` over Arrow tables)."""

from __future__ import annotations

import math

import polars as pl
import pyarrow as pa
import pytest

from spark_datalog.kernel.checks import collect_all
from spark_datalog.kernel.compile import compile_node
from spark_datalog.kernel.types import KernelUnsupported
from spark_datalog.overflow import Overflow
from spark_datalog.plan import ir

E = ir.Scan("e", ("X", "Y"))
EMPTY = pa.table({"a": pa.array([], pa.int64()), "b": pa.array([], pa.int64())})


def run(node, **tables) -> list:
    frames = {
        (name.removesuffix("_delta"), "delta" if name.endswith("_delta") else "full"): t
        for name, t in tables.items()
    }
    (frame,) = collect_all([compile_node(node, frames).frame])
    return sorted(frame.rows(), key=repr)


def table(*columns) -> pa.Table:
    return pa.table({f"c{i}": list(values) for i, values in enumerate(columns)})


def col(name):
    return ir.ColumnRef(name)


def lit(value, type_="long"):
    return ir.Literal(value, type_)


def test_scan_names_positions_and_reads_the_delta():
    assert run(ir.Scan("e", ("A", "B"), "delta"), e_delta=table([1], [2]), e=table([3], [4])) == [(1, 2)]
    with pytest.raises(KeyError):
        run(E)


def test_unit_is_one_row_without_columns():
    assert run(ir.Unit()) == [(True,)]  # the frame's one hidden column


def test_select_by_value_and_by_column():
    node = ir.Select(E, (ir.Compare("<", col("X"), col("Y")), ir.Compare("!=", col("X"), lit(2))))
    assert run(node, e=table([1, 2, 3, 2], [2, 3, 1, 5])) == [(1, 2)]


def test_project_of_literals_keeps_the_row_count():
    node = ir.Project(E, (("K", lit(7)), ("Y", col("X")), ("X", col("Y"))))
    assert run(node, e=table([1, 2], [3, 4])) == [(7, 1, 3), (7, 2, 4)]
    assert run(node, e=EMPTY) == []


def test_project_drops_undefined_rows_and_raises_overflow():
    quotient = ("Q", ir.Arithmetic("/", col("X"), col("Y")))
    assert run(ir.Project(E, (quotient,)), e=table([7, -7, 1], [2, 2, 0])) == [(-3,), (3,)]
    total = ("S", ir.Arithmetic("+", col("X"), col("Y"), "long", ir.ast.Span(4, 9)))
    with pytest.raises(Overflow, match=r"@ 4:9\] 9223372036854775807 \+ 1 does not fit long"):
        run(ir.Project(E, (total,)), e=table([2**63 - 1], [1]))


def test_an_undefined_left_operand_hides_an_overflow_on_the_right():
    # (X / 0) + (Y * Y): the reference stops at the undefined left side
    expr = ir.Arithmetic("+", ir.Arithmetic("/", col("X"), lit(0)), ir.Arithmetic("*", col("Y"), col("Y")))
    assert run(ir.Project(E, (("Z", expr),)), e=table([1], [2**40])) == []
    flipped = ir.Arithmetic("+", ir.Arithmetic("*", col("Y"), col("Y")), ir.Arithmetic("/", col("X"), lit(0)))
    with pytest.raises(Overflow):
        run(ir.Project(E, (("Z", flipped),)), e=table([1], [2**40]))


def test_join_on_columns_and_cross():
    left, right = ir.Scan("l", ("X", "Y")), ir.Scan("r", ("Y", "Z"))
    tables = {"l": table([1, 2], [10, 20]), "r": table([10, 10, 30], ["a", "b", "c"])}
    assert run(ir.Join(left, right, ("Y",)), **tables) == [(1, 10, "a"), (1, 10, "b")]
    cross = ir.Join(ir.Scan("l", ("X", "Y")), ir.Scan("r", ("V", "W")), ())
    assert len(run(cross, **tables)) == 6


def test_join_widens_int_against_long_and_refuses_int_against_string():
    ints = pa.table({"a": pa.array([1, 2], pa.int32())})
    longs = pa.table({"a": pa.array([2, 3], pa.int64())})
    assert run(ir.Join(ir.Scan("l", ("X",)), ir.Scan("r", ("X",)), ("X",)), l=ints, r=longs) == [(2,)]
    with pytest.raises(KernelUnsupported):
        run(ir.Join(ir.Scan("l", ("X",)), ir.Scan("r", ("X",)), ("X",)), l=ints, r=table(["2"]))


def test_nan_and_negative_zero_join_as_one_value():
    doubles = table([math.nan, -0.0, 1.0])
    node = ir.Join(ir.Scan("l", ("X",)), ir.Scan("r", ("X",)), ("X",))
    found = run(node, l=doubles, r=table([math.nan, 0.0]))
    assert (
        len(found) == 2
        and (0.0,) in found
        and math.copysign(1.0, [r for r in found if r == (0.0,)][0][0]) == 1.0
    )


@pytest.mark.parametrize("how, expected", [(ir.SemiJoin, [(1, 10)]), (ir.AntiJoin, [(2, 20)])])
def test_semi_and_anti_join(how, expected):
    node = how(E, ir.Scan("r", ("X",)), ("X",))
    assert run(node, e=table([1, 2], [10, 20]), r=table([1, 1, 3])) == expected


@pytest.mark.parametrize("how", [ir.SemiJoin, ir.AntiJoin])
def test_semi_and_anti_join_on_no_columns_test_for_any_row(how):
    node = how(E, ir.Scan("r", ()), ())
    rows = table([1, 2], [10, 20])
    some, none = pa.table({"x": [1]}).select([]), pa.table({"x": pa.array([], pa.int64())}).select([])
    assert len(run(node, e=rows, r=some)) == (2 if how is ir.SemiJoin else 0)
    assert len(run(node, e=rows, r=none)) == (0 if how is ir.SemiJoin else 2)


def test_union_is_a_multiset_and_distinct_makes_a_set():
    union = ir.Union_((E, ir.Scan("f", ("X", "Y"))))
    assert run(union, e=table([1], [2]), f=table([1], [2])) == [(1, 2), (1, 2)]
    assert run(ir.Distinct(union), e=table([1], [2]), f=table([1], [2])) == [(1, 2)]


@pytest.mark.parametrize(
    "func, expected",
    [
        ("count", [(1, 3), (2, 1)]),
        ("sum", [(1, 9), (2, 5)]),
        ("min", [(1, 1), (2, 5)]),
        ("max", [(1, 3), (2, 5)]),
    ],
)
def test_aggregate(func, expected):
    node = ir.Aggregate(E, ("X",), func, "Y", "V")
    assert run(node, e=table([1, 1, 1, 1, 2], [1, 2, 3, 3, 5])) == expected


def test_aggregate_sums_a_multiset_and_counts_distinct_values():
    rows = table([1, 1, 1], [2, 2, 3])
    assert run(ir.Aggregate(E, ("X",), "sum", "Y", "V"), e=rows) == [(1, 7)]
    assert run(ir.Aggregate(E, ("X",), "count", "Y", "V"), e=rows) == [(1, 2)]
    assert run(ir.Aggregate(E, ("X",), "avg", "Y", "V"), e=rows) == [(1, 7 / 3)]


def test_aggregate_without_groups_has_no_row_over_no_rows():
    assert run(ir.Aggregate(E, (), "count", "Y", "V"), e=EMPTY) == []
    assert run(ir.Aggregate(E, (), "sum", "Y", "V"), e=table([1, 1], [2, 3])) == [(5,)]


def test_sum_overflows_past_long_but_not_on_the_way():
    over = table([1, 1], [2**62, 2**62])
    with pytest.raises(Overflow, match="sum:"):
        run(ir.Aggregate(E, ("X",), "sum", "Y", "V"), e=over)
    back = table([1, 1, 1], [2**62, 2**62, -(2**62)])
    assert run(ir.Aggregate(E, ("X",), "sum", "Y", "V"), e=back) == [(1, 2**62)]


def test_min_and_max_of_doubles_put_nan_last_and_count_it_once():
    rows = table([1, 1, 1, 1], [math.nan, 2.0, -0.0, 0.0])
    assert run(ir.Aggregate(E, ("X",), "min", "Y", "V"), e=rows) == [(1, 0.0)]
    assert math.isnan(run(ir.Aggregate(E, ("X",), "max", "Y", "V"), e=rows)[0][1])
    assert run(ir.Aggregate(E, ("X",), "count", "Y", "V"), e=rows) == [(1, 3)]


def test_sum_and_avg_of_doubles_are_refused():
    for func in ("sum", "avg"):
        with pytest.raises(KernelUnsupported, match="math.fsum"):
            run(ir.Aggregate(E, ("X",), func, "Y", "V"), e=table([1], [1.5]))


def test_avg_of_a_sum_beyond_two_to_the_53_is_refused():
    with pytest.raises(KernelUnsupported, match="2\\^53"):
        run(ir.Aggregate(E, ("X",), "avg", "Y", "V"), e=table([1, 1], [2**53, 1]))


def test_every_node_type_has_a_compiler():
    from spark_datalog.kernel.compile import _NODE_COMPILERS

    assert set(_NODE_COMPILERS) == set(ir.Node.__args__)
    with pytest.raises(TypeError):
        compile_node(pl.LazyFrame(), {})
