"""Column types of stored relations, and their Spark, Arrow and Delta spellings.

A stored relation is its declared columns (name, type) followed by the signed count column
``_count`` (Delta ``long``). Every column is nullable in the Delta schema (what Spark writes and
what other engines expect); the engine itself never stores nulls. ``_count`` is reserved: a
relation may not declare a column of that name.

Type names are the language's: ``int long double string bool``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Sequence

from .. import record_types
from ..recursive_records import stored_type
from ..errors import SchemaError

if TYPE_CHECKING:
    import pyarrow as pa
    from deltalake import Schema
    from pyspark.sql import DataFrame
    from pyspark.sql import types as T

COUNT_COLUMN = "_count"
TYPES = ("int", "long", "double", "string", "bool")

# Delta primitive type name -> language type name.
_FROM_DELTA = {"integer": "int", "long": "long", "double": "double", "string": "string", "boolean": "bool"}
_TO_DELTA = {v: k for k, v in _FROM_DELTA.items()}

Columns = tuple  # tuple[tuple[str, str], ...]: (name, type) pairs in order
# What functions that only read the pairs take: Columns, or the pairs in a list.
ColumnPairs = Sequence[tuple[str, str]]


def normalise_columns(columns: Iterable, relation: str) -> Columns:
    """``(name, type)`` pairs from pairs or objects with ``.name`` and ``.type`` (analysis ``Column``).

    Raises ``SchemaError`` for an unknown type, a duplicate name or the reserved ``_count``.

    Example::

        normalise_columns([("x", "long"), ("y", "string")], "arc")
    """
    out = []
    seen = set()
    for column in columns:
        if isinstance(column, (tuple, list)) and len(column) == 2:
            name, type_ = column
        else:
            name, type_ = column.name, column.type
        if not record_types.is_value_type(type_):
            raise SchemaError(
                f"relation {relation}: column {name} has unknown type {type_!r} "
                f"(expected one of {', '.join(TYPES)} or a record type)"
            )
        if name == COUNT_COLUMN:
            raise SchemaError(
                f"relation {relation}: column name {COUNT_COLUMN} is reserved for the signed count"
            )
        if name in seen:
            raise SchemaError(f"relation {relation}: column {name} appears twice")
        seen.add(name)
        out.append((str(name), str(type_)))
    return tuple(out)


def spark_type(type_name: str) -> "T.DataType":
    """The Spark SQL type of a language type (``long`` -> ``LongType()``; a record type: a
    ``StructType``)."""
    from pyspark.sql import types as T

    if record_types.is_record(type_name):
        return record_types.spark_type(type_name, spark_type)
    return {
        "int": T.IntegerType(),
        "long": T.LongType(),
        "double": T.DoubleType(),
        "string": T.StringType(),
        "bool": T.BooleanType(),
    }[stored_type(type_name)]


def spark_schema(columns: Columns, with_counts: bool = True) -> "T.StructType":
    """The Spark ``StructType`` of a stored relation (all fields nullable)."""
    from pyspark.sql import types as T

    fields = [T.StructField(name, spark_type(t), True) for name, t in columns]
    if with_counts:
        fields.append(T.StructField(COUNT_COLUMN, T.LongType(), True))
    return T.StructType(fields)


def arrow_type(type_name: str) -> "pa.DataType":
    """The Arrow type of a language type (exact widths: ``int`` is int32, ``long`` int64)."""
    import pyarrow as pa

    if record_types.is_record(type_name):
        return record_types.arrow_type(type_name, arrow_type)
    return {
        "int": pa.int32(),
        "long": pa.int64(),
        "double": pa.float64(),
        "string": pa.string(),
        "bool": pa.bool_(),
    }[stored_type(type_name)]


def without_columns(rows: int) -> "pa.Table":
    """An Arrow table of ``rows`` rows and no columns (a nullary relation's facts)."""
    import pyarrow as pa

    return pa.table({"_": pa.nulls(rows, pa.bool_())}).drop_columns(["_"])


def arrow_schema(columns: Columns, with_counts: bool = True) -> "pa.Schema":
    """The Arrow schema of a stored relation, used to declare the Delta table's schema."""
    import pyarrow as pa

    fields = [pa.field(name, arrow_type(t), nullable=True) for name, t in columns]
    if with_counts:
        fields.append(pa.field(COUNT_COLUMN, pa.int64(), nullable=True))
    return pa.schema(fields)


def delta_schema(columns: Columns, with_counts: bool = True) -> "Schema":
    """The ``deltalake.Schema`` of a stored relation."""
    from deltalake import Schema

    return Schema.from_arrow(arrow_schema(columns, with_counts))


def columns_from_delta(schema, relation: str, allow_missing_count: bool = False) -> tuple:
    """``(columns, has_count)`` read from a ``deltalake.Schema``.

    Raises ``SchemaError`` for a column whose Delta type has no language type (nested, decimal,
    timestamp...) and, unless ``allow_missing_count``, when the ``_count`` column is missing.
    """
    import pyarrow as pa
    from deltalake.schema import StructType as DeltaStruct

    columns = []
    has_count = False
    for field in schema.fields:
        delta_name = getattr(field.type, "type", None)
        if field.name == COUNT_COLUMN:
            if delta_name != "long":
                raise SchemaError(
                    f"relation {relation}: column {COUNT_COLUMN} has Delta type "
                    f"{delta_name or field.type}, expected long"
                )
            has_count = True
            continue
        if delta_name == "struct" or isinstance(field.type, DeltaStruct):
            arrow = pa.schema(schema.to_arrow()).field(field.name).type
            columns.append((field.name, _from_arrow(field.name, arrow, relation)))
            continue
        if delta_name not in _FROM_DELTA:
            raise SchemaError(
                f"relation {relation}: column {field.name} has Delta type "
                f"{delta_name or field.type}, which has no Datalog type"
            )
        columns.append((field.name, _FROM_DELTA[delta_name]))
    if not has_count and not allow_missing_count:
        raise SchemaError(
            f"relation {relation}: the table has no {COUNT_COLUMN} column; it was "
            f"not written by spark_datalog"
        )
    return tuple(columns), has_count


def columns_from_spark(struct, relation: str) -> Columns:
    """``(name, type)`` pairs of a Spark ``StructType`` whose fields all have language types."""
    from pyspark.sql import types as T

    names = {
        T.IntegerType: "int",
        T.LongType: "long",
        T.DoubleType: "double",
        T.StringType: "string",
        T.BooleanType: "bool",
    }
    out = []
    for field in struct.fields:
        type_name = names.get(type(field.dataType))
        if isinstance(field.dataType, T.StructType):
            type_name = record_types.record_type(columns_from_spark(field.dataType, relation))
        if type_name is None:
            raise SchemaError(
                f"relation {relation}: column {field.name} has Spark type "
                f"{field.dataType.simpleString()}, which has no Datalog type"
            )
        out.append((field.name, type_name))
    return tuple(out)


def _from_arrow(name: str, arrow, relation: str) -> str:
    """The language type of an Arrow type read from a Delta table (a struct: a record type)."""
    import pyarrow as pa

    if pa.types.is_struct(arrow):
        pairs = [(f.name, _from_arrow(f.name, f.type, relation)) for f in arrow]
        return record_types.record_type(pairs)
    for type_name in TYPES:
        if arrow_type(type_name) == arrow or (type_name == "string" and pa.types.is_large_string(arrow)):
            return type_name
    raise SchemaError(f"relation {relation}: column {name} has Delta type {arrow}, which has no Datalog type")


def describe(columns: Sequence) -> str:
    """``x: long, y: string`` for messages."""
    return ", ".join(f"{name}: {type_}" for name, type_ in columns)


def check_same_columns(relation: str, expected: Columns, actual: Columns, what: str) -> None:
    """Raise ``SchemaError`` naming the relation and both column lists when they differ."""
    if tuple(expected) != tuple(actual):
        raise SchemaError(
            f"relation {relation}: {what} has columns ({describe(actual)}) but "
            f"({describe(expected)}) are expected"
        )


def conform(df, columns: Columns, relation: str, with_counts: bool = True) -> "DataFrame":
    """Select the declared columns (and ``_count``) of ``df`` in order, cast to their exact types.

    Spark and Delta must agree on integer widths, so every column is cast. Raises ``SchemaError``
    naming the missing columns when ``df`` lacks some.
    """
    from pyspark.sql import functions as F

    wanted = [name for name, _ in columns] + ([COUNT_COLUMN] if with_counts else [])
    present = set(df.columns)
    missing = [name for name in wanted if name not in present]
    if missing:
        raise SchemaError(
            f"relation {relation}: the frame lacks column(s) {', '.join(missing)} "
            f"(it has {', '.join(df.columns) or 'none'})"
        )
    actual = {field.name: field.dataType for field in df.schema.fields}
    for name, type_ in columns:
        _check_castable(relation, name, actual[name], type_)
    exprs = [F.col(name).cast(spark_type(t)).alias(name) for name, t in columns]
    if with_counts:
        exprs.append(F.col(COUNT_COLUMN).cast("long").alias(COUNT_COLUMN))
    return df.select(*exprs)


# Casts that keep the value: same type, between integer widths (Spark raises on overflow in ANSI
# mode), integers to double. Anything else (string to long, double to long...) is a schema error.
_CASTABLE = {
    "int": {"int", "long"},
    "long": {"int", "long"},
    "double": {"int", "long", "double"},
    "string": {"string"},
    "bool": {"bool"},
}


def _check_castable(relation: str, name: str, data_type, target: str) -> None:
    try:
        source = columns_from_spark(_single_field_struct(name, data_type), relation)[0][1]
    except SchemaError:
        source = data_type.simpleString()
    stored = stored_type(target)
    if source not in _CASTABLE.get(stored, {stored}):
        raise SchemaError(f"relation {relation}: column {name} has type {source} but {target} is declared")


def _single_field_struct(name: str, data_type):
    from pyspark.sql import types as T

    return T.StructType([T.StructField(name, data_type, True)])
