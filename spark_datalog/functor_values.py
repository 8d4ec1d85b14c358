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
is the function's error (a ``FunctorError``). Recursive record types and ADTs (encoded texts:
:mod:`spark_datalog.recursive_records`) are not supported yet. The engines keep a record as a
``Record`` (reference) or a struct (Polars, Spark: :func:`~spark_datalog.record_types.as_struct`
makes the dict a struct is built from).

Example::

    >>> shape = "[$Shape|Circle|Empty: long, Circle: [r: long]]"
    >>> given(Record((0, Record((3,)))), shape), given({"t": 1, "Circle": {"r": 0}}, shape)
    (('Circle', 3), ('Empty',))
    >>> taken(("Circle", 5), shape)
    Record((0, Record((5,))))
"""

from __future__ import annotations

import numbers
from typing import Any

from .functors import fits
from .recursive_records import is_recursive_type
from .record_types import Record, adt_branches, default_value, field_types, fields, from_struct, is_record

__all__ = ["Record", "given", "holds_recursive", "taken"]


def given(value: Any, type_name: str) -> Any:
    """An engine's value of ``type_name`` (a ``Record``, or a struct's dict) as the function
    gets it."""
    value = from_struct(value)
    if value is None or not is_record(type_name):
        return value
    adt = adt_branches(type_name)
    if adt is None:
        return Record(given(v, t) for v, t in zip(value, field_types(type_name), strict=True))
    branch, struct = adt[1][value[0]]
    if struct is None:
        return (branch,)
    inner = value[[name for name, _ in fields(type_name) or ()].index(branch)]
    return (branch, *(given(v, t) for v, t in zip(inner, field_types(struct), strict=True)))


def taken(value: Any, type_name: str) -> Any:
    """A value the function returned for ``type_name`` as the engines' ``Record``; TypeError
    when it is none of that type."""
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


def _fields(values: Any, types: tuple, what: str) -> list:
    if not isinstance(values, (tuple, list)) or len(values) != len(types):
        raise TypeError(f"returned {values!r}, not the {len(types)} field values of {what}")
    return [taken(v, t) for v, t in zip(values, types, strict=True)]


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


def holds_recursive(type_name: str) -> bool:
    """Whether ``type_name`` is, or has a field (nested too) of, a recursive record type or ADT.

    >>> holds_recursive("[l: @L[h: long, t: @L], n: long]"), holds_recursive("[x: long]")
    (True, False)
    """
    if is_recursive_type(type_name):
        return True
    return is_record(type_name) and any(holds_recursive(t) for t in field_types(type_name))
