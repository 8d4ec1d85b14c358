"""Soufflé's recursive record types (``.type List = [head: number, tail: List]``) and ``nil``.

Spark cannot have a recursive struct type, so a value of a recursive record type is a *text*
(a string column on every engine, in Delta too), one self-delimiting encoding:

- ``nil`` is the text ``nil``;
- a record is the concatenation, field by field, of ``<n>:<t>``: ``t`` the field's text and
  ``n`` its length in characters (decimal). A field's text is an integer's decimal, a bool's
  ``true``/``false``, a symbol itself, a nested record's (or nil's) encoding.

``[1, [2, nil]]`` is ``1:1`` + ``8:1:23:nil`` = ``1:18:1:23:nil``. The encoding is injective: a
record's starts with a digit (so it is never ``nil``), and each field is read back by its length
(a type has a fixed number of fields). Equality of values is equality of texts, so joins,
distinct, negation and counting need nothing more; ordering records (``<``) is an error.

The type is named ``@List[head: long, tail: @List]``: ``@``, its name, and its record type whose
fields of the type itself are ``@List``. A field may be of type int, long, string, bool or the
type itself (not a double, another record type, an ADT: a ``ParseError`` "not supported yet").

Construction (``record`` of a recursive type) and field reads (``field@:<position>:<name>``) are
functors on the encoding, one implementation per engine below: Python for the reference,
Polars and Spark column expressions for the kernel and Spark. Reading a field of ``nil`` is
undefined; lowering guards each destructuring with ``R != nil``.

Example::

    >>> LIST = "@List[head: long, tail: @List]"
    >>> encode((1, encode((2, NIL), LIST)), LIST)
    '1:18:1:23:nil'
    >>> text_of("1:18:1:23:nil", LIST), read_field("1:18:1:23:nil", 0, "long")
    ('[1, [2, nil]]', 1)
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Optional

from .record_types import _split, fields, is_record, record_type

NIL = "nil"
FIELD_TYPES = ("int", "long", "string", "bool")

__all__ = [
    "NIL",
    "decode",
    "encode",
    "is_recursive",
    "read_field",
    "recursive_fields",
    "recursive_type",
    "stored_type",
    "text_of",
]


def is_recursive(type_name: Optional[str]) -> bool:
    """Whether ``type_name`` names a recursive record type (``@List[...]``)."""
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
    """The type name of recursive record type ``name`` with fields ``pairs`` ((name, type), ...),
    a field of the type itself typed ``@<name>``.

    >>> recursive_type("L", [("h", "long"), ("t", "@L")])
    '@L[h: long, t: @L]'
    """
    return f"@{name}[" + ", ".join(f"{field}: {type_}" for field, type_ in pairs) + "]"


@lru_cache(maxsize=None)
def recursive_fields(type_name: str) -> Optional[tuple]:
    """The ``(name, type)`` pairs of a recursive record type, a field of the type itself typed
    with its whole name; None when ``type_name`` names none.

    >>> recursive_fields("@L[h: long, t: @L]")
    (('h', 'long'), ('t', '@L[h: long, t: @L]'))
    """
    if not is_recursive(type_name) or not type_name.endswith("]") or "[" not in type_name:
        return None
    name, _, inner = type_name[1:-1].partition("[")
    pairs = []
    for part in _split(inner):
        field, sep, type_ = part.partition(": ")
        if not sep or not field.isidentifier() or type_ not in (*FIELD_TYPES, "@" + name):
            return None
        pairs.append((field, type_name if type_ == "@" + name else type_))
    return tuple(pairs) if pairs else None


def _field_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def encode(values, type_name: str) -> str:
    """The encoding of the record of ``type_name`` with field ``values`` (nested ones encoded)."""
    del type_name  # every field's text is its value's (see the module's docstring)
    return "".join(f"{len(text)}:{text}" for text in map(_field_text, values))


def _parts(encoded: str, count: int) -> list:
    """The texts of the first ``count`` fields of a record's encoding."""
    parts, pos = [], 0
    for _ in range(count):
        colon = encoded.index(":", pos)
        length = int(encoded[pos:colon])
        parts.append(encoded[colon + 1 : colon + 1 + length])
        pos = colon + 1 + length
    return parts


