"""The materialize job answers queries: the program's ``?-`` lines and the job's ``queries``
(config list or ``--query`` flags), printed in the summary and written where they say."""

from __future__ import annotations

import io
import re
import textwrap
from pathlib import Path

import pytest

import spark_datalog as sd
from spark_datalog import job
from spark_datalog.job import InputSpec, QuerySpec, UsageError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_CONFIG = ROOT / "conf" / "example-job.yaml"

TC = """\
.decl arc(src: long, dst: long)
.input arc
.output tc
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), arc(Y, Z).
?- tc(1, X).
?- tc(3, 1).
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def expected(text: str, arcs: set) -> set:
    """The reference interpreter's answers of ``text`` (``{(True,)}`` for a true yes/no)."""
    return sd.reference.answer(sd.Program.parse(TC), text, {"arc": arcs})


# ---------------------------------------------------------------------------------- settings


@pytest.mark.parametrize(
    "item, text, location",
    [
        ("tc(1, X)", "tc(1, X)", None),
        ("tc(1, X)=out/tc1", "tc(1, X)", "out/tc1"),
        (" ?- tc(1, X). = s3a://b/a=1/tc:delta", "?- tc(1, X).", "s3a://b/a=1/tc:delta"),
        ('name("a=b", X)=o.csv', 'name("a=b", X)', "o.csv"),
        ('name("a\\"=b", X)', 'name("a\\"=b", X)', None),
        ("p=out", "p", "out"),
    ],
)
def test_a_query_flag_splits_at_the_first_equals_outside_parentheses_and_quotes(item, text, location):
    assert job.split_query(item) == (text, location)


def test_query_flags_and_config_queries_merge_by_text(tmp_path):
    config = write(
        tmp_path / "conf" / "job.yaml",
        """\
        program: ../tc.dl
        warehouse: ../wh
        queries:
          - tc(2, X)
          - query: "tc(1, X)"
            to: ../out/tc1:parquet
          - query: tc(X, 4)
            to: {uri: ../out/to4, format: delta}
          - {query: "tc(1, 4)", to: null}
        """,
    )
    args = job.parse_args(["--config", str(config)])
    out = tmp_path / "out"
    assert args.queries == (
        QuerySpec("tc(2, X)"),
        QuerySpec("tc(1, X)", InputSpec(str(out / "tc1"), "parquet")),
        QuerySpec("tc(X, 4)", InputSpec(str(out / "to4"), "delta")),
        QuerySpec("tc(1, 4)"),
    )
    flags = ["--config", str(config), "--query", "tc(1, X)", "--query", "tc(X, Y)=all.csv:csv"]
    args = job.parse_args(flags)
    # a flag replaces the config's entry with the same text (keeping its place); new ones are added
    assert [str(q) for q in args.queries] == [
        "tc(2, X)",
        "tc(1, X)",
        f"tc(X, 4)={out / 'to4'}:delta",
        "tc(1, 4)",
        "tc(X, Y)=all.csv:csv",
    ]
    assert job.parse_args(["--program", "p.dl", "--warehouse", "wh"]).queries == ()


