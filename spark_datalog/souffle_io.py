"""Soufflé's I/O directives: what ``souffle -F FACTS -D OUT prog.dl`` reads and writes.

``plan_io`` turns a checked program's ``.input``, ``.output`` and ``.printsize`` directives and
a fact and an output directory into the files to read and the files (or stdout blocks) to write;
the reference engine reads and writes them here in Python (``read_fact_file``,
``write_output``), Spark reads them with its CSV reader (``read_fact_frame``) and the job writes
them with Spark (``write_output_frame``). Both read and write the same text, as Soufflé does:

- ``.input r`` reads ``<fact dir>/r.facts``; ``filename="x"`` reads ``x`` (relative to the fact
  directory unless absolute or a URI). Fields are separated by ``delimiter`` (default a tab;
  ``rfc4180=true``: a comma, with ``"``-quoted fields); ``headers=true`` skips the first line.
  Symbols are read as they are written, records as Soufflé writes them (``record_text``);
  extra fields are ignored; blank lines are skipped. A
  missing file is an ``InputError`` ("cannot open fact file"), a field that is not of its
  column's type an ``InputError`` at its file, line and column.
- ``.output r`` writes ``<output dir>/r.csv`` (``filename=`` as for inputs): a line per fact,
  fields separated by ``delimiter`` (a tab), no header unless ``headers=true`` (the column
  names). Numbers are written in decimal, floats as C++ streams them at 17 significant digits
  (``%.17g``: ``0.5``, ``1``, ``0.10000000000000001``), symbols as they are. ``IO=stdout``
  prints the relation between ``---------------`` / ``===============`` lines instead.
  An output directory ``-`` prints every output relation (with its header) instead of writing it.
  ``compress`` (any value, as Soufflé's writer only asks whether it is given) writes the file
  gzip-compressed, by default to ``<output dir>/r.csv.gz``.
- A fact file whose name ends in ``.gz`` is read gzip-compressed (Spark's reader chooses its
  codec by the name too; Soufflé's looks at the content). ``compress`` on an ``.input`` is
  ignored, as Soufflé ignores it.
- ``.printsize r`` prints ``r<TAB><number of facts>``.

``columns="2:0"`` makes an ``.input`` read those fields (0-based) as its columns. ``IO=sqlite``
reads a relation from, or writes it to, an SQLite database: planned here (``kind`` ``sqlite``),
read and written by ``souffle_sqlite`` (in the driver on Spark). ``.input r(IO=stdin)`` reads
standard input as a fact file (its ``delimiter``, ``columns``, ``headers``, ``rfc4180``; in the
driver on Spark); one ``.input`` of a program may, and only ``spark-datalog run`` (the job reads
no standard input). Any other ``IO=`` (``json``, ...) or parameter that changes what is read or
written (``columns`` of an output) is a ``DirectiveError`` at the directive; other parameters
are ignored, as Soufflé ignores the ones its writer does not use.
"""

from __future__ import annotations

import itertools
import os
import re
import sys
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Optional, Sequence

from .record_types import adt_branches, adt_text, fields, is_nil_record, is_record
from .recursive_records import is_recursive, text_of
from .errors import DirectiveError, InputError
from .storage import uris

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = [
    "FileFormat",
    "InputFile",
    "IOPlan",
    "OutputTarget",
    "format_row",
    "output_lines",
    "plan_io",
    "sorted_rows",
    "read_fact_file",
    "read_fact_frame",
    "spark_input_frames",
    "write_output",
    "write_output_frame",
]

# The IO kinds each directive supports.
_SUPPORTED = {"input": ("file", "stdin", "sqlite"), "output": ("file", "stdout", "sqlite")}
_HAS_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_INTEGER = re.compile(r"\s*[+-]?\d+")
_FLOAT = re.compile(r"\s*[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf|infinity|nan)", re.I)
STDOUT = "-"
STDIN_NAME = "<stdin>"  # the name of standard input in messages


