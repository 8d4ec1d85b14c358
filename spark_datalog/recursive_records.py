"""Soufflé's recursive types: record types (``.type List = [head: number, tail: List]``) with
``nil``, algebraic data types (``.type E = Num {n: number} | Neg {e: E}``), and groups of them
that refer to each other (``.type A = [x: number, b: B]``, ``.type B = [y: symbol, a: A]``).

Spark cannot have a recursive struct type, so a value of a recursive type is a *text*
(a string column on every engine, in Delta too), one self-delimiting encoding:

- ``nil`` is the text ``nil``;
- a record is the concatenation, field by field, of ``<n>:<t>``: ``t`` the field's text and
  ``n`` its length in characters (decimal). A field's text is an integer's decimal, a bool's
  ``true``/``false``, a symbol itself, a nested record's (or nil's, or ADT value's) encoding;
  a field of a non-recursive record type (or ADT: the struct of its tag and branches) is the
  encoding of that record's fields, ``[1, "a"]`` the text ``1:11:a``;
- an ADT's value is the encoding of the record of its branch's index (branches ordered by name,
  as Soufflé orders them) followed by the branch's fields: ``$Neg($Num(3))`` with branches
  ``Neg`` (0) and ``Num`` (1) is the record ``[0, [1, 3]]``: ``1:0`` + ``6:1:11:3``.

``[1, [2, nil]]`` is ``1:1`` + ``8:1:23:nil`` = ``1:18:1:23:nil``. The encoding is injective: a
record's starts with a digit (so it is never ``nil``), and each field is read back by its length
(a record type, or an ADT's branch, has a fixed number of fields). Equality of values is
equality of texts, so joins, distinct, negation and counting need nothing more; ordering
records (``<``) is an error.

A type is named by its *definition*, ``@`` and its name followed by its record type
(``@List[head: long, tail: @List]``) or by each branch's name and record type, by name
(``@E|Neg[e: @E]|Nil[]|Num[n: long]``), where a field of a type of its recursive group is
``@<name>``. A type of a group of several follows its own definition with the others', by name:
``A`` is ``@A[x: long, b: @B]@B[y: string, a: @A]`` and ``B`` is ``@B[y: string, a: @A]@A[x:
long, b: @B]``, so each field's type is known from the name alone (:func:`recursive_fields`,
:func:`recursive_branches`). A field may be of type int, long, string, bool, a type of the
group, a double, another recursive type or a record type or ADT of those (:func:`is_field_type`).

A double's text is its IEEE-754 bits as a signed 64-bit integer's decimal (Java's
``doubleToLongBits``; ``1.5`` is ``4609434218613702656``), ``-0.0`` written as ``0.0``'s and
every NaN as the one NaN's (``9221120237041090560``): the engines compare doubles so (``-0.0 =
0.0``, NaN = NaN), and equality of values stays equality of texts. Decimal texts would not do:
Python, Polars and Spark write doubles differently (``1e+20``, ``1e20``, ``1.0E20``), and the
bits are exact. Polars and Spark have no bit cast of a double: the kernel and Spark take numpy's
bit view of each batch (:func:`_bit_views`, a Polars ``map_batches`` and a Spark Arrow UDF); a
double is written (``text_of``) as the engines write doubles, ``%.17g``.

Construction (``record`` of a recursive type, a record field's text ``text@:<type>``) and
field reads (``field@:<position>:<name>``, a record field's read back into a struct) are
functors on the encoding, one implementation per engine below: Python for the reference,
Polars and Spark column expressions for the kernel and Spark. Reading a field of ``nil`` (or of
another branch than the one a value is of) is undefined; lowering guards each destructuring
of a record with ``R != nil``, and each branch pattern ``$Neg(X)`` reads the branch's index
first (``field@:0:$ = 0``).

Example::

    >>> LIST = "@List[head: long, tail: @List]"
    >>> encode((1, encode((2, NIL), LIST)), LIST)
    '1:18:1:23:nil'
    >>> text_of("1:18:1:23:nil", LIST), read_field("1:18:1:23:nil", 0, "long")
    ('[1, [2, nil]]', 1)
    >>> E = "@E|Neg[e: @E]|Num[n: long]"
    >>> encode((0, encode((1, 3), E)), E), text_of("1:06:1:11:3", E)
    ('1:06:1:11:3', '$Neg($Num(3))')
"""

