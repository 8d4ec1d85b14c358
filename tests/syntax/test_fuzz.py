"""Fuzzing the front end (issue 19, item 22): random and mutated program texts given to
``Program.parse`` and to ``spark-datalog check`` raise nothing but ``DatalogError`` subclasses
(any other exception fails the test). Texts: random token sequences from the grammar's
vocabulary, mutations of valid programs (characters and tokens deleted, duplicated, swapped),
random bytes, deep nesting."""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile

from hypothesis import given
from hypothesis import strategies as st

import programs
import spark_datalog as sd
from programs import settings
from seed_programs import SEED_PROGRAMS
from spark_datalog.cli import main

VOCABULARY = (
    ".decl",
    ".input",
    ".output",
    "?-",
    ":-",
    ":=",
    "<-",
    ".",
    ",",
    ":",
    "(",
    ")",
    "not",
    "!",
    "~",
    "=",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "+",
    "-",
    "*",
    "/",
    "mod",
    "true",
    "false",
    "_",
    "X",
    "Y",
    "Z",
    "?x",
    "e",
    "p",
    "q",
    "tc",
    "min",
    "max",
    "count",
    "sum",
    "avg",
    "long",
    "string",
    "double",
    "int",
    "bool",
    "number",
    "symbol",
    "float",
    "foo",
    "0",
    "1",
    "-1",
    "9223372036854775807",
    "9223372036854775808",
    "99999999999999999999",
    "1.5",
    "1e308",
    "1e999",
    '"s"',
    '"a\\"b"',
    '"\\q"',
    '"',
    "'",
    "%c\n",
    "//c\n",
    "/*c*/",
    "/*",
    "\n",
    " ",
    "\t",
    "\x00",
    "é",
    "\ufffd",
    "\u2028",
)
TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|\?-|:-|:=|<-|!=|<=|>=|\.\w+|\w+|\S|\s+')
SEED_TEXTS = [seed.text for seed in SEED_PROGRAMS]


def _only_datalog_errors(text: str) -> None:
    """``Program.parse`` and ``spark-datalog check`` of ``text`` raise only DatalogError."""
    try:
        sd.Program.parse(text)
    except sd.DatalogError as error:
        assert error.errors and all(isinstance(e, sd.DatalogError) for e in error.errors)
        str(error)  # rendering the errors must not fail either
    _check_file(text.encode("utf-8", "surrogatepass"))


def _check_file(data: bytes) -> None:
    handle, path = tempfile.mkstemp(suffix=".dl")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["check", path])
        assert status in (0, 1), err.getvalue()
    finally:
        os.unlink(path)


@st.composite
def token_soup(draw) -> str:
    tokens = draw(st.lists(st.sampled_from(VOCABULARY), max_size=60))
    return "".join(t if t.isspace() else t + draw(st.sampled_from(("", " ", "\n"))) for t in tokens)


@st.composite
def valid_programs(draw) -> str:
    return draw(st.one_of(st.sampled_from(SEED_TEXTS), programs.any_program().map(lambda d: d[0])))


def _mutate_characters(draw, text: str) -> str:
    for _ in range(draw(st.integers(1, 4))):
        if not text:
            break
        i = draw(st.integers(0, len(text) - 1))
        j = draw(st.integers(0, len(text) - 1))
        kind = draw(st.sampled_from(("delete", "duplicate", "swap", "insert")))
        if kind == "delete":
            text = text[:i] + text[i + 1 :]
        elif kind == "duplicate":
            text = text[: i + 1] + text[i:]
        elif kind == "swap":
            chars = list(text)
            chars[i], chars[j] = chars[j], chars[i]
            text = "".join(chars)
        else:
            text = text[:i] + draw(st.sampled_from(VOCABULARY)) + text[i:]
    return text


def _mutate_tokens(draw, text: str) -> str:
    tokens = TOKEN.findall(text)
    for _ in range(draw(st.integers(1, 4))):
        if not tokens:
            break
        i = draw(st.integers(0, len(tokens) - 1))
        j = draw(st.integers(0, len(tokens) - 1))
        kind = draw(st.sampled_from(("delete", "duplicate", "swap", "replace")))
        if kind == "delete":
            del tokens[i]
        elif kind == "duplicate":
            tokens.insert(i, tokens[i])
        elif kind == "swap":
            tokens[i], tokens[j] = tokens[j], tokens[i]
        else:
            tokens[i] = draw(st.sampled_from(VOCABULARY))
    return "".join(tokens)


@st.composite
def mutated_programs(draw) -> str:
    text = draw(valid_programs())
    if draw(st.booleans()):
        return _mutate_characters(draw, text)
    return _mutate_tokens(draw, text)


@st.composite
def deep_nesting(draw) -> str:
    depth = draw(st.one_of(st.integers(1, 30), st.integers(450, 1100)))
    opening, closing = draw(
        st.sampled_from((("(", ")"), ("-", ""), ("X + ", ""), ("(X * ", ")"), ("p(", ")")))
    )
    inner = opening * depth + "X" + closing * draw(st.integers(max(0, depth - 2), depth))
    return draw(
        st.sampled_from(
            (
                f".input e\np(Y) :- e(X), Y = {inner}.\n",
                f".input e\np({inner}) :- e(X).\n",
                f".input e\np(X) :- e(X), e({inner}).\n",
                f".input e\np(X) :- e(X), X < {inner}.\n",
            )
        )
    )


@settings(default=150)
@given(st.one_of(token_soup(), mutated_programs(), deep_nesting(), st.text(max_size=80)))
def test_only_datalog_errors_escape_from_parse_and_check(text):
    _only_datalog_errors(text)


@settings(default=50)
@given(st.binary(max_size=120), st.sampled_from(SEED_TEXTS))
def test_random_bytes_in_a_program_file_are_datalog_errors(data, seed):
    _check_file(data)
    _check_file(seed.encode() + data)
    _only_datalog_errors(data.decode("latin-1"))