@dataclass(frozen=True)
class FileFormat:
    """How a relation's facts are laid out in text: Soufflé's ``delimiter``, ``headers`` and
    ``rfc4180`` parameters. ``names_delimiter`` joins the column names of a header line (the
    ``delimiter`` parameter, else a tab, as Soufflé joins them)."""

    delimiter: str = "\t"
    headers: bool = False
    rfc4180: bool = False
    names_delimiter: str = "\t"
    fields: Optional[tuple] = None  # ``columns="4:7"``: the (0-based) fields read, one a column
    compress: bool = False  # an output written gzip-compressed

    def picked(self, arity: int) -> tuple:
        """The positions of the fields read for ``arity`` columns."""
        return self.fields if self.fields is not None else tuple(range(arity))


@dataclass(frozen=True)
class InputFile:
    """A file an ``.input`` relation is read from. ``columns``: (name, type) pairs."""

    relation: str
    uri: str
    format: FileFormat
    columns: tuple
    kind: str = "file"  # or ``sqlite``: ``uri`` is an SQLite database (``souffle_sqlite``)
    missing_ok: bool = False  # a missing file reads as an empty one (Soufflé's ``-w``)


@dataclass(frozen=True)
class OutputTarget:
    """Where an ``.output``/``.printsize`` relation goes: ``kind`` is ``file`` (``uri``),
    ``sqlite`` (``uri`` a database), ``stdout`` or ``printsize``."""

    relation: str
    kind: str
    uri: Optional[str]
    format: FileFormat
    columns: tuple

    def header(self) -> str:
        return self.format.names_delimiter.join(name for name, _ in self.columns)


@dataclass(frozen=True)
class IOPlan:
    inputs: tuple  # tuple[InputFile, ...]
    outputs: tuple  # tuple[OutputTarget, ...]

    @property
    def files(self) -> tuple:
        """The file outputs."""
        return tuple(t for t in self.outputs if t.kind == "file")


def plan_io(
    checked,
    fact_dir: Optional[str] = None,
    output_dir: Optional[str] = None,
    stdin: bool = True,
    missing_ok: bool = False,
) -> IOPlan:
    """The files ``checked``'s directives read and write with fact directory ``fact_dir`` and
    output directory ``output_dir`` (each ``.`` when ``None``, as Soufflé's; ``output_dir`` ``-``:
    every output printed, with a header). Raises ``DirectiveError`` for an IO kind or parameter
    that is not supported (every one found); ``IO=stdin`` is one unless ``stdin``. With
    ``missing_ok`` (Soufflé's ``-w``) a fact file that does not exist is read as an empty one."""
    fact_dir = fact_dir or "."
    output_dir = output_dir or "."
    errors: list = []
    inputs: list = []
    outputs: list = []
    printed: set = set()
    readers: list = []  # the directives reading stdin
    for directive in checked.program.directives:
        schema = checked.relations.get(directive.name)
        if schema is None or directive.kind == "limitsize":  # a limit is no I/O
            continue
        columns = tuple(zip(schema.column_names, schema.types, strict=True))
        try:
            if directive.kind == "printsize":
                outputs.append(OutputTarget(directive.name, "printsize", None, FileFormat(), columns))
                continue
            if directive.kind == "output" and output_dir == STDOUT:
                if directive.name not in printed:  # Soufflé prints a relation once, with a header
                    printed.add(directive.name)
                    outputs.append(
                        OutputTarget(directive.name, "stdout", None, FileFormat(headers=True), columns)
                    )
                continue
            kind, fmt = _parameters(directive)
            if kind == "sqlite":
                planned = _sqlite(directive, columns, fact_dir if directive.kind == "input" else output_dir)
                (inputs if directive.kind == "input" else outputs).append(planned)
            elif directive.kind == "input":
                stdin_readers = readers if stdin else None
                inputs.append(_input_file(directive, fmt, columns, fact_dir, kind, stdin_readers))
            elif kind == "stdout":
                outputs.append(OutputTarget(directive.name, "stdout", None, fmt, columns))
            else:
                default = f"{directive.name}.csv.gz" if fmt.compress else f"{directive.name}.csv"
                uri = _located(directive.param("filename") or default, output_dir)
                outputs.append(OutputTarget(directive.name, "file", uri, fmt, columns))
        except DirectiveError as err:
            errors.append(err)
    if errors:
        from .errors import raise_collected

        raise_collected(errors, checked.program.source, checked.program.filename)
    if missing_ok:
        inputs = [replace(source, missing_ok=True) if source.kind == "file" else source for source in inputs]
    return IOPlan(tuple(inputs), tuple(outputs))