from __future__ import annotations

import math
import struct
from functools import lru_cache
from typing import Any, Optional

from .record_types import (
    Record,
    _split,
    adt_branches,
    adt_text,
    fields,
    is_field_name,
    is_nil_record,
    is_record,
    nil_record,
    record_type,
)

NIL = "nil"
FIELD_TYPES = ("int", "long", "double", "string", "bool")

__all__ = [
    "NIL",
    "decode",
    "encode",
    "encoded_fields",
    "group_type",
    "is_recursive",
    "is_recursive_type",
    "read_field",
    "recursive_adt",
    "recursive_branches",
    "recursive_fields",
    "recursive_type",
    "stored_type",
    "text_of",
]


def is_recursive(type_name: Optional[str]) -> bool:
    """Whether ``type_name`` names a recursive record type or ADT (``@List[...]``, ``@E|...``)."""
    return isinstance(type_name, str) and type_name.startswith("@")


def stored_type(type_name: str) -> str:
    """The type a column of ``type_name`` is stored as: ``string`` for a recursive record type,
    also as a field of a (non-recursive) record.

    >>> stored_type("@L[h: long, t: @L]"), stored_type("long")
    ('string', 'long')
    >>> stored_type("[l: @L[h: long, t: @L], n: long]")
    '[l: string, n: long]'
    """
    if is_recursive(type_name):
        return "string"
    if "@" in type_name and is_record(type_name):
        return record_type([(name, stored_type(field)) for name, field in fields(type_name) or ()])
    return type_name


def recursive_type(name: str, pairs) -> str:
    """The definition of recursive record type ``name`` with fields ``pairs`` ((name, type), ...),
    a field of a type of its group typed ``@<name>``.

    >>> recursive_type("L", [("h", "long"), ("t", "@L")])
    '@L[h: long, t: @L]'
    """
    return f"@{name}[" + ", ".join(f"{field}: {type_}" for field, type_ in pairs) + "]"


def recursive_adt(name: str, branches) -> str:
    """The definition of recursive ADT ``name`` with ``branches`` ((branch, pairs), ...),
    ordered by name as Soufflé orders them.

    >>> recursive_adt("E", [("Num", [("n", "long")]), ("Neg", [("e", "@E")]), ("Nil", [])])
    '@E|Neg[e: @E]|Nil[]|Num[n: long]'
    """
    return f"@{name}" + "".join(f"|{b}" + recursive_type("", pairs)[1:] for b, pairs in sorted(branches))


def group_type(definitions: dict, name: str) -> str:
    """The type name of member ``name`` of a recursive group (``definitions``: each member's
    definition): its own definition, then the others' by name.

    >>> group_type({"A": "@A[b: @B]", "B": "@B[a: @A, n: long]"}, "B")
    '@B[a: @A, n: long]@A[b: @B]'
    """
    return definitions[name] + "".join(definitions[n] for n in sorted(definitions) if n != name)


def _split_at(text: str, char: str) -> list:
    """``text`` split before each ``char`` outside brackets."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += {"[": 1, "]": -1}.get(c, 0)
        if c == char and depth == 0 and i > start:
            parts.append(text[start:i])
            start = i
    return parts + [text[start:]]


@lru_cache(maxsize=None)
def _group(type_name: str) -> Optional[dict]:
    """The definitions of the members of ``type_name``'s group by name (its own first)."""
    if not is_recursive(type_name):
        return None
    group = {}
    for definition in _split_at(type_name, "@"):
        name = definition[1:].partition("[")[0].partition("|")[0]
        if not definition.startswith("@") or not all(p.isidentifier() for p in name.split(".")):
            return None
        group[name] = definition
    return group


def _pairs(inner: str, group: dict) -> Optional[tuple]:
    """The ``(name, type)`` pairs of the fields ``inner`` (``h: long, t: @L``), a member of
    the group typed with its type name; None if they are malformed."""
    pairs = []
    for part in _split(inner) if inner else []:
        field, sep, type_ = part.partition(": ")
        if type_.startswith("@") and type_[1:] in group:
            type_ = group_type(group, type_[1:])
        elif not is_field_type(type_):
            return None
        if not sep or not is_field_name(field):
            return None
        pairs.append((field, type_))
    return tuple(pairs)


