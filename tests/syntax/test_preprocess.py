"""The C-preprocessor subset Soufflé programs use (issue 23, item 9): #include, #define/#undef,
#ifdef/#ifndef/#if/#elif/#else/#endif, errors at the directive, and errors of the program placed
in the file (line, column, caret) where the text was written."""

from __future__ import annotations

import pickle
import textwrap

import pytest

import spark_datalog as sd
from spark_datalog.cli import main
from spark_datalog.errors import ParseError, SafetyError
from spark_datalog.reference import evaluate
from spark_datalog.syntax import parse
from spark_datalog.syntax.preprocess import Preprocessed, has_directives, preprocess


def write(path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def lines(text: str) -> list:
    """The non-blank lines of a preprocessed text, stripped."""
    return [line.strip() for line in text.split("\n") if line.strip()]


def facts(program, name: str) -> set:
    return evaluate(program)[name]


def error_of(call, *args, kind=sd.DatalogError, **kwargs):
    with pytest.raises(kind) as caught:
        call(*args, **kwargs)
    return caught.value


# -- text without directives --------------------------------------------------------------------


def test_text_without_directives_is_returned_unchanged():
    text = '% a # in a comment\np("#define N 1").\n// #include "x"\nq(X) :- p(X).\n'
    assert not has_directives(text)
    assert preprocess(text, "x.dl") is text
    assert parse(text).source is text


def test_hash_lines_inside_a_block_comment_are_no_directives():
    text = '/* commented out:\n#include "nowhere.dl"\n#pragma whatever\n*/\np(1).\n'
    assert has_directives(text)
    assert preprocess(text) is text  # nothing carried out: the text itself
    assert parse(text).facts[0].atom.predicate == "p"


# -- macros given by the caller (Soufflé's -M) ----------------------------------------------------


def test_macros_are_defined_before_a_text_without_directives():
    text = "p(N).\nq(X) :- p(X), X > LIMIT, X != N2.\n"
    program = parse(text, macros={"N": "10", "LIMIT": "3", "N2": "N + 1"})
    assert [str(f.atom) for f in program.facts] == ["p(10)"]
    assert [str(r) for r in program.rules] == ["q(X) :- p(X), X > 3, X != (10 + 1)."]
    assert preprocess("p(1).", macros={"N": "10"}) == "p(1)."


def test_a_directive_sees_the_macros_and_can_undefine_them():
    text = "#ifdef DEBUG\nd(N).\n#endif\n#undef N\n#ifndef N\nu(1).\n#endif\n"
    program = parse(text, macros={"DEBUG": "1", "N": "2"})
    assert sorted(str(f.atom) for f in program.facts) == ["d(2)", "u(1)"]
    assert [str(f.atom) for f in parse(text).facts] == ["u(1)"]


def test_ram_domain_size_is_predefined_as_64_bits():
    text = "#if RAM_DOMAIN_SIZE == 64\nwide(1).\n#else\nnarrow(1).\n#endif\n"
    assert [f.atom.predicate for f in parse(text).facts] == ["wide"]


def test_an_error_after_a_given_macro_is_placed_in_the_written_text():
    error = error_of(sd.Program.parse, "p(N).\nq(X) :- p(Y).\n", macros={"N": "1000"})
    assert isinstance(error, SafetyError)
    assert (error.line, error.column) == (2, 3)
    error = error_of(parse, "p(N, ).\n", macros={"N": "1000"}, kind=ParseError)
    assert (error.line, error.column) == (1, 6)
    assert "   1 | p(N, )." in str(error)


@pytest.mark.parametrize("name", ["1N", "A-B", "", "defined"])
def test_a_macro_name_that_is_not_a_name_is_a_value_error(name):
    with pytest.raises(ValueError, match="is not a name"):
        parse("p(1).", macros={name: "1"})


def test_the_cli_defines_macros_with_m_as_souffle_does(tmp_path, capsys):
    program = write(tmp_path / "p.dl", ".decl p(x: number)\n#ifdef FLAG\np(N).\n#endif\n.output p\n")
    out = tmp_path / "out"
    argv = ["run", "--engine", "reference", "-q", str(program), "-F", str(tmp_path), "-D", str(out)]
    assert main(argv + ["-M", "FLAG N=7"]) == 0
    assert (out / "p.csv").read_text() == "7\n"
    assert main(argv + ["--macro", "FLAG", "--macro", "N=8"]) == 0
    assert (out / "p.csv").read_text() == "8\n"
    assert main(argv) == 0
    assert (out / "p.csv").read_text() == ""
    capsys.readouterr()
    assert main(["check", str(program), "-M", "N-1=2"]) == 2
    assert "--macro: macro name 'N-1' is not a name" in capsys.readouterr().err


# -- #define / #undef ---------------------------------------------------------------------------


def test_define_replaces_whole_names_outside_strings_and_comments():
    text = textwrap.dedent(
        """
        #define N 10
        p(N, NN, N_1, "N", 1e5). % N stays
        q(N). // N stays /* N */
        /* N stays */ r(N).
        """
    )
    assert lines(preprocess(text)) == [
        'p(10, NN, N_1, "N", 1e5). % N stays',
        "q(10). // N stays /* N */",
        "/* N stays */ r(10).",
    ]


def test_define_after_a_term_percent_is_modulo_and_replaced():
    text = "#define M 3\nr(X) :- p(X), X % M = 0. % M is a comment here\n"
    assert lines(preprocess(text)) == ["r(X) :- p(X), X % 3 = 0. % M is a comment here"]


def test_define_values_are_rescanned_and_self_reference_stops():
    text = textwrap.dedent(
        """
        #define A B + 1 // comment dropped
        #define B 2 /* also dropped */
        #define SELF SELF
        p(A, SELF).
        """
    )
    assert lines(preprocess(text)) == ["p(2 + 1, SELF)."]


def test_define_flag_undef_and_redefinition():
    text = textwrap.dedent(
        """
        #define N 1
        a(N).
        #undef N
        b(N).
        #define N 2
        c(N).
        #define N 3
        d(N).
        #define FLAG
        e(1 FLAG).
        """
    )
    assert lines(preprocess(text)) == ["a(1).", "b(N).", "c(2).", "d(3).", "e(1 )."]


def test_define_with_continuation_lines_keeps_line_numbers():
    text = "#define LONG 1 + \\\n  2\np(LONG).\nq(X :- p(X).\n"
    out = preprocess(text)
    assert out.split("\n")[2] == "p(1 +   2)."
    error = error_of(parse, text, "c.dl", kind=ParseError)
    assert (error.filename, error.line) == ("c.dl", 4)


def test_function_like_macro_is_an_error_at_its_parenthesis():
    error = error_of(preprocess, "p(1).\n#define SQ(x) ((x)*(x))\n", "m.dl", kind=ParseError)
    assert (error.filename, error.line, error.column) == ("m.dl", 2, 11)
    assert "function-like macro SQ(...) is not supported" in error.message
    assert "   2 | #define SQ(x) ((x)*(x))\n" in str(error)


# -- conditionals -------------------------------------------------------------------------------


def test_ifdef_ifndef_else_endif_nested():
    text = textwrap.dedent(
        """
        #define DEBUG
        #ifdef DEBUG
        a(1).
          #ifndef VERBOSE
        b(1).
          #else
        b(2).
          #endif
        #else
        a(2).
        #ifdef DEBUG
        c(1).
        #endif
        #endif
        #ifndef DEBUG
        d(1).
        #endif
        """
    )
    assert lines(preprocess(text)) == ["a(1).", "b(1)."]


def test_if_and_elif_expressions():
    text = textwrap.dedent(
        """
        #define LEVEL 2
        #if LEVEL > 2
        a(3).
        #elif LEVEL == 2 && defined(LEVEL) && !defined NOPE
        a(2).
        #elif 1
        a(1).
        #else
        a(0).
        #endif
        #if (UNDEFINED + 7) / 2 % 3 == 0 || 0
        b(1).
        #endif
        """
    )
    assert lines(preprocess(text)) == ["a(2).", "b(1)."]


def test_skipped_groups_ignore_directives_other_than_conditionals():
    text = textwrap.dedent(
        """
        #if 0
        #error not reached
        #pragma unknown
        #include "missing.dl"
        #define X 1
        #endif
        p(X).
        """
    )
    assert lines(preprocess(text)) == ["p(X)."]


def test_a_block_comment_in_a_skipped_group_hides_directives():
    text = "#ifdef NO\n/* \n#endif\n*/\n#endif\np(1).\n"
    assert lines(preprocess(text)) == ["p(1)."]


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ("p(1).\n#else\n", 2, 1, "#else without #if"),
        ("p(1).\n  #endif\n", 2, 3, "#endif without #if"),
        ("#ifdef A\n#else\n#elif 1\n#endif\n", 3, 1, "#elif after #else (the #if is at line 1)"),
        ("#ifdef A\n#else\n#else\n#endif\n", 3, 1, "#else after #else"),
        ("p(1).\n#ifndef A\np(2).\n", 2, 1, "without #endif"),
        ("#ifdef A B\n#endif\n", 1, 10, "unexpected text after #ifdef: 'B'"),
        ("#ifdef\n#endif\n", 1, 7, "#ifdef expects a name"),
        ("#if 1 +\n#endif\n", 1, 4, "#if: not an expression: 1 +"),
        ("#if 1 / 0\n#endif\n", 1, 4, "#if: division by zero"),
        ("#if 1 & 2\n#endif\n", 1, 4, "#if: '&' is not supported"),
        ('#if "s"\n#endif\n', 1, 4, "is not supported"),
    ],
)
def test_conditional_errors(text, line, column, message):
    error = error_of(preprocess, text, "c.dl", kind=ParseError)
    assert (error.filename, error.line, error.column) == ("c.dl", line, column)
    assert message in error.message


