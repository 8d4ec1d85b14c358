"""Turn user-supplied DataFrames and program facts into the EDB frames a plan scans.

A frame is matched to its EDB relation positionally: it must have the relation's arity, and each
column's Spark type must fit the relation's column type (integral widening such as int -> long is
accepted). The frame handed on is renamed to the relation's column names and cast to its exact
types. Nulls have no meaning in Datalog: rows holding one are refused (``on_null="error"``) or
dropped (``on_null="drop"``).
"""

from __future__ import annotations

import operator
from functools import reduce
from typing import Callable, Mapping, Optional

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ..analysis.checked import CheckedProgram, RelationSchema
from ..errors import InputError, SchemaError
from ..reference.terms import normal
from .types import accepts, datalog_type, schema, spark_type

ON_NULL = ("error", "drop")


def prepare_inputs(
    spark: SparkSession,
    checked: CheckedProgram,
    inputs: Optional[Mapping[str, DataFrame]] = None,
    on_null: str = "error",
) -> dict:
    """Relation name -> DataFrame for every EDB relation of ``checked``.

    Each frame carries the relation's column names and types and includes the program's facts
    of that relation. Raises SchemaError (arity or type mismatch), InputError (unknown or missing
    relation, nulls when ``on_null="error"``).
    """
    if on_null not in ON_NULL:
        raise ValueError(f"on_null must be one of {ON_NULL}, not {on_null!r}")
    inputs = dict(inputs or {})
    _check_names(checked, inputs)

    frames = {}
    for name in checked.edb:
        relation = checked.relations[name]
        if name in inputs:
            frames[name] = conform_input(relation, inputs[name])
    if on_null == "error":
        check_no_nulls(frames)
    else:
        frames = {name: frame.dropna() for name, frame in frames.items()}

    for name in checked.edb:
        facts = checked.facts.get(name)
        if facts:
            fact_frame = facts_frame(spark, checked.relations[name], facts)
            frames[name] = frames[name].union(fact_frame) if name in frames else fact_frame
    return {name: frames[name] for name in checked.edb}


def _check_names(checked: CheckedProgram, inputs: Mapping[str, DataFrame]) -> None:
    unknown = sorted(n for n in inputs if n not in checked.relations)
    if unknown:
        raise InputError(
            f"inputs for unknown relations: {', '.join(unknown)} "
            f"(the program's input relations are {', '.join(checked.edb) or 'none'})"
        )
    derived = sorted(n for n in inputs if checked.relations[n].kind != "edb")
    if derived:
        raise InputError(
            f"inputs given for derived (IDB) relations: {', '.join(derived)}; "
            "only relations without rules can be inputs"
        )
    missing = [n for n in checked.edb if n not in inputs and not checked.facts.get(n)]
    if missing:
        raise InputError(
            f"missing inputs: {', '.join(missing)} (no DataFrame given and no facts in the program)"
        )


def conform_input(relation: RelationSchema, frame: DataFrame) -> DataFrame:
    """``frame`` renamed to ``relation``'s columns and cast to its types, after checking arity
    and column types (SchemaError naming the relation and column on mismatch)."""
    fields = frame.schema.fields
    if len(fields) != relation.arity:
        raise SchemaError(
            f"input {relation.name} has {len(fields)} columns "
            f"({', '.join(f.name for f in fields)}), the relation has "
            f"{relation.arity} ({', '.join(relation.column_names)})"
        )
    for position, (field, column) in enumerate(zip(fields, relation.columns, strict=True)):
        if not accepts(column.type, field.dataType):
            raise SchemaError(
                f"input {relation.name}: column {position + 1} "
                f"({field.name} -> {column.name}) has type "
                f"{field.dataType.simpleString()}, expected {column.type}"
            )
    if all(_is_conformed(field, column) for field, column in zip(fields, relation.columns, strict=True)):
        return frame  # as it is: a frame the caller cached stays the cached plan
    return frame.select(
        *[
            _canonical(F.col(f"`{field.name}`").cast(spark_type(column.type)), column.type).alias(column.name)
            for field, column in zip(fields, relation.columns, strict=True)
        ]
    )


def _is_conformed(field, column) -> bool:
    """Whether an input column needs no renaming, cast or canonical doubles."""
    return field.name == column.name and column.type != "double" and field.dataType == spark_type(column.type)


def require_mapping(value, what: str) -> None:
    """``InputError`` unless ``value`` (``inputs`` or ``changes``) is ``None`` or a mapping of
    relation names."""
    if value is not None and not isinstance(value, Mapping):
        raise InputError(
            f"{what} must map relation names to their data (a dict such as {{'arc': frame}}), "
            f"not a {type(value).__name__}"
        )


def input_frame(spark: SparkSession, relation: str, value, what: str = "input") -> DataFrame:
    """``value`` (the input or change set of ``relation``) as a Spark DataFrame: a Spark DataFrame
    as it is, a pandas DataFrame or a pyarrow Table converted with its columns and types (the
    relation's arity and type checks follow); anything else is an ``InputError`` naming the
    relation."""
    if isinstance(value, DataFrame):
        return value
    table = _arrow_table(relation, value, what)
    try:
        return spark.createDataFrame(table)
    except Exception as exc:  # a column type Spark cannot take from Arrow
        raise InputError(
            f"{what} {relation}: cannot be turned into a Spark DataFrame: {_first_line(exc)}"
        ) from None


