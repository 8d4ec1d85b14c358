"""Datalog column types as Polars and Arrow types, and the kernel's "unsupported" error."""

from __future__ import annotations

import polars as pl

from .. import record_types
from ..errors import DatalogError
from ..recursive_records import is_recursive, stored_type
from ..storage.schema import arrow_type

POLARS_TYPES = {
    "int": pl.Int32,
    "long": pl.Int64,
    "double": pl.Float64,
    "string": pl.String,
    "bool": pl.Boolean,
}


class _ArrowTypes(dict):
    """Arrow types by language type name; a record type's is made when first asked for."""

    def __missing__(self, type_name: str):
        if not record_types.is_record(type_name) and not is_recursive(type_name):
            raise KeyError(type_name)
        self[type_name] = arrow_type(type_name)
        return self[type_name]


ARROW_TYPES = _ArrowTypes({name: arrow_type(name) for name in POLARS_TYPES})

# The one column a frame of no columns carries so that it can hold a row: Polars keeps no
# height for a frame without columns (``select()`` of one row gives none).
UNIT = "__unit"


class KernelUnsupported(DatalogError):
    """Something the kernel cannot compute exactly as ``reference.terms`` does (it refuses
    rather than compute something else), such as a sum of doubles."""


def polars_type(type_name: str) -> pl.DataType:
    """The Polars type of a Datalog type name.

    >>> polars_type("long")
    Int64
    """
    if record_types.is_record(type_name):
        return record_types.polars_type(type_name, polars_type)
    try:
        return POLARS_TYPES[stored_type(type_name)]  # type: ignore[return-value]
    except KeyError:
        raise ValueError(f"unknown Datalog type {type_name!r}") from None


def is_integer(dtype) -> bool:
    """Whether ``dtype`` is a Polars integer type."""
    return dtype.is_integer()


def is_float(dtype) -> bool:
    """Whether ``dtype`` is a Polars float type."""
    return dtype.is_float()
