"""Answering a query on Spark: plan it (:mod:`.plan`), evaluate the planned program with the
engine, and shape the answer relation as the query's DataFrame.

The DataFrame has one column per distinct named variable of the query, named after it; a query
without named variables gives one row with one boolean column, ``holds``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Optional

from ..bounds import MAX_ITERATIONS
from .plan import QueryPlan, plan_query
from .text import CheckedQuery

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

HOLDS = "holds"


@dataclass
class Answer:
    """A query's answers (``frame``), the plan that produced them and the evaluation's
    statistics (one ``StratumStats`` per stratum evaluated; none for a stored read)."""

    frame: "DataFrame"
    plan: QueryPlan
    stats: list

    def facts_derived(self) -> int:
        """Facts in the recursive strata evaluated (their sizes are known without a Spark job),
        the measure of how much of the program the query needed."""
        return sum(rows or 0 for stratum in self.stats if stratum.recursive for rows in stratum.rows.values())


def answer_query(
    program,
    spark,
    query,
    inputs: Optional[Mapping[str, object]] = None,
    warehouse=None,
    magic="auto",
    max_iterations: Optional[int] = MAX_ITERATIONS,
    decompose: bool = True,
) -> Answer:
    """See :meth:`spark_datalog.Program.query`; returns the :class:`Answer`. Its Spark jobs
    are labelled ``query · QUERY`` (``spark.labels``)."""
    from ..spark.labels import group_id, labelled

    with labelled(spark, f"query · {query}", group_id("query")):
        return _answer(program, spark, query, inputs, warehouse, magic, max_iterations, decompose)


def _answer(program, spark, query, inputs, warehouse, magic, max_iterations, decompose) -> Answer:
    from ..eval.materialize import read_located_inputs
    from ..spark.inputs import input_types, require_mapping

    inputs = {} if inputs is None else inputs
    require_mapping(inputs, "inputs")
    frames, _ = read_located_inputs(spark, program.checked, inputs)
    typed = program.with_input_types(input_types(program.checked, frames))
    plan = plan_query(typed, query, magic=magic, warehouse=None if inputs else warehouse)
    if plan.strategy == "stored":
        frames = {
            plan.query.atom.predicate: warehouse.read(plan.query.atom.predicate, version=plan.stored_version)
        }
    elif warehouse is not None and not inputs:
        frames = stored_inputs(warehouse, typed.checked)
    frames = {name: frame for name, frame in frames.items() if name in plan.program.checked.relations}
    result = plan.program.materialize(
        spark, inputs=frames, max_iterations=max_iterations, decompose=decompose
    )
    frame = shaped(spark, result[plan.query.answer], plan.query)
    return Answer(frame, plan, list(result.stats))


def read_answers(spark, program, query, frame) -> "DataFrame":
    """The answers of ``query`` (an ``ast.Query`` of ``program``) read from ``frame``, the
    queried relation's facts (computed or stored): ``Materialization.answers``."""
    from .plan import reader_program
    from .text import checked_query

    checked_q = checked_query(program.checked, query)
    reader = reader_program(program, checked_q)
    result = reader.materialize(spark, inputs={checked_q.atom.predicate: frame})
    return shaped(spark, result[checked_q.answer], checked_q)


def stored_inputs(warehouse, checked) -> dict:
    """The warehouse's tables of ``checked``'s input relations (those it has)."""
    return {name: warehouse.read(name) for name in checked.edb if warehouse.exists(name)}


def shaped(spark, frame, query: CheckedQuery) -> "DataFrame":
    """The answer relation's frame as the query's answer: columns renamed to the variables, or
    one boolean row for a yes/no question."""
    if query.is_ground:
        holds = bool(frame.limit(1).count())
        return spark.createDataFrame([(holds,)], f"{HOLDS} boolean")
    return frame.toDF(*query.variables)