def test_ifdef_trailing_percent_comment_is_allowed():
    assert lines(preprocess("#ifndef A % why\np(1).\n#endif % done\n")) == ["p(1)."]


# -- other directives ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("directive", "message"),
    [
        ("#pragma message", "unsupported preprocessor directive #pragma"),
        ("#line 10", "unsupported preprocessor directive #line"),
        ("#warning careful", "unsupported preprocessor directive #warning"),
        ("# 12 junk", "not a preprocessor directive"),
    ],
)
def test_unsupported_directives_are_errors_at_them(directive, message):
    error = error_of(preprocess, f"p(1).\n  {directive}\n", "u.dl", kind=ParseError)
    assert (error.filename, error.line, error.column) == ("u.dl", 2, 3)
    assert message in error.message
    assert "#include, #define" in error.message  # says what is supported


def test_error_directive_raises_its_message():
    error = error_of(
        preprocess, "#ifndef CONFIG\n#error CONFIG must be defined\n#endif\n", "e.dl", kind=ParseError
    )
    assert (error.line, error.column, error.message) == (2, 1, "#error CONFIG must be defined")


def test_null_directive_is_ignored():
    assert lines(preprocess("#\np(1).\n")) == ["p(1)."]


# -- #include ----------------------------------------------------------------------------------


