"""Compile the relational-algebra IR into DataFrame operations.

One small function per IR node, chosen through ``_NODE_COMPILERS``; children are compiled first.
Everything is expressed with column expressions — never SQL text built from the program.

Undefined arithmetic (division or ``mod`` by zero) evaluates to null here, and a null makes the
row disappear: a selection drops it (a comparison with null is not true) and a projection drops
rows whose computed value is null. Inputs never hold nulls (see ``inputs.py``), so null means
exactly "this body literal failed".
"""

from __future__ import annotations

import itertools
from functools import lru_cache, reduce
from typing import Callable

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from .. import functors
from ..generators import spark_generate
from ..overflow import BOUNDS, marker, span_where, sum_where
from ..plan import ir
from ..record_types import fields, is_record
from ..reference.terms import integer_type
from .types import spark_type

Frames = dict  # dict[tuple[str, str], DataFrame]: (relation, "full" | "delta") -> frame


def compile_node(node, frames: Frames) -> DataFrame:
    """The DataFrame computing ``node``, with columns ``node.columns`` in order.

    ``frames`` maps ``(relation, source)`` (source ``"full"`` or ``"delta"``) to a frame whose
    columns are the relation's columns, positionally.
    """
    try:
        compiler = _NODE_COMPILERS[type(node)]
    except KeyError:
        raise TypeError(f"not an IR node: {node!r}") from None
    return compiler(node, frames)


# ---------------------------------------------------------------------------------------------
# Relational nodes


def _scan(node: ir.Scan, frames: Frames) -> DataFrame:
    key = (node.relation, node.source)
    if key not in frames:
        raise KeyError(f"no frame for {node.source} relation {node.relation!r}")
    frame = frames[key]
    if len(frame.columns) != len(node.columns):
        raise ValueError(
            f"scan {node.relation}: frame has {len(frame.columns)} columns, scan names {len(node.columns)}"
        )
    return frame.toDF(*node.columns)


def _unit(node: ir.Unit, frames: Frames) -> DataFrame:
    # One row, no columns: where a body without positive atoms (`p(X) :- X = 3.`) starts.
    from pyspark.sql import SparkSession

    return SparkSession.active().range(1).select()


def _select(node: ir.Select, frames: Frames) -> DataFrame:
    child = compile_node(node.child, frames)
    if not node.conditions:
        return child
    types = _operand_types(child, [e for c in node.conditions for e in (c.left, c.right)])
    return child.filter(_conjunction(node.conditions, _fractional(types), _context()))


def _project(node: ir.Project, frames: Frames) -> DataFrame:
    child = compile_node(node.child, frames)
    types = _operand_types(child, [expr for _, expr in node.outputs])
    projected = child.select(*_outputs(node.outputs, _fractional(types), _context()))
    return defined_rows(projected, node.outputs)


def defined_rows(projected: DataFrame, outputs) -> DataFrame:
    """``projected`` without the rows where an output that may be undefined is (null). Not
    ``dropna``, which drops NaN too."""
    partial = [F.col(name).isNotNull() for name, expr in outputs if _may_be_undefined(expr)]
    return projected.where(reduce(lambda a, b: a & b, partial)) if partial else projected


def _join(node: ir.Join, frames: Frames) -> DataFrame:
    left = compile_node(node.left, frames)
    right = compile_node(node.right, frames)
    joined = left.join(right, list(node.on), "inner") if node.on else left.crossJoin(right)
    # A USING join puts the key columns first; restore the IR's column order.
    return joined.select(*node.columns)


def _antijoin(node: ir.AntiJoin, frames: Frames) -> DataFrame:
    return anti_join(compile_node(node.left, frames), compile_node(node.right, frames), node.on)


def _semijoin(node: ir.SemiJoin, frames: Frames) -> DataFrame:
    right = compile_node(node.right, frames).select(*node.on)
    return match(compile_node(node.left, frames), right, list(node.on), "left_semi")