@lru_cache(maxsize=None)
def _definition(type_name: str) -> Optional[tuple]:
    """``("record", pairs)`` or ``("adt", ((branch, pairs), ...))`` of a recursive type name."""
    group = _group(type_name)
    if not group:
        return None
    name, own = next(iter(group.items()))
    if own[len(name) + 1 :].startswith("["):
        inner = own[len(name) + 2 : -1]
        pairs = _pairs(inner, group) if own.endswith("]") and inner else None
        return ("record", pairs) if pairs else None
    branches = []
    for part in _split_at(own[len(name) + 1 :], "|"):
        branch, _, inner = part[1:].partition("[")
        pairs = _pairs(inner[:-1], group) if part.endswith("]") and branch.isidentifier() else None
        if pairs is None:
            return None
        branches.append((branch, pairs))
    return ("adt", tuple(branches)) if branches == sorted(branches) else None


def recursive_fields(type_name: str) -> Optional[tuple]:
    """The ``(name, type)`` pairs of a recursive record type, a field of a type of its group
    typed with its whole name; None when ``type_name`` names none.

    >>> recursive_fields("@L[h: long, t: @L]")
    (('h', 'long'), ('t', '@L[h: long, t: @L]'))
    >>> recursive_fields("@A[b: @B]@B[a: @A]")
    (('b', '@B[a: @A]@A[b: @B]'),)
    """
    found = _definition(type_name) if is_recursive(type_name) else None
    return found[1] if found and found[0] == "record" else None


def recursive_branches(type_name: Optional[str]) -> Optional[tuple]:
    """The branches ``(branch, pairs)`` of a recursive ADT, by name; None when ``type_name``
    names none.

    >>> recursive_branches("@E|Neg[e: @E]|Num[n: long]")
    (('Neg', (('e', '@E|Neg[e: @E]|Num[n: long]'),)), ('Num', (('n', 'long'),)))
    """
    found = _definition(type_name) if is_recursive(type_name) else None  # type: ignore[arg-type]
    return found[1] if found and found[0] == "adt" else None


def is_recursive_type(type_name: Optional[str]) -> bool:
    """Whether ``type_name`` is a well-formed recursive record type or ADT."""
    return is_recursive(type_name) and _definition(type_name) is not None  # type: ignore[arg-type]


TAG = "$"


def encoded_fields(type_name: str, branch: Optional[int] = None) -> tuple:
    """The ``(name, type)`` pairs of the record a value is encoded as: a recursive record's
    fields; a recursive ADT's ``branch`` index (the field ``$``) and that branch's fields.

    >>> encoded_fields("@E|Neg[e: @E]|Num[n: long]", 1)
    (('$', 'long'), ('n', 'long'))
    """
    branches = recursive_branches(type_name)
    if branches is None or branch is None:
        return recursive_fields(type_name) or ()
    return ((TAG, "long"), *branches[branch][1])


def is_field_type(type_: str) -> bool:
    """Whether a field of a recursive type may be of type ``type_``: an int, long, double,
    string, bool, a recursive type, or a record type (or ADT) of those (encoded as nested text).

    >>> is_field_type("[x: double, l: @L[h: long, t: @L]]"), is_field_type("[x: float]")
    (True, False)
    """
    if is_recursive(type_):
        return _definition(type_) is not None
    nested = fields(type_) if is_record(type_) else None
    return type_ in FIELD_TYPES or (nested is not None and all(is_field_type(t) for _, t in nested))


