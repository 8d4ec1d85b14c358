"""Soufflé's intrinsic functors and operators: one table for analysis and every engine.

A :class:`Functor` says how many arguments a functor takes, which kinds of values they must be,
the type of its value, and how each engine computes it: a Python function for the reference
interpreter, a Polars expression builder for the local kernel, a Spark Column builder for Spark.
Operators are functors too: ``X ^ Y`` is ``pow``, ``X band Y`` is ``band``, ``bnot X`` is
``bnot``; the body constraints ``match(P, S)`` and ``contains(A, S)`` are functors of type bool.

The rules, identical on every engine (the README's "Functors" section):

- An undefined value makes the literal fail, as a division by zero does: ``to_number`` of a
  text that is not a whole decimal, hexadecimal (``-0xBEEF``) or binary (``0b101``) number,
  ``ftoi`` of NaN or an infinity, an integer result outside
  the range of its type (``X ^ 64``, ``abs`` of the smallest long, ``bshl`` out of ``int``).
- Integers are 64-bit two's complement for the bitwise operators; a shift count is taken
  modulo 64 (``count band 63``), as Java does; ``bshl`` drops the bits shifted out.
- ``X ^ N`` on integers is exact; a negative ``N`` gives the truncated quotient ``1 / X^-N``
  (0 unless X is 1 or -1; undefined for X = 0). On doubles it is IEEE ``pow``.
- ``substr(S, I, N)`` counts characters from 0; a negative I or N gives ``""``; a range past the
  end is cut at the end. ``strlen`` counts characters. ``ord(S)`` is the code point of the first
  character (0 for ``""``), not Soufflé's symbol number.
- ``match(P, S)``: the regular expression P matches the whole of S (Python ``re``, Rust
  ``regex``, Java ``java.util.regex``: keep to their common subset), its POSIX classes
  (``[[:digit:]]``) written out first (:func:`pattern_classes`). A P that is not a valid
  pattern matches nothing (Soufflé warns and answers false), so ``!match(P, S)`` holds.
- ``to_string`` of a double is C's ``%f`` (:func:`float_text`).
- ``min``/``max`` order as comparisons do (NaN is the largest double).

Functions over values take the call's type first (``"int"``, ``"long"``, ``"double"``, ...),
then the argument values (already widened to double where the type is double).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Optional

from . import overflow
from .syntax import ast

__all__ = ["FUNCTORS", "NAMED", "OPERATORS", "PREFIX", "Functor", "Undefined", "functor"]


# Functors analysis puts in place of others once types are known (``analysis.types``)
FLOAT_TEXT = "to_string@float"
PATTERN = "pattern@classes"


class Undefined(Exception):
    """The value of an expression is undefined (the literal computing it fails)."""


@dataclass(frozen=True)
class Functor:
    """``operands``: the kind every argument must be (``number``, ``integer``, ``string``, or
    ``ordered``: all numbers or all strings), or one kind per argument. ``result``: the type of
    the value, or ``operands``: the widest argument type (arguments are widened to it).
    ``bounded``: an integer value must fit the call's type, else it is undefined. ``partial``:
    an integer value may be undefined for defined arguments; ``nullable``: a value of any type
    may be (null in Polars and Spark: a field of ``nil``)."""

    name: str
    least: int
    most: Optional[int]
    operands: Any  # str, or tuple of str (one per argument)
    result: str
    reference: Callable
    polars: Callable
    spark: Callable
    bounded: bool = False
    partial: bool = False
    # a user-defined functor's binding (:mod:`spark_datalog.user_functors`), None for the others
    binding: Any = None
    generator: bool = False
    nullable: bool = False

    def kind(self, position: int) -> str:
        return self.operands if isinstance(self.operands, str) else self.operands[position]

    def arity_text(self) -> str:
        if self.most is None:
            return f"at least {self.least} argument{'s' if self.least != 1 else ''}"
        if self.most != self.least:
            joint = "or" if self.most == self.least + 1 else "to"
            return f"{self.least} {joint} {self.most} arguments"
        return f"{self.least} argument{'s' if self.least != 1 else ''}"

    def may_be_undefined(self, type_: Optional[str]) -> bool:
        """Whether a call of type ``type_`` may be undefined for defined arguments (only an
        integer value may be; a user-defined functor's value of any type may be)."""
        if self.binding is not None or self.nullable:
            return True
        return (self.bounded or self.partial) and type_ in ("int", "long")


def fits(value: int, type_: Optional[str]) -> bool:
    """Whether an integer value fits a call of type ``type_`` (``int``; ``long`` otherwise)."""
    return overflow.fits(value, "int" if type_ == "int" else "long")


# ---------------------------------------------------------------------------------------------
# Engines: the modules are imported when a builder runs (analysis needs neither)


def _pl():
    import polars as pl

    return pl


def _sf():
    from pyspark.sql import functions as F

    return F


def _long_pl(expr):
    return expr.cast(_pl().Int64)


def _long_sp(column):
    return column.cast("long")


# ---------------------------------------------------------------------------------------------
# Reference functions

_MASK = 2**64 - 1


def _wrap(value: int) -> int:
    """``value`` as a 64-bit two's complement integer."""
    value &= _MASK
    return value - 2**64 if value >= 2**63 else value


def _int_pow(base: int, exponent: int) -> int:
    if exponent < 0:
        if base == 0:
            raise Undefined("0 ^ a negative exponent")
        if base in (1, -1):
            return base ** (-exponent % 2 + 2)
        return 0
    if abs(base) >= 2 and exponent >= 64:
        return 2**64  # out of every integer type's range
    return base**exponent


def _pow(type_, base, exponent):
    if type_ == "double":
        import numpy as np

        with np.errstate(all="ignore"):
            return float(np.power(np.float64(base), np.float64(exponent)))
    return _int_pow(base, exponent)


# The texts to_number reads (Soufflé's, whole): decimal with a sign, hexadecimal and binary
# with a minus; one per base, as the Polars and Spark builders match them
_DECIMAL, _HEXADECIMAL, _BINARY = r"[+-]?[0-9]+", r"-?0x[0-9a-fA-F]+", r"-?0b[01]+"
_NUMBER_TEXT = re.compile(f"{_DECIMAL}|{_HEXADECIMAL}|{_BINARY}")


def _to_number(_type, text: str) -> int:
    if _NUMBER_TEXT.fullmatch(text) is None:
        raise Undefined(f"to_number of {text!r}")
    digits = text.lstrip("+-")
    base = {"0x": 16, "0b": 2}.get(digits[:2], 10)
    value = int(digits if base == 10 else digits[2:], base)
    value = -value if text.startswith("-") else value
    if not fits(value, "long"):
        raise Undefined(f"to_number of {text!r}")
    return value


def float_text(value: float) -> str:
    """``to_string`` of a double: C's ``%f``, as Soufflé's ``std::to_string`` writes it
    (``3.140000``, ``inf``, ``nan``). Python's ``%`` rounds the exact binary value as C does."""
    return "%f" % value


# Soufflé's match uses std::regex (ECMAScript), whose bracket expressions know POSIX classes
# (``[[:digit:]]``); Python's re and Java's regex do not, Rust's knows some. Inside a bracket
# expression each is written out as its ASCII ranges (the C locale's), the same on every engine.
_CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "blank": r"\x09\x20",
    "cntrl": r"\x00-\x1F\x7F",
    "d": "0-9",
    "digit": "0-9",
    "graph": r"\x21-\x7E",
    "lower": "a-z",
    "print": r"\x20-\x7E",
    "punct": r"\x21-\x2F\x3A-\x40\x5B-\x60\x7B-\x7E",
    "s": r"\x09-\x0D\x20",
    "space": r"\x09-\x0D\x20",
    "upper": "A-Z",
    "w": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}
