"""Soufflé's I/O directives through ``spark-datalog run -F -D``: parsing, defaults, stdout, and
every failure a message with exit status 1 (``souffle_io``)."""

from __future__ import annotations

from pathlib import Path

from dialect.test_dialect import HERE

import pytest

import spark_datalog as sd
from spark_datalog.cli import main
from spark_datalog.record_types import Record
from spark_datalog.souffle_io import FileFormat, InputFile, format_value, parse_field, plan_io, read_fact_file

TC = """\
.decl edge(x: number, y: number)
.input edge
.decl path(x: number, y: number)
.output path
path(X, Y) :- edge(X, Y).
path(X, Z) :- path(X, Y), edge(Y, Z).
"""


def run(capsys, *argv):
    status = main([str(a) for a in argv] + ["--quiet"])
    out, err = capsys.readouterr()
    return status, out, err


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_directives_parse_with_parameters_shared_by_their_relations():
    program = sd.Program.parse(
        '.decl a(x: number)\n.decl b(x: number)\n.input a\n.output a, b(IO=file, filename="x y.csv", '
        'delimiter="\\t", headers=true, n=3)\n.printsize b\nb(X) :- a(X).'
    ).checked.program
    kinds = [(d.kind, d.name) for d in program.directives]
    assert kinds == [("input", "a"), ("output", "a"), ("output", "b"), ("printsize", "b")]
    params = (("IO", "file"), ("filename", "x y.csv"), ("delimiter", "\t"), ("headers", "true"), ("n", "3"))
    assert program.directives[1].params == program.directives[2].params == params
    assert program.outputs == ("a", "b", "b")  # a .printsize relation is computed like an output


def test_default_file_names_are_relative_to_the_fact_and_output_dirs():
    checked = sd.Program.parse(TC + '.output edge(filename="/abs/e.tsv")').checked
    plan = plan_io(checked, "facts", "out")
    assert [s.uri for s in plan.inputs] == ["facts/edge.facts"]
    assert [t.uri for t in plan.outputs] == ["out/path.csv", "/abs/e.tsv"]
    assert [t.uri for t in plan_io(checked).outputs] == ["./path.csv", "/abs/e.tsv"]  # souffle's "."
    stdout = plan_io(checked, "facts", "-").outputs
    assert [(t.kind, t.format.headers) for t in stdout] == [("stdout", True), ("stdout", True)]


def test_values_are_written_as_souffle_writes_them():
    fmt = FileFormat()
    assert [format_value(v, "double", fmt) for v in (0.5, 1.0, 0.1, 1e20, -0.0)] == [
        "0.5",
        "1",
        "0.10000000000000001",
        "1e+20",
        "-0",
    ]
    assert format_value("a b", "string", fmt) == "a b"
    assert format_value('say "hi"', "string", FileFormat(",", rfc4180=True)) == '"say \\""hi\\"""'
    assert (parse_field(" 12", "long"), parse_field("1x", "long"), parse_field("1e3", "double")) == (
        12,
        None,
        1000.0,
    )


def test_rfc4180_fields_may_be_quoted(tmp_path):
    path = write(tmp_path / "r.facts", 'a,"b, ""c"""\n"x",y\n')
    source = InputFile("r", str(path), FileFormat(",", rfc4180=True), (("p", "string"), ("q", "string")))
    assert read_fact_file(source) == {("a", 'b, "c"'), ("x", "y")}


def test_output_dir_dash_prints_every_output_with_its_header(tmp_path, capsys):
    program = write(tmp_path / "tc.dl", TC)
    write(tmp_path / "facts" / "edge.facts", "1\t2\n2\t3\n")
    status, out, err = run(
        capsys, "run", program, "-F", tmp_path / "facts", "-D", "-", "--engine", "reference"
    )
    assert status == 0, err
    assert out == "---------------\npath\nx\ty\n===============\n1\t2\n1\t3\n2\t3\n===============\n"


def test_without_output_dir_files_go_to_the_current_directory(tmp_path, capsys, monkeypatch):
    program = write(tmp_path / "tc.dl", TC)
    write(tmp_path / "facts" / "edge.facts", "1\t2\n")
    monkeypatch.chdir(tmp_path)
    status, out, err = run(capsys, "run", program, "-F", "facts", "--engine", "reference")
    assert status == 0 and out == ""
    assert (tmp_path / "path.csv").read_text() == "1\t2\n"


