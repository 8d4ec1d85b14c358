"""Soufflé's text of a record or ADT value in a fact file, ``[1, [2, "a, b"], c]``,
``$Circle(3)``, read as Soufflé reads it.

As Soufflé's reader (``ReadStream::readRecord``): blanks before each part are skipped; a field
is read by its type: a symbol is a ``"``-quoted text with backslash escapes, or else the text up
to the next ``,`` or ``]`` (blanks included); a number or a float is the text up to the next
``,`` or ``]``, read as a field of that type is; a record field nests. An ADT value is
``$Branch(field, ...)``, or ``$Branch`` for a branch without fields (symbols there end at ``,``
or ``)``). Anything after the last
``]`` other than blanks makes the text no record. The reference and kernel read a file's lines
in Python (:func:`parse_record`); Spark runs the same function over the field's text
(:func:`spark_record_column`), in tasks.

Example::

    >>> parse_record('[1, [2, "a, b"]]', "[x: long, y: [a: long, b: string]]")
    Record((1, Record((2, 'a, b'))))
    >>> parse_record("[ 1 ,home ]", "[x: long, s: string]")
    Record((1, 'home '))
    >>> parse_record("[1]", "[x: long, y: long]") is None
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

from .record_types import Record, adt_branches, default_value, fields, is_record, nil_record, record_type
from .recursive_records import NIL, encode, encoded_fields, is_recursive, recursive_branches, recursive_fields

if TYPE_CHECKING:
    from pyspark.sql import Column


class _Malformed(ValueError):
    """The text is not a value of the type (internal: :func:`parse_record` returns None)."""


def parse_record(text: str, type_name: str) -> Union[Record, str, None]:
    """The record (or ADT value; a recursive record's encoding) of type ``type_name`` that
    ``text`` writes, or None when it writes none."""
    try:
        value, end = _value_at(text, _skip_blanks(text, 0), type_name, ",")
    except _Malformed:
        return None
    return value if not text[end:].strip() else None


def _value_at(text: str, pos: int, type_name: str, stops: str) -> tuple:
    """(value, position after it) of the ``type_name`` value at ``pos``; a symbol or number
    ends before the first of ``stops``."""
    if adt_branches(type_name) is not None:
        return _adt_at(text, pos, type_name)
    if recursive_branches(type_name) is not None:
        return _recursive_adt_at(text, pos, type_name)
    if is_recursive(type_name):
        return _recursive_at(text, pos, type_name)
    if is_record(type_name) and text.startswith(NIL, pos):  # nil
        return nil_record(type_name), pos + len(NIL)
    if is_record(type_name):
        return _fields_at(text, pos, type_name, "[", "]")
    if type_name == "string" and text.startswith('"', pos):
        return _quoted_at(text, pos)
    ends = [i for i in (text.find(stop, pos) for stop in stops) if i >= 0]
    end = min(ends) if ends else len(text)
    if type_name == "string":
        return text[pos:end], end
    from .souffle_io import parse_field

    value = parse_field(text[pos:end], type_name)
    if value is None:
        raise _Malformed(f"not a {type_name}")
    return value, end


def _fields_at(text: str, pos: int, type_name: str, opening: str, closing: str) -> tuple:
    """A record's fields between ``opening`` and ``closing``: ``[1, a]``, an ADT's ``(1, a)``."""
    pos = _expect(text, pos, opening)
    values = []
    for index, (_, field_type) in enumerate(fields(type_name) or recursive_fields(type_name) or ()):
        if index:
            pos = _expect(text, pos, ",")
        value, pos = _value_at(text, _skip_blanks(text, pos), field_type, "," + closing)
        values.append(value)
    return Record(values), _expect(text, pos, closing)


def _recursive_at(text: str, pos: int, type_name: str) -> tuple:
    """A value of a recursive record type, ``nil`` or ``[1, [2, nil]]``, as its encoding
    (:mod:`spark_datalog.recursive_records`)."""
    if text.startswith(NIL, pos):
        return NIL, pos + len(NIL)
    record, pos = _fields_at(text, pos, type_name, "[", "]")
    return encode(record, type_name), pos


def _recursive_adt_at(text: str, pos: int, type_name: str) -> tuple:
    """A value of a recursive ADT, ``$Add($Num(1), $Nil)``, as its encoding: the branch's index,
    then its fields (:mod:`spark_datalog.recursive_records`)."""
    chosen, pos = _branch_at(text, pos, [b for b, _ in recursive_branches(type_name) or ()])
    pairs = encoded_fields(type_name, chosen)[1:]
    if not pairs:
        return encode((chosen,), type_name), _after_empty(text, pos)
    record, pos = _fields_at(text, pos, record_type(pairs), "(", ")")
    return encode((chosen, *record), type_name), pos


def _branch_at(text: str, pos: int, names: list) -> tuple:
    """(the index in ``names`` of the branch ``$Name`` at ``pos``, the position after it)."""
    pos = _expect(text, pos, "$")
    start = pos
    while pos < len(text) and (text[pos].isalnum() or text[pos] in "_?"):
        pos += 1
    if text[start:pos] not in names:
        raise _Malformed("unknown branch")
    return names.index(text[start:pos]), pos


def _after_empty(text: str, pos: int) -> int:
    """The position after a branch without fields' optional ``()``."""
    after = _skip_blanks(text, pos)
    if text.startswith("(", after):
        return _expect(text, after + 1, ")")
    return pos


def _adt_at(text: str, pos: int, type_name: str) -> tuple:
    """An ADT value, ``$Circle(1, 2)`` or ``$Empty``: its tag, the branch's fields, the other
    branches' defaults (see ``record_types.adt_type``)."""
    _, branches = adt_branches(type_name) or ("", ())
    chosen, pos = _branch_at(text, pos, [branch for branch, _ in branches])
    parts: list = [chosen]
    for index, (_, struct) in enumerate(branches):
        if struct is None:
            continue
        if index == chosen:
            value, pos = _fields_at(text, pos, struct, "(", ")")
        parts.append(value if index == chosen else default_value(struct))
    return Record(parts), (_after_empty(text, pos) if branches[chosen][1] is None else pos)


def _quoted_at(text: str, pos: int) -> tuple:
    """A ``"``-quoted symbol at ``pos``: a backslash keeps the next character as it is."""
    out: list = []
    index = pos + 1
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            out.append(text[index + 1])
            index += 2
            continue
        if char == '"':
            return "".join(out), index + 1
        out.append(char)
        index += 1
    raise _Malformed("unbalanced quote")


def _skip_blanks(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _expect(text: str, pos: int, char: str) -> int:
    pos = _skip_blanks(text, pos)
    if not text.startswith(char, pos):
        raise _Malformed(f"expected {char!r}")
    return pos + 1


def spark_record_column(column: "Column", type_name: str) -> "Column":
    """The record of type ``type_name`` that each text of ``column`` writes (null where none),
    parsed by :func:`parse_record` in Spark's Python workers.

    Not Arrow-optimized: PySpark 4.2.0's Arrow Python UDF over a columnar scan hangs
    (SPARK-58241)."""
    from pyspark.sql import functions as F

    from .spark.types import spark_type

    def parse(text):
        return None if text is None else parse_record(text, type_name)

    return F.udf(parse, spark_type(type_name), useArrow=False)(column)