# A pattern's pieces: an escape, a class name, a character. Outside a bracket (0), just after
# its ``[`` (1) or ``[^`` (2), inside it (3): there a ``]`` closes it, except as its first character.
_PATTERN_PIECE = r"(?s)(\\.|\[:[A-Za-z]+:\]|.)"
_CLASS_NAME = r"\[:[A-Za-z]+:\]"
# What a pattern with an unknown class name becomes (std::regex rejects it: match is false)
NEVER = r"\b\B"


@lru_cache(maxsize=4096)
def pattern_classes(pattern: str) -> str:
    """``pattern`` with its bracket expressions' POSIX classes written out (``[[:digit:]_]`` is
    ``[0-9_]``); :data:`NEVER` when it names an unknown class."""
    out, state = [], 0
    for piece in re.findall(_PATTERN_PIECE, pattern):
        if state and re.fullmatch(_CLASS_NAME, piece):
            ranges = _CLASSES.get(piece[2:-2].lower())
            if ranges is None:
                return NEVER
            out.append(ranges)
        else:
            out.append(piece)
        state = _next_state(state, piece)
    return "".join(out)


def _next_state(state: int, piece: str) -> int:
    if state == 0:
        return 1 if piece == "[" else 0
    if state == 1 and piece == "^":
        return 2
    return 0 if state == 3 and piece == "]" else 3