def test_include_relative_to_the_including_file_nested(tmp_path):
    write(tmp_path / "lib" / "deep" / "edges.dl", "e(1, 2).\ne(2, 3).\n")
    write(tmp_path / "lib" / "schema.dl", '.decl e(x: number, y: number)\n#include "deep/edges.dl"\n')
    main_file = write(
        tmp_path / "main.dl",
        """
        #include "lib/schema.dl"
        tc(X, Y) :- e(X, Y).
        tc(X, Z) :- tc(X, Y), e(Y, Z).
        """,
    )
    program = sd.Program.from_file(main_file)
    assert facts(program, "tc") == {(1, 2), (2, 3), (1, 3)}
    origin = program.source.origin
    names = [str(name) for name, _ in origin.files]
    assert names == [
        str(main_file),
        str(tmp_path / "lib" / "schema.dl"),
        str(tmp_path / "lib" / "deep" / "edges.dl"),
    ]


def test_include_without_a_file_name_is_relative_to_the_current_directory(tmp_path, monkeypatch):
    write(tmp_path / "facts.dl", "p(7).\n")
    monkeypatch.chdir(tmp_path)
    program = sd.Program.parse('#include "facts.dl"\nq(X) :- p(X).\n')
    assert facts(program, "q") == {(7,)}


