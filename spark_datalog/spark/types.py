"""Datalog value types <-> Spark SQL types."""

from __future__ import annotations

from pyspark.sql import types as T

from .. import record_types
from ..recursive_records import stored_type

SPARK_TYPES = {
    "int": T.IntegerType(),
    "long": T.LongType(),
    "double": T.DoubleType(),
    "string": T.StringType(),
    "bool": T.BooleanType(),
}

# Input column types accepted for a Datalog type: the type itself plus lossless integral widening.
ACCEPTED_INPUT_TYPES = {
    "int": (T.IntegerType(), T.ShortType(), T.ByteType()),
    "long": (T.LongType(), T.IntegerType(), T.ShortType(), T.ByteType()),
    "double": (T.DoubleType(),),
    "string": (T.StringType(),),
    "bool": (T.BooleanType(),),
}


def spark_type(type_name: str) -> T.DataType:
    """The Spark type of a Datalog type name (``int long double string bool``, a record type)."""
    if record_types.is_record(type_name):
        return record_types.spark_type(type_name, spark_type)
    try:
        return SPARK_TYPES[stored_type(type_name)]
    except KeyError:
        raise ValueError(f"unknown Datalog type {type_name!r}") from None


def datalog_type(data_type: T.DataType) -> str | None:
    """The Datalog type name of a Spark type, or None when the language has no such type."""
    if isinstance(data_type, (T.ByteType, T.ShortType)):
        return "int"
    if isinstance(data_type, T.StringType):
        return "string"
    if isinstance(data_type, T.StructType):
        pairs = [(f.name, datalog_type(f.dataType)) for f in data_type.fields]
        return None if any(t is None for _, t in pairs) else record_types.record_type(pairs)
    for name, candidate in SPARK_TYPES.items():
        if data_type == candidate:
            return name
    return None


def accepts(type_name: str, data_type: T.DataType) -> bool:
    """True when a column of Spark type ``data_type`` can feed a column of ``type_name``.

    Strings from Spark may carry a collation; any StringType is accepted for ``string``.
    """
    if stored_type(type_name) == "string":
        return isinstance(data_type, T.StringType)
    if record_types.is_record(type_name):  # a field of a recursive type: its encoding's string
        return datalog_type(data_type) == stored_type(type_name)
    return any(data_type == t for t in ACCEPTED_INPUT_TYPES[type_name])


def schema(names, type_names) -> T.StructType:
    """A StructType with the given column names and Datalog types (all nullable, as Spark infers)."""
    return T.StructType(
        [T.StructField(n, spark_type(t), True) for n, t in zip(names, type_names, strict=True)]
    )
