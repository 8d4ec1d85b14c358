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
        return "nil" if is_nil_record(self) else "[" + ", ".join(_text(v) for v in self) + "]"


def nil_record(type_name: str) -> Record:
    """Soufflé's ``nil`` of a (non-recursive) record type: the record whose fields are all null
    (a struct of nulls in Polars, Spark and Delta, never a null struct: equal to itself in every
    join, comparison and group; no record of values has a null field).

    >>> nil_record("[x: long, y: long]"), str(nil_record("[x: long]"))
    (Record((None, None)), 'nil')
    """
    return Record((None,) * len(fields(type_name) or ()))


def is_nil_record(value) -> bool:
    """Whether ``value`` is the ``nil`` of a record type (:func:`nil_record`)."""
    return isinstance(value, tuple) and len(value) > 0 and all(v is None for v in value)


def _text(value) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def order_key(value) -> Any:
    """``value``'s place in its type's order: a record's fields in turn, ``nil`` first (as
    Spark and Polars order a struct of nulls); any other value itself.

    >>> sorted([Record((1, 2)), Record((None, None)), Record((0, 5))], key=order_key)
    [Record((None, None)), Record((0, 5)), Record((1, 2))]
    """
    if isinstance(value, Record):
        return (0,) if is_nil_record(value) else (1, *map(order_key, value))
    return value


def record_type(pairs) -> str:
    """The canonical name of the record type with fields ``pairs`` ((name, type), ...)."""
    return "[" + ", ".join(f"{name}: {type_}" for name, type_ in pairs) + "]"


def is_record(type_name: Optional[str]) -> bool:
    """Whether ``type_name`` names a record type."""
    return isinstance(type_name, str) and type_name.startswith("[")


def is_value_type(type_name: Optional[str]) -> bool:
    """Whether ``type_name`` is a value type: a primitive one or a record type (recursive ones
    too: :mod:`spark_datalog.recursive_records`)."""
    from .recursive_records import is_recursive_type

    if isinstance(type_name, str) and type_name.startswith("@"):
        return is_recursive_type(type_name)
    return type_name in PRIMITIVE_TYPES or (is_record(type_name) and fields(type_name) is not None)


@lru_cache(maxsize=None)
def fields(type_name: str) -> Optional[tuple]:
    """The ``(name, type)`` pairs of a record type, or None when ``type_name`` is none."""
    if not is_record(type_name) or not type_name.endswith("]"):
        return None
    inner = type_name[1:-1]
    pairs: list = []
    for part in _split(inner) if inner else []:
        name, sep, type_ = part.partition(": ")
        if (
            not sep
            or not (is_field_name(name) or (not pairs and _is_tag(name)))
            or not (type_ in PRIMITIVE_TYPES or fields(type_) is not None or _is_recursive_type(type_))
        ):
            return None
        pairs.append((name, type_))
    return tuple(pairs)


def is_field_name(name: str) -> bool:
    """Whether ``name`` names a field: an identifier, or Soufflé's ``?name``."""
    return name.removeprefix("?").isidentifier()


def _is_recursive_type(type_name: str) -> bool:
    """Whether a field's type is a recursive record type or ADT (its values are encoded texts)."""
    from .recursive_records import is_recursive_type

    return is_recursive_type(type_name)


def _is_tag(name: str) -> bool:
    """Whether ``name`` is an ADT's tag field ``$Shape|Circle|Square`` (see :func:`adt_type`;
    the ADT of a component's instance is named ``c.Shape``)."""
    adt, *branches = name[1:].split("|")
    names = [*adt.split("."), *branches]
    return name.startswith("$") and bool(branches) and all(p.isidentifier() for p in names)


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