def literal_pattern(pattern: str) -> str:
    """A constant pattern as every engine gets it: its classes written out, and :data:`NEVER`
    when it is not a pattern (Python's ``re`` judges: Soufflé answers false)."""
    translated = pattern_classes(pattern)
    try:
        with warnings.catch_warnings():  # "possible nested set": warned where it is matched
            warnings.simplefilter("ignore")
            re.compile(translated)
    except re.error:
        return NEVER
    return translated


_TWO_63 = 2.0**63


def _ftoi(_type, value) -> int:
    if isinstance(value, int):
        return value
    if not -_TWO_63 <= value < _TWO_63:  # NaN fails too
        raise Undefined(f"ftoi of {value!r}")
    return int(value)


def _substr(_type, text: str, start: int, length: int) -> str:
    if start < 0 or length < 0:
        return ""
    return text[start : start + length]


def _least(_type, *values):
    return min(values, key=_order)


def _greatest(_type, *values):
    return max(values, key=_order)


def _order(value):
    return (1, 0.0) if value != value else (0, value)  # NaN last (reference.terms.order_key)


def _match(_type, pattern: str, text: str) -> bool:
    try:
        return re.fullmatch(pattern, text) is not None
    except re.error:  # not a pattern: Soufflé answers false
        return False


# ---------------------------------------------------------------------------------------------
# Polars builders (``type_``, then the argument expressions)


def _pl_numpy(function, dtype_name: str, *args):
    """``function`` of numpy arrays over whole columns (vectorized)."""
    pl = _pl()
    dtype = getattr(pl, dtype_name)

    def apply(batch):
        import numpy as np

        columns = batch.struct.unnest()
        arrays = [columns[f"a{i}"].to_numpy(allow_copy=True) for i in range(len(args))]
        with np.errstate(all="ignore"):
            return pl.Series(batch.name, function(*arrays), dtype=dtype)

    # a null (an undefined argument) is computed as 0; the caller makes the value null there
    struct = pl.struct(*(arg.fill_null(0).alias(f"a{i}") for i, arg in enumerate(args)))
    return struct.map_batches(apply, return_dtype=dtype, is_elementwise=True)


def _pl_shift(kind: str):
    def shift(a, b):
        import numpy as np

        count = (b & 63).astype(np.uint64)
        if kind == "bshl":
            return np.left_shift(a.view(np.uint64), count).view(np.int64)
        if kind == "bshr":
            return np.right_shift(a, count.astype(np.int64))
        return np.right_shift(a.view(np.uint64), count).view(np.int64)

    return lambda _type, a, b: _pl_numpy(shift, "Int64", _long_pl(a), _long_pl(b))


def _scalar_power(bases, exponents):
    """numpy's ``power`` value by value, as the reference computes it: its loop over arrays is
    not always correctly rounded (``63.0 ^ 0.5`` is one bit low)."""
    import numpy as np

    pairs = zip(bases, exponents, strict=True)
    return np.fromiter((np.power(x, y) for x, y in pairs), dtype=np.float64, count=len(bases))


