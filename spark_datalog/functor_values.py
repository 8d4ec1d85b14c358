"""Record and ADT values of user-defined functors: what the bound Python function gets and returns.

A ``stateful`` functor may take and return records and ADTs (Soufflé hands such a functor its
record table; here the function gets the values themselves), the same form on every engine:

- a record is a :class:`~spark_datalog.record_types.Record`, the tuple of its fields' values in
  declared order (``[1, "a"]`` is ``Record((1, "a"))``), nested records nested;
- an ADT value is the tuple of its branch's name and that branch's fields' values
  (``$Circle([0, 0], 2)`` is ``("Circle", Record((0, 0)), 2)``, ``$Empty`` is ``("Empty",)``);
- any other value as for other functors (``number`` an int, ``float`` a float, ``symbol`` a str).

The function returns a record as any sequence of its fields' values (a tuple, a list, a
``Record``) and an ADT as such a tuple; a value of another shape, or a field of the wrong type,
is the function's error (a ``FunctorError``). Values of recursive record types and ADTs take
the same forms, nested as deep as the value is, with ``nil`` as ``None`` (``[1, [2, nil]]`` is
``Record((1, Record((2, None))))``, ``$Neg($Num(3))`` is ``("Neg", ("Num", 3))``); the engines
keep them as encoded texts (:mod:`spark_datalog.recursive_records`), decoded for the function
and encoded from what it returns. The engines keep a record as a ``Record`` (reference) or a
struct (Polars, Spark: :func:`~spark_datalog.record_types.as_struct` makes the dict a struct is
built from).

Example::

    >>> shape = "[$Shape|Circle|Empty: long, Circle: [r: long]]"
    >>> given(Record((0, Record((3,)))), shape), given({"t": 1, "Circle": {"r": 0}}, shape)
    (('Circle', 3), ('Empty',))
    >>> taken(("Circle", 5), shape)
    Record((0, Record((5,))))
    >>> given("1:18:1:23:nil", "@L[h: long, t: @L]"), taken((1, None), "@L[h: long, t: @L]")
    (Record((1, Record((2, None)))), '1:13:nil')
"""

from __future__ import annotations

import numbers
from typing import Any

from .functors import fits
from .recursive_records import (
    NIL,
    decode,
    encode,
    encoded_fields,
    is_recursive_type,
    recursive_branches,
    recursive_fields,
)
from .record_types import (
    Record,
    adt_branches,
    default_value,
    field_types,
    fields,
    from_struct,
    is_nil_record,
    is_record,
    nil_record,
)

__all__ = ["Record", "given", "holds_compound", "taken"]


def holds_compound(type_name: str) -> bool:
    """Whether values of ``type_name`` are records or ADTs (recursive ones too)."""
    return is_record(type_name) or is_recursive_type(type_name)


def given(value: Any, type_name: str) -> Any:
    """An engine's value of ``type_name`` (a ``Record``, a struct's dict, or a recursive
    type's encoded text) as the function gets it."""
    value = from_struct(value)
    if value is None or is_nil_record(value) or value == NIL and is_recursive_type(type_name):
        return None
    if is_recursive_type(type_name):
        return _given_recursive(value, type_name)
    if not is_record(type_name):
        return value
    adt = adt_branches(type_name)
    if adt is None:
        return Record(given(v, t) for v, t in zip(value, field_types(type_name), strict=True))
    branch, struct = adt[1][value[0]]
    if struct is None:
        return (branch,)
    inner = value[[name for name, _ in fields(type_name) or ()].index(branch)]
    return (branch, *(given(v, t) for v, t in zip(inner, field_types(struct), strict=True)))


def _given_recursive(encoded: str, type_name: str) -> Any:
    values = decode(encoded, type_name) or ()
    branches = recursive_branches(type_name)
    pairs = encoded_fields(type_name, values[0] if branches else None)
    inner = [given(v, t) for v, (_, t) in zip(values, pairs, strict=True)]
    return (branches[values[0]][0], *inner[1:]) if branches else Record(inner)


def taken(value: Any, type_name: str) -> Any:
    """A value the function returned for ``type_name`` as the engines' ``Record`` (a recursive
    type's: its encoded text); TypeError when it is none of that type."""
    if is_recursive_type(type_name):
        return _taken_recursive(value, type_name)
    if not is_record(type_name):
        return _primitive(value, type_name)
    adt = adt_branches(type_name)
    if adt is None:
        return Record(_fields(value, field_types(type_name), type_name))
    names = [branch for branch, _ in adt[1]]
    if not isinstance(value, (tuple, list)) or not value or value[0] not in names:
        raise TypeError(f"returned {value!r}, not a branch of {adt[0]} (its name, then its fields)")
    index = names.index(value[0])
    structs = []
    for branch, struct in adt[1]:
        if struct is not None:
            chosen = branch == value[0]
            structs.append(
                Record(_fields(value[1:], field_types(struct), branch)) if chosen else default_value(struct)
            )
    if adt[1][index][1] is None and len(value) != 1:
        raise TypeError(f"returned {value!r}: branch {value[0]} has no fields")
    return Record((index, *structs))


def _taken_recursive(value: Any, type_name: str) -> str:
    """The encoded text of a value of a recursive type the function returned (``None``: nil)."""
    if value is None:
        return NIL
    branches = recursive_branches(type_name)
    if branches is None:
        pairs = recursive_fields(type_name) or ()
        return encode(_fields(value, tuple(t for _, t in pairs), type_name), type_name)
    names = [branch for branch, _ in branches]
    if not isinstance(value, (tuple, list)) or not value or value[0] not in names:
        raise TypeError(f"returned {value!r}, not a branch of {type_name} (its name, then its fields)")
    index = names.index(value[0])
    types = tuple(t for _, t in branches[index][1])
    return encode((index, *_fields(value[1:], types, value[0])), type_name)


def _fields(values: Any, types: tuple, what: str) -> list:
    if not isinstance(values, (tuple, list)) or len(values) != len(types):
        raise TypeError(f"returned {values!r}, not the {len(types)} field values of {what}")
    return [_field_taken(v, t) for v, t in zip(values, types, strict=True)]


def _field_taken(value: Any, type_name: str) -> Any:
    """A field's value: ``None`` is nil in a field of a record type (recursive or not)."""
    if value is None and is_record(type_name) and not adt_branches(type_name):
        return nil_record(type_name)
    return taken(value, type_name)


def _primitive(value: Any, type_name: str) -> Any:
    """A field's value checked against its type (an int for a float widened)."""
    if type_name == "double" and isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    if type_name == "bool" and isinstance(value, bool):
        return value
    if type_name == "string" and isinstance(value, str):
        return value
    integral = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if type_name in ("int", "long") and integral and fits(int(value), type_name):
        return int(value)
    raise TypeError(f"returned a field {value!r}, not a {type_name} value")
