"""The IR -> DataFrame compiler, node by node, on hand-built plans over tiny frames."""

from __future__ import annotations

import pytest
from pyspark.sql import types as T
from pyspark.testing import assertDataFrameEqual

from spark_datalog.plan import ir
from spark_datalog.spark.compile import compile_node

pytestmark = pytest.mark.spark

C, L = ir.ColumnRef, ir.Literal


def arith(op, left, right):
    return ir.Arithmetic(op, left, right)


@pytest.fixture(scope="module")
def frames(spark):
    """Relations by (name, source): columns named c0, c1, ... as the driver hands them over."""
    return {
        ("edge", "full"): spark.createDataFrame([(1, 2), (2, 3), (3, 4)], "c0 long, c1 long"),
        ("edge", "delta"): spark.createDataFrame([(3, 4)], "c0 long, c1 long"),
        ("num", "full"): spark.createDataFrame(
            [(7, 2), (-7, 2), (7, -2), (-7, -2), (7, 0)], "c0 long, c1 long"
        ),
        ("real", "full"): spark.createDataFrame([(7.0, 2.0), (1.0, 0.0)], "c0 double, c1 double"),
        ("node", "full"): spark.createDataFrame([(1,), (2,), (5,)], "c0 long"),
        ("empty", "full"): spark.createDataFrame([], "c0 long"),
        ("label", "full"): spark.createDataFrame(
            [(1, "a"), (1, "b"), (2, "a"), (2, "a")], "c0 long, c1 string"
        ),
    }


def rows(frame):
    return sorted(tuple(r) for r in frame.collect())


def test_scan_names_columns_and_reads_the_requested_source(frames):
    full = compile_node(ir.Scan("edge", ("X", "Y")), frames)
    delta = compile_node(ir.Scan("edge", ("X", "Y"), "delta"), frames)
    assert full.columns == ["X", "Y"]
    assert rows(full) == [(1, 2), (2, 3), (3, 4)]
    assert rows(delta) == [(3, 4)]


def test_scan_of_a_missing_relation_names_it(frames):
    with pytest.raises(KeyError, match="nope"):
        compile_node(ir.Scan("nope", ("X",)), frames)


def test_select_by_value_and_by_column(frames):
    scan = ir.Scan("edge", ("X", "Y"))
    by_value = ir.Select(scan, (ir.Compare(">=", C("X"), L(2, "long")),))
    by_column = ir.Select(scan, (ir.Compare("<", C("X"), C("Y")), ir.Compare("!=", C("Y"), L(3, "long"))))
    assert rows(compile_node(by_value, frames)) == [(2, 3), (3, 4)]
    assert rows(compile_node(by_column, frames)) == [(1, 2), (3, 4)]


def test_project_with_constants_and_computed_columns(spark, frames):
    plan = ir.Project(
        ir.Scan("edge", ("X", "Y")),
        (
            ("a", C("Y")),
            ("b", arith("+", C("X"), L(10, "long"))),
            ("c", L("k", "string")),
            ("d", L(True, "bool")),
        ),
    )
    result = compile_node(plan, frames)
    assertDataFrameEqual(
        result,
        spark.createDataFrame(
            [(2, 11, "k", True), (3, 12, "k", True), (4, 13, "k", True)],
            "a long, b long, c string, d boolean",
        ),
        checkRowOrder=False,
    )


@pytest.mark.parametrize(
    "type_name, spark_type, value",
    [
        ("int", T.IntegerType(), 3),
        ("long", T.LongType(), 3),
        ("double", T.DoubleType(), 2.5),
        ("string", T.StringType(), "x"),
        ("bool", T.BooleanType(), False),
    ],
)
def test_literal_types_map_to_spark_types(frames, type_name, spark_type, value):
    plan = ir.Project(ir.Scan("node", ("X",)), (("v", L(value, type_name)),))
    result = compile_node(plan, frames)
    assert result.schema["v"].dataType == spark_type
    assert {r.v for r in result.collect()} == {value}


def test_integer_division_truncates_toward_zero_and_mod_takes_the_dividend_sign(frames):
    plan = ir.Project(
        ir.Scan("num", ("A", "B")),
        (
            ("A", C("A")),
            ("B", C("B")),
            ("Q", arith("/", C("A"), C("B"))),
            ("R", arith("mod", C("A"), C("B"))),
        ),
    )
    result = compile_node(plan, frames)
    assert result.schema["Q"].dataType == T.LongType()
    # 7/0 and 7 mod 0 are undefined: the row is gone, not an error, not a null
    assert rows(result) == [(-7, -2, 3, -1), (-7, 2, -3, -1), (7, -2, -3, 1), (7, 2, 3, 1)]


def test_division_with_a_double_operand_is_true_division(frames):
    plan = ir.Project(ir.Scan("real", ("A", "B")), (("Q", arith("/", C("A"), C("B"))),))
    assert rows(compile_node(plan, frames)) == [(3.5,)]
    mixed = ir.Project(ir.Scan("num", ("A", "B")), (("Q", arith("/", C("A"), L(2.0, "double"))),))
    assert {r.Q for r in compile_node(mixed, frames).collect()} == {3.5, -3.5}


