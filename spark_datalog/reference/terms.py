"""Value semantics of the language: arithmetic, comparison and column types.

This module is the specification every engine must match (the Spark backend included):

- ``+ - *`` on two integers give an integer; with a double operand, a double.
- ``/`` on two integers is integer division truncating toward zero (``-7 / 2 == -3``);
  with a double operand it is float division.
- ``mod`` takes the sign of the dividend (``-7 mod 2 == -1``, ``7 mod -2 == 1``), as Java and
  Spark do; on doubles it is ``math.fmod``.
- Division or ``mod`` by zero (integer or double) is undefined: the body literal fails and the
  substitution is dropped, so no fact is derived from it. :func:`arithmetic` raises
  :class:`Undefined` for it.
- Numbers of different types compare by value; strings compare lexicographically by code point
  (equal to Spark's UTF-8 byte order); bools only with ``=`` and ``!=``.

Integers are Python ints (unbounded); programs whose long arithmetic overflows 64 bits are
outside the contract.
"""

from __future__ import annotations

import math
import operator

from ..syntax import ast


class Undefined(Exception):
    """The value of an expression is undefined (division or mod by zero)."""


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


def arithmetic(op: str, left, right):
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
        return float(left) / float(right) if op == "/" else math.fmod(left, right)
    raise ValueError(f"unknown arithmetic operator {op!r}")


_ORDER = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def compare(op: str, left, right) -> bool:
    """``left op right`` for ``op`` in ``= != < <= > >=``."""
    if is_number(left) and is_number(right):
        pass
    elif isinstance(left, str) and isinstance(right, str):
        pass
    elif isinstance(left, bool) and isinstance(right, bool):
        if op not in ("=", "!="):
            raise TypeError(f"bools can only be compared with = and !=, not {op!r}")
    else:
        raise TypeError(f"cannot compare {left!r} and {right!r}")
    if op == "=":
        return left == right
    if op == "!=":
        return left != right
    if op in _ORDER:
        return _ORDER[op](left, right)
    raise ValueError(f"unknown comparison operator {op!r}")


def coerce(value, type_: str):
    """``value`` as a Python value of column type ``type_`` (an integer becomes a float in a
    double column). Raises TypeError for a value the type cannot hold."""
    if type_ == "double":
        if is_number(value):
            return float(value)
    elif type_ in ("int", "long"):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif type_ == "string":
        if isinstance(value, str):
            return value
    elif type_ == "bool":
        if isinstance(value, bool):
            return value
    else:
        raise ValueError(f"unknown type {type_!r}")
    raise TypeError(f"{value!r} is not a {type_}")


def evaluate_term(term, subst: dict):
    """The value of a term under a substitution (a dict from variable name to value)."""
    if isinstance(term, ast.Constant):
        return term.value
    if isinstance(term, ast.Variable):
        return subst[term.name]
    if isinstance(term, ast.BinaryOp):
        return arithmetic(term.op, evaluate_term(term.left, subst), evaluate_term(term.right, subst))
    raise TypeError(f"not a term: {term!r}")
