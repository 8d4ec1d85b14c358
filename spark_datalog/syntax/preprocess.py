"""The C-preprocessor subset Soufflé programs use: ``#include``, ``#define``/``#undef`` of
constants and flags, ``#ifdef``/``#ifndef``/``#if``/``#elif``/``#else``/``#endif``.

Soufflé runs its programs through the C preprocessor (mcpp or cpp), so Soufflé programs split
themselves into files and name their constants with ``#define``. :func:`parse` calls
:func:`preprocess` when a line of the text starts with ``#`` (after blanks); a text without
such a line is not touched (one ``in`` test and, when a ``#`` occurs, one regex search) unless
macros are given (Soufflé's ``-M``: ``--macro`` here), which are defined before its first line.
``RAM_DOMAIN_SIZE`` is predefined as ``64`` in every preprocessed text, as in a Soufflé built
with 64-bit domains.

Positions. The preprocessed text keeps one output line per source line: a directive and a line
of a group skipped by a false condition become empty lines, and an ``#include`` line is replaced
by the included file's lines. :func:`preprocess`
returns it as :class:`Preprocessed`, a ``str`` that carries a :class:`LineMap`: for every output
line the file and the line it came from, and for a line where a ``#define``\\ d name was replaced
the column ranges replaced. The parser and the analysis place their errors in the output text
as always; :class:`~spark_datalog.errors.DatalogError` sees the map on its ``source`` and moves
the error to the file, line and column where the text was written, showing that file's line
under its caret. A column inside a replaced name's value maps to the name's first column;
columns after it on the line shift back by the difference of lengths.

What a directive does (C's rules, unless noted):

* ``#include "file"`` (or ``<file>``): the file's text, found relative to the including file's
  directory (the current directory for a text without a file name), then in ``include_dirs``
  (Soufflé's ``-I``); ``<file>`` searches ``include_dirs`` first. A missing file is a
  ``ParseError`` at the directive naming every path tried; a file that includes itself,
  directly or through others, is a ``ParseError`` naming the chain, even when an include guard
  would stop the second inclusion (cpp lets the guard stop it). ``#pragma once`` in a file makes
  later ``#include``\\ s of it include nothing; include guards (``#ifndef X``/``#define X``/...
  ``#endif``) work as in C.
* ``#define NAME value`` replaces every later ``NAME`` token outside strings and comments by
  ``value`` (``//`` and ``/* */`` comments removed from it), re-scanned for other names;
  ``#define NAME`` defines a flag (replaced by nothing); ``#undef NAME`` forgets it. A
  function-like macro (``#define F(x) ...``) is a ``ParseError`` at its ``(``.
* ``#ifdef``/``#ifndef NAME``, ``#if``/``#elif EXPRESSION``, ``#else``, ``#endif``.
  Expressions: integers, ``defined NAME``/``defined(NAME)``, defined names (replaced; an
  undefined name is 0), ``( )``, ``! && ||``, ``== != < <= > >=``, ``+ - * / %``, evaluated as
  Python evaluates them (``!`` is ``not``: ``!a == b`` is ``!(a == b)``, unlike C); anything
  else is a ``ParseError``.
* ``#error message`` is a ``ParseError`` with the message. Every other directive (``#pragma``
  other than ``once``, ``#line``, ``#warning``, ...) is a ``ParseError`` at it; in a skipped
  group directives other than the conditionals are ignored, as in C.

``%`` is a line comment of the dialect and also, after a term, the modulo operator: a ``%``
after a name, a number, ``)`` or a string is taken for modulo (names after it are replaced),
any other starts a comment (nothing after it is replaced, and ``/*`` or ``"`` after it start no
comment or string).

Why not pcpp (the pure-Python C preprocessor on PyPI, evaluated at version 1.30)? It keeps
Datalog text intact (``'`` in comments, ``.decl``, ``@``/``$``), emits usable ``#line`` markers
and reports missing includes and ``#error`` through a callback, but: (1) it is too slow for this
package's parsing budget, about 160 µs per clause (6.4 s for 40,000 clauses, where parsing
100,000 clauses takes a few seconds), and a program with one ``#include`` pays it for all its
text; (2) a circular ``#include`` ends in a ``RecursionError`` from deep inside it, not an
error; (3) its errors carry a file and a line but no column, and unknown directives
(``#foo``) pass silently into the output, where the Datalog parser then fails on them; (4) its
output has no column map, so an error after a replaced constant could not be placed exactly;
(5) it takes ``%`` for an operator everywhere, so a ``/*`` in a ``%`` comment starts a C comment:
``% see /*`` ... ``% */`` silently dropped the clauses between.
The subset Soufflé programs use is small enough to keep here, with exact positions.
"""