def _pl_pow(type_, a, b):
    if type_ == "double":
        return _pl_numpy(_scalar_power, "Float64", a, b)
    pl = _pl()
    base, exponent = a.cast(pl.Int128), _long_pl(b)
    small = base.abs() <= 1
    # |base| >= 2 and exponent >= 64 overflows; |base| <= 1 keeps the exponent's parity
    steps = pl.when(exponent < 64).then(exponent).when(small).then(exponent % 2 + 2)
    result, power = pl.lit(1, dtype=pl.Int128), base
    for k in range(6):  # by squaring; past long's range a value is held as 2^63 + 1
        bit = (steps // 2**k) % 2 == 1
        result = pl.when(bit).then(_pl_clamped(result * power)).otherwise(result)
        power = _pl_clamped(power * power)
    unit = pl.when(exponent % 2 == 0).then(1).otherwise(base)
    negative = pl.when(small).then(unit).otherwise(0).cast(pl.Int128)
    value = pl.when(exponent >= 0).then(result).when(base != 0).then(negative)
    return pl.when(exponent >= 0).then(pl.when(steps.is_not_null()).then(value)).otherwise(value)


def _pl_clamped(value):
    """``value`` (Int128), or 2^63 + 1 when out of long's range (so a product stays in Int128)."""
    pl = _pl()
    return pl.when(value.abs() > 2**63).then(pl.lit(2**63 + 1, dtype=pl.Int128)).otherwise(value)


def _pl_ordered(greatest: bool):
    def build(_type, *args):
        pl = _pl()
        result = args[0]
        for arg in args[1:]:
            # Polars orders NaN as the largest double, as the language does
            keep = result >= arg if greatest else result <= arg
            result = pl.when(keep).then(result).otherwise(arg)
        return result

    return build


def _pl_abs(type_, value):
    return value.cast(_pl().Int128).abs() if type_ in ("int", "long") else value.abs()


def _pl_substr(_type, text, start, length):
    pl = _pl()
    size = text.str.len_chars().cast(pl.Int64)
    start, length = _long_pl(start), _long_pl(length)
    inside = (start >= 0) & (length >= 0) & (start < size)
    offset = pl.when(inside).then(start).otherwise(0)
    count = pl.when(inside).then(pl.min_horizontal(length, size)).otherwise(0)
    return pl.when(inside).then(text.str.slice(offset, count)).otherwise(pl.lit(""))


def _pl_ord(_type, text):
    """The code point of the first character, decoded from its UTF-8 bytes (0 for "")."""
    pl = _pl()
    hexed = text.str.slice(0, 1).str.encode("hex")
    size = hexed.str.len_bytes() // 2
    byte = [hexed.str.slice(2 * i, 2).str.to_integer(base=16, strict=False).cast(pl.Int64) for i in range(4)]
    lead = {1: 0xFF, 2: 0x1F, 3: 0x0F, 4: 0x07}
    value = pl.lit(0, dtype=pl.Int64)
    for length in (2, 3, 4):
        code = byte[0] & lead[length]
        for i in range(1, length):
            code = code * 64 + (byte[i] & 0x3F)
        value = pl.when(size == length).then(code).otherwise(value)
    return pl.when(size == 1).then(byte[0]).when(size == 0).then(0).otherwise(value)


def _pl_to_number(_type, text):
    pl = _pl()
    # the sign, then the digits after the prefix: Rust's from_str_radix range-checks the signed value
    signed = pl.concat_str(
        pl.when(text.str.starts_with("-")).then(pl.lit("-")).otherwise(pl.lit("")),
        text.str.strip_prefix("-").str.slice(2),
    )
    value = pl.when(text.str.contains(f"^(?:{_DECIMAL})\\z"))
    value = value.then(text.str.strip_prefix("+").cast(pl.Int64, strict=False))
    for pattern, base in ((_HEXADECIMAL, 16), (_BINARY, 2)):
        value = value.when(text.str.contains(f"^(?:{pattern})\\z"))
        value = value.then(signed.str.to_integer(base=base, strict=False))
    return value


def _pl_float_text(_type, value):
    pl = _pl()

    def apply(batch):
        return pl.Series(
            batch.name, [None if v is None else float_text(v) for v in batch.to_list()], pl.String
        )

    return value.cast(pl.Float64).map_batches(apply, return_dtype=pl.String, is_elementwise=True)


def _pl_pattern(_type, pattern):
    pl = _pl()

    def apply(batch):
        values = [None if v is None else pattern_classes(v) for v in batch.to_list()]
        return pl.Series(batch.name, values, pl.String)

    return pattern.map_batches(apply, return_dtype=pl.String, is_elementwise=True)


def _pl_ftoi(_type, value):
    pl = _pl()
    double = value.cast(pl.Float64)
    inside = (double >= -_TWO_63) & (double < _TWO_63) & ~double.is_nan()
    return pl.when(inside).then(double.cast(pl.Int64, strict=False))


def _pl_match(_type, pattern, text):
    pl = _pl()
    anchored = pl.concat_str(pl.lit("^(?:"), pattern, pl.lit(r")\z"))
    matched = text.str.contains(anchored, strict=False)  # null where P is not a pattern
    return pl.when(pattern.is_not_null() & text.is_not_null()).then(matched.fill_null(False))


def _combined(op: str, truth: list):
    """``land lor lxor lnot`` over boolean expressions (Polars and Spark both have ``& | != ~``)."""
    if op == "land":
        return truth[0] & truth[1]
    if op == "lor":
        return truth[0] | truth[1]
    if op == "lxor":
        return truth[0] != truth[1]
    return ~truth[0]


def _pl_logical(op: str):
    def build(_type, *args):
        return _combined(op, [arg != 0 for arg in args]).cast(_pl().Int64)

    return build


# ---------------------------------------------------------------------------------------------
# Spark builders (``type_``, then the argument Columns)


def _sp_pow(type_, a, b):
    F = _sf()
    if type_ == "double":
        return F.pow(a.cast("double"), b.cast("double"))
    base, exponent = _long_sp(a), _long_sp(b)
    small = F.abs(base) <= F.lit(1)
    # |base| >= 2 and exponent >= 64 overflows; |base| <= 1 keeps the exponent's parity
    steps = F.when(exponent >= F.lit(64), F.when(small, exponent % F.lit(2) + F.lit(2)))
    steps = steps.otherwise(exponent)
    power = F.aggregate(
        F.sequence(F.lit(1).cast("long"), F.greatest(steps, F.lit(1).cast("long"))),
        F.lit(1).cast("long"),
        lambda acc, _step: F.try_multiply(acc, base),
    )
    positive = F.when(steps.isNotNull(), F.when(steps == F.lit(0), F.lit(1).cast("long")).otherwise(power))
    unit = F.when(base == F.lit(1), F.lit(1).cast("long")).when(
        base == F.lit(-1), F.when(exponent % F.lit(2) == F.lit(0), F.lit(1)).otherwise(F.lit(-1)).cast("long")
    )
    negative = F.when(base != F.lit(0), F.coalesce(unit, F.lit(0).cast("long")))
    return F.when(exponent >= F.lit(0), positive).otherwise(negative)


def _sp_shift(kind: str):
    def build(_type, a, b):
        F = _sf()
        count = (_long_sp(b).bitwiseAND(F.lit(63))).cast("int")
        function = {"bshl": "shiftleft", "bshr": "shiftright", "bshru": "shiftrightunsigned"}[kind]
        return F.call_function(function, _long_sp(a), count)  # (F.shiftleft takes a constant count)

    return build


def _sp_ordered(greatest: bool):
    def build(_type, *args):
        F = _sf()
        # greatest/least skip nulls: an undefined argument makes the call undefined
        defined = args[0].isNotNull()
        for arg in args[1:]:
            defined = defined & arg.isNotNull()
        value = (F.greatest if greatest else F.least)(*args) if len(args) > 1 else args[0]
        return F.when(defined, value)

    return build


def _sp_substr(_type, text, start, length):
    F = _sf()
    size = F.char_length(text).cast("long")
    start, length = _long_sp(start), _long_sp(length)
    inside = (start >= F.lit(0)) & (length >= F.lit(0)) & (start < size)
    count = F.least(length, size)
    sliced = F.substr(
        text, (F.when(inside, start).otherwise(F.lit(0)) + F.lit(1)).cast("int"), count.cast("int")
    )
    return F.when(inside, sliced).otherwise(F.lit(""))


def _sp_abs(type_, value):
    F = _sf()
    if type_ in ("int", "long"):
        value = _long_sp(value)
        return F.when(value != F.lit(-(2**63)), F.abs(value))
    return F.abs(value)


def _sp_to_number(_type, text):
    F = _sf()
    value = F.when(text.rlike(f"^(?:{_DECIMAL})\\z"), text.try_cast("long"))
    # the digits after the prefix, without leading zeros (at least one digit): at most 64 bits,
    # conv reads them as an unsigned number, written in decimal
    digits = F.regexp_replace(text, F.lit("^-?0[xb]0*(?=.)"), F.lit(""))
    negative = text.startswith("-")
    for pattern, base, width in ((_HEXADECIMAL, 16, 16), (_BINARY, 2, 64)):
        short = text.rlike(f"^(?:{pattern})\\z") & (F.char_length(digits) <= F.lit(width))
        magnitude = F.conv(F.when(short, digits), base, 10).try_cast("decimal(20,0)")
        signed = F.when(negative, -magnitude).otherwise(magnitude)
        value = value.when(short & signed.between(F.lit(-(2**63)), F.lit(2**63 - 1)), signed.cast("long"))
    return value


def _sp_float_text(_type, value):
    F = _sf()

    def batch(series):  # self-contained: pickled by value for the Python workers
        return series.map(lambda v: "%f" % v)

    # a null (an undefined argument) reaches pandas as NaN: the caller makes the value null there
    return F.pandas_udf(batch, "string")(value.cast("double"))  # type: ignore[call-overload]


def _sp_pattern(_type, pattern):
    """:func:`pattern_classes` as Column expressions: the pattern's pieces folded left to right,
    the state (outside a bracket, after ``[``, after ``[^``, inside) carried along."""
    F = _sf()
    names = F.create_map(*(F.lit(x) for item in _CLASSES.items() for x in item))
    pieces = F.regexp_extract_all(pattern, F.lit(_PATTERN_PIECE), 1)
    start = F.struct(F.lit("").alias("text"), F.lit(0).alias("state"), F.lit(False).alias("unknown"))

    def step(acc, piece):
        state = acc["state"]
        named = (state > F.lit(0)) & piece.rlike(f"^{_CLASS_NAME}$")
        ranges = names[F.lower(piece.substr(F.lit(3), F.char_length(piece) - F.lit(4)))]
        following = (
            F.when(state == F.lit(0), F.when(piece == F.lit("["), F.lit(1)).otherwise(F.lit(0)))
            .when((state == F.lit(1)) & (piece == F.lit("^")), F.lit(2))
            .when((state == F.lit(3)) & (piece == F.lit("]")), F.lit(0))
            .otherwise(F.lit(3))
        )
        text = F.concat(acc["text"], F.when(named, F.coalesce(ranges, F.lit(""))).otherwise(piece))
        unknown = acc["unknown"] | (named & ranges.isNull())
        return F.struct(text.alias("text"), following.alias("state"), unknown.alias("unknown"))

    def finish(acc):
        return F.when(acc["unknown"], F.lit(NEVER)).otherwise(acc["text"])

    return F.when(pattern.isNotNull(), F.aggregate(pieces, start, step, finish))


def _sp_ftoi(_type, value):
    F = _sf()
    double = value.cast("double")
    inside = (double >= F.lit(-_TWO_63)) & (double < F.lit(_TWO_63)) & ~F.isnan(double)
    return F.when(inside, F.when(inside, double).otherwise(F.lit(0.0)).cast("long"))


def _sp_logical(op: str):
    def build(_type, *args):
        zero = _sf().lit(0)
        return _combined(op, [arg != zero for arg in args]).cast("long")

    return build


def _sp_match(_type, pattern, text):
    F = _sf()
    return F.regexp_like(text, F.concat(F.lit("^(?:"), pattern, F.lit(r")\z")))


# ---------------------------------------------------------------------------------------------
# The table


def _identity(_type, value):
    return value


def _logical_reference(op: str):
    def value(_type, *args):
        a = args[0] != 0
        if op == "lnot":
            return int(not a)
        b = args[1] != 0
        return int({"land": a and b, "lor": a or b, "lxor": a != b}[op])

    return value


def _bitwise(name: str, reference, pl_op: str, sp_op: str) -> Functor:
    return Functor(
        name,
        2,
        2,
        "integer",
        "operands",
        reference,
        lambda _t, a, b: getattr(_long_pl(a), pl_op)(_long_pl(b)),
        lambda _t, a, b: getattr(_long_sp(a), sp_op)(_long_sp(b)),
    )


def _shift(name: str, reference) -> Functor:
    return Functor(
        name, 2, 2, "integer", "operands", reference, _pl_shift(name), _sp_shift(name), bounded=True
    )


def _logical(name: str, arity: int) -> Functor:
    return Functor(
        name,
        arity,
        arity,
        "integer",
        "operands",
        _logical_reference(name),
        _pl_logical(name),
        _sp_logical(name),
    )


def _conversion(name: str, operands: str, result: str, reference, polars, spark, partial=False) -> Functor:
    return Functor(name, 1, 1, operands, result, reference, polars, spark, partial=partial)


def _to_long(name: str) -> Functor:
    return _conversion(
        name, "integer", "long", _identity, lambda _t, a: _long_pl(a), lambda _t, a: _long_sp(a)
    )


def _to_double(name: str, operands: str) -> Functor:
    return _conversion(
        name,
        operands,
        "double",
        lambda _t, a: float(a),
        lambda _t, a: a.cast(_pl().Float64),
        lambda _t, a: a.cast("double"),
    )


def _not_scalar(*_args):
    raise TypeError("a generator (range, urange, frange) has several values: see spark_datalog.generators")


def _numbered(*_args):
    raise TypeError("autoinc() is numbered by the plan (ir.Number): see spark_datalog.syntax.autoinc")


def _generator(name: str, operands: str, result: str) -> Functor:
    return Functor(name, 2, 3, operands, result, _not_scalar, _not_scalar, _not_scalar, generator=True)


# Records (:mod:`spark_datalog.syntax.records`): ``record`` builds one of the call's type, whose
# field names it takes; ``field:<position>:<name>`` reads a field. Their arguments may be of
# any type ("any"); the type of their value is the call's ("given"), set by lowering.


def _record_polars(type_, *args):
    from .record_types import fields
    from .recursive_records import is_recursive, polars_record

    if is_recursive(type_):
        return polars_record(args)
    return _pl().struct([arg.alias(name) for arg, (name, _) in zip(args, fields(type_), strict=True)])


def _record_spark(type_, *args):
    from .record_types import fields
    from .recursive_records import is_recursive, spark_record

    if is_recursive(type_):
        return spark_record(args)
    return _sf().struct(*(arg.alias(name) for arg, (name, _) in zip(args, fields(type_), strict=True)))


def _record_value(type_, *values):
    from .record_types import Record
    from .recursive_records import encode, is_recursive

    return encode(values, type_) if is_recursive(type_) else Record(values)


_RECORD = Functor("record", 1, None, "any", "given", _record_value, _record_polars, _record_spark)


@lru_cache(maxsize=None)
def _nested_text(name: str) -> Functor:
    """``text@:<record type>``: a (non-recursive) record's value as the text a recursive type's
    encoding holds (lowering wraps such a field of a ``record`` call of a recursive type in it)."""
    from . import recursive_records as rr

    nested = name.partition(":")[2]
    return Functor(
        name,
        1,
        1,
        "any",
        "string",
        lambda _t, value: rr.field_text(value),
        lambda _t, value: rr.polars_text(value, nested),
        lambda _t, value: rr.spark_text(value, nested),
    )


@lru_cache(maxsize=None)
def _field(name: str) -> Functor:
    """``field:<position>:<name>``: a record's field, undefined for ``nil`` (whose fields are
    null: :func:`~spark_datalog.record_types.nil_record`)."""
    _, position, field = name.split(":")
    index = int(position)

    def read(_type, record):
        if record[index] is None:
            raise Undefined("a field of nil")
        return record[index]

    return Functor(
        name,
        1,
        1,
        "any",
        "given",
        read,
        lambda _t, record: record.struct.field(field),
        lambda _t, record: record.getField(field),
        nullable=True,
    )


@lru_cache(maxsize=None)
def _recursive_field(name: str) -> Functor:
    """``field@:<position>:<name>``: a field of a recursive record's encoding (undefined for
    nil; see :mod:`spark_datalog.recursive_records`)."""
    from . import recursive_records as rr

    index = int(name.split(":")[1])

    def read(type_, encoded):
        value = rr.read_field(encoded, index, type_)
        if value is None:
            raise Undefined("a field of nil")
        return value

    return Functor(
        name,
        1,
        1,
        "any",
        "given",
        read,
        lambda t, encoded: rr.polars_field(encoded, index, t),
        lambda t, encoded: rr.spark_field(encoded, index, t),
    )


def _table() -> tuple:
    return (
        _generator("range", "number", "operands"),
        _generator("urange", "integer", "long"),
        _generator("frange", "number", "double"),
        # autoinc() as written; lowering gives it its call site: autoinc(site, sites)
        Functor("autoinc", 0, 0, "integer", "long", _numbered, _numbered, _numbered),
        Functor("pow", 2, 2, "number", "operands", _pow, _pl_pow, _sp_pow, bounded=True, partial=True),
        _bitwise("band", lambda _t, a, b: a & b, "__and__", "bitwiseAND"),
        _bitwise("bor", lambda _t, a, b: a | b, "__or__", "bitwiseOR"),
        _bitwise("bxor", lambda _t, a, b: a ^ b, "__xor__", "bitwiseXOR"),
        _shift("bshl", lambda _t, a, b: _wrap(a << (b & 63))),
        _shift("bshr", lambda _t, a, b: a >> (b & 63)),
        _shift("bshru", lambda _t, a, b: _wrap((a & _MASK) >> (b & 63))),
        Functor(
            "bnot",
            1,
            1,
            "integer",
            "operands",
            lambda _t, a: ~a,
            lambda _t, a: ~_long_pl(a),
            lambda _t, a: _sf().bitwise_not(_long_sp(a)),
        ),
        _logical("land", 2),
        _logical("lor", 2),
        _logical("lxor", 2),
        _logical("lnot", 1),
        Functor(
            "cat",
            1,
            None,
            "string",
            "string",
            lambda _t, *s: "".join(s),
            lambda _t, *s: _pl().concat_str(list(s)),
            lambda _t, *s: _sf().concat(*s),
        ),
        Functor(
            "strlen",
            1,
            1,
            "string",
            "long",
            lambda _t, s: len(s),
            lambda _t, s: s.str.len_chars().cast(_pl().Int64),
            lambda _t, s: _long_sp(_sf().char_length(s)),
        ),
        Functor("substr", 3, 3, ("string", "integer", "integer"), "string", _substr, _pl_substr, _sp_substr),
        Functor(
            "ord",
            1,
            1,
            "string",
            "long",
            lambda _t, s: ord(s[0]) if s else 0,
            _pl_ord,
            lambda _t, s: _long_sp(_sf().ascii(s)),
        ),
        _conversion("to_number", "string", "long", _to_number, _pl_to_number, _sp_to_number, partial=True),
        _conversion(
            "to_string",
            "number",
            "string",
            lambda _t, a: str(a),
            lambda _t, a: a.cast(_pl().String),
            lambda _t, a: a.cast("string"),
        ),
        # to_string of a double, as analysis resolves it (Soufflé's overload F2S)
        _conversion(
            FLOAT_TEXT, "number", "string", lambda _t, a: float_text(a), _pl_float_text, _sp_float_text
        ),
        # a match pattern from the data with its POSIX classes written out (analysis adds it)
        _conversion(PATTERN, "string", "string", lambda _t, p: pattern_classes(p), _pl_pattern, _sp_pattern),
        _to_double("to_float", "number"),
        _to_double("itof", "integer"),
        _to_double("utof", "integer"),
        _to_long("to_unsigned"),
        _to_long("itou"),
        _to_long("utoi"),
        _conversion("ftoi", "number", "long", _ftoi, _pl_ftoi, _sp_ftoi, partial=True),
        _conversion("ftou", "number", "long", _ftoi, _pl_ftoi, _sp_ftoi, partial=True),
        Functor("min", 1, None, "ordered", "operands", _least, _pl_ordered(False), _sp_ordered(False)),
        Functor("max", 1, None, "ordered", "operands", _greatest, _pl_ordered(True), _sp_ordered(True)),
        Functor("abs", 1, 1, "number", "operands", lambda _t, a: abs(a), _pl_abs, _sp_abs, bounded=True),
        Functor("match", 2, 2, "string", "bool", _match, _pl_match, _sp_match),
        Functor(
            "contains",
            2,
            2,
            "string",
            "bool",
            lambda _t, a, s: a in s,
            lambda _t, a, s: s.str.contains(a, literal=True),
            lambda _t, a, s: _sf().contains(s, a),
        ),
    )


FUNCTORS: dict = {f.name: f for f in _table()}
# Functors written as calls ``name(...)`` (the grammar's FUNCTOR and CONSTRAINT terminals)
NAMED = (
    "cat",
    "strlen",
    "substr",
    "ord",
    "to_number",
    "to_string",
    "to_float",
    "to_unsigned",
    "itou",
    "utoi",
    "ftoi",
    "itof",
    "ftou",
    "utof",
    "min",
    "max",
    "abs",
    "range",
    "urange",
    "frange",
    "autoinc",
)
# Generators: functors with several values, each binding the call's variable once
GENERATORS = tuple(name for name, spec in FUNCTORS.items() if spec.generator)
CONSTRAINTS = ("match", "contains")
# Infix operators written as words or symbols -> functor, and prefix operators
OPERATORS = {symbol: name for name, symbol in ast.INFIX_FUNCTORS.items()}
PREFIX = ast.PREFIX_FUNCTORS


def functor(name: str) -> Functor:
    """The functor ``name``; ``record`` builds a record, ``field:<position>:<name>`` reads a
    record's field (see :mod:`spark_datalog.syntax.records`)."""
    if name == "record":
        return _RECORD
    if name.startswith("text@:"):
        return _nested_text(name)
    if name.startswith("field:"):
        return _field(name)
    if name.startswith("field@:"):
        return _recursive_field(name)
    return FUNCTORS[name]


def spec(call) -> Functor:
    """The entry of an ``ast.Call`` or ``ir.Call``: a user-defined functor's own (the program's
    registry, :mod:`spark_datalog.user_functors`), else the intrinsic one named."""
    return call.functor if getattr(call, "functor", None) is not None else functor(call.name)


def evaluate(spec: Functor, type_: Optional[str], values: list):
    """The reference value of functor ``spec`` of type ``type_`` on ``values`` (a double not yet
    made canonical); raises :class:`Undefined`."""
    name = spec.name
    if spec.result == "operands" and type_ == "double":
        values = [float(v) for v in values]
    value = spec.reference(type_, *values)
    if spec.bounded and type(value) is int and not fits(value, type_):
        raise Undefined(f"{name} does not fit {type_}")
    return value