def _sqlite(directive, columns: tuple, directory: str):
    """The ``InputFile``/``OutputTarget`` of an ``IO=sqlite`` directive (``souffle_sqlite``)."""
    from .souffle_sqlite import check_columns, database_name

    check_columns(directive, columns)
    database = database_name(directive, directory, _located)
    if directive.kind == "input":
        return InputFile(directive.name, database, FileFormat(), columns, kind="sqlite")
    return OutputTarget(directive.name, "sqlite", database, FileFormat(), columns)


def _check_stdin(directive, readers: Optional[list]) -> None:
    """``DirectiveError`` unless ``directive`` may read standard input: once in a program
    (``readers``: the directives reading it so far), and not in the job (``readers`` None: a
    scheduled job has no input to read)."""
    if readers is None:
        where = f".input {directive.name}"
        raise _error(directive, f"IO=stdin is read by 'spark-datalog run' only, not by the job ({where})")
    if readers:
        first = readers[0]
        raise _error(
            directive,
            f"standard input is read by .input {first.name} (line {first.span.line}): "
            f"only one .input may read it",
        )
    readers.append(directive)


def _input_file(
    directive, fmt: FileFormat, columns: tuple, fact_dir: str, kind: str, readers: Optional[list]
) -> InputFile:
    """The ``InputFile`` of an ``.input`` of ``IO=file`` or ``IO=stdin`` (``readers``: as
    :func:`_check_stdin` takes them)."""
    if not columns:
        raise _error(directive, "a relation without columns cannot be read from a file")
    if kind == "stdin":
        _check_stdin(directive, readers)
    if fmt.fields is not None and len(fmt.fields) != len(columns):
        named, arity = len(fmt.fields), len(columns)
        raise _error(directive, f"columns= names {named} field(s), {directive.name} has {arity} columns")
    if kind == "stdin":
        return InputFile(directive.name, STDIN_NAME, fmt, columns, kind="stdin")
    uri = _located(directive.param("filename") or f"{directive.name}.facts", fact_dir)
    return InputFile(directive.name, uri, fmt, columns)


def _parameters(directive) -> tuple:
    """(IO kind, FileFormat) of an ``.input``/``.output`` directive; ``DirectiveError`` else."""
    kind = directive.param("IO", "file")
    supported = _SUPPORTED[directive.kind]
    if kind not in supported:
        raise _error(
            directive,
            f"IO={kind} is not supported for .{directive.kind} {directive.name} "
            f"(supported: {', '.join('IO=' + k for k in supported)})",
        )
    rfc4180 = directive.param("rfc4180", "false") == "true"
    given = directive.param("delimiter")
    delimiter = given if given is not None else ("," if rfc4180 else "\t")
    if not delimiter:
        raise _error(directive, f"the delimiter of .{directive.kind} {directive.name} is empty")
    if rfc4180 and '"' in delimiter:
        raise _error(directive, "a delimiter cannot contain '\"' when rfc4180 is enabled")
    headers = directive.param("headers", "false") == "true"
    names_delimiter = given if given is not None else "\t"
    fields = _fields(directive)
    compress = directive.kind == "output" and directive.param("compress") is not None
    return kind, FileFormat(delimiter, headers, rfc4180, names_delimiter, fields, compress)


def _fields(directive) -> Optional[tuple]:
    """The field positions of Soufflé's ``columns="4:7"`` (0-based, ``:``-separated), read by
    ``.input`` only."""
    text = directive.param("columns")
    if text is None:
        return None
    if directive.kind != "input":
        raise _error(directive, f"the parameter columns= of .{directive.kind} is not supported")
    parts = text.split(":")
    if not all(part.strip().isdigit() for part in parts):
        raise _error(directive, f"columns={text!r}: expected field numbers separated by ':' (\"0:2\")")
    return tuple(int(part) for part in parts)


def _error(directive, message: str) -> DirectiveError:
    return DirectiveError(message, directive.span.line or None, directive.span.column or None)


def _located(name: str, directory: str) -> str:
    """``name`` in ``directory`` unless it is absolute or a URI (as Soufflé: relative names are
    relative to -F / -D)."""
    if _HAS_SCHEME.match(name) and len(uris.scheme(name)) > 1 or os.path.isabs(name):
        return name
    return uris.join(directory, name)


