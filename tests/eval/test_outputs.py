"""``.output`` decides what is computed and returned (issue 19, item 19).

With ``.output``, only the strata the outputs depend on are evaluated (here an unused relation
never reaches a fixpoint, so evaluating it would raise), every output is returned, also one
defined only by facts or an input relation, and the warehouse stores the outputs with what
they need, which updates maintain. Without ``.output`` every IDB relation is computed and
returned as before. Checked on the reference interpreter, on Spark (both recursive paths),
through the warehouse and on the command line.
"""

from __future__ import annotations

import pytest

import spark_datalog as sd
from spark_datalog import cli
from spark_datalog.storage.warehouse import Warehouse

TEXT = """
.decl arc(x: long, y: long)
.output f
.output tc
.output arc
f(1). f(2).
arc(1, 2).
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), arc(Y, Z).
unused(X) :- arc(X, X), n(X).
n(Y) :- n(X), Y = X + 1.
n(0).
"""

BOUND = 50  # far below what n would need: evaluating it raises
ARCS = [(2, 3), (3, 4)]


def expected_tc(arcs) -> set:
    return sd.reference.evaluate(sd.Program.parse(TEXT), {"arc": set(arcs)})["tc"]


def test_outputs_decide_what_is_computed():
    checked = sd.Program.parse(TEXT).checked
    assert checked.demanded == {"f", "tc", "arc"}
    assert [s.relations for s in checked.evaluated] == [("tc",)]
    assert [p.relations for p in sd.Program.parse(TEXT).plans] == [("tc",)]
    everything = sd.Program.parse(TEXT.replace(".output", "% .output")).checked
    assert len(everything.evaluated) == len(everything.strata) == 3


def test_reference_returns_the_outputs_only():
    result = sd.reference.evaluate(sd.Program.parse(TEXT), {"arc": set(ARCS)}, max_iterations=BOUND)
    assert result == {
        "f": {(1,), (2,)},
        "tc": {(1, 2), (2, 3), (3, 4), (1, 3), (2, 4), (1, 4)},
        "arc": {(1, 2), (2, 3), (3, 4)},
    }


def test_without_outputs_every_idb_relation_is_returned():
    text = "e(1, 2). e(2, 3). p(X) :- e(X, _). q(Y) :- p(Y), e(_, Y)."
    result = sd.reference.evaluate(sd.Program.parse(text))
    assert result == {"p": {(1,), (2,)}, "q": {(2,)}}


@pytest.mark.parametrize("decompose", [True, False], ids=["partition-local", "rounds"])
def test_spark_returns_the_outputs_and_skips_the_rest(spark, decompose):
    program = sd.Program.parse(TEXT)
    arcs = spark.createDataFrame(ARCS, "x long, y long")
    result = program.materialize(spark, inputs={"arc": arcs}, max_iterations=BOUND, decompose=decompose)
    assert result.relations == ["f", "tc", "arc"]
    expected = sd.reference.evaluate(program, {"arc": set(ARCS)})
    for name, rows in expected.items():
        assert {tuple(r) for r in result[name].collect()} == rows, name
    assert [s.relations for s in result.stats] == [("tc",)]


def test_the_warehouse_keeps_what_the_outputs_need_through_updates(spark, tmp_path):
    program = sd.Program.parse(TEXT)
    wh = Warehouse(spark, str(tmp_path / "wh"))
    arcs = spark.createDataFrame(ARCS, "x long, y long")
    program.materialize(spark, inputs={"arc": arcs}, warehouse=wh, max_iterations=BOUND)
    assert set(wh.relations()) == {"f", "arc", "tc"}
    arc = {(1, 2), *ARCS}
    for inserts, deletes in [([(4, 1)], []), ([], [(2, 3)])]:
        rows = [(*r, 1) for r in inserts] + [(*r, -1) for r in deletes]
        change = spark.createDataFrame(rows, "x long, y long, _count long")
        program.update(spark, warehouse=wh, changes={"arc": change}, max_iterations=BOUND)
        arc = arc - set(deletes) | set(inserts)
        assert {tuple(r) for r in wh.read("tc").collect()} == expected_tc(arc)
        assert {tuple(r) for r in wh.read("arc").collect()} == arc


def _run(capsys, tmp_path, *flags):
    path = tmp_path / "p.dl"
    path.write_text(TEXT)
    status = cli.main(["run", str(path), "--max-iterations", str(BOUND), *flags])
    out, err = capsys.readouterr()
    assert status == 0, err
    return out


def test_cli_run_reference_prints_every_output(tmp_path, capsys):
    out = _run(capsys, tmp_path, "--engine", "reference")
    assert "  f(1)" in out and "  arc(1, 2)" in out and "  tc(1, 2)" in out
    assert "unused" not in out


def test_cli_run_spark_prints_every_output(spark, tmp_path, capsys):
    out = _run(capsys, tmp_path)
    assert "  f(1)" in out and "  arc(1, 2)" in out and "  tc(1, 2)" in out
    assert "unused" not in out