def _union(node: ir.Union_, frames: Frames) -> DataFrame:
    parts = [compile_node(child, frames).select(*node.columns) for child in node.children]
    return reduce(DataFrame.union, parts)


def _distinct(node: ir.Distinct, frames: Frames) -> DataFrame:
    return compile_node(node.child, frames).distinct()


def _aggregate(node: ir.Aggregate, frames: Frames) -> DataFrame:
    child = compile_node(node.child, frames)
    return aggregate_frame(child, node.group_by, node.func, node.argument, node.output)


def _generate(node: ir.Generate, frames: Frames) -> DataFrame:
    child = compile_node(node.child, frames)
    return spark_generate(child, list(node.args), node.output, node.type, spark_type(node.type))


def _number(node: ir.Number, frames: Frames) -> DataFrame:
    """Rows numbered from 0 in the order of all their columns (NaN the largest double, strings
    by code point): a global sort (range-partitioned) and ``zipWithIndex``, which counts the
    rows of the sorted partitions in a job of its own; nothing is collected to the driver."""
    child = compile_node(node.child, frames)
    if not node.child.columns:  # at most one row
        return child.withColumn(node.output, F.lit(0).cast("long"))
    ordered = child.orderBy(*[F.col(c).asc() for c in node.child.columns])
    schema = T.StructType([*child.schema.fields, T.StructField(node.output, T.LongType(), False)])
    rows = ordered.rdd.zipWithIndex().map(lambda pair: (*pair[0], pair[1]))
    return child.sparkSession.createDataFrame(rows, schema)


_NODE_COMPILERS: dict[type, Callable[..., DataFrame]] = {
    ir.Scan: _scan,
    ir.Unit: _unit,
    ir.Select: _select,
    ir.Project: _project,
    ir.Join: _join,
    ir.AntiJoin: _antijoin,
    ir.SemiJoin: _semijoin,
    ir.Union_: _union,
    ir.Distinct: _distinct,
    ir.Aggregate: _aggregate,
    ir.Generate: _generate,
    ir.Number: _number,
}


def aggregate_frame(
    frame: DataFrame, group_by, func: str, argument: str, output: str, relation: str = ""
) -> DataFrame:
    """Group ``frame`` by ``group_by`` and compute ``func(argument)`` as ``output``.

    ``count`` counts distinct values; the others range over every row (a multiset). Only groups
    with at least one row exist, also when ``group_by`` is empty. An integer sum that does not
    fit long raises an overflow naming ``relation``.
    """
    if func == "sum" and not isinstance(column_types(frame)[argument], T.FractionalType):
        value = _checked_sum(F.col(argument), relation).alias(output)
    else:
        value = _AGGREGATES[func](F.col(argument)).alias(output)
    if group_by:
        return frame.groupBy(*group_by).agg(value)
    return _global_aggregate(frame, value, output)


_AGGREGATES = {
    "min": F.min,
    "max": F.max,
    "sum": F.sum,
    "avg": F.avg,
    "count": F.countDistinct,
}


def _checked_sum(argument: Column, relation: str) -> Column:
    # try_sum is null on overflow (ANSI mode or not); inputs hold no nulls, so a null sum of
    # some rows is an overflow (a global aggregate over no rows has none: see below).
    total = F.try_sum(argument)
    return F.when(total.isNotNull() | (F.count(F.lit(1)) == F.lit(0)), total).otherwise(
        F.raise_error(F.lit(marker(sum_where(relation), "the sum does not fit long")))
    )


def _global_aggregate(frame: DataFrame, value: Column, output: str) -> DataFrame:
    # Spark returns one row for an aggregate without grouping even over no input (null, or 0
    # for count); Datalog has no group then, so count the rows alongside and drop that row.
    rows = "__rows"
    return frame.agg(value, F.count(F.lit(1)).alias(rows)).filter(F.col(rows) > 0).select(output)