from __future__ import annotations

import ast as pyast
import os
import re
from array import array
from typing import Mapping, Optional, Sequence

from spark_datalog.errors import ParseError

__all__ = ["PREDEFINED", "LineMap", "Preprocessed", "check_macros", "has_directives", "preprocess"]

# A line that is a directive: '#' first after blanks (tested on the whole text, then per line).
_DIRECTIVE_LINE = re.compile(r"^[ \t]*#", re.MULTILINE)
_DIRECTIVE = re.compile(r"[ \t]*#[ \t]*([A-Za-z_]\w*)?")
# What a line is scanned for: strings (a '"' left open ends at the line's end), comment starts,
# names, numbers (so that the 'e5' of '1e5' is no name).
_LEXEME = re.compile(r'"(?:[^"\\]|\\.)*"?|//|/\*|%|[A-Za-z_]\w*|\d\w*(?:\.\d\w*)*')
_NAME = re.compile(r"[A-Za-z_]\w*")
_MAX_INCLUDE_DEPTH = 200
# Defined before every text, as Soufflé's driver defines it for mcpp
PREDEFINED = {"RAM_DOMAIN_SIZE": "64"}
_SUPPORTED = "#include, #define, #undef, #ifdef, #ifndef, #if, #elif, #else, #endif, #error, #pragma once"


def has_directives(text: str) -> bool:
    """Whether a line of ``text`` starts with ``#`` (after blanks): only then is it preprocessed."""
    return "#" in text and _DIRECTIVE_LINE.search(text) is not None


class LineMap:
    """Where each line of a preprocessed text was written.

    ``files`` holds ``(name, text)`` of every file read (the main text first); output line ``n``
    (1-based) came from line ``lines[n - 1]`` of file ``files[file_of[n - 1]]``. ``edits`` maps an
    output line where names were replaced to ``(out_start, out_end, in_start, in_end)`` column
    ranges (0-based, end excluded), in order.
    """

    def __init__(self) -> None:
        self.files: list[tuple[Optional[str], str]] = []
        self.file_of = array("i")
        self.lines = array("i")
        self.edits: dict[int, tuple] = {}

    def locate(
        self, line: Optional[int], column: Optional[int]
    ) -> tuple[Optional[str], Optional[int], Optional[int], str]:
        """``(filename, line, column, that file's text)`` of output ``line`` and ``column``.
        Without a line (or past the end): the main file, position unchanged."""
        if not line or not self.lines:
            name, text = self.files[0]
            return name, line, column, text
        index = min(line, len(self.lines)) - 1
        name, text = self.files[self.file_of[index]]
        at = self.lines[index] + (line - 1 - index)  # past the end: the lines after the last
        if column is not None and line - 1 in self.edits:
            column = _source_column(self.edits[line - 1], column)
        return name, at, column, text


def _source_column(edits: tuple, column: int) -> int:
    """The source column (1-based) of output ``column`` on a line with ``edits``."""
    at, shift = column - 1, 0
    for out_start, out_end, in_start, in_end in edits:
        if at < out_start:
            break
        if at < out_end:
            return in_start + 1
        shift = in_end - out_end
    return at + shift + 1


