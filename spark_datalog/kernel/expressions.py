"""Scalar IR expressions as Polars columns, computed as ``reference.terms`` computes them.

An expression is staged: every arithmetic node becomes a temporary column (``with_columns``)
that the nodes above it read by name, so a deep expression stays linear in size (an operand
used by the value and by its overflow test is one column, not a copied tree).

- Integers are computed in Int128, where ``+ - * /`` and ``mod`` of two longs cannot wrap, and
  the result must fit the expression's type (``int`` or ``long``): otherwise an
  :class:`~spark_datalog.overflow.Overflow` with the reference's message. ``/`` truncates toward
  zero; ``mod`` keeps the dividend's sign (``a - b * (a truncdiv b)``).
- Doubles: IEEE results made canonical (no -0.0); ``mod`` is C's ``fmod`` (numpy),
  NaN for an infinite dividend: Polars' own ``%`` is floored and not exact. ``/`` is numpy's
  too: Polars divides a column by a scalar as a product with the reciprocal, which rounds.
- A zero divisor makes the value undefined: null, and the literal fails (the row is dropped).
- The order of evaluation is the reference's: a right operand is evaluated (and may overflow)
  only where its left one is defined; the next condition of a selection only where the earlier
  ones hold, the next output of a projection only where the earlier ones are defined.
- Comparisons: Polars orders doubles as the language does (NaN equals NaN and is the largest);
  an integer against a double compares exactly (no rounding of the integer to a double).
"""

from __future__ import annotations

import itertools
from operator import eq, ge, gt, le, lt, ne
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import polars as pl

from .. import functors
from ..overflow import BOUNDS, operation_overflow
from ..plan import ir
from ..syntax import ast
from ..record_types import as_struct
from ..reference.terms import coerce, integer_type
from .checks import Check
from .types import polars_type


@dataclass(frozen=True)
class Operand:
    """A compiled expression: its Polars expression, type, and whether it may be undefined."""

    expr: pl.Expr
    dtype: pl.DataType
    partial: bool = False


def both(a: Optional[pl.Expr], b: Optional[pl.Expr]) -> Optional[pl.Expr]:
    """``a & b`` where None stands for "always true"."""
    return b if a is None else (a if b is None else a & b)


def defined(operand: Operand) -> Optional[pl.Expr]:
    """Where ``operand`` is defined (None: everywhere)."""
    return operand.expr.is_not_null() if operand.partial else None


@dataclass
class Staging:
    """The temporary columns and overflow checks of one selection or projection over a frame
    with column types ``dtypes``."""

    dtypes: dict
    stages: list = field(default_factory=list)  # one list of named expressions per stage
    checks: list = field(default_factory=list)
    _names: itertools.count = field(default_factory=itertools.count)

    def temporary(self) -> str:
        return f"__k{next(self._names)}"

    def apply(self, frame: pl.LazyFrame) -> pl.LazyFrame:
        """``frame`` with the temporary columns, stage by stage."""
        for columns in self.stages:
            frame = frame.with_columns(columns)
        return frame

    def operand(self, expr, reached: Optional[pl.Expr]) -> Operand:
        """Compile ``expr``; ``reached``: the rows where the reference evaluates it."""
        if isinstance(expr, ir.ColumnRef):
            return Operand(pl.col(expr.name), self.dtypes[expr.name])
        if isinstance(expr, ir.Literal):
            dtype = polars_type(expr.type)
            return Operand(pl.lit(as_struct(coerce(expr.value, expr.type), expr.type), dtype=dtype), dtype)
        if isinstance(expr, ir.Arithmetic):
            return self._arithmetic(expr, reached)
        if isinstance(expr, ir.Call):
            return self._call(expr, reached)
        raise TypeError(f"not an IR expression: {expr!r}")

    def condition(self, compare: ir.Compare, reached: Optional[pl.Expr]) -> pl.Expr:
        """The Boolean expression of a comparison (false where an operand is undefined)."""
        left = self.operand(compare.left, reached)
        right = self.operand(compare.right, both(reached, defined(left)))
        return compared(compare.op, left, right).fill_null(False)

    def _arithmetic(self, expr: ir.Arithmetic, reached: Optional[pl.Expr]) -> Operand:
        left = self.operand(expr.left, reached)
        right_reached = both(reached, defined(left))
        right = self.operand(expr.right, right_reached)
        name = self.temporary()
        partial = left.partial or right.partial or expr.op in ("/", "mod")
        if left.dtype.is_float() or right.dtype.is_float():
            value = _fractional(expr.op, left.expr.cast(pl.Float64), right.expr.cast(pl.Float64))
            self.stages.append([value.alias(name)])
            return Operand(pl.col(name), pl.Float64(), partial)
        bounds = integer_type(expr.type)
        value, overflows = _integral(expr.op, left.expr, right.expr, bounds)
        flag = self.temporary()
        flagged = both(both(right_reached, defined(right)), overflows)
        assert flagged is not None
        self.stages.append([value.alias(name), flagged.alias(flag)])
        self.checks.append(Check(pl.col(flag), (left.expr, right.expr), _overflow(expr, bounds)))
        return Operand(pl.col(name), polars_type(bounds), partial)

    def _call(self, expr: ir.Call, reached: Optional[pl.Expr]) -> Operand:
        """A functor (:mod:`spark_datalog.functors`): an argument is evaluated where the ones
        before it are defined; the value is null where one is not, or where it is undefined."""
        spec = functors.spec(expr)
        args = []
        for arg in expr.args:
            operand = self.operand(arg, reached)
            reached = both(reached, defined(operand))
            args.append(operand)
        widen = spec.result == "operands" and expr.type == "double"
        exprs = [a.expr.cast(pl.Float64) if widen else a.expr for a in args]
        if spec.binding is not None and reached is not None:  # a user's function: where reached only
            exprs = [pl.when(reached).then(e) for e in exprs]
        value = spec.polars(expr.type, *exprs)
        if spec.bounded and expr.type in ("int", "long"):
            low, high = BOUNDS[integer_type(expr.type)]
            value = pl.when(value.is_between(low, high)).then(value)
        dtype = polars_type(expr.type)
        value = canonical(value.cast(dtype)) if dtype.is_float() else value.cast(dtype)
        arguments_defined = None
        for operand in args:
            arguments_defined = both(arguments_defined, defined(operand))
        if arguments_defined is not None:
            value = pl.when(arguments_defined).then(value)
        name = self.temporary()
        self.stages.append([value.alias(name)])
        partial = spec.may_be_undefined(expr.type) or arguments_defined is not None
        return Operand(pl.col(name), dtype, partial)