def anti_join(left: DataFrame, right: DataFrame, on: tuple) -> DataFrame:
    """Rows of ``left`` without a row of ``right`` agreeing on the columns ``on``; with no
    columns, all of ``left`` if ``right`` is empty and nothing otherwise."""
    return match(left, right.select(*on), list(on), "left_anti")


def match(left: DataFrame, right: DataFrame, columns: list, how: str) -> DataFrame:
    """A semi- or anti-join (``how``: ``left_semi`` / ``left_anti``) of ``left`` with ``right``
    on ``columns``; on none (a relation without columns, an atom sharing no variable), by
    whether ``right`` has a row at all."""
    if columns:
        return left.join(right, list(columns), how)
    # an unconditioned join against at most one right row does it inside the plan (a broadcast
    # nested-loop join), without collecting anything to the driver
    return left.join(right.select().limit(1), on=F.lit(True), how=how)


# ---------------------------------------------------------------------------------------------
# Scalar expressions
#
# Expressions are compiled against the types of the columns they read (``types``: column name ->
# Spark DataType, from the child frame's schema): `/` is integer division when both operands are
# integral and true division otherwise, which must be decided before Spark sees the expression.


def column_types(frame: DataFrame) -> dict:
    """Column name -> Spark DataType of ``frame``."""
    return {f.name: f.dataType for f in frame.schema.fields}


def _operand_types(frame: DataFrame, exprs) -> dict:
    # Only arithmetic needs operand types; skip the schema round trip otherwise.
    return column_types(frame) if any(isinstance(e, ir.COMPUTED) for e in exprs) else {}


def compile_expr(expr, types: dict) -> Column:
    """The Column computing a scalar IR expression (ColumnRef, Literal or Arithmetic)."""
    return _cached_expr(expr, _fractional(types), _context())[0]


def compile_condition(compare: ir.Compare, types: dict) -> Column:
    """The boolean Column of a comparison; null (undefined arithmetic) counts as false."""
    return _cached_condition(compare, _fractional(types), _context())


# A fixpoint compiles the same rules every round, and building a Column costs JVM round trips
# (a few per function call): the Columns of an expression are built once per SparkContext.
# They are unresolved expressions, valid in any frame of that context.

_CONTEXTS = itertools.count()


def _context():
    """A key unique to the active SparkContext (an id() could be reused by a later one)."""
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    if context is None:  # Spark Connect: Columns are plain Python objects
        return None
    key = getattr(context, "_spark_datalog_key", None)
    if key is None:
        key = context._spark_datalog_key = next(_CONTEXTS)
    return key


def _fractional(types: dict) -> frozenset:
    return frozenset(name for name, t in types.items() if isinstance(t, T.FractionalType))


@lru_cache(maxsize=4096)
def _cached_expr(expr, fractional: frozenset, context) -> tuple:
    return _expr(expr, fractional)


@lru_cache(maxsize=4096)
def _cached_condition(compare: ir.Compare, fractional: frozenset, context) -> Column:
    left, _ = _cached_expr(compare.left, fractional, context)
    right, _ = _cached_expr(compare.right, fractional, context)
    return _COMPARISONS[compare.op](left, right)


@lru_cache(maxsize=1024)
def _conjunction(conditions: tuple, fractional: frozenset, context) -> Column:
    return reduce(lambda a, b: a & b, (_cached_condition(c, fractional, context) for c in conditions))


def _literal(value, type_name: str) -> Column:
    """A constant column of ``type_name``; a record (``nil`` too) as the struct of its fields'
    (cached with its expression by ``_cached_expr``)."""
    if value is not None and is_record(type_name):
        pairs = fields(type_name) or ()
        return F.struct(*(_literal(v, t).alias(n) for v, (n, t) in zip(value, pairs, strict=True)))
    return F.lit(value).cast(spark_type(type_name))


@lru_cache(maxsize=1024)
def _outputs(outputs: tuple, fractional: frozenset, context) -> list:
    return [_cached_expr(expr, fractional, context)[0].alias(name) for name, expr in outputs]