# ---------------------------------------------------------------------------------------------
# Reading (Python)


def read_fact_file(source: InputFile) -> set:
    """The facts of ``source`` (a set of typed tuples), read as Soufflé reads a fact file (or
    its SQLite database)."""
    if source.kind == "sqlite":
        from .souffle_sqlite import read_rows

        return read_rows(source)
    return set(_fact_rows(source, _lines_of(source)))


def _lines_of(source: InputFile) -> Iterator[tuple]:
    """(line number, text) of every line of ``source``'s file (or of standard input);
    ``InputError`` when it is missing or not UTF-8."""
    from .textfiles import decode_utf8

    text = decode_utf8(_data_of(source), source.uri, InputError)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, start=1):
        yield number, line[:-1] if line.endswith("\r") else line


def _data_of(source: InputFile) -> bytes:
    """The bytes of ``source``'s file, or of standard input (read to its end)."""
    if source.kind == "stdin":
        stream = getattr(sys.stdin, "buffer", None)
        return stream.read() if stream is not None else sys.stdin.read().encode("utf-8")
    fs, path = uris.filesystem(source.uri)
    try:
        with fs.open_input_stream(path) as stream:  # by its name: compression="detect"
            return stream.read()
    except (OSError, FileNotFoundError) as err:
        if source.missing_ok and _reason(err) == "no such file":
            return b""
        raise InputError(
            f"cannot open fact file {source.uri} (.input {source.relation}): {_reason(err)}"
        ) from None


def _reason(err: BaseException) -> str:
    if isinstance(err, FileNotFoundError) or "not found" in str(err).lower():
        return "no such file"
    return getattr(err, "strerror", None) or str(err).strip().splitlines()[0]


def _fact_rows(source: InputFile, lines: Iterable[tuple]) -> Iterator[tuple]:
    fmt = source.format
    if fmt.headers:
        lines = itertools.islice(lines, 1, None)
    if fmt.rfc4180:
        lines = _records(lines, fmt.delimiter)
    for number, line in lines:
        if line != "":
            yield parse_line(source, number, line)


def _records(lines: Iterable[tuple], delimiter: str) -> Iterator[tuple]:
    """``lines`` of an ``rfc4180=true`` file as records: a quoted field may hold line breaks,
    so a line ending inside one is joined to the next ones (``\\n``), the record numbered by its
    first line. A quote still open at the end of the file is reported by :func:`parse_line`."""
    held: Optional[tuple] = None
    for number, line in lines:
        if held is not None:
            number, line = held[0], held[1] + "\n" + line
        held = (number, line) if _ends_in_quote(line, delimiter) else None
        if held is None:
            yield number, line
    if held is not None:
        yield held


def _ends_in_quote(line: str, delimiter: str) -> bool:
    """Whether ``line`` ends inside a quoted field (``rfc4180``: ``""`` is a quote in one)."""
    start = 0
    while True:
        if line.startswith('"', start):
            close = line.find('"', start + 1)
            while close >= 0 and line.startswith('"', close + 1):
                close = line.find('"', close + 2)
            if close < 0:
                return True
            start = close + 1
        following = line.find(delimiter, start)
        if following < 0:
            return False
        start = following + len(delimiter)


def parse_line(source: InputFile, number: int, line: str) -> tuple:
    """The typed fact of line ``number`` (text ``line``; a record over several lines, in an
    ``rfc4180`` file, from its first) of ``source``'s file."""
    if "\n" not in line:
        return _parsed_line(source, number, line)
    try:
        return _parsed_line(source, number, line)
    except InputError as err:  # placed at its own line of the record
        if err.column is None:
            raise
        before = line[: err.column - 1]
        column = err.column - 1 - before.rfind("\n") if "\n" in before else err.column
        raise InputError(err.message, number + before.count("\n"), column, filename=source.uri) from None