def _arrow_table(relation: str, value, what: str):
    """A pandas DataFrame or pyarrow Table/RecordBatch as a pyarrow Table; ``InputError`` else."""
    import pyarrow as pa

    if isinstance(value, pa.RecordBatch):
        return pa.Table.from_batches([value])
    if isinstance(value, pa.Table):
        return value
    if type(value).__module__.startswith("pandas") and type(value).__name__ == "DataFrame":
        try:
            return pa.Table.from_pandas(value, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise InputError(f"{what} {relation}: a pandas column holds mixed values: {exc}") from None
    raise InputError(
        f"{what} {relation}: expected a Spark DataFrame, a pandas DataFrame or a pyarrow Table, "
        f"not {type(value).__name__}"
    )


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _canonical(value, type_name: str):
    """A double column with -0.0 as 0.0 (``reference.terms.normal``; NaN needs nothing: Spark
    treats all NaNs as one value)."""
    return value + F.lit(0.0) if type_name == "double" else value


def check_no_nulls(frames: Mapping[str, DataFrame]) -> None:
    """Raise InputError naming every relation and column holding nulls, and how many rows.

    One Spark action for any number of frames without nulls: a scan that stops at the first
    row holding one (1M cached rows: 0.08 s; counting nulls per column took 0.4 s). Only when
    there is one are they counted, to say where.
    """
    nullable = {
        index: [f.name for f in frame.schema.fields if f.nullable]
        for index, frame in enumerate(frames.values())
    }
    nullable = {index: columns for index, columns in nullable.items() if columns}
    if not nullable or not _any_null(list(frames.values()), nullable):
        return
    names = list(frames)
    parts = []
    for index, columns in nullable.items():
        null_columns = F.array(*[F.when(F.col(f"`{c}`").isNull(), F.lit(c)) for c in columns])
        parts.append(
            list(frames.values())[index].select(
                F.lit(index).alias("input"), F.explode(F.array_compact(null_columns)).alias("column")
            )
        )
    counts = reduce(DataFrame.union, parts).groupBy("input", "column").count().collect()
    problems = sorted((names[row["input"]], row["column"], row["count"]) for row in counts)
    if problems:
        described = "; ".join(
            f"{relation}.{column}: {count} row{'s' if count > 1 else ''}"
            for relation, column, count in problems
        )
        raise InputError(
            f"inputs hold nulls, which Datalog cannot represent ({described}); "
            'pass on_null="drop" to drop such rows'
        )


def _any_null(frames: list, nullable: Mapping[int, list]) -> bool:
    """Whether a row of ``frames[i]`` holds a null in one of the columns ``nullable[i]``."""
    found = [
        frames[index]
        .where(reduce(operator.or_, [F.col(f"`{c}`").isNull() for c in columns]))
        .select(F.lit(index).alias("input"))
        for index, columns in nullable.items()
    ]
    return bool(reduce(DataFrame.union, found).limit(1).collect())


def facts_frame(spark: SparkSession, relation: RelationSchema, facts) -> DataFrame:
    """A frame of ``facts`` (tuples) with ``relation``'s column names and types."""
    converters = [_PYTHON_VALUE.get(c.type, _unchanged) for c in relation.columns]
    rows = [
        tuple(convert(v) for convert, v in zip(converters, fact, strict=True))
        for fact in sorted(facts, key=repr)
    ]
    return spark.createDataFrame(rows, schema(relation.column_names, relation.types))


def empty_frame(spark: SparkSession, relation: RelationSchema) -> DataFrame:
    """An empty frame with ``relation``'s column names and types."""
    return spark.createDataFrame([], schema(relation.column_names, relation.types))


def input_types(checked: CheckedProgram, inputs: Mapping[str, DataFrame]) -> dict:
    """Relation name -> Datalog type names of its input frame's columns, for the inputs of
    ``checked``'s EDB relations (what ``analyse(program, input_types=...)`` takes).

    Raises SchemaError for a column whose Spark type the language has no type for.
    """
    result = {}
    for name, frame in inputs.items():
        relation = checked.relations.get(name)
        if relation is None or relation.kind != "edb":
            continue
        types = []
        for field in frame.schema.fields:
            type_name = datalog_type(field.dataType)
            if type_name is None:
                raise SchemaError(
                    f"input {name}: column {field.name} has type "
                    f"{field.dataType.simpleString()}, which Datalog has no type for "
                    "(use int, bigint, double, string or boolean)"
                )
            types.append(type_name)
        result[name] = tuple(types)
    return result


# Integer literals are accepted where a double is expected, so facts are converted per column.
_PYTHON_VALUE: dict[str, Callable[..., object]] = {
    "int": int,
    "long": int,
    "double": lambda value: normal(float(value)),
    "string": str,
    "bool": bool,
}


def _unchanged(value: object) -> object:
    """A record value: a tuple Spark makes a struct of."""
    return value
