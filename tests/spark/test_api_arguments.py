"""Inputs and change sets of the wrong kind, and pandas / pyarrow ones (issue 19, item 11).

Anything that is not data of a relation is an ``InputError`` naming the relation; pandas
DataFrames and pyarrow Tables are taken as Spark DataFrames are, with the same results as the
reference interpreter on the same rows.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

import spark_datalog as sd
from spark_datalog.errors import InputError
from spark_datalog.storage import Warehouse

TC = """
.decl arc(x: long, y: long)
.input arc
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), arc(Y, Z).
"""
ROWS = [(1, 2), (2, 3), (3, 4)]


def facts(frame) -> set:
    return {tuple(row) for row in frame.collect()}


@pytest.fixture(scope="module")
def program():
    return sd.Program.parse(TC)


@pytest.mark.parametrize(
    "value", [ROWS, 7, {(1, 2)}, ["not", "a", "path"]], ids=["list", "int", "set", "list of str"]
)
def test_materialize_refuses_what_is_not_data_naming_the_relation(spark, program, value):
    with pytest.raises(InputError, match=r"input arc: expected a Spark DataFrame, a pandas DataFrame"):
        program.materialize(spark, inputs={"arc": value})


def test_inputs_that_are_not_a_mapping_are_refused(spark, program):
    frame = pd.DataFrame(ROWS, columns=["x", "y"])
    with pytest.raises(InputError, match="inputs must map relation names"):
        program.materialize(spark, inputs=frame)
    with pytest.raises(InputError, match="inputs must map relation names"):
        sd.reference.evaluate(program, [("arc", ROWS)])


@pytest.mark.parametrize("kind", ["pandas", "arrow"])
def test_pandas_and_arrow_inputs_give_the_reference_result(spark, program, kind):
    pdf = pd.DataFrame(ROWS, columns=["a", "b"])  # other names: columns are positional
    value = pdf if kind == "pandas" else pa.Table.from_pandas(pdf, preserve_index=False)
    result = program.materialize(spark, inputs={"arc": value})
    expected = sd.reference.evaluate(program, {"arc": set(ROWS)})
    assert facts(result["tc"]) == expected["tc"] and len(expected["tc"]) == 6
    assert sd.reference.evaluate(program, {"arc": value}) == expected


def test_a_pandas_input_of_the_wrong_type_is_a_schema_error_naming_it(spark, program):
    with pytest.raises(sd.errors.SchemaError, match=r"column 'y' of relation 'arc' .* input has type string"):
        program.materialize(spark, inputs={"arc": pd.DataFrame({"x": [1], "y": ["two"]})})
    with pytest.raises(InputError, match="input arc: a pandas column holds mixed values"):
        program.materialize(spark, inputs={"arc": pd.DataFrame({"x": [1, 2], "y": [3, "four"]})})


@pytest.mark.parametrize("value", [7, "arc", [1, 2]], ids=["int", "str", "list of int"])
def test_reference_refuses_what_is_not_a_collection_of_rows(program, value):
    with pytest.raises(InputError, match="input arc"):
        sd.reference.evaluate(program, {"arc": value})


def test_update_takes_pandas_changes_and_refuses_other_values(spark, program, tmp_path):
    wh = Warehouse(spark, str(tmp_path / "wh"))
    program.materialize(spark, inputs={"arc": pd.DataFrame(ROWS, columns=["x", "y"])}, warehouse=wh)
    for value in (ROWS, 3):
        with pytest.raises(InputError, match="changes arc: expected a Spark DataFrame"):
            program.update(spark, wh, changes={"arc": value})
    with pytest.raises(InputError, match="changes must map relation names"):
        program.update(spark, wh, changes=[("arc", ROWS)])
    strings = pd.DataFrame({"x": [4], "y": [5], "_count": ["1"]})
    with pytest.raises(InputError, match="changes arc: _count has type string"):
        program.update(spark, wh, changes={"arc": strings})
    assert wh.runs()[-1]["status"] == "committed" and len(wh.runs()) == 1  # refusals leave no run
    change = pd.DataFrame({"x": [4, 1], "y": [5, 2], "_count": [1, -1]})
    program.update(spark, wh, changes={"arc": change})
    expected = sd.reference.evaluate(program, {"arc": {(2, 3), (3, 4), (4, 5)}})
    assert facts(wh.read("tc")) == expected["tc"]