def _parsed_line(source: InputFile, number: int, line: str) -> tuple:
    fields = _split(line, source, number)
    picked = source.format.picked(len(source.columns))
    needed = max(picked, default=-1) + 1
    if len(fields) < needed:
        raise _field_error(
            source,
            number,
            None,
            f"values missing: {len(fields)} field(s), {source.relation} "
            + (f"has {needed} columns" if source.format.fields is None else f"reads field {needed - 1}"),
        )
    chosen = [fields[i] for i in picked]
    values = []
    for index, ((name, type_), (text, at)) in enumerate(zip(source.columns, chosen, strict=True)):
        value = parse_field(text, type_)
        if value is None:
            raise _field_error(
                source,
                number,
                at,
                f"column {index + 1} ({name}: {type_}): {text!r} is not a {_type_word(type_)}",
            )
        values.append(value)
    return tuple(values)


_TYPE_WORD = {"int": "number", "long": "number", "double": "float", "bool": "bool", "string": "symbol"}


def _type_word(type_: str) -> str:
    return _TYPE_WORD.get(type_) or f"record {type_}"


def parse_field(text: str, type_: str):
    """``text`` as a value of ``type_``, or ``None`` when it is not one. Numbers may have
    leading and trailing blanks (Spark's reader trims them too)."""
    from .overflow import fits

    if is_record(type_) or is_recursive(type_):
        from .record_text import parse_record

        return parse_record(text, type_)
    if type_ == "string":
        return text
    if type_ in ("int", "long"):
        if not _INTEGER.fullmatch(text.rstrip()):
            return None
        value = int(text)
        return value if fits(value, type_) else None
    if type_ == "double":
        if not _FLOAT.fullmatch(text.rstrip()):
            return None
        result = float(text) + 0.0
        return result
    if type_ == "bool":
        lowered = text.strip().lower()
        return {"true": True, "false": False}.get(lowered)
    return None


def _split(line: str, source: InputFile, number: int) -> list:
    """The fields of ``line`` as (text, 1-based column) pairs, as Soufflé's reader splits them."""
    fmt = source.format
    delimiter = fmt.delimiter
    fields: list = []
    start = 0
    while True:
        if fmt.rfc4180 and line.startswith('"', start):
            text, end = _quoted(line, start, source, number)
            fields.append((text, start + 1))
            if end >= len(line):
                return fields
            if not line.startswith(delimiter, end):
                raise _field_error(source, number, end + 1, "a delimiter must follow a quoted field")
            start = end + len(delimiter)
            continue
        end = line.find(delimiter, start)
        if end < 0:
            fields.append((line[start:], start + 1))
            return fields
        fields.append((line[start:end], start + 1))
        start = end + len(delimiter)


def _quoted(line: str, start: int, source: InputFile, number: int) -> tuple:
    """(value, offset after the closing quote) of the quoted field at ``start``."""
    out: list = []
    pos = start + 1
    while pos < len(line):
        char = line[pos]
        pos += 1
        if char == '"':
            if line.startswith('"', pos):
                out.append('"')
                pos += 1
                continue
            return "".join(out), pos
        out.append(char)
    raise _field_error(source, number, start + 1, "unbalanced field quote")


def _field_error(source: InputFile, number: int, column: Optional[int], message: str) -> InputError:
    return InputError(
        f"cannot parse fact file of {source.relation}: {message}",
        line=number,
        column=column,
        filename=source.uri,
    )


# ---------------------------------------------------------------------------------------------
# Writing (Python)


def sorted_rows(rows) -> list:
    """``rows`` in value order (by their text where values of a column are of mixed types)."""
    try:
        return sorted(rows)
    except TypeError:
        return sorted(rows, key=repr)


def format_value(value, type_: str, fmt: FileFormat) -> str:
    """One value as Soufflé writes it; a record as ``[1, a, [2, b]]`` (its symbols unquoted), an
    algebraic data type's as ``$Circle(3)``, ``$Dot``."""
    if adt_branches(type_):
        return adt_text(value, type_, lambda v, t: format_value(v, t, FileFormat()))
    if is_recursive(type_):
        return text_of(value, type_)
    if is_record(type_) and is_nil_record(value):
        return "nil"
    if is_record(type_):
        inner = FileFormat()
        parts = (format_value(v, t, inner) for v, (_, t) in zip(value, fields(type_) or (), strict=True))
        return "[" + ", ".join(parts) + "]"
    if type_ == "string":
        if fmt.rfc4180:
            return '"' + str(value).replace('"', '\\""') + '"'
        return str(value)
    if type_ == "double":
        return format(float(value), ".17g")
    if type_ == "bool":
        return "true" if value else "false"
    return str(int(value))