def test_an_input_flag_wins_over_the_fact_file(tmp_path, capsys):
    program = write(tmp_path / "tc.dl", TC)
    write(tmp_path / "facts" / "edge.facts", "1\t2\n")
    csv = write(tmp_path / "edge.csv", "x,y\n5,6\n")
    argv = ["run", program, "-F", tmp_path / "facts", "-D", tmp_path / "out", "--input", f"edge={csv}"]
    status, _, err = run(capsys, *argv, "--engine", "reference")
    assert status == 0, err
    assert (tmp_path / "out" / "path.csv").read_text() == "5\t6\n"


def test_without_fact_and_output_dirs_run_prints_as_before(tmp_path, capsys):
    program = write(tmp_path / "tc.dl", TC.replace(".input edge", ".input edge\nedge(1, 2)."))
    status, out, _ = run(capsys, "run", program, "--engine", "reference")
    assert status == 0 and "path: 1 fact" in out and "path(1, 2)" in out


ENGINES = ["reference", pytest.param("spark", marks=pytest.mark.spark)]


@pytest.fixture
def engine(request):
    if request.param == "spark":
        request.getfixturevalue("spark")  # the tests' session, reused by the command
    return request.param


@pytest.mark.parametrize("engine", ENGINES, indirect=True)
def test_a_missing_fact_file_is_an_input_error(engine, tmp_path, capsys):
    program = write(tmp_path / "tc.dl", TC)
    (tmp_path / "facts").mkdir()
    status, out, err = run(
        capsys, "run", program, "-F", tmp_path / "facts", "-D", tmp_path / "o", "--engine", engine
    )
    assert status == 1 and out == ""
    assert f"input error: cannot open fact file {tmp_path / 'facts' / 'edge.facts'} (.input edge)" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("engine", ENGINES, indirect=True)
@pytest.mark.parametrize(
    "text, where, problem",
    [
        ("1\t2\n2\t3x\n", "2:3", "column 2 (y: long): '3x' is not a number"),
        ("1\t2\n7\n", "2:1", "values missing: 1 field(s), edge has 2 columns"),
    ],
    ids=["not-a-number", "values-missing"],
)
def test_a_bad_line_is_an_input_error_at_its_line_and_column(engine, text, where, problem, tmp_path, capsys):
    program = write(tmp_path / "tc.dl", TC)
    facts = write(tmp_path / "facts" / "edge.facts", text)
    status, _, err = run(
        capsys, "run", program, "-F", tmp_path / "facts", "-D", tmp_path / "o", "--engine", engine
    )
    assert status == 1
    assert f"{facts}:{where}: input error: cannot parse fact file of edge: {problem}" in err


def test_unsupported_io_kinds_are_directive_errors_before_anything_runs(tmp_path, capsys):
    program = write(
        tmp_path / "p.dl",
        TC.replace(".input edge", ".input edge(IO=json)").replace(".output path", ".output path(IO=json)"),
    )
    status, out, err = run(capsys, "run", program, "-F", tmp_path, "-D", tmp_path / "o")
    assert status == 1 and out == ""
    assert (
        "p.dl:2:1: directive error: IO=json is not supported for .input edge "
        "(supported: IO=file, IO=stdin, IO=sqlite)" in err
    )
    assert "p.dl:4:1: directive error: IO=json is not supported for .output path" in err
    assert "2 errors" in err and not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "text, where, problem",
    [
        ('1,2\n"3\n4",5\n6,"7\n8\n', "4:3", "unbalanced field quote"),
        ('1,"2\n"x\n', "2:2", "a delimiter must follow a quoted field"),
    ],
    ids=["open-at-the-end", "text-after-the-quote"],
)
def test_a_quoted_field_over_lines_is_read_whole_and_its_errors_are_placed(text, where, problem, tmp_path):
    csv = FileFormat(",", rfc4180=True)
    columns = (("x", "string"), ("y", "string"))
    source = InputFile("edge", str(write(tmp_path / "edge.facts", text)), csv, columns)
    with pytest.raises(sd.InputError) as info:
        read_fact_file(source)
    assert f"edge.facts:{where}: input error: cannot parse fact file of edge: {problem}" in str(info.value)
    good = InputFile("edge", str(write(tmp_path / "ok.facts", '1,"2\n\n"\n"a ""b""\nc",d\n')), csv, columns)
    assert read_fact_file(good) == {("1", "2\n\n"), ('a "b"\nc', "d")}