def test_include_dirs_are_searched_after_the_files_directory(tmp_path):
    write(tmp_path / "here" / "common.dl", "p(1).\n")
    write(tmp_path / "inc" / "common.dl", "p(2).\n")
    write(tmp_path / "inc" / "only.dl", "p(3).\n")
    main_file = write(
        tmp_path / "here" / "main.dl", '#include "common.dl"\n#include <only.dl>\nq(X) :- p(X).\n'
    )
    program = sd.Program.from_file(main_file, include_dirs=[str(tmp_path / "inc")])
    assert facts(program, "q") == {(1,), (3,)}
    angled = write(tmp_path / "here" / "angled.dl", "#include <common.dl>\nq(X) :- p(X).\n")
    program = sd.Program.from_file(angled, include_dirs=[str(tmp_path / "inc")])
    assert facts(program, "q") == {(2,)}  # <file>: the include directories first


def test_include_guards_and_pragma_once_include_a_file_once(tmp_path):
    write(
        tmp_path / "guarded.dl",
        """
        #ifndef GUARDED_DL
        #define GUARDED_DL
        .decl g(x: number)
        g(1).
        #endif
        """,
    )
    write(tmp_path / "once.dl", "#pragma once\n.decl o(x: number)\no(1).\n")
    write(tmp_path / "plain.dl", "plain(1).\n")
    main_file = write(
        tmp_path / "main.dl",
        '#include "guarded.dl"\n#include "once.dl"\n#include "guarded.dl"\n#include "once.dl"\n'
        '#include "plain.dl"\n#include "plain.dl"\n',
    )
    text = parse(main_file.read_text(), str(main_file)).source
    assert lines(text).count(".decl g(x: number)") == 1
    assert lines(text).count(".decl o(x: number)") == 1
    assert lines(text).count("plain(1).") == 2  # no guard: included twice, as in C


def test_a_missing_include_is_an_error_at_the_directive_naming_the_paths_tried(tmp_path):
    main_file = write(tmp_path / "main.dl", 'p(1).\n  #include "nope.dl"\n')
    error = error_of(sd.Program.from_file, main_file, include_dirs=["/opt/dl"], kind=ParseError)
    assert (error.filename, error.line, error.column) == (str(main_file), 2, 12)
    assert "cannot find the included file 'nope.dl'" in error.message
    assert str(tmp_path / "nope.dl") in error.message and "/opt/dl/nope.dl" in error.message
    assert '   2 |   #include "nope.dl"\n' in str(error)


def test_a_missing_include_in_an_included_file_points_into_that_file(tmp_path):
    inner = write(tmp_path / "sub" / "inner.dl", 'p(1).\n#include "gone.dl"\n')
    main_file = write(tmp_path / "main.dl", '#include "sub/inner.dl"\n')
    error = error_of(sd.Program.from_file, main_file, kind=ParseError)
    assert (error.filename, error.line, error.column) == (str(inner), 2, 10)
    assert str(tmp_path / "sub" / "gone.dl") in error.message


@pytest.mark.parametrize(
    ("text", "column", "message"),
    [
        ("#include nope.dl", 10, '#include expects "FILE" or <FILE>'),
        ('#include "a.dl" extra', 16, "unexpected text after #include"),
    ],
)
def test_malformed_include(tmp_path, text, column, message):
    error = error_of(preprocess, text + "\n", "m.dl", kind=ParseError)
    assert (error.line, error.column) == (1, column)
    assert message in error.message


def test_circular_include_is_an_error_naming_the_chain(tmp_path):
    a = write(tmp_path / "a.dl", '#include "b.dl"\na(1).\n')
    b = write(tmp_path / "b.dl", 'b(1).\n#include "a.dl"\n')
    error = error_of(sd.Program.from_file, a, kind=ParseError)
    assert (error.filename, error.line, error.column) == (str(b), 2, 10)
    assert f"circular #include: {a} -> {b} -> {a}" in error.message


def test_a_file_including_itself_is_circular(tmp_path):
    me = write(tmp_path / "me.dl", '#include "me.dl"\n')
    assert "circular #include" in error_of(sd.Program.from_file, me, kind=ParseError).message


