"""Value semantics of the language: arithmetic, comparison and column types.

This module is the specification every engine must match (the Spark backend included):

- ``+ - *`` on two integers give an integer; with a double operand, a double.
- ``/`` on two integers is integer division truncating toward zero (``-7 / 2 == -3``);
  with a double operand it is float division.
- ``mod`` takes the sign of the dividend (``-7 mod 2 == -1``, ``7 mod -2 == 1``), as Java and
  Spark do; on doubles it is ``math.fmod``.
- Division or ``mod`` by zero (integer or double) is undefined: the body literal fails and the
  substitution is dropped, so no fact is derived from it. :func:`arithmetic` raises
  :class:`Undefined` for it. Functors (:mod:`spark_datalog.functors`) may be undefined too.
- Numbers of different types compare by value; strings compare lexicographically by code point
  (equal to Spark's UTF-8 byte order); bools only with ``=`` and ``!=``.

- Doubles follow Spark SQL: NaN equals NaN and is greater than every other double, +inf
  included (so ``max<>`` of {NaN, 2.0} is NaN and ``min<>`` is 2.0); all NaNs are one value
  (they deduplicate, group and join together) and ``-0.0`` is ``0.0`` (:func:`normal` makes
  every double value canonical: one NaN object, no negative zero). ``inf mod x`` is NaN.
- An integer result must fit the type of its expression (``long``: 64 bits; ``int``: 32 bits,
  where analysis typed the expression ``int``: both operands int), ``-2^63 / -1`` included;
  otherwise :func:`evaluate_term` raises :class:`~spark_datalog.overflow.Overflow`, which the
  engines report as an ``ArithmeticOverflowError`` naming the rule. Values of int and long
  columns must fit them (:func:`coerce` refuses others).
"""

from __future__ import annotations

import math
import operator
from typing import Union, overload

from ..functors import Undefined as Undefined
from ..functors import evaluate as functor_value
from ..functors import spec as functors_spec
from ..overflow import fits, operation_overflow
from ..record_types import Record, adt_branches, fields, is_nil_record, is_record, nil_record
from ..record_types import order_key as record_order
from ..recursive_records import is_recursive
from ..syntax import ast

# A value of a column: int and long columns hold ints, double columns floats, string columns
# strs, bool columns bools.
Value = Union[int, float, str, bool]  # a record column's: a record_types.Record


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_numbers(op: str, left, right) -> None:
    if not (is_number(left) and is_number(right)):
        raise TypeError(f"arithmetic {op!r} needs numbers, got {left!r} and {right!r}")


def int_div(left: int, right: int) -> int:
    """Integer division truncating toward zero."""
    quotient = abs(left) // abs(right)
    return quotient if (left >= 0) == (right >= 0) else -quotient


def int_mod(left: int, right: int) -> int:
    """Remainder with the sign of the dividend: ``left == right * int_div(left, right) + mod``."""
    return left - right * int_div(left, right)


def arithmetic(op: str, left, right) -> Union[int, float]:
    """``left op right`` for ``op`` in ``+ - * / mod``; raises :class:`Undefined` on a zero divisor."""
    _check_numbers(op, left, right)
    both_int = isinstance(left, int) and isinstance(right, int)
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    if op in ("/", "mod"):
        if right == 0:
            raise Undefined(f"{op} by zero")
        if both_int:
            return int_div(left, right) if op == "/" else int_mod(left, right)
        if op == "/":
            return float(left) / float(right)
        return math.fmod(left, right) if math.isfinite(left) else NAN
    raise ValueError(f"unknown arithmetic operator {op!r}")


NAN = float("nan")  # the one NaN object values hold, so that sets and dicts see one value


@overload
def normal(value: int) -> int: ...
@overload
def normal(value: float) -> float: ...
@overload
def normal(value: str) -> str: ...
def normal(value: Value) -> Value:
    """``value`` with a double made canonical: any NaN is :data:`NAN`, ``-0.0`` is ``0.0``."""
    if type(value) is float:
        return value + 0.0 if value == value else NAN
    return value


def is_nan(value) -> bool:
    return value != value