def field_text(value: Any) -> str:
    """The text of a field's value in an encoding: a record's is its fields' encoding (nil's ``nil``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return double_text(value)
    if is_nil_record(value):  # the nil of a (non-recursive) record type: no encoding is "nil"
        return NIL
    if isinstance(value, tuple):  # a (non-recursive) record's value: its fields encoded
        return encode(value, "")
    return str(value)


NAN_BITS = 0x7FF8000000000000


def double_text(value: float) -> str:
    """A double's text: its IEEE-754 bits as a signed 64-bit integer (-0.0 and NaNs normalised).

    >>> double_text(1.5), double_text(-0.0), double_text(-2.0), double_text(float("nan"))
    ('4609434218613702656', '0', '-4611686018427387904', '9221120237041090560')
    """
    if math.isnan(value):
        return str(NAN_BITS)
    return str(struct.unpack("<q", struct.pack("<d", value + 0.0))[0])  # -0.0 + 0.0 is 0.0


def double_of(text: str) -> float:
    """The double of its text (:func:`double_text`); ValueError if it is none."""
    if not text.removeprefix("-").isdigit() or not -(2**63) <= int(text) < 2**63:
        raise ValueError(f"not a double's bits: {text!r}")
    return struct.unpack("<d", struct.pack("<q", int(text)))[0]


def encode(values, type_name: str) -> str:
    """The encoding of the record of ``type_name`` with field ``values`` (nested ones encoded)."""
    del type_name  # every field's text is its value's (see the module's docstring)
    return "".join(f"{len(text)}:{text}" for text in map(field_text, values))


def _parts(encoded: str, count: int) -> Optional[list]:
    """The texts of the first ``count`` fields of a record's encoding (None if it has fewer)."""
    parts, pos = [], 0
    for _ in range(count):
        colon = encoded.find(":", pos)
        if colon < 0 or not encoded[pos:colon].isdigit():
            return None
        length = int(encoded[pos:colon])
        parts.append(encoded[colon + 1 : colon + 1 + length])
        pos = colon + 1 + length
    return parts if pos <= len(encoded) else None


def _field_value(text: str, type_: str) -> Any:
    """The value of a field's text; ValueError if it is no value of ``type_``."""
    if is_record(type_) and text == NIL:
        return nil_record(type_)
    if is_record(type_):
        pairs = fields(type_) or ()
        texts = _parts(text, len(pairs))
        if texts is None:
            raise ValueError(f"not a {type_}")
        return Record(_field_value(t, ft) for t, (_, ft) in zip(texts, pairs, strict=True))
    if type_ in ("int", "long"):
        if not text.removeprefix("-").isdigit():
            raise ValueError(f"not an integer: {text!r}")
        return int(text)
    if type_ == "bool":
        return text == "true"
    if type_ == "double":
        return double_of(text)
    return text


def read_field(encoded: str, position: int, type_: str) -> Any:
    """The value of field ``position`` (of type ``type_``) of a record's encoding; None for nil
    (or where the text holds no such field: another branch of an ADT).

    >>> read_field("1:01:1", 1, "[x: long, s: string]") is None  # $Num(1) read as another branch
    True
    """
    parts = None if encoded == NIL else _parts(encoded, position + 1)
    try:
        return None if parts is None else _field_value(parts[position], type_)
    except ValueError:  # an integer's text that is none
        return None


def decode(encoded: str, type_name: str) -> Optional[tuple]:
    """The field values of a record's encoding (nested records left encoded); None for nil.
    A recursive ADT's value's are its branch's index and that branch's fields.

    >>> decode("1:18:1:23:nil", "@L[h: long, t: @L]")
    (1, '1:23:nil')
    >>> decode("1:11:3", "@E|Neg[e: @E]|Num[n: long]")
    (1, 3)
    """
    if encoded == NIL:
        return None
    branch = read_field(encoded, 0, "long") if recursive_branches(type_name) else None
    pairs = encoded_fields(type_name, branch)
    parts = _parts(encoded, len(pairs)) or ()
    return tuple(_field_value(t, ft) for t, (_, ft) in zip(parts, pairs, strict=True))


def text_of(encoded: str, type_name: str) -> str:
    """Soufflé's text of a value: ``[1, [2, nil]]``, ``nil``, ``$Neg($Num(3))``, ``$Nil``
    (symbols unquoted, as Soufflé writes records).

    >>> text_of("1:11:3", "@E|Neg[e: @E]|Num[n: long]")
    '$Num(3)'
    """
    values = decode(encoded, type_name)
    if values is None:
        return NIL
    branches = recursive_branches(type_name)
    pairs = encoded_fields(type_name, values[0] if branches else None)
    parts = []
    for value, (_, field_type) in zip(values, pairs, strict=True):
        parts.append(_value_text(value, field_type))
    if branches is None:
        return "[" + ", ".join(parts) + "]"
    branch = "$" + branches[values[0]][0]
    return f"{branch}({', '.join(parts[1:])})" if len(parts) > 1 else branch


