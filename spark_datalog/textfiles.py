"""Reading text files as UTF-8, with the position of the first byte that is not UTF-8.

Programs, job configs and CSV inputs are UTF-8. A file that is not is reported as a
``DatalogError`` naming the file, the line and the column of the first bad byte, never as a raw
``UnicodeDecodeError``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Optional

from .errors import DatalogError, ParseError


def read_utf8(path, error: type = ParseError) -> str:
    """The text of the file at ``path``; ``error`` (a ``DatalogError`` class) when it is not
    UTF-8. ``OSError`` when it cannot be read."""
    return decode_utf8(Path(path).read_bytes(), str(path), error)


def decode_utf8(data: bytes, filename: str, error: type = ParseError) -> str:
    """``data`` decoded as UTF-8, or ``error`` at the line and column of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise not_utf8(data, err.start, filename, error) from None


def not_utf8(data: bytes, start: int, filename: str, error: type = ParseError) -> DatalogError:
    """The error for the byte at offset ``start`` of ``data`` (the file's text) not being UTF-8."""
    line_start = data.rfind(b"\n", 0, start) + 1
    line = data.count(b"\n", 0, start) + 1
    column = len(data[line_start:start].decode("utf-8", "replace")) + 1
    return error(
        f"the file is not valid UTF-8 text: byte 0x{data[start]:02x} at line {line}, column {column}",
        line=line,
        column=column,
        source=data.decode("utf-8", "replace"),
        filename=filename,
    )


def first_invalid_utf8(lines: Iterable[bytes]) -> Optional[tuple]:
    """``(line, column, byte)`` of the first byte of ``lines`` (a binary file's lines) that is not
    UTF-8, or ``None``. Reads no further than that line."""
    for number, raw in enumerate(lines, start=1):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as err:
            column = len(raw[: err.start].decode("utf-8", "replace")) + 1
            return number, column, raw[err.start]
    return None