def test_division_by_zero_in_a_selection_drops_the_row(frames):
    # 10 / (X - X) is undefined for every X; 10 / (X - 1) only for X = 1
    scan = ir.Scan("node", ("X",))
    never = ir.Select(
        scan, (ir.Compare(">", arith("/", L(10, "long"), arith("-", C("X"), C("X"))), L(0, "long")),)
    )
    some = ir.Select(
        scan, (ir.Compare(">", arith("/", L(10, "long"), arith("-", C("X"), L(1, "long"))), L(0, "long")),)
    )
    assert rows(compile_node(never, frames)) == []
    assert rows(compile_node(some, frames)) == [(2,), (5,)]


def test_nested_division_by_zero_drops_the_row(frames):
    # X / (1 / (X - 1)): the inner division fails for X = 1, the outer for X = 5 (1 / 4 = 0)
    plan = ir.Project(
        ir.Scan("node", ("X",)),
        (("V", arith("/", C("X"), arith("/", L(1, "long"), arith("-", C("X"), L(1, "long"))))),),
    )
    assert rows(compile_node(plan, frames)) == [(2,)]


def test_join_on_shared_columns_in_ir_column_order(frames):
    plan = ir.Join(ir.Scan("edge", ("X", "Y")), ir.Scan("edge", ("Y", "Z")), on=("Y",))
    result = compile_node(plan, frames)
    assert tuple(result.columns) == plan.columns == ("X", "Y", "Z")
    assert rows(result) == [(1, 2, 3), (2, 3, 4)]


def test_join_without_columns_is_a_cross_product(frames):
    plan = ir.Join(ir.Scan("node", ("X",)), ir.Scan("edge", ("A", "B"), "delta"), on=())
    assert rows(compile_node(plan, frames)) == [(1, 3, 4), (2, 3, 4), (5, 3, 4)]


def test_antijoin_on_columns(frames):
    plan = ir.AntiJoin(ir.Scan("node", ("X",)), ir.Scan("edge", ("X", "Y")), on=("X",))
    assert rows(compile_node(plan, frames)) == [(5,)]


def test_antijoin_without_columns_keeps_left_iff_right_is_empty(frames):
    keep = ir.AntiJoin(ir.Scan("node", ("X",)), ir.Scan("empty", ("Y",)), on=())
    drop = ir.AntiJoin(ir.Scan("node", ("X",)), ir.Scan("edge", ("A", "B")), on=())
    assert rows(compile_node(keep, frames)) == [(1,), (2,), (5,)]
    assert rows(compile_node(drop, frames)) == []


def test_union_is_a_multiset_and_distinct_makes_a_set(frames):
    union = ir.Union_((ir.Scan("node", ("X",)), ir.Scan("node", ("X",))))
    assert rows(compile_node(union, frames)) == [(1,), (1,), (2,), (2,), (5,), (5,)]
    assert rows(compile_node(ir.Distinct(union), frames)) == [(1,), (2,), (5,)]


@pytest.mark.parametrize(
    "func, expected",
    [
        ("min", [(1, "a"), (2, "a")]),
        ("max", [(1, "b"), (2, "a")]),
        ("count", [(1, 2), (2, 1)]),  # distinct values: label 2 has "a" twice
    ],
)
def test_aggregate_per_group(frames, func, expected):
    plan = ir.Aggregate(ir.Scan("label", ("K", "V")), ("K",), func, "V", "R")
    result = compile_node(plan, frames)
    assert result.columns == ["K", "R"]
    assert rows(result) == expected


def test_sum_and_avg_range_over_the_multiset(spark):
    frames = {("w", "full"): spark.createDataFrame([(1, 5), (1, 5), (2, 3)], "c0 long, c1 long")}
    total = compile_node(ir.Aggregate(ir.Scan("w", ("K", "V")), ("K",), "sum", "V", "S"), frames)
    mean = compile_node(ir.Aggregate(ir.Scan("w", ("K", "V")), (), "avg", "V", "A"), frames)
    assert rows(total) == [(1, 10), (2, 3)]
    assert total.schema["S"].dataType == T.LongType()
    assert rows(mean) == [(13 / 3,)]


@pytest.mark.parametrize("func", ["min", "max", "sum", "avg", "count"])
def test_aggregate_without_groups_over_no_rows_has_no_group(frames, func):
    plan = ir.Aggregate(ir.Scan("empty", ("V",)), (), func, "V", "R")
    assert rows(compile_node(plan, frames)) == []


def test_self_join_of_one_frame_through_several_scans(frames):
    # path of length 3: the same frame scanned three times under different names
    plan = ir.Join(
        ir.Join(ir.Scan("edge", ("A", "B")), ir.Scan("edge", ("B", "C")), on=("B",)),
        ir.Scan("edge", ("C", "D")),
        on=("C",),
    )
    assert rows(compile_node(plan, frames)) == [(1, 2, 3, 4)]