def _expr(expr, fractional: frozenset) -> tuple:
    """(Column, is_fractional) for an expression; ``fractional``: the double columns."""
    if isinstance(expr, ir.ColumnRef):
        return F.col(expr.name), expr.name in fractional
    if isinstance(expr, ir.Literal):
        return _literal(expr.value, expr.type), expr.type == "double"
    if isinstance(expr, ir.Arithmetic):
        left, left_fractional = _cached_expr(expr.left, fractional, _context())
        right, right_fractional = _cached_expr(expr.right, fractional, _context())
        if left_fractional or right_fractional:
            return _FRACTIONAL[expr.op](left, right), True
        return _integral(expr, left, right, fractional), False
    if isinstance(expr, ir.Call):
        return _call(expr, fractional), expr.type == "double"
    raise TypeError(f"not an IR expression: {expr!r}")


# Integer arithmetic is computed in long with Spark's try_* functions (null on overflow, in
# ANSI mode or not) and, for ``int``, narrowed with try_cast (null out of range). A null from
# defined operands is an overflow and raises an error whose message carries the expression's
# position (``overflow.marker``), which the driver maps back to the rule.
#
# Column expressions are trees, not graphs: an operand used twice is copied, and a nested
# expression that used each operand k times would grow as k^depth (a 30-term sum exhausted the
# driver's memory). So every operand appears once: ``coalesce(value, raise_error)`` needs no
# separate null test, because operands are never null (inputs hold no nulls) unless they hold a
# division or mod by zero; only then is the error guarded by "every divisor inside is non-zero"
# (``_defined``), which copies divisors only.
_LONG_MIN = -(2**63)


def _integral(
    expr: ir.Arithmetic, left: Column, right: Column, fractional: frozenset = frozenset()
) -> Column:
    bounds = integer_type(expr.type)
    result_type = T.IntegerType() if bounds == "int" else T.LongType()
    # try_* on two ints gives an int (null past int's range), on two longs a long; an operand
    # computed here in the same type needs no cast (each node counts against the stack depth
    # of Spark's planner: ``spark.limits``)
    a = left if _computed_as(expr.left, bounds) else left.cast(result_type)
    b = right if _computed_as(expr.right, bounds) else right.cast(result_type)
    value = _INTEGRAL[expr.op](a, b)
    if bounds == "int" and expr.op in ("/", "mod"):  # Spark's div and % of ints give a long
        value = value.try_cast(result_type)
    # typed here, so that the analyzer resolves the whole tree in one pass rather than one
    # type coercion per level (Spark's analyzer stops after 100 passes)
    overflow = F.raise_error(
        F.lit(marker(span_where(expr.span), f"the result of `{expr.op}` does not fit {bounds}"))
    ).cast(result_type)
    defined = _defined(expr, right, fractional)
    return F.coalesce(value, overflow if defined is None else F.when(defined, overflow))


def _call(expr: ir.Call, fractional: frozenset) -> Column:
    """A functor (:mod:`spark_datalog.functors`): null where an argument is, or where the value
    is undefined."""
    spec = functors.spec(expr)
    args = [_cached_expr(arg, fractional, _context())[0] for arg in expr.args]
    if spec.result == "operands" and expr.type == "double":
        args = [arg.cast(T.DoubleType()) for arg in args]
    value = spec.spark(expr.type, *args)
    if spec.bounded and expr.type in ("int", "long"):
        low, high = BOUNDS[integer_type(expr.type)]
        value = F.when(value.between(F.lit(low), F.lit(high)), value)
    value = value.cast(spark_type(expr.type))
    if expr.type == "double":
        value = _positive_zero(value)
    partial = [arg for arg, operand in zip(args, expr.args, strict=True) if _may_be_undefined(operand)]
    if partial:
        value = F.when(reduce(lambda a, b: a & b, (arg.isNotNull() for arg in partial)), value)
    return value


