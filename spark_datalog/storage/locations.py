"""Inputs named by location: a Delta table, Parquet files or a CSV file with a header.

Columns are matched by name when the source has every declared column (extra columns are
ignored), otherwise by position when it has exactly as many columns as declared; anything else
is an ``InputError`` naming both column lists. Values are cast to the declared types; a source
type that cannot hold them (a string column for a ``long``) is an ``InputError``. CSV files are
read as UTF-8 text (RFC 4180 quoting, quoted fields may span lines) and every value must parse as
its declared type; bytes that are not UTF-8 are an ``InputError`` at their line (one Spark job
checks it all). A Delta
table written by spark_datalog (with a ``_count`` column) contributes its present facts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Optional

from ..errors import InputError, SchemaError
from ..record_types import is_record
from ..recursive_records import is_recursive, stored_type
from . import uris
from .embedded import is_delta_table, net_changes, open_table, read_table, table_changes
from .schema import _CASTABLE, COUNT_COLUMN, ColumnPairs, Columns, columns_from_spark, describe, spark_type

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

FORMATS = ("delta", "parquet", "csv")


@dataclass
class InputTable:
    """An input read from a location: its rows (declared columns) and, for Delta, the version read.

    ``method`` is set for changes (``load_input_changes``): ``"cdf"`` when they were read from
    the table's change data feed, ``"snapshot"`` when from the difference of two snapshots.
    """

    df: Any  # a Spark DataFrame
    version: Optional[int]
    uri: str
    format: str
    method: Optional[str] = None


def read_input(
    spark,
    uri: str,
    fmt: Optional[str],
    columns: Iterable,
    relation: str = "input",
    version: Optional[int] = None,
    storage_options: Optional[dict] = None,
) -> "DataFrame":
    """The rows of the input at ``uri`` as a DataFrame with the declared ``columns`` (typed).

    ``fmt`` is ``"delta"``, ``"parquet"``, ``"csv"`` or ``None`` to guess (a Delta log, else the
    extension, else Parquet). ``version`` pins a Delta version. Raises ``InputError``.

    Example::

        arcs = read_input(spark, "/data/arcs.csv", "csv", [("x", "long"), ("y", "long")], "arc")
    """
    return load_input(spark, uri, fmt, columns, relation, version, storage_options).df


def load_input(
    spark,
    uri: str,
    fmt: Optional[str],
    columns: Iterable,
    relation: str = "input",
    version: Optional[int] = None,
    storage_options: Optional[dict] = None,
) -> InputTable:
    """Like ``read_input``, also returning the Delta version read (to record it in the run)."""
    from .schema import normalise_columns

    try:
        columns = normalise_columns(columns, relation)
    except SchemaError as exc:
        raise InputError(exc.message) from None
    location = uris.normalise(uri)
    fmt = fmt or _guess_format(location, storage_options)
    if fmt not in FORMATS:
        raise InputError(
            f"input {relation}: unknown format {fmt!r} for {uri} (expected one of {', '.join(FORMATS)})"
        )
    if fmt == "delta":
        table = open_table(location, version, storage_options, error=InputError)
        if table is None:
            raise InputError(f"input {relation}: no Delta table at {uri}")
        df = read_table(spark, table, location, error=InputError)
        if COUNT_COLUMN in df.columns:
            from pyspark.sql import functions as F

            df = df.where(F.col(COUNT_COLUMN) > 0).drop(COUNT_COLUMN)
        return InputTable(_shape(df, columns, relation, uri), table.version(), location, fmt)
    if version is not None:
        raise InputError(f"input {relation}: a version can only be given for a Delta table")
    _require_exists(location, relation, uri)
    if fmt == "parquet":
        try:
            df = spark.read.parquet(uris.for_spark(location))
        except Exception as exc:  # AnalysisException: not Parquet, no files...
            raise InputError(f"input {relation}: cannot read Parquet at {uri}: {_first_line(exc)}") from None
        return InputTable(_shape(df, columns, relation, uri), None, location, fmt)
    return InputTable(_read_csv(spark, location, columns, relation, uri), None, location, fmt)


def load_input_changes(
    spark,
    uri: str,
    columns: Iterable,
    relation: str,
    from_version: int,
    to_version: Optional[int] = None,
    storage_options: Optional[dict] = None,
) -> InputTable:
    """The net signed changes of a Delta input between two versions (declared columns + ``_count``).

    From the table's change data feed when it is enabled on every commit in between, otherwise
    from the files added or removed in between (see ``embedded.table_changes``); ``method`` of
    the result says which (``"cdf"`` or ``"snapshot"``). The files read must not have been
    vacuumed. ``version`` of the result is ``to_version`` (the latest when ``None``): record it
    as consumed.
    """
    from .schema import normalise_columns

    try:
        columns = normalise_columns(columns, relation)
    except SchemaError as exc:
        raise InputError(exc.message) from None
    location = uris.normalise(uri)
    table = open_table(location, to_version, storage_options, error=InputError)
    if table is None:
        raise InputError(f"input {relation}: no Delta table at {uri}")
    found = table_changes(spark, location, from_version, table.version(), storage_options, error=InputError)
    shaped = _shape(found.df, columns, relation, uri, keep=[COUNT_COLUMN])
    return InputTable(net_changes(shaped, columns), found.version, location, "delta", found.method)


def _guess_format(location: str, storage_options: Optional[dict]) -> str:
    if is_delta_table(location, storage_options):
        return "delta"
    lower = location.lower()
    if lower.endswith((".csv", ".csv.gz", ".tsv")):
        return "csv"
    return "parquet"


def _require_exists(location: str, relation: str, uri: str) -> None:
    from pyarrow.fs import FileType

    fs, path = uris.filesystem(location)
    if fs.get_file_info(path).type == FileType.NotFound:
        raise InputError(f"input {relation}: {uri} does not exist")


def match_columns(source: list, columns: ColumnPairs, relation: str, uri: str) -> list:
    """Source column names in declared order: by name, else by position."""
    names = [c for c, _ in columns]
    if all(n in source for n in names):
        return names
    if len(source) == len(names):
        return list(source)
    raise InputError(
        f"input {relation}: {uri} has columns ({', '.join(source) or 'none'}) but "
        f"({describe(columns)}) are declared: neither the names nor the number of "
        f"columns match"
    )


def _shape(df, columns: Columns, relation: str, uri: str, keep: Iterable = ()):
    """Select, check and cast the declared columns of a typed source (Delta, Parquet).

    Columns named in ``keep`` are not matched and are appended unchanged.
    """
    from pyspark.sql import functions as F

    keep = list(keep)
    chosen = match_columns([c for c in df.columns if c not in keep], columns, relation, uri)
    fields = {f.name: f.dataType for f in df.schema.fields}
    exprs = []
    for source, (name, type_) in zip(chosen, columns, strict=True):
        data_type = fields[source]
        try:
            found = columns_from_spark(_struct(source, data_type), relation)[0][1]
        except SchemaError:
            found = data_type.simpleString()
        if found not in _CASTABLE[stored_type(type_)]:
            raise InputError(
                f"input {relation}: column {source} of {uri} has type {found} but {name} is declared {type_}"
            )
        exprs.append(F.col(source).cast(spark_type(type_)).alias(name))
    return df.select(*exprs, *keep)


def read_csv(spark, uri: str, columns: ColumnPairs, relation: str) -> "DataFrame":
    """The CSV file(s) at ``uri`` as ``load_input`` reads them, with ``columns`` as given (not
    checked as a relation's: a change set's ``_count`` is one of them)."""
    location = uris.normalise(uri)
    _require_exists(location, relation, uri)
    return _read_csv(spark, location, list(columns), relation, uri)


def _read_csv(spark, location: str, columns: ColumnPairs, relation: str, uri: str) -> "DataFrame":
    """Read a UTF-8 CSV with a header as text, then parse every column as its declared type.

    Quoted fields may span lines (``multiLine``: each file is read by one task) and hold doubled
    quotes (RFC 4180, as the reference engine's ``csv`` module reads them). Spark's reader
    turns bytes that are not UTF-8 into U+FFFD; a value holding U+FFFD makes the files it came
    from be checked, and one that is not UTF-8 is an ``InputError`` at its line and column.
    """
    from pyspark.sql import functions as F

    raw = (
        spark.read.option("header", True)
        .option("inferSchema", False)
        .option("multiLine", True)
        .option("escape", '"')  # RFC 4180: a quote inside quotes is doubled (as Python's csv reads it)
        .option("encoding", "UTF-8")
        .csv(uris.for_spark(location))
    )
    if not raw.columns or raw.columns == ["_c0"] and len(columns) != 1:
        raise InputError(f"input {relation}: {uri} has no header row with column names")
    chosen = match_columns(raw.columns, columns, relation, uri)
    parsed = raw.select(
        *[F.col(f"`{s}`").alias(f"__raw{i}") for i, s in enumerate(chosen)],
        *[_parse(F.col(f"`{s}`"), t).alias(n) for s, (n, t) in zip(chosen, columns, strict=True)],
    )
    unparsed = [(F.col(f"__raw{i}").isNotNull() & F.col(n).isNull()) for i, (n, _) in enumerate(columns)]
    replaced = [F.col(f"__raw{i}").contains(REPLACEMENT) for i in range(len(columns))]
    suspects = parsed.where(_any(unparsed + replaced)).limit(1).collect()
    if suspects and any(REPLACEMENT in (v or "") for v in _raw_values(suspects[0], columns)):
        files = parsed.where(_any(replaced)).select(F.input_file_name().alias("file")).distinct().collect()
        for row in files:
            check_utf8_file(row["file"], relation)
        suspects = parsed.where(_any(unparsed)).limit(1).collect()  # the U+FFFD were real
    if suspects:
        row = suspects[0]
        for i, (name, type_) in enumerate(columns):
            if row[f"__raw{i}"] is not None and row[name] is None:
                raise InputError(
                    f"input {relation}: column {chosen[i]} of {uri} has the value "
                    f"{row[f'__raw{i}']!r}, which is not a {type_}"
                )
    return parsed.select(*[n for n, _ in columns])


REPLACEMENT = "\ufffd"  # what Spark's CSV reader makes of bytes that are not UTF-8


def _any(conditions: list):
    from functools import reduce

    return reduce(lambda a, b: a | b, conditions)


def _raw_values(row, columns: ColumnPairs) -> list:
    return [row[f"__raw{i}"] for i in range(len(columns))]


def check_utf8_file(location: str, relation: str) -> None:
    """``InputError`` at the line and column of the first byte of the file at ``location`` (a
    Spark file URI) that is not UTF-8; nothing when the file is UTF-8. Reads up to that line."""
    from ..textfiles import first_invalid_utf8

    fs, path = uris.filesystem(uris.normalise(location))
    with fs.open_input_stream(path, compression="detect") as stream:
        found = first_invalid_utf8(_lines(stream))
    if found is not None:
        line, column, byte = found
        raise InputError(
            f"input {relation}: the file is not valid UTF-8 text: byte 0x{byte:02x} at line {line}, "
            f"column {column}",
            line=line,
            column=column,
            filename=path,
        )


def _lines(stream, chunk: int = 1 << 20):
    """The lines (bytes, with their newline) of a binary stream, read a chunk at a time."""
    pending = b""
    while True:
        data = stream.read(chunk)
        if not data:
            break
        pending += data
        *lines, pending = pending.split(b"\n")
        for line in lines:
            yield line + b"\n"
    if pending:
        yield pending


def _parse(column, type_name: str):
    """``try_cast`` of trimmed text (null where it does not parse); bools accept true/false only."""
    from pyspark.sql import functions as F

    text = F.trim(column)
    if is_record(type_name) or is_recursive(type_name):
        from ..record_text import spark_record_column

        return spark_record_column(column, type_name)
    if type_name == "string":
        return column
    if type_name == "bool":
        lowered = F.lower(text)
        return (
            F.when(lowered == "true", F.lit(True))
            .when(lowered == "false", F.lit(False))
            .otherwise(F.lit(None).cast("boolean"))
        )
    return text.try_cast(spark_type(type_name))


def _struct(name: str, data_type):
    from pyspark.sql import types as T

    return T.StructType([T.StructField(name, data_type, True)])


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