# Soufflé's algebraic data types. An ADT ``.type Shape = Square {s: number} | Circle {r: number}
# | Dot {}`` is the record type of its tag and one struct per branch that has fields:
# ``[$Shape|Circle|Dot|Square: long, Circle: [r: long], Square: [s: long]]``. The tag field's
# name holds the ADT's name and its branches in Soufflé's order (by name); its value is the index
# of the value's branch. The structs of the other branches hold their fields' defaults (0, "",
# false), so that a value has one representation and record equality is ADT equality (joins,
# negation, Delta) with no nulls. Being a record type, an ADT is a Spark/Polars/Arrow struct with
# nothing more for the engines and the storage to do.


def adt_type(name: str, branches) -> str:
    """The value type of ADT ``name`` with ``branches`` ((branch, ((field, type), ...)), ...).

    >>> adt_type("Shape", [("Square", (("s", "long"),)), ("Dot", ())])
    '[$Shape|Dot|Square: long, Square: [s: long]]'
    """
    ordered = sorted(branches)
    tag = "$" + "|".join([name, *(branch for branch, _ in ordered)])
    return record_type([(tag, "long"), *((b, record_type(pairs)) for b, pairs in ordered if pairs)])


def adt_branches(type_name: Optional[str]) -> Optional[tuple]:
    """An ADT's name and branches ``(branch, record type or None)`` by tag, or None if no ADT.

    >>> adt_branches("[$Shape|Dot|Square: long, Square: [s: long]]")
    ('Shape', (('Dot', None), ('Square', '[s: long]')))
    """
    pairs = fields(type_name) if is_record(type_name) else None  # type: ignore[arg-type]
    if not pairs or not _is_tag(pairs[0][0]):
        return None
    name, *branches = pairs[0][0][1:].split("|")
    structs = dict(pairs[1:])
    return name, tuple((branch, structs.get(branch)) for branch in branches)


def type_text(type_name: Optional[str]) -> str:
    """How messages name a type: an ADT or a recursive record type by its name, another type by
    its value type.

    >>> type_text("@List[head: long, tail: @List]"), type_text("@E|Num[n: long]")
    ('List', 'E')
    """
    if isinstance(type_name, str) and type_name.startswith("@"):
        return type_name[1:].partition("[")[0].partition("|")[0]
    adt = adt_branches(type_name)
    return adt[0] if adt else str(type_name)


def default_value(type_name: str) -> Any:
    """The value an ADT's struct of a branch a value is not of holds: 0, "", false, ``nil`` (a
    recursive type's: a text that is never read), or a record of those."""
    if type_name.startswith("@"):
        return "nil"
    if is_record(type_name):
        return Record(default_value(t) for t in field_types(type_name))
    return {"double": 0.0, "string": "", "bool": False}.get(type_name, 0)


def adt_text(value, type_name: str, text) -> str:
    """An ADT value as Soufflé writes it: ``$Circle(3)``, ``$Dot``; ``text(value, type)`` writes a field.

    >>> shape = "[$Shape|Circle|Dot: long, Circle: [r: long]]"
    >>> adt_text(Record((1, Record((3,)))), shape, lambda v, t: str(v))
    '$Dot'
    """
    _, branches = adt_branches(type_name)  # type: ignore[misc]
    branch, struct = branches[value[0]]
    if struct is None:
        return "$" + branch
    position = [name for name, _ in fields(type_name)].index(branch)  # type: ignore[union-attr]
    inner = value[position]
    return (
        f"${branch}(" + ", ".join(text(v, t) for v, t in zip(inner, field_types(struct), strict=True)) + ")"
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


def as_struct(value, type_name: str) -> Any:
    """A value of ``type_name``, a record (a tuple) as the dict of its fields a Polars or Spark
    struct is built from, nested records too; any other value as it is.

    >>> as_struct(Record((1, Record(("b",)))), "[x: long, y: [a: string]]")
    {'x': 1, 'y': {'a': 'b'}}
    """
    if value is None or not is_record(type_name):
        return value
    if is_nil_record(value) and not adt_branches(type_name):
        return dict.fromkeys(name for name, _ in fields(type_name) or ())
    return {name: as_struct(v, t) for v, (name, t) in zip(value, fields(type_name) or (), strict=True)}