class Preprocessed(str):
    """A preprocessed program text; ``origin`` (a :class:`LineMap`) knows where its lines were
    written. ``DatalogError`` uses it to place errors in the files the text came from."""

    origin: LineMap

    def __new__(cls, text: str, origin: LineMap) -> "Preprocessed":
        made = super().__new__(cls, text)
        made.origin = origin
        return made

    def __reduce__(self):
        return (Preprocessed, (str(self), self.origin))


def preprocess(
    text: str,
    filename: Optional[str] = None,
    include_dirs: Sequence[str] = (),
    macros: Optional[Mapping[str, str]] = None,
) -> str:
    """``text`` (the program in file ``filename``, if any) with its directives carried out: a
    :class:`Preprocessed` text, or ``text`` itself when it has no directive and no ``macros``
    are given. ``macros`` are defined before the text is read, as Soufflé's ``-M`` defines
    them (``{"N": "10", "DEBUG": "1"}``); ``RAM_DOMAIN_SIZE`` is predefined as ``64``, as in
    Soufflé built with 64-bit domains (our ``number`` is 64-bit). Raises :class:`ParseError` at
    the directive (in the file holding it) that cannot be carried out, ``ValueError`` for a
    macro name that is not a name.

    Example::

        >>> print(preprocess("p(N).", macros={"N": "10"}))
        p(10).
    """
    if not macros and not has_directives(text):
        return text
    run = _Run(include_dirs, {**PREDEFINED, **check_macros(macros or {})})
    main = os.path.realpath(filename) if filename and os.path.isfile(filename) else None
    run.file(text, filename, main, included=False)
    if not run.changed:
        return text
    return Preprocessed("\n".join(run.out), run.map)


def check_macros(macros: Mapping[str, str]) -> Mapping[str, str]:
    """``macros``, each name checked to be a name other than ``defined`` (``ValueError``)."""
    for name in macros:
        if not _NAME.fullmatch(name) or name == "defined":
            raise ValueError(f"macro name {name!r} is not a name (letters, digits, '_'; not 'defined')")
    return macros


class _Frame:
    """An open conditional: whether its current group is kept, whether a group was, whether the
    enclosing group is kept, where it started and whether ``#else`` was seen."""

    __slots__ = ("active", "taken", "outer", "line", "seen_else")

    def __init__(self, active: bool, taken: bool, outer: bool, line: int):
        self.active, self.taken, self.outer, self.line, self.seen_else = active, taken, outer, line, False