@pytest.mark.parametrize("engine", ENGINES, indirect=True)
def test_no_warn_reads_a_missing_fact_file_as_empty_and_prints_no_warning(engine, tmp_path, capsys):
    text = '.pragma "legacy" "true"\n' + TC + ".decl node(x: number)\n.input node\n.output node\n"
    program = write(tmp_path / "p.dl", text)
    write(tmp_path / "facts" / "edge.facts", "1\t2\n")
    argv = ["run", program, "-F", tmp_path / "facts", "-D", tmp_path / "o", "--engine", engine]
    status, _, err = run(capsys, *argv)
    assert status == 1 and "cannot open fact file" in err and "node.facts" in err
    assert "warning: line 1: .pragma 'legacy' 'true' ignored" in err
    status, _, err = run(capsys, *argv, "-w")
    assert status == 0 and "warning" not in err and "error" not in err
    assert (tmp_path / "o" / "node.csv").read_text() == ""
    assert (tmp_path / "o" / "path.csv").read_text() == "1\t2\n"


def test_jobs_sizes_the_local_session_as_soufflé_sizes_its_threads(monkeypatch):
    import spark_datalog.spark.session as session
    from spark_datalog.cli import build_parser, cli_session

    started: list = []

    class Stopped:
        def stop(self):
            started.append("stopped")

    monkeypatch.setattr(session, "local_session", lambda *args, **kwargs: started.append(args) or Stopped())
    monkeypatch.setattr("pyspark.sql.SparkSession.getActiveSession", lambda: None)
    for cores in (3, 0):
        with cli_session("x", delta=False, cores=cores):
            pass
    assert started[0] == ("x", 3, "local[3]") and started[2][2] == "local[*]"
    parse = build_parser().parse_args
    assert parse(["run", "p.dl", "-j", "auto"]).jobs == 0 and parse(["run", "p.dl", "-j", "4"]).jobs == 4
    with pytest.raises(SystemExit):
        parse(["run", "p.dl", "-j", "0"])


def feed_stdin(monkeypatch, data: bytes) -> None:
    """Standard input holding ``data`` (read as bytes through ``sys.stdin.buffer``)."""
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


@pytest.mark.parametrize("engine", ENGINES, indirect=True)
def test_an_input_reads_standard_input_with_its_parameters(engine, tmp_path, capsys, monkeypatch):
    text = TC.replace(".input edge", '.input edge(IO=stdin, delimiter=",", columns="2:0", headers=true)')
    program = write(tmp_path / "p.dl", text + ".decl label(x: number, s: symbol)\n.input label\n")
    write(tmp_path / "label.facts", "1\tone\n")
    feed_stdin(monkeypatch, b"to,note,from\n2,x,1\n3,y,2\n\n")
    status, _, err = run(capsys, "run", program, "-F", tmp_path, "-D", tmp_path / "o", "--engine", engine)
    assert status == 0, err
    assert sorted((tmp_path / "o" / "path.csv").read_text().splitlines()) == ["1\t2", "1\t3", "2\t3"]


@pytest.mark.parametrize("engine", ENGINES, indirect=True)
def test_a_bad_line_of_standard_input_is_an_input_error_at_its_line(engine, tmp_path, capsys, monkeypatch):
    program = write(tmp_path / "p.dl", TC.replace(".input edge", ".input edge(IO=stdin)"))
    feed_stdin(monkeypatch, b"1\t2\n2\tx\n")
    status, _, err = run(capsys, "run", program, "-D", tmp_path / "o", "--engine", engine)
    assert status == 1
    problem = "column 2 (y: long): 'x' is not a number"
    assert f"<stdin>:2:3: input error: cannot parse fact file of edge: {problem}" in err
    assert not (tmp_path / "o").exists()


