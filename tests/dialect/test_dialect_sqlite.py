"""Soufflé's ``IO=sqlite`` (``souffle_sqlite``): a program reading an SQLite database and writing
others, on the reference engine, the kernel, Spark and the job; names, errors and refusals.

The input database is built by each test (no binary file in the repository)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import spark_datalog as sd
from spark_datalog import job
from spark_datalog.cli import main
from spark_datalog.souffle_io import InputFile, FileFormat, plan_io, read_fact_file

PROGRAM = """\
// edge from the view edge of graph.db (in -F); results in -D
.decl edge(src: symbol, dst: symbol, w: float, n: number)
.input edge(IO=sqlite, dbname="graph.db")
.decl path(from: symbol, to: symbol)
.output path(IO=sqlite, filename="results.db")
.decl heavy(node: symbol, w: float)
.output heavy(IO=sqlite, filename="results.db")
.decl big(n: number)
.output big(IO=sqlite)
path(X, Y) :- edge(X, Y, _, _).
path(X, Z) :- path(X, Y), edge(Y, Z, _, _).
heavy(X, W) :- edge(X, _, W, _), W > 0.2.
big(N) :- edge(_, _, _, N), N > 1.
"""

# The edges: a view over a table of other column names and one more column (ignored), a
# symbol with quotes, blanks and a non-ASCII letter, a number stored as text with a blank.
EDGES = [("a", "b", 0.5, 1, "x"), ("b", 'say "hi" é', 0.1, "  7", "y"), ('say "hi" é', "c", 3, 2, "z")]
ODD = 'say "hi" é'
PATH = {("a", "b"), ("a", ODD), ("a", "c"), ("b", ODD), ("b", "c"), (ODD, "c")}
HEAVY = {("a", 0.5), (ODD, 3.0)}
BIG = {(7,), (2,)}


def graph_db(path: Path, rows=EDGES) -> Path:
    """An SQLite database holding the view ``edge`` of ``rows`` (constant SQL: test data)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE raw (a TEXT, b TEXT, weight REAL, num, extra TEXT)")
        db.executemany("INSERT INTO raw VALUES (?, ?, ?, ?, ?)", rows)
        db.execute("CREATE VIEW edge AS SELECT a, b, weight, num, extra FROM raw")
    return path


def contents(database: Path, relation: str) -> tuple:
    """(column names, set of rows) of the view ``relation`` in ``database``."""
    with sqlite3.connect(database) as db:
        cursor = db.execute(f'SELECT * FROM "{relation}"')
        return tuple(d[0] for d in cursor.description), set(cursor.fetchall())


def objects(database: Path) -> dict:
    """name -> type of the tables and views of ``database``."""
    with sqlite3.connect(database) as db:
        return dict(db.execute("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view')"))


def check_results(out: Path) -> None:
    assert contents(out / "results.db", "path") == (("from", "to"), PATH)
    assert contents(out / "results.db", "heavy") == (("node", "w"), HEAVY)
    assert contents(out / "big.sqlite", "big") == (("n",), BIG)
    assert objects(out / "results.db") == {
        "__SymbolTable": "table",
        "_path": "table",
        "path": "view",
        "_heavy": "table",
        "heavy": "view",
    }


def run(capsys, *argv) -> tuple:
    status = main([str(a) for a in argv] + ["--quiet"])
    out, err = capsys.readouterr()
    return status, out, err


def write_program(tmp_path: Path, text: str = PROGRAM) -> Path:
    path = tmp_path / "prog.dl"
    path.write_text(text, encoding="utf-8")
    return path


def run_program(capsys, tmp_path: Path, engine: str = "reference", text: str = PROGRAM) -> tuple:
    argv = ["run", write_program(tmp_path, text), "--dialect", "souffle", "-F", tmp_path / "facts"]
    return run(capsys, *argv, "-D", tmp_path / "out", "--engine", engine)


def test_the_reference_reads_a_view_and_writes_tables_views_and_symbols(tmp_path, capsys):
    graph_db(tmp_path / "facts" / "graph.db")
    status, out, err = run_program(capsys, tmp_path)
    assert status == 0 and out == "", err
    check_results(tmp_path / "out")
    with sqlite3.connect(tmp_path / "out" / "results.db") as db:
        symbols = dict(db.execute('SELECT symbol, id FROM "__SymbolTable"'))
        stored = set(db.execute('SELECT "0", "1" FROM "_path"'))
        types = [row[2] for row in db.execute("PRAGMA table_info('_heavy')")]
    assert set(symbols) == {"a", "b", "c", ODD}  # shared by path and heavy
    assert stored == {(symbols[x], symbols[y]) for x, y in PATH}  # a symbol stored as its id
    assert types == ["INTEGER", "REAL"]  # a float stored as itself