class _Run:
    """One preprocessing: the macros, the output lines and their map."""

    def __init__(self, include_dirs: Sequence[str], macros: Mapping[str, str]):
        self.include_dirs = [str(d) for d in include_dirs]
        self.macros: dict[str, str] = dict(macros)
        self.expanded: dict[str, str] = {}  # name -> its value with the names in it replaced
        self.pattern: Optional[re.Pattern] = None  # any defined name, as a whole token
        self.out: list[str] = []
        self.map = LineMap()
        self.stack: list[str] = []  # real paths of the files being read ('': the main text's, unknown)
        self.names: list[str] = []  # their names, for the message of a circular #include
        self.once: set[str] = set()
        self.changed = False
        self.macros_changed()

    # -- a file ----------------------------------------------------------------------------

    def file(self, text: str, name: Optional[str], real: Optional[str], included: bool) -> None:
        index = len(self.map.files)
        self.map.files.append((name, text))
        self.stack.append(real or "")
        self.names.append(name or "<program>")
        lines = text.split("\n")
        if included and lines[-1] == "":
            lines.pop()  # the newline ending the included file ends its last line, no more
        frames: list[_Frame] = []
        in_block = False  # inside a /* */ comment at the start of the line
        number = 0
        while number < len(lines):
            line = lines[number]
            number += 1
            match = None if in_block else _DIRECTIVE.match(line)
            active = not frames or frames[-1].active
            if match is None:
                in_block = self.text_line(line, in_block, active, index, number)
                continue
            self.changed = True
            first = number
            while line.rstrip("\r").endswith("\\") and number < len(lines):  # continued
                line = line.rstrip("\r")[:-1] + lines[number]
                number += 1
            where = _Place(name, text, first, line)
            in_block, replaced = self.directive_line(match, line, where, frames, active, index)
            for physical in range(first + replaced, number + 1):  # the directive's lines: empty
                self.emit("", index, physical)
        if frames:
            opened = frames[-1].line
            raise _Place(name, text, opened, lines[opened - 1]).error(
                "#if/#ifdef/#ifndef without #endif: it is still open at the end of the file"
            )
        self.stack.pop()
        self.names.pop()

    def text_line(self, line: str, in_block: bool, active: bool, index: int, number: int) -> bool:
        """Emit line ``number`` (not a directive) of file ``index``, its names replaced, or empty
        when its group is skipped; whether a ``/*`` comment is open after it."""
        if not active:
            self.emit("", index, number)
            return _scan_comments(line, in_block)
        line, edits, in_block = self.line(line, in_block)
        if edits:
            self.map.edits[len(self.out)] = edits
            self.changed = True
        self.emit(line, index, number)
        return in_block

    def directive_line(
        self, match: re.Match, line: str, where: "_Place", frames: list, active: bool, index: int
    ) -> tuple[bool, int]:
        """Carry out the directive ``line``: (whether a ``/*`` comment is open after it, 1 when an
        included file's lines replaced its first line, else 0)."""
        directive = match.group(1) or ""
        rest_at = match.end()
        body, in_block = _strip_comments(line[rest_at:])
        if directive in ("ifdef", "ifndef", "if", "elif", "else", "endif"):
            self.conditional(directive, body, rest_at, frames, where)
        elif active and directive == "include":
            self.include(body, rest_at, where, index)
            return in_block, 1
        elif active:
            self.directive(directive, body, rest_at, where)
        return in_block, 0

    def emit(self, line: str, file_index: int, number: int) -> None:
        self.out.append(line)
        self.map.file_of.append(file_index)
        self.map.lines.append(number)

    # -- directives --------------------------------------------------------------------------

    def conditional(self, directive: str, body: str, at: int, frames: list, where: "_Place") -> None:
        if directive in ("ifdef", "ifndef", "if"):
            outer = not frames or frames[-1].active
            value = False
            if outer:
                if directive == "if":
                    value = self.evaluate(body, at, where)
                else:
                    name = _one_name(body, at, f"#{directive}", where)
                    value = (name in self.macros) == (directive == "ifdef")
            frames.append(_Frame(outer and value, value, outer, where.line))
            return
        if not frames:
            raise where.error(f"#{directive} without #if, #ifdef or #ifndef")
        frame = frames[-1]
        if directive == "endif":
            _nothing_after(body, at, "#endif", where)
            frames.pop()
            return
        if frame.seen_else:
            raise where.error(f"#{directive} after #else (the #if is at line {frame.line})")
        if directive == "else":
            _nothing_after(body, at, "#else", where)
            frame.seen_else = True
            frame.active = frame.outer and not frame.taken
            frame.taken = True
        else:  # elif
            value = frame.outer and not frame.taken and self.evaluate(body, at, where)
            frame.active = value
            frame.taken = frame.taken or value

    def directive(self, directive: str, body: str, at: int, where: "_Place") -> None:
        if directive == "define":
            self.define(body, at, where)
        elif directive == "undef":
            name = _one_name(body, at, "#undef", where)
            if self.macros.pop(name, None) is not None:
                self.macros_changed()
        elif directive == "error":
            raise where.error(f"#error {body.strip()}".rstrip())
        elif directive == "pragma" and body.strip() == "once":
            if self.stack[-1]:
                self.once.add(self.stack[-1])
        elif directive == "":
            if body.strip():
                raise where.error(f"not a preprocessor directive (supported: {_SUPPORTED})")
        else:
            raise where.error(f"unsupported preprocessor directive #{directive} (supported: {_SUPPORTED})")

    def define(self, body: str, at: int, where: "_Place") -> None:
        skipped = len(body) - len(body.lstrip())
        match = _NAME.match(body, skipped)
        if match is None:
            raise where.error("#define expects a name", at + skipped)
        name = match.group()
        if body[match.end() : match.end() + 1] == "(":
            raise where.error(
                f"function-like macro {name}(...) is not supported: #define names constants only",
                at + match.end(),
            )
        if name == "defined":
            raise where.error("'defined' cannot be #defined", at + skipped)
        self.macros[name] = body[match.end() :].strip()
        self.macros_changed()

    def macros_changed(self) -> None:
        self.expanded.clear()
        names = sorted(self.macros, key=len, reverse=True)
        self.pattern = re.compile(r"\b(?:" + "|".join(names) + r")\b") if names else None

    def include(self, body: str, at: int, where: "_Place", index: int) -> None:
        spec = body.strip()
        offset = at + len(body) - len(body.lstrip())
        if len(spec) >= 2 and spec[0] == '"' and '"' in spec[1:]:
            end = spec.index('"', 1)
        elif len(spec) >= 2 and spec[0] == "<" and ">" in spec[1:]:
            end = spec.index(">", 1)
        else:
            raise where.error('#include expects "FILE" or <FILE>', offset)
        target = spec[1:end]
        if spec[end + 1 :].strip():
            raise where.error(f"unexpected text after #include {spec[: end + 1]}", offset + end + 1)
        tried = self.candidates(target, where.filename, angled=spec[0] == "<")
        found = next((path for path in tried if os.path.isfile(path)), None)
        if found is None:
            raise where.error(f"cannot find the included file {target!r}; tried: {', '.join(tried)}", offset)
        real = os.path.realpath(found)
        if real in self.once:
            return
        if real in self.stack:
            chain = " -> ".join([*self.names[self.stack.index(real) :], found])
            raise where.error(f"circular #include: {chain} (a file includes itself)", offset)
        if len(self.stack) > _MAX_INCLUDE_DEPTH:
            raise where.error(f"#include nested more than {_MAX_INCLUDE_DEPTH} deep", offset)
        from spark_datalog.textfiles import read_utf8

        try:
            included = read_utf8(found)
        except OSError as err:
            raise where.error(
                f"cannot read the included file {found}: {err.strerror or err}", offset
            ) from None
        self.file(included, found, real, included=True)

    def candidates(self, target: str, including: Optional[str], angled: bool) -> list:
        if os.path.isabs(target):
            return [target]
        here = os.path.dirname(including) if including else ""
        if including and not os.path.isfile(including):
            here = ""  # a label such as '<program>': the current directory
        dirs = [*self.include_dirs, here] if angled else [here, *self.include_dirs]
        paths: list[str] = []
        for directory in dirs:
            path = os.path.join(directory, target) if directory else target
            if path not in paths:
                paths.append(path)
        return paths

    # -- macros ------------------------------------------------------------------------------

    def line(self, line: str, in_block: bool) -> tuple[str, Optional[tuple], bool]:
        """``line`` with the defined names replaced, its edits and whether a comment is open."""
        if not in_block and "/*" not in line and (self.pattern is None or not self.pattern.search(line)):
            return line, None, False
        if not in_block and '"' not in line and "/" not in line and "%" not in line:
            names: list = list(self.pattern.finditer(line)) if self.pattern else []  # all are tokens
        else:
            names, in_block = _code_names(line, in_block)
        pieces: list[str] = []
        edits: list[tuple] = []
        done = length = 0  # line[:done] is in pieces, whose length is length
        for match in names:
            if match.group() not in self.macros:
                continue
            start, end = match.span()
            value = self.expand(match.group())
            pieces.append(line[done:start])
            length += start - done
            edits.append((length, length + len(value), start, end))
            pieces.append(value)
            length += len(value)
            done = end
        if not edits:
            return line, None, in_block
        pieces.append(line[done:])
        return "".join(pieces), tuple(edits), in_block

    def expand(self, name: str, active: frozenset = frozenset()) -> str:
        """The value of macro ``name`` with the defined names in it replaced (not ``active`` ones:
        a name is not replaced inside its own value, as in C)."""
        if not active and name in self.expanded:
            return self.expanded[name]
        inner = active | {name}
        value = self.macros[name]

        def replace(match: re.Match) -> str:
            token = match.group()
            if token in self.macros and token not in inner:
                return self.expand(token, inner)
            return token

        result = _LEXEME.sub(replace, value)
        if not active:
            self.expanded[name] = result
        return result

    def evaluate(self, body: str, at: int, where: "_Place") -> bool:
        """The value of an ``#if``/``#elif`` expression."""

        def defined(match: re.Match) -> str:
            return " 1 " if (match.group(1) or match.group(2)) in self.macros else " 0 "

        text = _DEFINED.sub(defined, body)
        text = _LEXEME.sub(lambda m: self.expand(m.group()) if m.group() in self.macros else m.group(), text)
        python: list[str] = []
        for match in _EXPRESSION_TOKEN.finditer(text):
            token = match.group()
            if token.isspace():
                continue
            if token[0].isdigit():
                digits = token.rstrip("uUlL")
                if not digits.isdigit():
                    raise where.error(f"#if: not an integer: {token}", at)
                python.append(str(int(digits)))
            elif _NAME.fullmatch(token):
                python.append("0")  # an undefined name, as in C
            elif token in _OPERATORS:
                python.append(_OPERATORS[token])
            else:
                raise where.error(
                    f"#if: {token!r} is not supported (integers, defined, names, ( ), ! && ||, "
                    "== != < <= > >=, + - * / %)",
                    at,
                )
        try:
            if not python:
                raise SyntaxError("empty")
            return bool(_calculate(pyast.parse(" ".join(python), mode="eval").body))
        except (SyntaxError, ZeroDivisionError) as err:
            reason = "division by zero" if isinstance(err, ZeroDivisionError) else "not an expression"
            raise where.error(f"#if: {reason}: {body.strip()}", at) from None