def format_row(row: Sequence, columns: tuple, fmt: FileFormat) -> str:
    """A fact as a line (without its newline); a fact of no columns is ``()``."""
    if not columns:
        return "()"
    return fmt.delimiter.join(format_value(v, t, fmt) for v, (_, t) in zip(row, columns, strict=True))


def output_lines(target: OutputTarget, rows: Iterable[Sequence], size: int) -> Iterator[str]:
    """The lines (without newlines) ``target`` writes for ``rows`` (``size`` of them): the file's
    or stdout block's lines, or the ``.printsize`` line."""
    if target.kind == "printsize":
        yield f"{target.relation}\t{size}"
        return
    if target.kind == "stdout":
        yield "---------------"
        yield target.relation
        if target.format.headers:
            yield target.header()
        yield "==============="
    elif target.format.headers:
        yield target.header()
    for row in rows:
        yield format_row(row, target.columns, target.format)
    if target.kind == "stdout":
        yield "==============="


def write_output(
    target: OutputTarget, rows: Iterable[Sequence], size: int, out: Callable[[str], None]
) -> None:
    """Write ``rows`` (``size`` of them) where ``target`` says: its file (replaced, its directory
    made), its SQLite database, or ``out`` (a ``print``-like function) for stdout and
    ``.printsize``."""
    if target.kind == "sqlite":
        from .souffle_sqlite import write_rows

        write_rows(target, rows)
        return
    lines = output_lines(target, rows, size)
    if target.kind != "file":
        for line in lines:
            out(line)
        return
    assert target.uri is not None
    fs, path = uris.filesystem(target.uri)
    parent = path.rsplit("/", 1)[0] if "/" in path else ""
    if parent:
        fs.create_dir(parent, recursive=True)
    with fs.open_output_stream(path, compression="gzip" if target.format.compress else None) as stream:
        chunk: list = []
        for line in lines:
            chunk.append(line)
            if len(chunk) >= 10_000:
                stream.write(("\n".join(chunk) + "\n").encode("utf-8"))
                chunk = []
        if chunk:
            stream.write(("\n".join(chunk) + "\n").encode("utf-8"))


# ---------------------------------------------------------------------------------------------
# Spark


def spark_input_frames(spark, checked, plan: IOPlan, skip=frozenset()) -> dict:
    """The input DataFrames of ``plan``'s ``.input`` files (several files of one relation
    unioned), and an empty one for every other EDB relation without facts (in Soufflé a
    relation without input is empty). Relations in ``skip`` are read elsewhere."""
    from .spark.inputs import empty_frame

    frames: dict = {}
    for source in plan.inputs:
        if source.relation not in skip:
            frame = read_fact_frame(spark, source)
            known = frames.get(source.relation)
            frames[source.relation] = frame if known is None else known.union(frame)
    for name in checked.edb:
        if name not in frames and name not in skip and not checked.facts.get(name):
            frames[name] = empty_frame(spark, checked.relations[name])
    return frames


def _hadoop_path(spark, uri: str) -> tuple:
    """(Hadoop FileSystem, Path) of ``uri``: every file system Spark reads."""
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(uris.for_spark(uri))
    return path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), path