def _computed_as(expr, bounds: str) -> bool:
    """Whether ``expr`` is integer arithmetic that ``_integral`` computes in ``bounds``."""
    return isinstance(expr, ir.Arithmetic) and expr.type == bounds


def _defined(expr: ir.Arithmetic, right: Column, fractional: frozenset = frozenset()):
    """The condition under which ``expr`` is defined (every divisor in it is non-zero), given
    its compiled right operand; None when it always is."""
    parts = [_defined_operand(expr.left, fractional), _defined_operand(expr.right, fractional)]
    if expr.op in ("/", "mod"):
        parts.append(right != F.lit(0))
    present = [part for part in parts if part is not None]
    return reduce(lambda a, b: a & b, present) if present else None


def _defined_operand(expr, fractional: frozenset):
    if isinstance(expr, ir.Call) and _may_be_undefined(expr):  # the columns of its arguments too
        return _cached_expr(expr, fractional, _context())[0].isNotNull()
    if not (isinstance(expr, ir.Arithmetic) and _may_be_undefined(expr)):
        return None
    right, _ = _cached_expr(expr.right, fractional, _context())
    return _defined(expr, right, fractional)


def _integral_divide(a: Column, b: Column) -> Column:
    # Spark's `div` (IntegralDivide) truncates toward zero, as Java does; `/` would produce a
    # double. A zero divisor gives null (undefined). x div -1 is computed as try_multiply(x, -1)
    # so that -2^63 div -1 is null (an overflow), with the dividend written once.
    divisor = F.when(b == F.lit(-1), F.lit(1).cast(T.LongType())).when(b != F.lit(0), b)
    sign = F.when(b == F.lit(-1), F.lit(-1).cast(T.LongType())).otherwise(F.lit(1).cast(T.LongType()))
    return F.try_multiply(F.call_function("div", a, divisor), sign)


def _integral_mod(a: Column, b: Column) -> Column:
    # Spark's `%` keeps the sign of the dividend (Java semantics); x % -1 is 0 (also for -2^63,
    # which `%` itself would report as an overflow in ANSI mode), x % 0 undefined (null).
    divisor = F.when(b == F.lit(-1), F.lit(1).cast(T.LongType())).when(b != F.lit(0), b)
    return a % divisor


_INTEGRAL = {
    "+": F.try_add,
    "-": F.try_subtract,
    "*": F.try_multiply,
    "/": _integral_divide,
    "mod": _integral_mod,
}


def _undefined_if_zero(divisor: Column, value: Column) -> Column:
    # ANSI mode (Spark 4's default) raises on division by zero, while the language says the
    # literal simply fails: compute the value only for a non-zero divisor, null otherwise.
    return F.when(divisor != F.lit(0), value)


def _positive_zero(value: Column) -> Column:
    # -0.0 + 0.0 is 0.0 (IEEE 754): a double result is never -0.0 (reference.terms.normal)
    return value + F.lit(0.0)


_FRACTIONAL = {
    "+": lambda a, b: _positive_zero(a + b),
    "-": lambda a, b: _positive_zero(a - b),
    "*": lambda a, b: _positive_zero(a * b),
    "/": lambda a, b: _undefined_if_zero(b, _positive_zero(a / b)),
    # Spark's `%` keeps the sign of the dividend (Java semantics), for doubles too.
    "mod": lambda a, b: _undefined_if_zero(b, _positive_zero(a % b)),
}

_COMPARISONS = {
    "=": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def _may_be_undefined(expr) -> bool:
    """True when ``expr`` contains a division or mod, which is undefined for a zero divisor."""
    if isinstance(expr, ir.Arithmetic):
        return expr.op in ("/", "mod") or _may_be_undefined(expr.left) or _may_be_undefined(expr.right)
    if isinstance(expr, ir.Call):
        return functors.spec(expr).may_be_undefined(expr.type) or any(_may_be_undefined(a) for a in expr.args)
    return False