def test_an_included_file_that_is_not_utf8_names_it(tmp_path):
    bad = tmp_path / "bad.dl"
    bad.write_bytes(b'p("\xff").\n')
    main_file = write(tmp_path / "main.dl", '#include "bad.dl"\n')
    error = error_of(sd.Program.from_file, main_file, kind=ParseError)
    assert (error.filename, error.line, error.column) == (str(bad), 1, 4)


def test_macros_defined_in_an_included_file_apply_after_it(tmp_path):
    write(tmp_path / "config.dl", "#define LIMIT 3\n#define WITH_EXTRA\n")
    main_file = write(
        tmp_path / "main.dl",
        """
        #include "config.dl"
        n(0).
        n(Y) :- n(X), Y = X + 1, Y <= LIMIT.
        #ifdef WITH_EXTRA
        n(100).
        #endif
        """,
    )
    assert facts(sd.Program.from_file(main_file), "n") == {(0,), (1,), (2,), (3,), (100,)}


# -- where errors point -------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path):
    """main.dl includes lib/rules.dl on its line 2; their errors are placed per test."""
    return tmp_path


def test_syntax_error_in_an_included_file(project):
    rules = write(project / "lib" / "rules.dl", "e(1, 2).\n\nq(X :- e(X, _).\n")
    main_file = write(project / "main.dl", '#define N 1\n#include "lib/rules.dl"\nr(X) :- e(X, N).\n')
    error = error_of(sd.Program.from_file, main_file, kind=ParseError)
    assert (error.filename, error.line, error.column) == (str(rules), 3, 5)
    assert str(error).startswith(f"{rules}:3:5: parse error: unexpected ':")
    assert "   3 | q(X :- e(X, _).\n           ^" in str(error)


def test_analysis_errors_in_an_included_file_and_in_the_main_file_after_it(project):
    rules = write(project / "lib" / "rules.dl", "e(1, 2).\nbad(X) :- e(Y, Y).\n")
    main_file = write(
        project / "main.dl",
        """
        % main
        #include "lib/rules.dl"
        ok(X) :- e(X, _).
        worse(Z) :- e(X, X).
        """,
    )
    error = error_of(sd.Program.from_file, main_file, kind=SafetyError)
    assert len(error.errors) == 2
    first, second = error.errors  # in the order of the preprocessed text: the included file first
    assert (first.filename, first.line, first.column) == (str(rules), 2, 5)
    assert "   2 | bad(X) :- e(Y, Y).\n           ^" in first.render()
    assert (second.filename, second.line, second.column) == (str(main_file), 4, 7)  # main's own line
    assert "   4 | worse(Z) :- e(X, X).\n             ^" in second.render()
    assert f"{rules}:2:5: safety error" in str(error) and f"{main_file}:4:7: safety error" in str(error)


def test_unknown_relation_error_in_an_included_file(project):
    rules = write(project / "lib" / "rules.dl", ".decl e(x: number)\n.output missing\n")
    main_file = write(project / "main.dl", '#include "lib/rules.dl"\ne(1).\n')
    error = error_of(sd.Program.from_file, main_file)
    assert (error.filename, error.line) == (str(rules), 2)
    assert "missing" in error.message
    assert "   2 | .output missing" in str(error)


def test_error_columns_on_a_line_where_a_constant_was_replaced(project):
    main_file = write(
        project / "main.dl",
        """
        #define LONG_CONSTANT 1000000
        #define S 1
        e(1, 2).
        t(X) :- e(X, S), X < LONG_CONSTANT, Z > S.
        u(X) :- e(X, _), X < LONG_CONSTANT + Q.
        """,
    )
    error = error_of(sd.Program.from_file, main_file, kind=SafetyError)
    z_error, q_error = error.errors
    # after the replaced names: the column where Z is written in the file (not in the output)
    assert (z_error.line, z_error.column) == (4, 37)
    assert "   4 | t(X) :- e(X, S), X < LONG_CONSTANT, Z > S.\n" + " " * 43 + "^" in z_error.render()
    assert (q_error.line, q_error.column) == (5, 38)


