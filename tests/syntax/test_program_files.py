"""Program files (issue 19, item 10): bytes that are not UTF-8 are a ParseError at the first bad
byte, from ``Program.from_file`` and from every command that reads a program."""

from __future__ import annotations

import pytest

import spark_datalog as sd
from spark_datalog.cli import main

# Line 3 holds a Latin-1 'é' (0xe9) after "caf": the first byte that is not UTF-8 is column 13.
LATIN1 = b'.input arc\narc(1, 2).\nname(1, "caf\xe9").\nreach(X, Y) :- arc(X, Y).\n'


def write(tmp_path, data: bytes):
    path = tmp_path / "latin1.dl"
    path.write_bytes(data)
    return path


def test_from_file_reports_the_first_byte_that_is_not_utf8(tmp_path):
    path = write(tmp_path, LATIN1)
    with pytest.raises(sd.ParseError) as caught:
        sd.Program.from_file(path)
    error = caught.value
    assert (error.line, error.column) == (3, 13)
    assert "UTF-8" in error.message and "0xe9" in error.message
    assert str(path) in str(error) and "^" in str(error)


def test_bad_byte_after_multibyte_characters_is_counted_in_characters(tmp_path):
    path = write(tmp_path, "% résumé\n".encode() + b"p(1).\n% \xff\n")
    with pytest.raises(sd.ParseError) as caught:
        sd.Program.from_file(path)
    assert (caught.value.line, caught.value.column) == (3, 3)


def test_a_valid_utf8_file_with_non_ascii_text_parses(tmp_path):
    path = write(tmp_path, '.decl name(id: long, s: string)\nname(1, "café").\n'.encode())
    assert sd.Program.from_file(path).checked.facts["name"] == {(1, "café")}


@pytest.mark.parametrize(
    "argv",
    [
        ["check"],
        ["run", "--engine", "reference"],
    ],
)
def test_commands_report_a_non_utf8_program_with_exit_1(tmp_path, capsys, argv):
    path = write(tmp_path, LATIN1)
    status = main([argv[0], str(path), *argv[1:]])
    _, err = capsys.readouterr()
    assert status == 1
    assert f"{path}:3:13: parse error" in err
    assert "Traceback" not in err and "UnicodeDecodeError" not in err


def test_materialize_reports_a_non_utf8_program_with_exit_1(tmp_path, capsys):
    path = write(tmp_path, LATIN1)
    status = main(["materialize", "--program", str(path), "--warehouse", str(tmp_path / "wh")])
    _, err = capsys.readouterr()
    assert status == 1
    assert f"{path}:3:13: parse error" in err
    assert "Traceback" not in err