@pytest.mark.parametrize(
    "body, message",
    [
        ("queries: tc(1, X)", "queries: must be a list of queries"),
        ("queries: {query: x}", "queries: must be a list of queries"),
        ("queries:\n  - 42", 'queries[0]: must be a query ("tc(1, X)") or {query: ..., to: uri'),
        ("queries:\n  - to: out", "queries[0]: missing key 'query'"),
        (
            "queries:\n  - {query: q, where: out}",
            "queries[0]: unknown key 'where' (known keys: query, to)",
        ),
        ("query:\n  - {query: q, bad: 1}", "query[0]: unknown key 'bad' (known keys: query, to)"),
        ("queries:\n  - {query: '', to: out}", "queries[0].query: must be a non-empty string"),
        (
            "queries:\n  - {query: q, to: [out]}",
            "queries[0].to: must be uri[:format] or {uri: ..., format: ...}",
        ),
        (
            "queries:\n  - {query: q, to: {uri: o, format: json}}",
            "queries[0].to.format: must be 'delta', 'parquet' or 'csv'",
        ),
        (
            "queries:\n  - {query: q, to: {path: o}}",
            "queries[0].to: unknown key 'path' (known keys: uri, format)",
        ),
        ("queries:\n  - q\n  - {query: q, to: o}", "the query 'q' is given twice"),
        ("queries:\n  - {query: a, to: o}\n  - {query: b, to: o:csv}", "both write to"),
        ("queries:\n  - {query: a, to: wh/answers}", "overlaps the warehouse"),
        ("queries:\n  - {query: a, to: .}", "overlaps the warehouse"),
    ],
)
def test_bad_query_settings_are_usage_errors_exiting_2(tmp_path, capsys, body, message):
    config = write(tmp_path / "job.yaml", "program: p.dl\nwarehouse: wh\n" + body + "\n")
    with pytest.raises(UsageError, match=re.escape(message)):
        job.parse_args(["--config", str(config)])
    assert job.main(["--config", str(config)]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("item", ["=out", "tc(1, X)=", "  "])
def test_bad_query_flags_exit_2(tmp_path, capsys, item):
    assert job.main(["--program", "p.dl", "--warehouse", str(tmp_path / "wh"), "--query", item]) == 2
    assert "--query expects QUERY or QUERY=URI[:FORMAT]" in capsys.readouterr().err


def test_a_bad_query_exits_1_with_a_caret_before_any_spark_work(tmp_path, capsys, monkeypatch):
    def no_spark():
        raise AssertionError("Spark was started for a job whose query is wrong")

    monkeypatch.setattr(job, "get_session", no_spark)
    program = write(tmp_path / "tc.dl", TC)
    warehouse = tmp_path / "wh"
    base = ["--program", str(program), "--warehouse", str(warehouse), "--query", "tc(1, X)"]
    assert job.main(base + ["--query", "tc(1, X, 2)=out:delta"]) == 1
    err = capsys.readouterr().err
    assert "<query>:1:1: schema error" in err and "tc(1, X, 2)" in err and "^" in err
    assert "Traceback" not in err
    assert job.main(base + ["--query", "reach(1, X"]) == 1
    assert "parse error" in capsys.readouterr().err
    assert not warehouse.exists() and not (tmp_path / "out").exists()


def test_the_example_config_has_queries_that_fit_the_bundled_example():
    args = job.parse_args(["--config", str(EXAMPLE_CONFIG)])
    assert args.queries and any(q.to is not None for q in args.queries)
    for spec in args.queries:
        if spec.to is not None:  # next to the warehouse, not inside it
            to = Path(spec.to.uri)
            assert to.is_relative_to(ROOT) and not to.is_relative_to(ROOT / "warehouse")
    job.load_program(args)  # raises for a query that does not fit the program


# ---------------------------------------------------------------------------------- on Spark


def _read_delta(uri: Path) -> set:
    from deltalake import DeltaTable

    return {tuple(row.values()) for row in DeltaTable(str(uri)).to_pyarrow_table().to_pylist()}


def test_the_job_answers_queries_and_writes_them_as_its_config_says(spark, tmp_path):
    write(tmp_path / "tc.dl", TC)
    write(tmp_path / "arcs.csv", "src,dst\n1,2\n2,3\n3,4\n")
    config = write(
        tmp_path / "conf" / "job.yaml",
        """\
        program: ../tc.dl
        warehouse: ../wh
        inputs: {arc: ../arcs.csv}
        show: 2
        queries:
          - tc(X, 4)
          - query: "tc(1, X)"
            to: ../out/tc1:parquet
          - query: tc(X, Y)
            to: ../out/tc.csv
          - query: "?- tc(X, 3)."
            to: ../out/to3:delta
          - query: tc(1, 4)
            to: {uri: ../out/holds, format: delta}
        """,
    )
    arcs = {(1, 2), (2, 3), (3, 4)}
    out = io.StringIO()
    summary = job.run_job(job.parse_args(["--config", str(config), "--run-id", "one"]), spark=spark, out=out)

    by_text = {q.text: q for q in summary.queries}
    assert list(by_text) == ["tc(1, X)", "tc(3, 1)", "tc(X, 4)", "tc(X, Y)", "?- tc(X, 3).", "tc(1, 4)"]
    assert {q.strategy for q in summary.queries} == {"stored"}  # filtered reads, nothing re-evaluated
    assert by_text["tc(X, Y)"].answers == len(expected("tc(X, Y)", arcs)) == 6
    assert by_text["tc(3, 1)"].answers is False and by_text["tc(1, 4)"].answers is True
    assert by_text["tc(X, 4)"].rows == sorted(expected("tc(X, 4)", arcs))[:2]
    assert by_text["tc(X, 4)"].written is None

    assert {tuple(r) for r in spark.read.parquet(str(tmp_path / "out" / "tc1")).collect()} == expected(
        "tc(1, X)", arcs
    )
    csv = spark.read.option("header", True).csv(str(tmp_path / "out" / "tc.csv"))
    assert csv.columns == ["X", "Y"]
    assert {(int(x), int(y)) for x, y in csv.collect()} == expected("tc(X, Y)", arcs)
    assert _read_delta(tmp_path / "out" / "to3") == expected("tc(X, 3)", arcs) == {(1,), (2,)}
    assert _read_delta(tmp_path / "out" / "holds") == {(True,)}

    text = out.getvalue()
    assert "?- tc(1, X). 3 answers\n  X = 2\n  X = 3\n  ... 1 more\n" in text  # the program's ?- line
    assert "?- tc(3, 1). false\n" in text
    assert f"?- tc(X, 3). 2 answers, written to {tmp_path / 'out' / 'to3'} (delta)\n" in text
    assert f"?- tc(1, 4). true, written to {tmp_path / 'out' / 'holds'} (delta)\n" in text
    assert text.index("tc: 6 facts") < text.index("?- tc(1, X).") < text.index("done in")


def test_incremental_runs_answer_the_updated_warehouse_and_replace_the_written_answers(spark, tmp_path):
    program = write(tmp_path / "tc.dl", TC)
    write(tmp_path / "arcs.csv", "src,dst\n1,2\n2,3\n")
    base = ["--program", str(program), "--warehouse", str(tmp_path / "wh"), "--show", "0"]
    holds, to3 = tmp_path / "holds", tmp_path / "to3"
    queries = ["--query", f"tc(1, 4)={holds}:delta", "--query", f"tc(X, 3)={to3}:delta"]
    first = job.run_job(
        job.parse_args(base + ["--input", f"arc={tmp_path / 'arcs.csv'}"] + queries), spark=spark, out=False
    )
    assert [q.answers for q in first.queries] == [2, False, False, 2]
    assert _read_delta(holds) == {(False,)} and _read_delta(to3) == {(1,), (2,)}

    write(tmp_path / "arcs2.csv", "src,dst\n1,2\n3,4\n2,4\n")  # 2->3 goes, 3->4 and 2->4 come
    argv = base + ["--mode", "incremental", "--input", f"arc={tmp_path / 'arcs2.csv'}"] + queries
    out = io.StringIO()
    update = job.run_job(job.parse_args(argv), spark=spark, out=out)
    arcs = {(1, 2), (3, 4), (2, 4)}
    assert [q.answers for q in update.queries] == [
        len(expected("tc(1, X)", arcs)),
        False,
        True,
        len(expected("tc(X, 3)", arcs)),
    ]
    assert {q.strategy for q in update.queries} == {"stored"}
    assert _read_delta(holds) == {(True,)} and _read_delta(to3) == expected("tc(X, 3)", arcs) == set()
    assert "?- tc(1, 4). true, written to" in out.getvalue()