def test_error_inside_a_replaced_value_points_at_the_name(tmp_path):
    # the value holds the unbound variable: its column is that of the name in the file
    main_file = write(tmp_path / "main.dl", "#define BAD Unbound + 1\ne(1).\nt(X) :- e(X), X < BAD.\n")
    error = error_of(sd.Program.from_file, main_file, kind=SafetyError)
    assert (error.line, error.column) == (3, 19)


def test_errors_without_a_file_name_use_program(tmp_path, monkeypatch):
    write(tmp_path / "inc.dl", "p(X) :- q(Y).\n")
    monkeypatch.chdir(tmp_path)
    error = error_of(sd.Program.parse, '#include "inc.dl"\nq(1).\nr(X) :- q(Y).\n', kind=SafetyError)
    assert [(e.filename, e.line) for e in error.errors] == [("inc.dl", 1), (None, 3)]
    assert str(error.errors[1]).startswith("<program>:3:")


def test_crlf_line_endings(tmp_path):
    write(tmp_path / "inc.dl", "e(1, 2).\r\n")
    main_file = tmp_path / "main.dl"
    main_file.write_bytes(b'#define N 2\r\n#include "inc.dl"\r\nt(X) :- e(X, N).\r\nbad(Z) :- e(1, 2).\r\n')
    error = error_of(sd.Program.from_file, main_file, kind=SafetyError)
    assert (error.line, error.column) == (4, 5)
    main_file.write_bytes(b'#define N 2\r\n#include "inc.dl"\r\nt(X) :- e(X, N).\r\n')
    assert facts(sd.Program.from_file(main_file), "t") == {(1,)}


def test_preprocessed_text_pickles_with_its_map(tmp_path):
    write(tmp_path / "inc.dl", "p(1).\n")
    main_file = write(tmp_path / "main.dl", '#define N 5\n#include "inc.dl"\nq(N).\n')
    source = sd.Program.from_file(main_file).source
    assert isinstance(source, Preprocessed)
    copy = pickle.loads(pickle.dumps(source))
    assert copy == source and isinstance(copy, Preprocessed)
    assert (
        copy.origin.locate(3, 3)
        == source.origin.locate(3, 3)
        == (str(main_file), 3, 3, main_file.read_text())
    )


# -- end to end ---------------------------------------------------------------------------------


def test_program_from_a_file_including_another_evaluates(tmp_path):
    write(
        tmp_path / "graph" / "edges.dl",
        """
        #ifndef EDGES_DL
        #define EDGES_DL
        .decl edge(x: number, y: number)
        edge(1, 2). edge(2, 3). edge(3, 4). edge(4, 5).
        #endif
        """,
    )
    main_file = write(
        tmp_path / "reach.dl",
        """
        // Soufflé-style program split in files
        #include "graph/edges.dl"
        #include "graph/edges.dl"
        #define START 2
        #define MAX_HOPS 2

        .decl hop(x: number, y: number, n: number)
        hop(START, Y, 1) :- edge(START, Y).
        hop(START, Z, N) :- hop(START, Y, M), edge(Y, Z), N = M + 1, N <= MAX_HOPS.
        #ifdef SHOW_ALL
        .output hop
        #else
        .decl near(y: number)
        near(Y) :- hop(_, Y, _).
        .output near
        #endif
        """,
    )
    program = sd.Program.from_file(main_file)
    assert program.outputs == ("near",)
    assert facts(program, "near") == {(3,), (4,)}


def test_cli_check_takes_include_dirs(tmp_path, capsys):
    write(tmp_path / "inc" / "schema.dl", ".decl arc(x: number, y: number)\n")
    main_file = write(tmp_path / "p" / "main.dl", "#include <schema.dl>\nreach(X, Y) :- arc(X, Y).\n")
    assert main(["check", "-I", str(tmp_path / "inc"), str(main_file)]) == 0
    assert "arc" in capsys.readouterr().out
    write(tmp_path / "inc" / "schema.dl", ".decl arc(x: number, y: number)\nbroken(X) :- arc(Y, Y).\n")
    assert main(["check", "--include-dir", str(tmp_path / "inc"), str(main_file)]) == 1
    err = capsys.readouterr().err
    assert f"{tmp_path / 'inc' / 'schema.dl'}:2:8: safety error" in err