def _value_text(value: Any, type_: str) -> str:
    """Soufflé's text of a field's value (symbols unquoted): a record's ``[1, a]``, an ADT's."""
    if is_recursive(type_):
        return text_of(value, type_)
    if adt_branches(type_):
        return adt_text(value, type_, _value_text)
    if is_nil_record(value):
        return NIL
    if is_record(type_):
        pairs = fields(type_) or ()
        return "[" + ", ".join(_value_text(v, t) for v, (_, t) in zip(value, pairs, strict=True)) + "]"
    return format(value, ".17g") if type_ == "double" else field_text(value)


# ---------------------------------------------------------------------------------------------
# The engines' construction and field reads: each field's text, then ``<length>:<text>``


def polars_record(args: tuple) -> Any:
    """The Polars expression of the encoding of a record with fields ``args`` (a bool's text
    is Polars' cast of it, ``true``/``false``)."""
    import polars as pl

    pieces = []
    for arg in args:
        text = arg.cast(pl.String)
        pieces += [text.str.len_chars().cast(pl.String), pl.lit(":"), text]
    return pl.concat_str(pieces)


def polars_text(arg, type_: str) -> Any:
    """The Polars expression of the text of a (non-recursive) record field of type ``type_``
    in a recursive type's encoding (its fields encoded); ``arg`` itself for another type."""
    import polars as pl

    if type_ == "double":
        return _polars_bits(arg, to_bits=True).cast(pl.String)
    if not is_record(type_):
        return arg
    pairs = fields(type_) or ()
    text = polars_record(tuple(polars_text(arg.struct.field(n), t) for n, t in pairs))
    return pl.when(arg.struct.field(pairs[0][0]).is_null()).then(pl.lit(NIL)).otherwise(text)  # nil


def spark_text(arg, type_: str) -> Any:
    """The Spark column of :func:`polars_text`."""
    from pyspark.sql import functions as F

    if type_ == "double":
        return _spark_bits(arg, to_bits=True).cast("string")
    if not is_record(type_):
        return arg
    pairs = fields(type_) or ()
    text = spark_record(tuple(spark_text(arg.getField(n), t) for n, t in pairs))
    return F.when(arg.getField(pairs[0][0]).isNull(), F.lit(NIL)).otherwise(text)  # nil


def spark_record(args: tuple) -> Any:
    """The Spark column of the encoding of a record with fields ``args`` (a bool's text is
    Spark's cast of it, ``true``/``false``)."""
    from pyspark.sql import functions as F

    pieces = []
    for arg in args:
        text = arg.cast("string")
        pieces += [F.char_length(text).cast("string"), F.lit(":"), text]
    return F.concat(*pieces)


def polars_field(encoded, position: int, type_: str) -> Any:
    """The Polars expression of field ``position`` of the encodings ``encoded`` (null for nil).
    The field's text is cut out of each batch eagerly (:func:`_polars_nth_text`): an expression
    skipping field after field would hold the one before three times (exponential in
    ``position``)."""
    import polars as pl

    text = encoded.map_batches(
        lambda batch: _polars_nth_text(batch, position), return_dtype=pl.String, is_elementwise=True
    )
    if is_record(type_):
        pairs = enumerate(fields(type_) or ())
        value = pl.struct([polars_field(text, i, t).alias(n) for i, (n, t) in pairs])
    elif type_ in ("int", "long"):
        value = text.cast(pl.Int32 if type_ == "int" else pl.Int64, strict=False)
    elif type_ == "double":
        value = _polars_bits(text, to_bits=False)
    else:
        value = (text == "true") if type_ == "bool" else text
    return pl.when(encoded != NIL).then(value)


def _polars_nth_text(encodings, position: int):
    """The text of field ``position`` of each encoding (a Polars Series), null where there is
    none: ``<length>:<text>`` skipped ``position`` times, one vectorized step each."""
    import polars as pl

    rest = encodings.cast(pl.String)
    for _ in range(position):
        length = rest.str.extract(r"^([0-9]+):", 1)
        rest = rest.str.slice(length.str.len_chars() + 1 + length.cast(pl.Int64))
    length = rest.str.extract(r"^([0-9]+):", 1)
    return rest.str.slice(length.str.len_chars() + 1, length.cast(pl.Int64)).alias(encodings.name)


