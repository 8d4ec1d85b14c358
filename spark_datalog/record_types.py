"""Soufflé's record types: their type names, values and the types of every engine.

A record type is a value type written ``[x: long, y: [a: long, b: string]]``: its fields'
names and value types, in order (the canonical spelling analysis, the engines and the storage
use; ``.type P = [x: number, y: number]`` names one). Record types are structural: two
declarations with the same fields are the same type. A record value is a :class:`Record` in
the reference interpreter (a tuple: hashable, equal field by field), a ``pl.Struct`` in the
kernel and a ``StructType`` in Spark and Delta, with the declaration's field names.

Example::

    >>> fields("[x: long, y: [a: long, b: string]]")
    (('x', 'long'), ('y', '[a: long, b: string]'))
    >>> record_type([("x", "long"), ("y", "long")])
    '[x: long, y: long]'
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Optional

PRIMITIVE_TYPES = ("int", "long", "double", "string", "bool")


class Record(tuple):
    """A record value in the reference interpreter: its fields' values, in order.

    >>> Record((1, 2)) == Record((1, 2)), str(Record((1, Record(("a",)))))
    (True, '[1, ["a"]]')
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return "Record(" + tuple.__repr__(self) + ")"

    def __str__(self) -> str:
        return "[" + ", ".join(_text(v) for v in self) + "]"


def _text(value) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def record_type(pairs) -> str:
    """The canonical name of the record type with fields ``pairs`` ((name, type), ...)."""
    return "[" + ", ".join(f"{name}: {type_}" for name, type_ in pairs) + "]"


def is_record(type_name: Optional[str]) -> bool:
    """Whether ``type_name`` names a record type."""
    return isinstance(type_name, str) and type_name.startswith("[")


def is_value_type(type_name: Optional[str]) -> bool:
    """Whether ``type_name`` is a value type: a primitive one or a record type."""
    return type_name in PRIMITIVE_TYPES or (is_record(type_name) and fields(type_name) is not None)


@lru_cache(maxsize=None)
def fields(type_name: str) -> Optional[tuple]:
    """The ``(name, type)`` pairs of a record type, or None when ``type_name`` is none."""
    if not is_record(type_name) or not type_name.endswith("]"):
        return None
    inner = type_name[1:-1]
    pairs = []
    for part in _split(inner) if inner else []:
        name, sep, type_ = part.partition(": ")
        if not sep or not name.isidentifier() or not (type_ in PRIMITIVE_TYPES or fields(type_) is not None):
            return None
        pairs.append((name, type_))
    return tuple(pairs)


def _split(text: str) -> list:
    """``text`` split at the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def field_types(type_name: str) -> tuple:
    """The types of a record type's fields."""
    return tuple(t for _, t in fields(type_name) or ())


def spark_type(type_name: str, primitive) -> Any:
    """The Spark ``StructType`` of a record type; ``primitive`` gives a primitive type's."""
    from pyspark.sql import types as T

    return T.StructType(
        [
            T.StructField(name, spark_type(t, primitive) if is_record(t) else primitive(t), True)
            for name, t in fields(type_name) or ()
        ]
    )


def polars_type(type_name: str, primitive) -> Any:
    """The Polars ``Struct`` of a record type; ``primitive`` gives a primitive type's."""
    import polars as pl

    return pl.Struct(
        [
            pl.Field(name, polars_type(t, primitive) if is_record(t) else primitive(t))
            for name, t in fields(type_name) or ()
        ]
    )


def arrow_type(type_name: str, primitive) -> Any:
    """The Arrow ``struct`` of a record type; ``primitive`` gives a primitive type's."""
    import pyarrow as pa

    return pa.struct(
        [
            pa.field(name, arrow_type(t, primitive) if is_record(t) else primitive(t))
            for name, t in fields(type_name) or ()
        ]
    )


def from_struct(value) -> Any:
    """A value read from a Polars or Arrow struct column (a dict of its fields) as a
    :class:`Record`, nested structs too; any other value as it is.

    >>> from_struct({"x": 1, "y": {"a": "b"}}), from_struct(3)
    (Record((1, Record(('b',)))), 3)
    """
    if isinstance(value, dict):
        return Record(from_struct(v) for v in value.values())
    return value