def _field_value(text: str, type_: str) -> Any:
    if type_ in ("int", "long"):
        return int(text)
    if type_ == "bool":
        return text == "true"
    return text


def read_field(encoded: str, position: int, type_: str) -> Any:
    """The value of field ``position`` (of type ``type_``) of a record's encoding; None for nil."""
    if encoded == NIL:
        return None
    return _field_value(_parts(encoded, position + 1)[position], type_)


def decode(encoded: str, type_name: str) -> Optional[tuple]:
    """The field values of a record's encoding (nested records left encoded); None for nil.

    >>> decode("1:18:1:23:nil", "@L[h: long, t: @L]")
    (1, '1:23:nil')
    """
    if encoded == NIL:
        return None
    pairs = recursive_fields(type_name) or ()
    return tuple(_field_value(t, ft) for t, (_, ft) in zip(_parts(encoded, len(pairs)), pairs, strict=True))


def text_of(encoded: str, type_name: str) -> str:
    """Soufflé's text of a value: ``[1, [2, nil]]``, ``nil`` (symbols unquoted, as Soufflé
    writes records)."""
    values = decode(encoded, type_name)
    if values is None:
        return NIL
    parts = []
    for value, (_, field_type) in zip(values, recursive_fields(type_name) or (), strict=True):
        parts.append(text_of(value, field_type) if is_recursive(field_type) else _field_text(value))
    return "[" + ", ".join(parts) + "]"


# ---------------------------------------------------------------------------------------------
# The engines' construction and field reads: each field's text, then ``<length>:<text>``


def polars_record(type_name: str, args: tuple) -> Any:
    """The Polars expression of the encoding of a record of ``type_name`` with fields ``args``."""
    import polars as pl

    pieces = []
    for arg, (_, field_type) in zip(args, recursive_fields(type_name) or (), strict=True):
        text = _polars_text(arg, field_type)
        pieces += [text.str.len_chars().cast(pl.String), pl.lit(":"), text]
    return pl.concat_str(pieces)


def _polars_text(arg, field_type: str):
    import polars as pl

    if field_type == "bool":
        return pl.when(arg).then(pl.lit("true")).otherwise(pl.lit("false"))
    return arg.cast(pl.String)


def spark_record(type_name: str, args: tuple) -> Any:
    """The Spark column of the encoding of a record of ``type_name`` with fields ``args``."""
    from pyspark.sql import functions as F

    pieces = []
    for arg, (_, field_type) in zip(args, recursive_fields(type_name) or (), strict=True):
        text = (
            F.when(arg, F.lit("true")).otherwise(F.lit("false"))
            if field_type == "bool"
            else arg.cast("string")
        )
        pieces += [F.char_length(text).cast("string"), F.lit(":"), text]
    return F.concat(*pieces)


def polars_field(encoded, position: int, type_: str) -> Any:
    """The Polars expression of field ``position`` of the encodings ``encoded`` (null for nil)."""
    import polars as pl

    rest, text = encoded, encoded
    for index in range(position + 1):
        length = rest.str.extract(r"^([0-9]+):", 1)
        start = length.str.len_chars() + 1
        size = length.cast(pl.Int64)
        if index == position:
            text = rest.str.slice(start, size)
        rest = rest.str.slice(start + size)
    if type_ in ("int", "long"):
        value = text.cast(pl.Int32 if type_ == "int" else pl.Int64, strict=False)
    else:
        value = (text == "true") if type_ == "bool" else text
    return pl.when(encoded != NIL).then(value)


def spark_field(encoded, position: int, type_: str) -> Any:
    """The Spark column of field ``position`` of the encodings ``encoded`` (null for nil)."""
    from pyspark.sql import functions as F

    rest, text = encoded, encoded
    for index in range(position + 1):
        length = F.regexp_extract(rest, r"^([0-9]+):", 1)
        start = F.char_length(length) + 2  # substr counts from 1
        size = length.try_cast("int")
        if index == position:
            text = rest.substr(start, size)
        rest = rest.substr(start + size, F.lit(2**31 - 1))
    if type_ in ("int", "long"):
        value = text.try_cast(type_)
    else:
        value = (text == F.lit("true")) if type_ == "bool" else text
    return F.when(encoded != F.lit(NIL), value)