def spark_field(encoded, position: int, type_: str) -> Any:
    """The Spark column of field ``position`` of the encodings ``encoded`` (null for nil): the
    fields before it skipped in an ``aggregate``, whose lambda reads each step's value through
    its variable: an expression skipping field after field would hold the one before three
    times (exponential in ``position``). (The value's conversion stays outside the lambdas: a
    double's is a Python UDF, which Spark refuses in a higher-order function.)"""
    from pyspark.sql import functions as F

    skipped = F.array_repeat(F.lit(0), position)
    text = F.aggregate(skipped, encoded, lambda rest, _: _spark_after_first(rest), _spark_first)
    if is_record(type_):
        value = F.struct(*(spark_field(text, i, t).alias(n) for i, (n, t) in enumerate(fields(type_) or ())))
    elif type_ in ("int", "long"):
        value = text.try_cast(type_)
    elif type_ == "double":
        value = _spark_bits(text, to_bits=False)
    else:
        value = (text == F.lit("true")) if type_ == "bool" else text
    return F.when(encoded != F.lit(NIL), value)


def _spark_first(rest):
    """The text of the first field of the encodings ``rest``."""
    from pyspark.sql import functions as F

    length = F.regexp_extract(rest, r"^([0-9]+):", 1)
    return rest.substr(F.char_length(length) + 2, length.try_cast("int"))  # substr counts from 1


def _spark_after_first(rest):
    """The encodings ``rest`` without their first field."""
    from pyspark.sql import functions as F

    length = F.regexp_extract(rest, r"^([0-9]+):", 1)
    return rest.substr(F.char_length(length) + 2 + length.try_cast("int"), F.lit(2**31 - 1))


# ---------------------------------------------------------------------------------------------
# A double's bits (:func:`double_text`) on the kernel and Spark: numpy's bit view of a batch
# (Polars and Spark have no bit cast), in an Arrow array, nulls kept. Arrow, not pandas: pandas
# would make a null double NaN, and a NaN result null.


def _bit_views():
    """The functions between Arrow arrays of doubles and of their bits (signed 64-bit
    integers; :func:`double_text`), nulls kept: nested, so that Spark ships them by value (its
    Python workers need not import this module).

    >>> import pyarrow as pa
    >>> bits_of, double_of = _bit_views()
    >>> bits_of(pa.array([1.5, -0.0, None, float("nan")])).to_pylist()
    [4609434218613702656, 0, None, 9221120237041090560]
    >>> double_of(pa.array([-4611686018427387904, None, 9218868437227405312])).to_pylist()
    [-2.0, None, inf]
    """
    nan_bits = NAN_BITS

    def bits_of(doubles):
        import numpy as np
        import pyarrow as pa

        values = doubles.to_numpy(zero_copy_only=False) + 0.0  # -0.0 + 0.0 is 0.0; null is NaN
        bits = np.where(np.isnan(values), np.int64(nan_bits), values.view(np.int64))
        return pa.array(bits, type=pa.int64(), mask=doubles.is_null().to_numpy(zero_copy_only=False))

    def double_of(bits):
        import numpy as np
        import pyarrow as pa

        values = bits.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64).view(np.float64)
        return pa.array(values, type=pa.float64(), mask=bits.is_null().to_numpy(zero_copy_only=False))

    return bits_of, double_of


def _polars_bits(value, to_bits: bool):
    """The Polars expression of the bits of the doubles ``value`` (``to_bits``) or of the
    doubles of the bits ``value``: :func:`_bit_views` on each batch."""
    import polars as pl

    view = _bit_views()[0 if to_bits else 1]
    dtype = pl.Int64 if to_bits else pl.Float64

    def apply(batch):
        return pl.Series(batch.name, view(batch.to_arrow()), dtype=dtype)

    source = value.cast(pl.Float64 if to_bits else pl.Int64, strict=False)
    return source.map_batches(apply, return_dtype=dtype, is_elementwise=True)


def _spark_bits(value, to_bits: bool):
    """The Spark column of :func:`_polars_bits`: an Arrow UDF."""
    from pyspark.sql import functions as F

    view = _bit_views()[0 if to_bits else 1]
    source = value.cast("double") if to_bits else value.try_cast("long")
    return F.arrow_udf(view, "long" if to_bits else "double")(source)  # type: ignore[call-overload]