_DEFINED = re.compile(r"\bdefined\s*(?:\(\s*([A-Za-z_]\w*)\s*\)|([A-Za-z_]\w*))")
_EXPRESSION_TOKEN = re.compile(r"\s+|\d\w*|[A-Za-z_]\w*|&&|\|\||==|!=|<=|>=|[()!<>+\-*/%]|.")
_OPERATORS = {
    "&&": " and ",
    "||": " or ",
    "!": " not ",
    **{op: op for op in ("==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "%", "(", ")")},
    "/": "//",
}


def _calculate(node: pyast.AST) -> int:
    """The value of a tree of integers and the operators of :data:`_OPERATORS` (nothing else is
    evaluated: no ``eval``)."""
    if isinstance(node, pyast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, pyast.BoolOp):
        values = [_calculate(v) for v in node.values]
        return int(all(values) if isinstance(node.op, pyast.And) else any(values))
    if isinstance(node, pyast.UnaryOp):
        value = _calculate(node.operand)
        if isinstance(node.op, pyast.Not):
            return int(not value)
        if isinstance(node.op, pyast.USub):
            return -value
        if isinstance(node.op, pyast.UAdd):
            return value
    if isinstance(node, pyast.BinOp):
        return _binary(node)
    if isinstance(node, pyast.Compare):
        return _compare(node)
    raise SyntaxError("not an expression")


def _binary(node: pyast.BinOp) -> int:
    left, right = _calculate(node.left), _calculate(node.right)
    if right == 0 and isinstance(node.op, (pyast.FloorDiv, pyast.Mod)):
        raise ZeroDivisionError
    operations = {
        pyast.Add: lambda: left + right,
        pyast.Sub: lambda: left - right,
        pyast.Mult: lambda: left * right,
        pyast.FloorDiv: lambda: int(left / right),  # C truncates toward zero
        pyast.Mod: lambda: left - right * int(left / right),
    }
    if type(node.op) not in operations:
        raise SyntaxError("not an expression")
    return operations[type(node.op)]()


def _compare(node: pyast.Compare) -> int:
    left = _calculate(node.left)
    for op, comparator in zip(node.ops, node.comparators, strict=True):
        right = _calculate(comparator)
        holds = {
            pyast.Eq: left == right,
            pyast.NotEq: left != right,
            pyast.Lt: left < right,
            pyast.LtE: left <= right,
            pyast.Gt: left > right,
            pyast.GtE: left >= right,
        }[type(op)]
        if not holds:
            return 0
        left = right
    return 1


class _Place:
    """A directive's line in its file, to raise errors at."""

    __slots__ = ("filename", "text", "line", "source_line")

    def __init__(self, filename: Optional[str], text: str, line: int, source_line: str):
        self.filename, self.text, self.line, self.source_line = filename, text, line, source_line

    def error(self, message: str, offset: Optional[int] = None) -> ParseError:
        """A ``ParseError`` at column ``offset`` (0-based) of the directive's (first) line, or at
        its ``#``."""
        first = self.source_line.split("\n")[0]
        if offset is None:
            offset = len(first) - len(first.lstrip(" \t"))
        column = min(offset, len(first)) + 1
        return ParseError(message, self.line, column, source=self.text, filename=self.filename)


def _is_modulo(line: str, at: int) -> bool:
    """Whether the ``%`` at ``line[at]`` follows a term (a name, a number, ``)`` or a string)."""
    before = line[:at].rstrip()
    return bool(before) and (before[-1].isalnum() or before[-1] in '_)"')


def _strip_comments(text: str) -> tuple[str, bool]:
    """A directive's text after its name without ``//`` and ``/* */`` comments (strings kept), and
    whether a ``/*`` is left open."""
    if "/" not in text:
        return text, False
    pieces: list[str] = []
    done = position = 0
    while True:
        match = _LEXEME.search(text, position)
        if match is None:
            break
        token, start = match.group(), match.start()
        position = match.end()
        if token == "//":
            pieces.append(text[done:start])
            return "".join(pieces), False
        if token == "/*":
            pieces.append(text[done:start])
            end = text.find("*/", position)
            if end < 0:
                return "".join(pieces), True
            pieces.append(" ")
            done = position = end + 2
    pieces.append(text[done:])
    return "".join(pieces), False


def _scan_comments(line: str, in_block: bool) -> bool:
    """Whether a ``/* */`` comment is open after ``line`` (of a skipped group)."""
    if not in_block and "/*" not in line:
        return False
    return _code_names(line, in_block)[1]


def _code_names(line: str, in_block: bool) -> tuple[list, bool]:
    """The matches of the names of ``line`` outside strings and comments, and whether a ``/*``
    comment is open after it (``in_block``: one is open before it)."""
    names: list = []
    position = 0
    if in_block:
        end = line.find("*/")
        if end < 0:
            return names, True
        position = end + 2
    while (match := _LEXEME.search(line, position)) is not None:
        token, position = match.group(), match.end()
        if token == "//" or (token == "%" and not _is_modulo(line, match.start())):
            break
        if token == "/*":
            end = line.find("*/", position)
            if end < 0:
                return names, True
            position = end + 2
        elif token[0].isalpha() or token[0] == "_":
            names.append(match)
    return names, False


def _one_name(body: str, at: int, directive: str, where: _Place) -> str:
    """The one name a directive (#ifdef, #ifndef, #undef) takes."""
    skipped = len(body) - len(body.lstrip())
    match = _NAME.match(body, skipped)
    if match is None:
        raise where.error(f"{directive} expects a name", at + skipped)
    _nothing_after(body[match.end() :], at + match.end(), directive, where)
    return match.group()


def _nothing_after(rest: str, at: int, directive: str, where: _Place) -> None:
    stripped = rest.strip()
    if stripped and not stripped.startswith("%"):
        raise where.error(
            f"unexpected text after {directive}: {stripped!r}", at + len(rest) - len(rest.lstrip())
        )
