"""The ``spark-datalog`` command line: check, run (reference and Spark engines), errors, exit codes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import spark_datalog as sd
from spark_datalog.cli import main

EXAMPLE = Path(__file__).resolve().parents[1] / "spark_datalog" / "examples" / "graph.dl"

# Facts of the bundled example, worked out by hand: the 13 airports with flights form one strongly
# connected network (every route but five flies both ways), everything reaches kef, kef reaches
# nothing, and ath has no flights at all.
EXPECTED_SIZES = {"reach": 13 * 14, "unreachable": 14 + 14 + 13, "out_degree": 13, "hub": 4, "domestic": 12}


def run_cli(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


# ---------------------------------------------------------------------------------------------
# check


def test_check_prints_relations_and_strata_in_order(capsys):
    status, out, err = run_cli(capsys, "check", EXAMPLE)
    assert status == 0, err
    program = sd.Program.from_file(str(EXAMPLE))
    for name in program.relations:
        assert re.search(rf"\b{name}\b", out), f"{name} missing from:\n{out}"
    assert "long" in out and "string" in out  # column types are shown
    # Strata come in evaluation order: the first line naming each relation follows that order.
    stratum_lines = [line for line in out.splitlines() if re.search(r"stratum\s*\d", line, re.I)]
    assert len(stratum_lines) == len(program.strata), out
    for line, names in zip(stratum_lines, program.strata, strict=True):
        for name in names:
            assert re.search(rf"\b{name}\b", line), (line, names)
    assert "recursive" in out


def test_check_reports_every_error_with_a_caret_and_exit_1(tmp_path, capsys):
    path = write(tmp_path, "bad.dl", "p(X) :- q(Y).\nq(1).\nr(X) :- q(Z), not s(X).\ns(2).\n")
    status, out, err = run_cli(capsys, "check", path)
    assert status == 1
    assert out == ""
    assert f"{path}:1:" in err and f"{path}:3:" in err  # both unsafe rules, each with its position
    assert "p(X) :- q(Y)." in err and "^" in err
    assert "2 errors" in err


def test_check_reports_a_parse_error_at_its_line(tmp_path, capsys):
    path = write(tmp_path, "syntax.dl", "edge(1, 2).\nedge(2, 3)\npath(X, Y) :- edge(X, Y).\n")
    status, _, err = run_cli(capsys, "check", path)
    assert status == 1
    assert re.search(r"syntax\.dl:[23]:\d+: parse error", err), err
    caret_line = [line for line in err.splitlines() if line.strip() == "^"]
    assert caret_line, err


def test_check_rejects_a_variable_bound_only_inside_an_expression_argument(tmp_path, capsys):
    path = write(tmp_path, "expr.dl", "edge(1, 2).\nm(X, Y) :- edge(X + 1, Y).\n")
    status, out, err = run_cli(capsys, "check", path)
    assert status == 1, out
    assert f"{path}:2:17: safety error: variable X" in err
    assert "Traceback" not in err


def test_check_rejects_a_relation_nothing_defines(tmp_path, capsys):
    path = write(
        tmp_path,
        "typo.dl",
        ".input edge\npath(X, Y) :- edge(X, Y).\npath(X, Z) :- path(X, Y), edges(Y, Z).\n",
    )
    status, out, err = run_cli(capsys, "check", path)
    assert status == 1, out
    assert f"{path}:3:27: schema error: relation 'edges' is never defined" in err
    assert "did you mean 'edge'?" in err


def test_usage_errors_exit_2(capsys):
    assert run_cli(capsys)[0] == 2  # no command
    assert run_cli(capsys, "run", EXAMPLE, "--engine", "flink")[0] == 2
    status, _, err = run_cli(capsys, "run", EXAMPLE, "--engine", "reference", "--input", "nonsense")
    assert status == 2 and "NAME=PATH.csv" in err
    status, _, err = run_cli(capsys, "run", EXAMPLE, "--engine", "reference", "--input", "arc=x.csv")
    assert status == 2 and "no relation 'arc'" in err
    status, _, err = run_cli(capsys, "run", EXAMPLE, "--engine", "reference", "--input", "reach=x.csv")
    assert status == 2 and "derived by rules" in err


def test_missing_program_file_is_a_usage_error(tmp_path, capsys):
    status, _, err = run_cli(capsys, "check", tmp_path / "missing.dl")
    assert status == 2
    assert "cannot read" in err and "missing.dl" in err


# ---------------------------------------------------------------------------------------------
# run --engine reference


def fact_count(out: str, relation: str) -> int:
    match = re.search(rf"^{relation}: (\d+) facts?$", out, re.M)
    assert match, f"no size line for {relation} in:\n{out}"
    return int(match.group(1))


def test_run_reference_on_the_bundled_example(capsys):
    status, out, err = run_cli(capsys, "run", EXAMPLE, "--engine", "reference", "--show", "1000")
    assert status == 0, err
    for relation, size in EXPECTED_SIZES.items():
        assert fact_count(out, relation) == size, relation
    # lis -> mad -> cdg -> ams -> fra -> ber is shorter than going round by bcn, fco and mxp.
    assert 'shortest("lis", "ber", 2744)' in out
    assert 'unreachable("kef", "ams")' in out and 'unreachable("ams", "kef")' not in out
    assert 'out_degree("ams", 3)' in out
    assert re.findall(r"^  hub\((.*)\)$", out, re.M) == ['"ams"', '"cdg"', '"fra"', '"mad"']  # sorted


def test_run_show_limits_the_printed_rows(capsys):
    status, out, _ = run_cli(capsys, "run", EXAMPLE, "--engine", "reference", "--show", "2")
    assert status == 0
    reach_rows = re.findall(r"^  reach\(", out, re.M)
    assert len(reach_rows) == 2
    assert f"... {EXPECTED_SIZES['reach'] - 2} more" in out


TC_PROGRAM = """\
.decl arc(src: long, dst: long)
.input arc
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), arc(Y, Z).
"""


def test_run_reference_reads_csv_inputs_by_column_type(tmp_path, capsys):
    program = write(tmp_path, "tc.dl", TC_PROGRAM)
    arcs = write(tmp_path, "arcs.csv", "src,dst\n1,2\n2,3\n3,4\n")
    status, out, err = run_cli(capsys, "run", program, "--engine", "reference", "--input", f"arc={arcs}")
    assert status == 0, err
    assert fact_count(out, "tc") == 6
    assert "  tc(1, 4)" in out  # integers, not the strings "1" and "4"


def test_run_reference_gives_an_input_relation_with_rules_its_input_by_name(tmp_path, capsys):
    """--input arc=... for an .input relation that rules add to (its input is arc__input)."""
    program = write(
        tmp_path, "sym.dl", ".decl arc(x: number, y: number)\n.input arc\narc(Y, X) :- arc(X, Y).\n"
    )
    arcs = write(tmp_path, "arcs.csv", "x,y\n1,2\n")
    status, out, err = run_cli(capsys, "run", program, "--engine", "reference", "--input", f"arc={arcs}")
    assert status == 0, err
    assert fact_count(out, "arc") == 2 and "  arc(2, 1)" in out


def test_run_reference_rejects_a_bad_csv_value(tmp_path, capsys):
    program = write(tmp_path, "tc.dl", TC_PROGRAM)
    arcs = write(tmp_path, "arcs.csv", "src,dst\n1,2\n2,three\n")
    status, out, err = run_cli(capsys, "run", program, "--engine", "reference", "--input", f"arc={arcs}")
    assert status == 1
    assert "arcs.csv:3" in err and "'three' is not a long" in err


def test_module_entry_point_runs_check():
    proc = subprocess.run(
        [sys.executable, "-m", "spark_datalog.cli", "check", str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "reach" in proc.stdout


# ---------------------------------------------------------------------------------------------
# run --engine spark


@pytest.mark.spark
def test_run_spark_on_the_bundled_example(spark, capsys):
    status, out, err = run_cli(capsys, "run", EXAMPLE, "--show", "3")
    assert status == 0, err
    for relation, size in EXPECTED_SIZES.items():
        assert fact_count(out, relation) == size, relation
    assert spark.sparkContext._jsc is not None  # the CLI did not stop the session it did not create


@pytest.mark.spark
def test_run_spark_reads_csv_inputs(spark, tmp_path, capsys):
    program = write(tmp_path, "tc.dl", TC_PROGRAM)
    arcs = write(tmp_path, "arcs.csv", "src,dst\n1,2\n2,3\n3,1\n")
    status, out, err = run_cli(capsys, "run", program, "--input", f"arc={arcs}", "--show", "9")
    assert status == 0, err
    assert fact_count(out, "tc") == 9
    assert "  tc(3, 3)" in out


# ---------------------------------------------------------------------------------------------
# failures of every subcommand: a message on stderr and a documented exit status (issue 19, 22)

DOCUMENTED_EXITS = {0, 1, 2, 141}


def _subcommands() -> dict:
    """Every subcommand of the parser -> the smallest command line that parses."""
    import argparse

    from spark_datalog import cli

    parser = cli.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    argvs = {}
    for name, sub in commands.choices.items():
        argv = [name]
        for action in sub._actions:
            if action.required and not action.option_strings:
                argv.append("x")
            elif action.required:
                argv += [action.option_strings[0], "x"]
        argvs[name] = argv
    return argvs


def _raiser(error):
    def handler(args):
        raise error

    return handler


FAILURES = [
    (sd.errors.InputError("input arc: something is wrong"), 1, "something is wrong"),
    (sd.errors.WarehouseError("the warehouse refused"), 1, "the warehouse refused"),
    (PermissionError(13, "Permission denied", "/data/wh/tc"), 1, "/data/wh/tc: Permission denied"),
    (IsADirectoryError(21, "Is a directory", "/data/in.csv"), 1, "/data/in.csv: Is a directory"),
    (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"), 1, "invalid start byte"),
    (BrokenPipeError(32, "Broken pipe"), 141, ""),
]


@pytest.mark.parametrize("command", sorted(_subcommands()))
@pytest.mark.parametrize("error, status, message", FAILURES, ids=[type(f[0]).__name__ for f in FAILURES])
def test_every_subcommand_reports_every_failure_without_a_traceback(
    command, error, status, message, monkeypatch, capsys
):
    from spark_datalog import cli

    monkeypatch.setattr(cli, "build_parser", _failing_with(cli, error))
    got, out, err = run_cli(capsys, *_subcommands()[command])
    assert got == status and got in DOCUMENTED_EXITS
    assert "Traceback" not in err and message in err
    if status != 141:
        assert err.strip(), "the failure is reported on stderr"


def test_usage_errors_of_every_subcommand_exit_2(monkeypatch, capsys):
    from spark_datalog import cli

    monkeypatch.setattr(cli, "build_parser", _failing_with(cli, cli.UsageError("--flag is wrong")))
    for argv in _subcommands().values():
        status, _, err = run_cli(capsys, *argv)
        assert status == 2 and "--flag is wrong" in err and "Traceback" not in err


def _failing_with(cli, error):
    build = cli.build_parser

    def failing_parser():
        parser = build()
        for action in parser._actions:
            for sub in getattr(action, "choices", None) or {}:
                action.choices[sub].set_defaults(handler=_raiser(error))
        return parser

    return failing_parser


def test_a_directory_given_as_the_program_is_a_usage_error(tmp_path, capsys):
    for command in ("check", "run"):
        status, _, err = run_cli(capsys, command, tmp_path)
        assert status == 2 and "cannot read" in err and "Traceback" not in err


def test_a_program_that_is_not_utf8_is_a_parse_error_at_the_byte(tmp_path, capsys):
    path = tmp_path / "latin1.dl"
    path.write_bytes(b"arc(1, 2).\n% caf\xe9\ntc(X, Y) :- arc(X, Y).\n")
    status, _, err = run_cli(capsys, "check", path)
    assert status == 1 and "Traceback" not in err
    assert f"{path}:2:6: parse error" in err and "0xe9" in err and "^" in err


def test_a_csv_that_is_not_utf8_is_an_input_error_at_its_line(tmp_path, capsys):
    program = write(
        tmp_path, "p.dl", ".decl name(id: long, text: string)\n.input name\nn(X, T) :- name(X, T).\n"
    )
    csv_path = tmp_path / "names.csv"
    csv_path.write_bytes(b"id,text\n1,ok\n2,caf\xe9\n")
    status, _, err = run_cli(capsys, "run", program, "--engine", "reference", "--input", f"name={csv_path}")
    assert status == 1 and "Traceback" not in err
    assert f"{csv_path}:3:6: input error" in err and "UTF-8" in err


def test_a_csv_input_that_is_a_directory_is_an_input_error(tmp_path, capsys):
    program = write(tmp_path, "tc.dl", TC_PROGRAM)
    status, _, err = run_cli(capsys, "run", program, "--engine", "reference", "--input", f"arc={tmp_path}")
    assert status == 1 and "cannot read input 'arc'" in err and "Traceback" not in err


def test_a_config_that_is_not_utf8_is_a_usage_error_at_the_byte(tmp_path, capsys):
    config = tmp_path / "job.yaml"
    config.write_bytes(b"program: p.dl\nwarehouse: w\xe9h\n")
    status, _, err = run_cli(capsys, "materialize", "--config", config)
    assert status == 2 and "Traceback" not in err
    assert f"{config}:2:13" in err and "0xe9" in err


def test_run_reference_reads_multi_line_quoted_fields(tmp_path, capsys):
    program = write(
        tmp_path, "p.dl", ".decl name(id: long, text: string)\n.input name\nn(X, T) :- name(X, T).\n"
    )
    names = write(tmp_path, "names.csv", 'id,text\n1,"two\nlines"\n2,"say ""hi"""\nthree,x\n')
    status, _, err = run_cli(capsys, "run", program, "--engine", "reference", "--input", f"name={names}")
    assert status == 1 and "names.csv:5" in err and "'three' is not a long" in err  # the record's line
    names.write_text('id,text\n1,"two\nlines"\n2,"say ""hi"""\n')
    status, out, err = run_cli(capsys, "run", program, "--engine", "reference", "--input", f"name={names}")
    assert status == 0, err
    assert 'n(1, "two\nlines")' in out and 'n(2, "say \\"hi\\"")' in out


