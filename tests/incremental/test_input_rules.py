"""An ``.input`` relation with rules (Soufflé allows it) in a warehouse: its input is stored as
``<r>__input`` and derived ``r`` beside it; ``materialize``, ``update`` and ``query`` take the
input by the relation's own name (syntax.input_rules)."""

from __future__ import annotations

import spark_datalog as sd
from spark_datalog.storage import Warehouse

from .helpers import assert_recomputed

PROGRAM = """\
.decl arc(x: long, y: long)
.input arc
arc(Y, X) :- arc(X, Y).
arc(0, 1).
tc(X, Y) :- arc(X, Y), X != Y.
"""


def test_materialize_update_and_query_by_the_input_relation_s_name(spark, tmp_path):
    program = sd.Program.parse(PROGRAM)
    wh = Warehouse(spark, str(tmp_path / "wh"))
    program.materialize(
        spark, inputs={"arc": spark.createDataFrame([(1, 2), (2, 3)], "x long, y long")}, warehouse=wh
    )
    assert {"arc", "arc__input", "tc"} <= set(wh.relations())
    assert {tuple(r) for r in wh.read("arc__input").collect()} == {(1, 2), (2, 3)}
    # the input, the program's fact and their reverses (hand-checked)
    assert {tuple(r) for r in wh.read("arc").collect()} == {(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2)}

    changes = spark.createDataFrame([(2, 3, -1), (5, 6, 1)], "x long, y long, _count long")
    program.update(spark, wh, changes={"arc": changes})
    assert_recomputed(program, wh, {"arc": {(1, 2), (5, 6)}})  # equals a full recomputation
    assert {tuple(r) for r in wh.read("arc").collect()} == {(0, 1), (1, 0), (1, 2), (2, 1), (5, 6), (6, 5)}

    answers = program.query(spark, "arc(X, 6)", warehouse=wh)
    assert {tuple(r) for r in answers.collect()} == {(5,)}
