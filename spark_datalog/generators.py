"""Generators: ``range``, ``urange`` and ``frange``, one definition for every engine.

A generator binds its variable once per value (``r(X) :- X = range(0, 3).`` gives 0, 1, 2).
Analysis lifts each call into an assignment (:mod:`spark_datalog.syntax.generators`); the plan
computes it with ``ir.Generate``; this module says which values it has, for the reference
(:func:`values`), the kernel (:func:`polars_generate`) and Spark (:func:`spark_generate`).

The values, as Soufflé's ``runRange`` (``to`` is exclusive):

- ``range(a, b, s)``: ``a, a + s, a + 2s, ...`` while below ``b`` (``s > 0``) or above ``b``
  (``s < 0``); ``s = 0`` gives ``a`` once when ``a != b``, nothing when ``a = b``.
- ``range(a, b)``: step 1 when ``a <= b``, else -1 (``range(3, 0)`` is 3, 2, 1).
- ``range`` takes the widest argument type (doubles when one argument is a double);
  ``frange`` computes on doubles, ``urange`` on integers (``unsigned`` is ``long`` here, so
  ``urange`` is ``range`` over integers).
- Doubles are ``a + i * s`` for ``i = 0, 1, ...`` (Soufflé adds ``s`` repeatedly, which can
  differ in the last bits); a NaN or infinite argument gives no values.

Limits (where Soufflé would loop or wrap): a call with more than :data:`MAX_VALUES` values, or
whose integer bounds are ``2**62`` or more apart, is undefined and gives no values, as an
undefined expression makes its literal fail. An undefined argument (``range(0, 1 / 0)``) gives
no values too. The values of one row are built where that row is (a Spark task, the kernel),
never on the driver.
"""

from __future__ import annotations

import math
from typing import Any, Optional

MAX_VALUES = 2**31 - 16  # Spark's largest array
FAR = 2.0**62  # integer bounds this far apart are undefined (their difference may not fit long)
INDEX = "__generator_index"  # a temporary column; no rule variable has this name

__all__ = ["FAR", "MAX_VALUES", "polars_generate", "spark_generate", "values"]


def values(type_: Optional[str], args: list) -> list:
    """The values of a generator of type ``type_`` (``double`` or an integer type) on the
    argument values ``args`` (start, stop and optionally step).

    >>> values("long", [0, 10, 3]), values("long", [3, 0]), values("double", [0, 1, 0.25])
    ([0, 3, 6, 9], [3, 2, 1], [0.0, 0.25, 0.5, 0.75])
    """
    start, stop = args[0], args[1]
    step = args[2] if len(args) == 3 else (1 if start <= stop else -1)
    if type_ == "double":
        return _double_values(float(start), float(stop), float(step))
    n = _integer_count(start, stop, step)
    return [start + i * step for i in range(n)]


def _integer_count(start: int, stop: int, step: int) -> int:
    if abs(float(stop) - float(start)) >= FAR:
        return 0
    d = stop - start
    if step == 0:
        n = int(d != 0)
    elif (d > 0 and step > 0) or (d < 0 and step < 0):
        q = d // step  # operands of one sign: floor = truncation, as Polars and Spark compute it
        n = q + int(d - q * step != 0)
    else:
        n = 0
    return n if n <= MAX_VALUES else 0


def _double_values(start: float, stop: float, step: float) -> list:
    if not all(math.isfinite(v) for v in (start, stop, step)):
        return []
    if step == 0:
        return [start] if start != stop else []
    ratio = (stop - start) / step
    if not 0 < ratio <= MAX_VALUES:
        return []
    candidates = (start + float(i) * step for i in range(math.ceil(ratio) + 1))
    return [v for v in candidates if (v < stop if step > 0 else v > stop)]


# ---------------------------------------------------------------------------------------------
# Polars and Spark: the start, stop and step, the difference and the count are temporary
# columns, each computed once from the ones before (an expression tree would repeat them).

_START, _STOP, _STEP, _DIFF = (f"__generator_{name}" for name in ("start", "stop", "step", "diff"))


def polars_generate(frame: Any, args: list, output: str, type_: str, dtype: Any) -> Any:
    """``frame`` with one row per value of the generator over the columns ``args`` (start,
    stop, step), the value in column ``output`` of Polars type ``dtype``, appended last."""
    import polars as pl

    columns = frame.collect_schema().names()
    floating = type_ == "double"
    cast = pl.Float64 if floating else pl.Int64
    start, stop, step, d = pl.col(_START), pl.col(_STOP), pl.col(_STEP), pl.col(_DIFF)
    one = 1.0 if floating else 1
    frame = frame.with_columns(
        pl.col(args[0]).cast(cast).alias(_START), pl.col(args[1]).cast(cast).alias(_STOP)
    )
    given = pl.col(args[2]).cast(cast) if len(args) == 3 else pl.when(start <= stop).then(one).otherwise(-one)
    frame = frame.with_columns(given.alias(_STEP))
    if floating:
        frame = frame.with_columns(_pl_double_count(pl, start, stop, step).alias(INDEX))
    else:
        far = (stop.cast(pl.Float64) - start.cast(pl.Float64)).abs() >= FAR
        frame = frame.with_columns(pl.when(far).then(None).otherwise(stop - start).alias(_DIFF))
        frame = frame.with_columns(_pl_integer_count(pl, d, step).alias(INDEX))
    exploded = (
        frame.filter(pl.col(INDEX) > 0)
        .with_columns(pl.int_ranges(0, pl.col(INDEX)).alias(INDEX))
        .explode(INDEX)
        .with_columns((start + pl.col(INDEX).cast(cast) * step).alias(output))
    )
    if floating:
        value = pl.col(output)
        below, above = (step > 0) & (value < stop), (step < 0) & (value > stop)
        exploded = exploded.filter((step == 0) | below | above)
    return exploded.select(*columns, pl.col(output).cast(dtype))