def same(left, right) -> bool:
    """Whether two values of one column are one value (NaN is NaN)."""
    return left == right or (left != left and right != right)


def order_key(value) -> tuple:
    """A sort key putting NaN after every other value (of a numeric column); records (and ADTs)
    in the value order the engines share (:func:`spark_datalog.record_types.order_key`)."""
    if isinstance(value, Record):
        return (0, record_order(value))
    return (1, 0.0) if value != value else (0, value)


_ORDER = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def compare(op: str, left, right) -> bool:
    """``left op right`` for ``op`` in ``= != < <= > >=``; NaN equals NaN and is the largest."""
    if (is_number(left) and is_number(right)) or (isinstance(left, str) and isinstance(right, str)):
        pass
    elif (isinstance(left, bool) and isinstance(right, bool)) or (
        isinstance(left, Record) and isinstance(right, Record)
    ):
        if op not in ("=", "!="):
            raise TypeError(f"bools and records can only be compared with = and !=, not {op!r}")
    else:
        raise TypeError(f"cannot compare {left!r} and {right!r}")
    if left != left or right != right:  # a NaN: compare in the order that puts it last
        left, right = order_key(left), order_key(right)
    if op == "=":
        return left == right
    if op == "!=":
        return left != right
    if op in _ORDER:
        return _ORDER[op](left, right)
    raise ValueError(f"unknown comparison operator {op!r}")


def _record(value, type_: str) -> Record:
    """``value`` (a tuple, a Spark ``Row`` or a dict of the fields) as a record of ``type_``."""
    pairs = fields(type_) or ()
    if isinstance(value, dict):
        value = tuple(value.values())
    if (value is None or is_nil_record(value)) and not adt_branches(type_):  # nil
        return nil_record(type_)
    if isinstance(value, tuple) and len(value) == len(pairs):
        return Record(coerce(v, t) for v, (_, t) in zip(value, pairs, strict=True))
    raise TypeError(f"{value!r} is not a {type_}")


def coerce(value, type_: str) -> Value:
    """``value`` as a Python value of column type ``type_`` (an integer becomes a float in a
    double column). Raises TypeError for a value the type cannot hold."""
    if type_ == "double":
        if is_number(value):
            return normal(float(value))
    elif type_ in ("int", "long"):
        if isinstance(value, int) and not isinstance(value, bool):
            if not fits(value, type_):
                raise TypeError(f"{value!r} is out of the range of {type_}")
            return value
    elif type_ == "string" or is_recursive(type_):
        if isinstance(value, str):
            return value
    elif type_ == "bool":
        if isinstance(value, bool):
            return value
    elif is_record(type_):
        return _record(value, type_)  # type: ignore[return-value]
    else:
        raise ValueError(f"unknown type {type_!r}")
    raise TypeError(f"{value!r} is not a {type_}")


def evaluate_term(term, subst: dict) -> Value:
    """The value of a term under a substitution (a dict from variable name to value)."""
    if isinstance(term, ast.Constant):
        return normal(term.value)
    if isinstance(term, ast.Variable):
        return subst[term.name]
    if isinstance(term, ast.BinaryOp):
        left, right = evaluate_term(term.left, subst), evaluate_term(term.right, subst)
        return checked(term.op, left, right, term.type, term.span)
    if isinstance(term, ast.Call):
        return normal(
            functor_value(functors_spec(term), term.type, [evaluate_term(a, subst) for a in term.args])
        )
    raise TypeError(f"not a term: {term!r}")


def checked(op: str, left, right, type_, span) -> Union[int, float]:
    """``arithmetic(op, left, right)``, raising Overflow when an integer result does not fit
    the expression's type ``type_`` (``int``; ``long`` for any other: an integer operation on
    values of a ``double`` expression is computed in ``long``); ``span``: its position."""
    value = arithmetic(op, left, right)
    if isinstance(value, int):
        bounds = integer_type(type_)
        if not fits(value, bounds):
            raise operation_overflow(span, left, op, right, bounds)
        return value
    return normal(value)


def integer_type(type_) -> str:
    """The integer type an integer operation of an expression of type ``type_`` computes in."""
    return "int" if type_ == "int" else "long"