def read_fact_frame(spark, source: InputFile) -> "DataFrame":
    """``source``'s facts as a typed DataFrame (the relation's columns), read by Spark as
    :func:`read_fact_file` reads them. Each line is read whole by Spark's CSV reader (which drops
    the first line of each file for ``headers=true`` and skips blank lines) and split at the
    delimiter, so fields are exactly the text between delimiters (a line holding the character
    U+0000 is cut there). ``rfc4180=true`` files are parsed by the CSV reader itself. A problem
    (a field not of its type, missing values) is the ``InputError`` ``read_fact_file`` raises, at
    its line (found by reading the file again, in the driver, only then)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from .storage.locations import _parse

    if source.kind == "sqlite":
        from .souffle_sqlite import input_frame

        return input_frame(spark, source)
    if source.kind == "stdin":  # read in the driver, as Soufflé reads it
        return driver_frame(spark, source, read_fact_file(source))
    fs, path = _hadoop_path(spark, source.uri)
    if not fs.exists(path):
        if source.missing_ok:
            return driver_frame(spark, source, set())
        raise InputError(f"cannot open fact file {source.uri} (.input {source.relation}): no such file")
    fmt = source.format
    picked = fmt.picked(len(source.columns))
    arity = max(picked, default=-1) + 1  # the fields a line must have
    reader = (
        spark.read.option("header", fmt.headers)
        .option("encoding", "UTF-8")
        .option("mode", "PERMISSIVE")
        .option("ignoreLeadingWhiteSpace", False)
        .option("ignoreTrailingWhiteSpace", False)
    )
    if fmt.rfc4180:
        names = [f"_f{i}" for i in range(arity)]
        schema = T.StructType([T.StructField(n, T.StringType(), True) for n in names])
        raw = reader.schema(schema).option("sep", fmt.delimiter).option("quote", '"').option("escape", '"')
        raw = raw.option("multiLine", True)  # a quoted field may hold line breaks
        frame = raw.csv(uris.for_spark(source.uri))
        fields = [F.col(names[i]) for i in picked]
        missing = F.lit(False)
    else:
        schema = T.StructType([T.StructField("line", T.StringType(), True)])
        lines = reader.schema(schema).option("sep", "\u0000").option("quote", "").option("escape", "\u0000")
        frame = lines.csv(uris.for_spark(source.uri))
        line = F.regexp_replace(F.col("line"), "\r$", "")
        parts = F.split(line, _literal_pattern(fmt.delimiter), -1)
        frame = frame.select(parts.alias("parts"))
        fields = [F.get(F.col("parts"), i) for i in picked]  # null past the end
        missing = F.size("parts") < arity
    parsed = frame.select(
        missing.alias("__missing"),
        *[field.alias(f"__raw{i}") for i, field in enumerate(fields)],
        *[_parse(field, t).alias(n) for field, (n, t) in zip(fields, source.columns, strict=True)],
    )
    condition = F.col("__missing")
    for i, (name, _) in enumerate(source.columns):
        condition = condition | F.col(f"__raw{i}").isNull() | F.col(name).isNull()
    if parsed.where(condition).limit(1).collect():
        facts = read_fact_file(source)  # raises the error at its line
        # no error: an empty quoted-CSV field, which Spark's reader cannot tell from a missing one
        return driver_frame(spark, source, facts)
    return parsed.select(*[n for n, _ in source.columns])


def driver_frame(spark, source: InputFile, facts: set) -> "DataFrame":
    """``facts`` (of ``source``'s relation, read in the driver) as a DataFrame, handed to Spark
    as an Arrow table."""
    from .kernel.frames import rows_table

    names = [name for name, _ in source.columns]
    types = [type_ for _, type_ in source.columns]
    return spark.createDataFrame(rows_table(names, types, sorted_rows(facts)))


def _literal_pattern(text: str) -> str:
    """A Java regular expression matching ``text`` literally."""
    if "\\E" not in text:
        return "\\Q" + text + "\\E"
    return "".join(c if c.isalnum() else "\\" + c for c in text)


def output_frame_lines(frame, target: OutputTarget) -> "DataFrame":
    """``frame`` (the relation's columns) as one string column ``value``: a line per fact."""
    from pyspark.sql import functions as F

    fmt = target.format
    if not target.columns:
        return frame.select(F.lit("()").alias("value"))
    parts = [_value_text(F.col(f"`{name}`"), type_, fmt) for name, type_ in target.columns]
    columns = [f"`{c}`" for c in frame.columns[: len(target.columns)]]
    renamed = frame.select(*[F.col(c).alias(n) for c, (n, _) in zip(columns, target.columns, strict=True)])
    return renamed.select(F.concat_ws(fmt.delimiter, *parts).alias("value"))


def _value_text(column, type_: str, fmt: FileFormat):
    """The text of a value column as :func:`format_value` writes it (a Spark Column)."""
    from pyspark.sql import functions as F

    if adt_branches(type_):
        return _adt_text(column, type_)
    if is_recursive(type_):
        # not Arrow-optimized: SPARK-58241 (see record_text.spark_record_column)
        return F.udf(lambda v: None if v is None else text_of(v, type_), "string", useArrow=False)(column)
    if is_record(type_):
        parts: list = []
        for name, field_type in fields(type_) or ():
            parts += [F.lit(", ") if parts else F.lit("[")]
            parts.append(_value_text(column.getField(name), field_type, FileFormat()))
        first = (fields(type_) or (("", ""),))[0][0]
        return F.when(column.getField(first).isNull(), F.lit("nil")).otherwise(F.concat(*parts, F.lit("]")))
    if type_ == "string":
        if fmt.rfc4180:
            return F.concat(F.lit('"'), F.replace(column, F.lit('"'), F.lit('\\""')), F.lit('"'))
        return column
    if type_ == "double":
        return _float_text(column)
    if type_ == "bool":
        return F.when(column, F.lit("true")).otherwise(F.lit("false"))
    return column.cast("string")


def _adt_text(column, type_: str):
    """The text of an ADT column as :func:`format_value` writes it: one case per branch."""
    from pyspark.sql import functions as F

    tag, *_ = (name for name, _ in fields(type_) or ())
    _, branches = adt_branches(type_)  # type: ignore[misc]
    text = F.lit(None)
    for index, (branch, struct) in enumerate(branches):
        parts: list = [F.lit(f"${branch}")]
        for position, (name, field_type) in enumerate(fields(struct) or ()):
            parts += [F.lit(", " if position else "(")]
            parts.append(_value_text(column.getField(branch).getField(name), field_type, FileFormat()))
        parts += [F.lit(")")] if struct else []
        text = F.when(column.getField(tag) == index, F.concat(*parts)).otherwise(text)
    return text


def _float_text(column):
    """``%.17g`` as C's printf writes it (Java's ``%g`` differs): a Python function.

    Not Arrow-optimized: on PySpark 4.2.0 an Arrow Python UDF over a columnar scan (a Delta
    table read back) hangs its task forever (SPARK-58241, a protocol desync fixed in 4.2.1)."""
    from pyspark.sql import functions as F

    @F.udf("string", useArrow=False)
    def g17(value):
        return None if value is None else format(value, ".17g")

    return g17(column)


def write_output_frame(spark, frame, target: OutputTarget, out: Callable[[str], None] = print) -> None:
    """Write the relation ``frame`` where ``target`` says. A file (any Hadoop file system URI) is
    written by Spark as one file at ``target.uri`` (written into a temporary directory next to
    it, then moved there); stdout blocks and ``.printsize`` lines are printed by ``out``."""
    from pyspark.sql import functions as F

    if target.kind == "sqlite":
        from .souffle_sqlite import write_frame

        write_frame(frame, target)
        return
    if target.kind != "file":
        rows = [tuple(r) for r in frame.collect()] if target.kind == "stdout" else []
        size = len(rows) if target.kind == "stdout" else frame.count()
        write_output(target, sorted_rows(rows), size, out)
        return
    assert target.uri is not None
    lines = output_frame_lines(frame, target)
    if target.format.headers:
        header = spark.createDataFrame([(target.header(),)], "value string").withColumn("_k", F.lit(0))
        lines = header.unionByName(lines.withColumn("_k", F.lit(1)))
        lines = lines.coalesce(1).sortWithinPartitions("_k").drop("_k")
    else:
        lines = lines.coalesce(1)
    temporary = f"{uris.for_spark(target.uri)}.tmp-{uuid.uuid4().hex}"
    codec = "gzip" if target.format.compress else "none"
    lines.write.mode("overwrite").option("compression", codec).text(temporary)
    fs, dest = _hadoop_path(spark, target.uri)
    Path = spark.sparkContext._jvm.org.apache.hadoop.fs.Path
    parts = fs.globStatus(Path(temporary + "/part-*"))
    if fs.exists(dest):
        fs.delete(dest, False)
    if parts:
        if not fs.rename(parts[0].getPath(), dest):
            raise OSError(f"cannot write {target.uri} (.output {target.relation})")
    else:  # no rows, no part file
        stream = fs.create(dest, True)
        if target.format.compress:
            import gzip

            stream.write(bytearray(gzip.compress(b"")))
        stream.close()
    fs.delete(Path(temporary), True)
    checksum = Path(dest.getParent(), f".{dest.getName()}.crc")  # the local file system's sidecar
    if fs.exists(checksum):
        fs.delete(checksum, False)