def _pl_integer_count(pl, d, step):
    """The count from the difference ``d`` (null when the bounds are too far apart)."""
    divisor = pl.when(step == 0).then(1).otherwise(step)
    q = d // divisor
    same_sign = ((d > 0) & (step > 0)) | ((d < 0) & (step < 0))
    n = (
        pl.when(d.is_null())
        .then(0)
        .when(step == 0)
        .then((d != 0).cast(pl.Int64))
        .when(same_sign)
        .then(q + (d - q * divisor != 0).cast(pl.Int64))
        .otherwise(0)
    )
    return pl.when(n > MAX_VALUES).then(0).otherwise(n)


def _pl_double_count(pl, start, stop, step):
    finite = start.is_finite() & stop.is_finite() & step.is_finite()
    ratio = (stop - start) / pl.when(step == 0).then(1.0).otherwise(step)
    return (
        pl.when(~finite)
        .then(0)
        .when(step == 0)
        .then((start != stop).cast(pl.Int64))
        .when((ratio > 0) & (ratio <= MAX_VALUES))
        .then(ratio.ceil().cast(pl.Int64) + 1)
        .otherwise(0)
    )


def spark_generate(frame: Any, args: list, output: str, type_: str, spark_type: Any) -> Any:
    """``frame`` with one row per value of the generator over the columns ``args``, the value
    in column ``output`` (Spark type ``spark_type``), appended last. The values of a row are
    an array exploded in the row's task."""
    from pyspark.sql import functions as F

    columns = frame.columns
    floating = type_ == "double"
    cast = "double" if floating else "long"
    start, stop, step, d = F.col(_START), F.col(_STOP), F.col(_STEP), F.col(_DIFF)
    one = F.lit(1.0 if floating else 1).cast(cast)
    frame = frame.withColumns({_START: F.col(args[0]).cast(cast), _STOP: F.col(args[1]).cast(cast)})
    given = F.col(args[2]).cast(cast) if len(args) == 3 else F.when(start <= stop, one).otherwise(-one)
    frame = frame.withColumn(_STEP, given)
    if floating:
        frame = frame.withColumn(INDEX, _sp_double_count(F, start, stop, step))
    else:
        far = F.abs(stop.cast("double") - start.cast("double")) >= F.lit(FAR)
        frame = frame.withColumn(_DIFF, F.when(~far, stop - start))
        frame = frame.withColumn(INDEX, _sp_integer_count(F, d, step))
    exploded = (
        frame.where(F.col(INDEX) > 0)
        .withColumn(INDEX, F.explode(F.sequence(F.lit(0).cast("long"), F.col(INDEX) - 1)))
        .withColumn(output, start + F.col(INDEX).cast(cast) * step)
    )
    if floating:
        value = F.col(output)
        below, above = (step > 0) & (value < stop), (step < 0) & (value > stop)
        exploded = exploded.where((step == 0) | below | above)
    return exploded.select(*columns, F.col(output).cast(spark_type))


def _sp_integer_count(F, d, step):
    zero = F.lit(0).cast("long")
    divisor = F.when(step == 0, F.lit(1).cast("long")).otherwise(step)
    q = F.call_function("div", d, divisor)  # truncates: equal to floor for operands of one sign
    same_sign = ((d > 0) & (step > 0)) | ((d < 0) & (step < 0))
    n = (
        F.when(d.isNull(), zero)
        .when(step == 0, (d != 0).cast("long"))
        .when(same_sign, q + (d - q * divisor != 0).cast("long"))
        .otherwise(zero)
    )
    return F.when(n > MAX_VALUES, zero).otherwise(n)


def _sp_double_count(F, start, stop, step):
    infinity = F.lit(float("inf"))
    finite = [~F.isnan(c) & (F.abs(c) != infinity) for c in (start, stop, step)]
    ratio = (stop - start) / F.when(step == 0, F.lit(1.0)).otherwise(step)
    return (
        F.when(~(finite[0] & finite[1] & finite[2]), F.lit(0).cast("long"))
        .when(step == 0, (start != stop).cast("long"))
        .when((ratio > 0) & (ratio <= MAX_VALUES), F.ceil(ratio).cast("long") + 1)
        .otherwise(F.lit(0).cast("long"))
    )