def _overflow(expr: ir.Arithmetic, bounds: str):
    return lambda left, right: operation_overflow(expr.span, left, expr.op, right, bounds)


def _integral(op: str, left: pl.Expr, right: pl.Expr, bounds: str) -> tuple:
    """(value, overflows) of an integer operation: the value is null where it is undefined or
    does not fit ``bounds``; ``overflows`` is true where it is defined and does not fit."""
    a, b = left.cast(pl.Int128), right.cast(pl.Int128)
    divides = op in ("/", "mod")
    divisor = pl.when(b == 0).then(pl.lit(1, dtype=pl.Int128)).otherwise(b) if divides else b
    if op == "+":
        raw = a + b
    elif op == "-":
        raw = a - b
    elif op == "*":
        raw = a * b
    elif op == "/":
        raw = a.truncdiv(divisor)
    else:
        raw = a - b * a.truncdiv(divisor)  # the sign of the dividend; |raw| < |b|: no overflow
    low, high = BOUNDS[bounds]
    fits = raw.is_between(pl.lit(low, dtype=pl.Int128), pl.lit(high, dtype=pl.Int128))
    allowed = fits & (b != 0) if divides else fits
    value = pl.when(allowed).then(raw).otherwise(None).cast(polars_type(bounds))
    overflows = ~fits & (b != 0) if divides else ~fits
    return value, overflows


def _fractional(op: str, a: pl.Expr, b: pl.Expr) -> pl.Expr:
    if op == "+":
        return canonical(a + b)
    if op == "-":
        return canonical(a - b)
    if op == "*":
        return canonical(a * b)
    divisor = pl.when(b != 0).then(b).otherwise(1.0)
    if op == "/":  # Polars divides by a scalar as a product with its reciprocal: inexact
        value = _numpy(np.divide, a, divisor)
    else:
        finite = pl.when(a.is_finite()).then(a).otherwise(0.0)
        value = pl.when(a.is_finite()).then(_numpy(np.fmod, finite, divisor)).otherwise(float("nan"))
    return pl.when(b != 0).then(canonical(value)).otherwise(None)


def canonical(value: pl.Expr) -> pl.Expr:
    """A double with ``-0.0`` made ``0.0`` (``x + 0.0`` is not: Polars may skip adding zero)."""
    return pl.when(value == 0).then(pl.lit(0.0, dtype=pl.Float64)).otherwise(value)


def _numpy(function, a: pl.Expr, b: pl.Expr) -> pl.Expr:
    """``function(a, b)`` by numpy over whole columns (IEEE results, correctly rounded)."""
    return pl.struct(a.alias("a"), b.alias("b")).map_batches(
        lambda batch: _apply(function, batch), return_dtype=pl.Float64, is_elementwise=True
    )


def _apply(function, batch: pl.Series) -> pl.Series:
    columns = batch.struct.unnest()
    a = columns["a"].to_numpy(allow_copy=True)
    b = columns["b"].to_numpy(allow_copy=True)
    with np.errstate(all="ignore"):
        return pl.Series(batch.name, function(a, b), dtype=pl.Float64)


_ORDERED = dict(zip(ast.COMPARISON_OPERATORS, (eq, ne, lt, le, gt, ge), strict=True))


def compared(op: str, left: Operand, right: Operand) -> pl.Expr:
    """``left op right``: Polars' comparison, except an integer against a double, which is
    compared exactly (:func:`_sign`)."""
    mixed = left.dtype.is_float() != right.dtype.is_float()
    if mixed and left.dtype.is_numeric() and right.dtype.is_numeric():
        order = -_sign(right.expr, left.expr) if left.dtype.is_float() else _sign(left.expr, right.expr)
        return _ORDERED[op](order, pl.lit(0, dtype=pl.Int8))
    return _ORDERED[op](left.expr, right.expr)


_TWO_63 = 2.0**63


def _sign(integer: pl.Expr, double: pl.Expr) -> pl.Expr:
    """-1, 0 or 1 as the integer is below, equal to or above the double, exactly (NaN is the
    largest value): the integer is compared with the double's floor, which is an exact long
    when it lies in long's range."""
    floor = double.floor()
    inside = (floor >= -_TWO_63) & (floor < _TWO_63)
    whole = pl.when(inside).then(floor).otherwise(0.0).cast(pl.Int64)
    value = integer.cast(pl.Int64)
    return (
        pl.when(double.is_nan() | (floor >= _TWO_63))
        .then(-1)
        .when(floor < -_TWO_63)
        .then(1)
        .when(value < whole)
        .then(-1)
        .when(value > whole)
        .then(1)
        .when(double > floor)
        .then(-1)
        .otherwise(0)
        .cast(pl.Int8)
    )