def test_one_input_at_most_reads_standard_input_and_the_job_none(tmp_path, capsys):
    two = TC.replace(".input edge", ".input edge(IO=stdin)\n.decl node(x: number)\n.input node(IO=stdin)")
    status, _, err = run(capsys, "run", write(tmp_path / "p.dl", two), "-D", tmp_path / "o")
    assert status == 1
    assert "p.dl:4:1: directive error: standard input is read by .input edge (line 2): only one" in err
    checked = sd.Program.parse(TC.replace(".input edge", ".input edge(IO=stdin)")).checked
    with pytest.raises(sd.DirectiveError, match="IO=stdin is read by 'spark-datalog run' only"):
        plan_io(checked, stdin=False)


@pytest.mark.parametrize("engine", ENGINES, indirect=True)
def test_a_header_line_comes_first_and_rows_in_value_order(engine, tmp_path, capsys):
    case = HERE / "io_headers"
    argv = ["run", case / "prog.dl", "-F", case / "facts", "-D", tmp_path, "--engine", engine]
    assert run(capsys, *argv)[0] == 0
    for name in ("adult.csv", "minor.csv"):
        assert (tmp_path / name).read_text() == (case / "expected" / name).read_text()


PLACE = "[at: [x: long, y: long], name: string]"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("[[1, 2], home]", Record((Record((1, 2)), "home"))),
        ("  [ [ 1 ,2 ] ,  x y ]  ", Record((Record((1, 2)), "x y "))),  # a bare symbol keeps its blanks
        ('[[-1, +2], "a, \\"b\\"]"]', Record((Record((-1, 2)), 'a, "b"]'))),
        ("[[1, 2]]", None),  # a field missing
        ("[[1, 2], a] x", None),  # text after the record
        ("[[1, x], a]", None),  # not a number
        ('[[1, 2], "open]', None),  # unbalanced quote
        ("[[1, 2], a", None),  # unclosed
    ],
)
def test_records_are_read_from_fact_fields_as_souffle_reads_them(text, expected):
    assert parse_field(text, PLACE) == expected


RECORD_INPUT = """\
.type Point = [x: number, y: number]
.decl at(name: symbol, p: Point)
.input at
.output at
"""


@pytest.mark.parametrize("engine", ENGINES, indirect=True)
def test_a_field_that_is_no_record_is_an_input_error_at_its_line_and_column(engine, tmp_path, capsys):
    program = write(tmp_path / "p.dl", RECORD_INPUT)
    facts = write(tmp_path / "facts" / "at.facts", "home\t[1, 2]\nwork\t[3]\n")
    argv = ["run", program, "--dialect", "souffle", "-F", tmp_path / "facts", "-D", tmp_path / "o"]
    status, _, err = run(capsys, *argv, "--engine", engine)
    assert status == 1, err
    problem = "column 2 (p: [x: long, y: long]): '[3]' is not a record [x: long, y: long]"
    assert f"{facts}:2:6: input error: cannot parse fact file of at: {problem}" in err
    assert "Traceback" not in err and not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "directive, problem",
    [
        ('.input edge(columns="1")', "columns= names 1 field(s), edge has 2 columns"),
        ('.input edge(columns="1:x")', "columns='1:x': expected field numbers separated by ':'"),
        ('.input edge(columns="1:-2")', "columns='1:-2': expected field numbers"),
        ('.input edge\n.output edge(columns="0:1")', "the parameter columns= of .output is not supported"),
    ],
)
def test_bad_columns_are_directive_errors(directive, problem, tmp_path, capsys):
    program = write(tmp_path / "p.dl", TC.replace(".input edge", directive))
    status, out, err = run(capsys, "run", program, "-F", tmp_path, "-D", tmp_path / "o")
    assert status == 1 and out == ""
    assert f"directive error: {problem}" in err


def test_a_line_without_a_field_columns_reads_is_an_input_error(tmp_path, capsys):
    program = write(tmp_path / "p.dl", TC.replace(".input edge", '.input edge(columns="3:0")'))
    facts = write(tmp_path / "edge.facts", "1\t0\t0\t2\n2\t0\t0\n")
    status, _, err = run(capsys, "run", program, "-F", tmp_path, "-D", tmp_path / "o")
    assert status == 1
    problem = "values missing: 3 field(s), edge reads field 3"
    assert f"{facts}:2:1: input error: cannot parse fact file of edge: {problem}" in err