def test_a_second_run_replaces_the_rows_and_keeps_the_symbol_ids(tmp_path, capsys):
    graph_db(tmp_path / "facts" / "graph.db")
    assert run_program(capsys, tmp_path)[0] == 0
    ids = contents(tmp_path / "out" / "results.db", "__SymbolTable")
    (tmp_path / "facts" / "graph.db").unlink()
    graph_db(tmp_path / "facts" / "graph.db", EDGES[:1])
    assert run_program(capsys, tmp_path)[0] == 0
    assert contents(tmp_path / "out" / "results.db", "path")[1] == {("a", "b")}
    assert contents(tmp_path / "out" / "results.db", "__SymbolTable") == ids


def test_a_database_written_reads_back_the_same_facts(tmp_path, capsys):
    graph_db(tmp_path / "facts" / "graph.db")
    assert run_program(capsys, tmp_path)[0] == 0
    columns = (("from", "string"), ("to", "string"))
    source = InputFile("path", str(tmp_path / "out" / "results.db"), FileFormat(), columns, kind="sqlite")
    assert read_fact_file(source) == PATH


def test_the_kernel_derives_what_the_reference_does_from_a_database(tmp_path):
    from kernel.harness import kernel_result, reference_result

    graph_db(tmp_path / "graph.db")
    program = sd.Program.parse(PROGRAM, dialect="souffle")
    edb = {s.relation: read_fact_file(s) for s in plan_io(program.checked, str(tmp_path), "-").inputs}
    assert edb["edge"] == {("a", "b", 0.5, 1), ("b", ODD, 0.1, 7), (ODD, "c", 3.0, 2)}
    assert kernel_result(program, edb) == reference_result(program, edb)
    assert kernel_result(program, edb)["path"] == PATH


@pytest.mark.spark
def test_spark_reads_and_writes_databases(spark, tmp_path, capsys):
    graph_db(tmp_path / "facts" / "graph.db")
    status, out, err = run_program(capsys, tmp_path, "spark")
    assert status == 0 and out == "", err
    check_results(tmp_path / "out")


@pytest.mark.spark
def test_the_job_reads_and_writes_databases(spark, tmp_path):
    graph_db(tmp_path / "facts" / "graph.db")
    argv = ["--program", str(write_program(tmp_path)), "--warehouse", str(tmp_path / "wh")]
    argv += ["--facts-dir", str(tmp_path / "facts"), "--output-dir", str(tmp_path / "out")]
    summary = job.run_job(
        job.parse_args([*argv, "--show", "0", "--dialect", "souffle"]), spark=spark, out=False
    )
    check_results(tmp_path / "out")
    assert summary.files == [
        f"path -> {tmp_path / 'out' / 'results.db'}",
        f"heavy -> {tmp_path / 'out' / 'results.db'}",
        f"big -> {tmp_path / 'out' / 'big.sqlite'}",
    ]


def test_database_names_follow_filename_then_dbname_then_the_relation(tmp_path):
    text = """\
    .decl a(x: number)
    .decl b(x: number)
    .decl c(x: number)
    .input a(IO=sqlite, dbname="old.db", filename="new.db")
    .input b(IO=sqlite, filename="/abs/b.db")
    .input c(IO=sqlite, dbname="file:c.db?mode=ro")
    .output a(IO=sqlite)
    .output b(IO=sqlite, dbname=":memory:")
    """
    checked = sd.Program.parse(text.replace("    .", "."), dialect="souffle").checked
    plan = plan_io(checked, "facts", "out")
    assert [(s.uri, s.kind) for s in plan.inputs] == [
        ("facts/new.db", "sqlite"),
        ("/abs/b.db", "sqlite"),
        ("file:c.db?mode=ro", "sqlite"),
    ]
    assert [(t.uri, t.kind) for t in plan.outputs] == [("out/a.sqlite", "sqlite"), (":memory:", "sqlite")]
    assert plan_io(checked, "file:///data/f", "o").inputs[0].uri == "/data/f/new.db"


def test_a_missing_database_or_table_is_an_input_error(tmp_path, capsys):
    text = PROGRAM.replace('dbname="graph.db"', 'dbname="none.db"')
    database = tmp_path / "facts" / "none.db"
    status, out, err = run_program(capsys, tmp_path, text=text)
    assert status == 1 and out == "" and "Traceback" not in err
    assert f"input error: cannot open database {database} (.input edge): no such file" in err
    database.parent.mkdir()
    sqlite3.connect(database).close()  # an empty database
    status, _, err = run_program(capsys, tmp_path, text=text)
    assert status == 1 and f"input error: no table or view edge in database {database} (.input edge)" in err
    source = plan_io(sd.Program.parse(text, dialect="souffle").checked, str(tmp_path / "facts")).inputs[0]
    with pytest.raises(sd.InputError, match="^input error: no table or view edge in database"):
        read_fact_file(source)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "row, problem",
    [
        (("a", "b", 0.5, "7x", ""), "row 1, column 4 (n: long): '7x' is not a number"),
        (("a", "b", None, 1, ""), "row 1, column 3 (w: double): 'n/a' is not a float"),
        (("a", "b", 0.5, "", ""), "row 1, column 4 (n: long): 'n/a' is not a number"),
    ],
    ids=["not-a-number", "null-float", "empty-number"],
)
def test_a_value_not_of_its_column_type_is_an_input_error(row, problem, tmp_path, capsys):
    graph_db(tmp_path / "facts" / "graph.db", [row])
    status, _, err = run_program(capsys, tmp_path)
    assert status == 1 and "Traceback" not in err
    assert f"input error: cannot read edge from database {tmp_path / 'facts' / 'graph.db'}: {problem}" in err