def test_output_closed_by_its_reader_exits_quietly_with_the_sigpipe_status():
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "spark_datalog.cli",
            "run",
            str(EXAMPLE),
            "--engine",
            "reference",
            "--show",
            "500",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # like `| head` that has read enough
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141, err
    assert b"Traceback" not in err and b"BrokenPipe" not in err and b"Exception ignored" not in err


@pytest.mark.slow
@pytest.mark.spark
def test_run_on_spark_is_quiet(tmp_path):
    """No log4j chatter on stderr (the quiet configuration), and none about CSV header names:
    columns that do not match by name are taken by position."""
    program = write(tmp_path, "tc.dl", TC_PROGRAM)
    arcs = write(tmp_path, "arcs.csv", "a,b\n1,2\n2,3\n")
    proc = subprocess.run(
        [sys.executable, "-m", "spark_datalog.cli", "run", str(program), "--input", f"arc={arcs}"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "tc: 3 facts" in proc.stdout
    assert not re.search(r"\b(WARN|INFO)\b", proc.stderr), proc.stderr
    assert "log4j" not in proc.stderr and "CSV header" not in proc.stderr, proc.stderr


LONG_PROGRAM = """
.decl arc(src: long, dst: long)
.input arc
next(X, Y + 1) :- arc(X, Y).
"""


def test_run_reference_rejects_a_csv_value_out_of_range(tmp_path, capsys):
    program = write(tmp_path, "tc.dl", TC_PROGRAM)
    arcs = write(tmp_path, "arcs.csv", "src,dst\n1,2\n2,9223372036854775808\n")
    status, out, err = run_cli(capsys, "run", program, "--engine", "reference", "--input", f"arc={arcs}")
    assert status == 1
    assert "arcs.csv:3" in err and "out of the range of long" in err


def test_run_reference_reports_an_overflow(tmp_path, capsys):
    program = write(tmp_path, "next.dl", LONG_PROGRAM)
    arcs = write(tmp_path, "arcs.csv", "src,dst\n1,9223372036854775807\n")
    status, out, err = run_cli(capsys, "run", program, "--engine", "reference", "--input", f"arc={arcs}")
    assert status == 1
    assert "next.dl:4:9: arithmetic overflow: 9223372036854775807 + 1 does not fit long" in err


@pytest.mark.spark
def test_run_spark_rejects_a_csv_value_out_of_range_and_reports_an_overflow(spark, tmp_path, capsys):
    program = write(tmp_path, "next.dl", LONG_PROGRAM)
    arcs = write(tmp_path, "arcs.csv", "src,dst\n1,9223372036854775808\n")
    status, out, err = run_cli(capsys, "run", program, "--input", f"arc={arcs}")
    assert status == 1
    assert "input error" in err and "'9223372036854775808'" in err
    arcs = write(tmp_path, "arcs.csv", "src,dst\n1,9223372036854775807\n")
    status, out, err = run_cli(capsys, "run", program, "--input", f"arc={arcs}")
    assert status == 1
    assert "next.dl:4:9: arithmetic overflow: the result of `+` does not fit long" in err


@pytest.mark.spark
def test_run_spark_reports_a_failing_task_by_its_root_cause_not_a_traceback(spark, tmp_path, capsys):
    # the pattern comes from the data: the reference and the kernel answer false, as Soufflé
    # does; Spark's regexp_like fails the task
    program = write(
        tmp_path,
        "rx.dl",
        '.decl p(r: symbol, s: symbol)\np("a[", "abc").\nm(S) :- p(R, S), match(R, S).\n',
    )
    status, out, err = run_cli(capsys, "run", program, "--dialect", "souffle")
    assert status == 1, err
    assert "spark failure: java.util.regex.PatternSyntaxException" in err
    assert "Traceback" not in err and "Py4JJavaError" not in err


@pytest.mark.spark
def test_a_functor_flag_binds_a_spark_sql_function(spark, tmp_path, capsys):
    text = ".functor root(x: float): float\n.decl q(x: float)\nq(9.0).\nr(y) :- q(x), y = @root(x).\n"
    program = write(tmp_path, "prog.dl", text)
    status, out, err = run_cli(capsys, "run", program, "--dialect", "souffle", "--functor", "root=spark:sqrt")
    assert status == 0, err
    assert "r(3.0)" in out
    status, out, err = run_cli(capsys, "run", program, "--dialect", "souffle", "--functor", "root=spark:nope")
    assert status == 1
    assert "prog.dl:1:10: functor error: functor @root is bound to the Spark SQL function 'nope'" in err
    argv = ("run", program, "--dialect", "souffle", "--engine", "reference", "--functor", "root=spark:sqrt")
    status, out, err = run_cli(capsys, *argv)
    assert status == 1 and "which only the Spark engine runs" in err and "Traceback" not in err


def test_functor_flags_bind_user_defined_functors(tmp_path, capsys):
    program = tmp_path / "prog.dl"
    program.write_text(
        ".functor root(x: float): float\n.decl q(x: float)\nq(9.0).\nr(y) :- q(x), y = @root(x).\n"
    )
    argv = ["run", str(program), "--dialect", "souffle", "--engine", "reference", "--quiet"]
    assert main([*argv, "--functor", "root=math:sqrt"]) == 0
    assert "r(3.0)" in capsys.readouterr().out
    assert main(argv) == 1  # unbound: a FunctorError at the .functor line, before any work
    err = capsys.readouterr().err
    assert "prog.dl:1:10: functor error: functor @root is declared but bound to no function" in err
    for bad, message in [
        ("root=math:nope", "--functor root: cannot load 'math:nope'"),
        ("root", "--functor expects NAME=MODULE:FUNCTION, got 'root'"),
        ("cube=math:sqrt", "--functor cube: the program declares no functor 'cube'"),
    ]:
        assert main([*argv, "--functor", bad]) == 2
        assert message in capsys.readouterr().err