def test_null_and_empty_symbols_read_as_n_a(tmp_path, capsys):
    graph_db(tmp_path / "facts" / "graph.db", [(None, "", 0.5, 1, "")])
    assert run_program(capsys, tmp_path)[0] == 0
    assert contents(tmp_path / "out" / "results.db", "path")[1] == {("n/a", "n/a")}


@pytest.mark.parametrize(
    "text, where, problem",
    [
        (
            ".type P = [x: number]\n.decl r(p: P)\n.output r(IO=sqlite)\nr([1]).",
            "3:1",
            "IO=sqlite cannot store column p of r: records, ADTs and lists are not supported",
        ),
        (".decl r()\n.input r(IO=sqlite)", "2:1", "IO=sqlite cannot store r: it has no columns"),
        (
            ".decl r(x: number)\n.input r(IO=sqlite)",
            "2:1",
            "IO=sqlite reads and writes local files only, not s3://bucket/facts/r.sqlite (.input r)",
        ),
    ],
    ids=["record", "nullary", "not-local"],
)
def test_what_sqlite_cannot_hold_is_a_directive_error(text, where, problem, tmp_path):
    program = sd.Program.parse(text, dialect="souffle")
    with pytest.raises(sd.DirectiveError) as caught:
        plan_io(program.checked, "s3://bucket/facts", str(tmp_path))
    line, column = map(int, where.split(":"))
    assert (caught.value.line, caught.value.column) == (line, column)
    assert caught.value.message.startswith(problem)


def test_a_failed_write_leaves_the_database_as_it_was(tmp_path, capsys):
    graph_db(tmp_path / "facts" / "graph.db")
    assert run_program(capsys, tmp_path)[0] == 0
    (tmp_path / "facts" / "graph.db").unlink()
    graph_db(tmp_path / "facts" / "graph.db", [*EDGES, ("n", "m", "nan", 5, "")])
    nan = PROGRAM.replace("W > 0.2.", "W > 0.2.\nheavy(X, W) :- edge(X, _, W, 5).")
    status, _, err = run_program(capsys, tmp_path, text=nan)
    assert status == 1 and "Traceback" not in err
    assert "output error: cannot write heavy to database" in err and "holds NaN" in err
    assert contents(tmp_path / "out" / "results.db", "heavy") == (("node", "w"), HEAVY)
    alone = nan.replace('heavy(IO=sqlite, filename="results.db")', 'heavy(IO=sqlite, filename="heavy.db")')
    assert run_program(capsys, tmp_path, text=alone)[0] == 1
    assert not (tmp_path / "out" / "heavy.db").exists()  # the database this write made, removed


def test_a_table_named_as_the_relation_is_not_replaced(tmp_path, capsys):
    graph_db(tmp_path / "facts" / "graph.db")
    (tmp_path / "out").mkdir()
    with sqlite3.connect(tmp_path / "out" / "big.sqlite") as db:
        db.execute("CREATE TABLE big (n INTEGER)")
    status, _, err = run_program(capsys, tmp_path)
    assert status == 1
    database = tmp_path / "out" / "big.sqlite"
    assert f"output error: cannot write big to database {database}: it has a table big" in err
    assert objects(database) == {"big": "table"}


def test_a_file_that_is_no_database_is_an_input_or_output_error(tmp_path, capsys):
    not_a_database = b"not a database\n" * 100
    (tmp_path / "facts").mkdir()
    (tmp_path / "facts" / "graph.db").write_bytes(not_a_database)
    status, _, err = run_program(capsys, tmp_path)
    assert status == 1 and "Traceback" not in err
    database = tmp_path / "facts" / "graph.db"
    assert f"input error: cannot read edge from database {database}: file is not a database" in err
    (tmp_path / "facts" / "graph.db").unlink()
    graph_db(tmp_path / "facts" / "graph.db")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "big.sqlite").write_bytes(not_a_database)
    status, _, err = run_program(capsys, tmp_path)
    assert status == 1 and "Traceback" not in err
    assert f"output error: cannot write big to database {tmp_path / 'out' / 'big.sqlite'}: file is not" in err
    assert (tmp_path / "out" / "big.sqlite").read_bytes() == not_a_database  # left as it was
