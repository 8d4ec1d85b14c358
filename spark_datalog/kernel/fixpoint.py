"""A stratum's plans evaluated to their fixpoint on the kernel, by the engine's one semi-naive
loop (``spark_datalog.seminaive``) over the kernel's relations (``.relation``).

Round 0 runs every rule in full (and adds the stated facts), each later round runs the
semi-naive variants, which read the previous round's new facts (``delta``) at one body atom and
the relations' ``full`` facts elsewhere. A round's new facts of every relation are collected
together (one ``collect_all``). Rounds are counted as the Spark driver (``eval.driver``) counts
them: a recursive stratum still deriving facts in its ``max_iterations``-th round raises the
driver's ``NonTerminationError``. A min/max relation's delta is its improved groups (PreM).

:func:`evaluate_stratum` is the kernel's stratum: Arrow tables in (the relations below it),
Arrow tables out (its relations, with their schema's names and types).
"""

from __future__ import annotations

from typing import Mapping, Optional

import polars as pl
import pyarrow as pa

from ..bounds import MAX_ITERATIONS
from ..overflow import overflows_located
from ..plan.ir import StratumPlan
from ..seminaive import Round, bounded, rounds
from .checks import collect_all
from .compile import compile_node
from .frames import facts_table, to_frame, to_table
from .index import DEFAULT, IndexPolicy
from .relation import AggregateRelation, BestRelation, ChoiceRelation, SetRelation
from .subsumption import Dominated, SubsumedRelation
from .types import UNIT, polars_type


def seminaive(
    plan: StratumPlan, relations: dict, candidates: Round, max_iterations: Optional[int] = MAX_ITERATIONS
) -> int:
    """Run the semi-naive loop (``seminaive.rounds``) on the kernel to the fixpoint; returns the
    number of rounds. A recursive stratum still deriving facts in its ``max_iterations``-th
    round raises ``NonTerminationError``."""
    found = rounds(relations, candidates, plan.recursive, collect_all)
    return sum(1 for _ in bounded(plan, found, max_iterations, relations=relations))


def evaluate_stratum(
    plan: StratumPlan,
    checked,
    inputs: Mapping[str, pa.Table],
    max_iterations: Optional[int] = MAX_ITERATIONS,
    index: IndexPolicy = DEFAULT,
) -> dict:
    """The relations of ``plan`` (a stratum of ``checked``, a CheckedProgram) as Arrow tables,
    from ``inputs``: relation -> Arrow table for every relation the stratum reads. An overflow
    is raised as the ``ArithmeticOverflowError`` the reference raises. ``index``: when its
    relations index their known facts (``kernel.index``)."""
    schemas = checked.relations
    below = {name: to_frame(table, schemas[name].types) for name, table in inputs.items()}
    relations = {name: _relation(plan, schemas[name], index) for name in plan.relations}
    for name, (pseudo, plans) in plan.subsumed.items():
        dtypes = {c.name: polars_type(c.type) for c in schemas[name].columns}
        relations[name] = SubsumedRelation(dtypes, _dominance(pseudo, plans, below, schemas[name]))
    facts = {name: _facts(schemas[name], checked.facts.get(name)) for name in plan.relations}

    def candidates(iteration: int, states: dict) -> list:
        frames = {(name, "full"): frame for name, frame in below.items()}
        for name, state in states.items():
            frames[(name, "full")] = state.full()
            frames[(name, "delta")] = state.recent
        rules = plan.rules if iteration == 0 else plan.delta_rules
        found = [
            (r.relation, _conformed(compile_node(r.plan, frames), schemas[r.relation], plan)) for r in rules
        ]
        if iteration == 0:
            found += [(name, frame.lazy()) for name, frame in facts.items() if frame is not None]
        return found

    with overflows_located(checked):
        seminaive(plan, relations, candidates, max_iterations)
    return {name: to_table(relations[name].facts(), *_names_types(schemas[name])) for name in plan.relations}


def _relation(plan: StratumPlan, schema, index: IndexPolicy):
    dtypes = {c.name: polars_type(c.type) for c in schema.columns}
    spec = plan.aggregates.get(schema.name)
    if schema.name in plan.choices:
        return ChoiceRelation(dtypes, plan.choices[schema.name], index)
    if spec is None:
        return SetRelation(dtypes, policy=index, limit=plan.limits.get(schema.name))
    if spec.func in ("min", "max"):
        return BestRelation(dtypes, spec.position, spec.func)
    if plan.recursive:
        raise ValueError(f"{spec.func} aggregate of {schema.name} inside a recursive stratum")
    return AggregateRelation(dtypes, spec.position, spec.func, schema.name)


def _dominance(pseudo: str, plans: tuple, below: dict, schema) -> Dominated:
    """The tuples of ``U`` the ``plans`` of a relation's dominated tuples derive, with its
    ``pseudo`` relation of all tuples bound to ``U`` and the relations ``below`` read."""

    def dominated(every: pl.LazyFrame) -> pl.LazyFrame:
        frames = {(name, "full"): frame for name, frame in below.items()}
        frames[(pseudo, "full")] = every
        found = [conformed(compile_node(p.plan, frames).frame, *_names_types(schema)) for p in plans]
        return pl.concat(found, how="vertical") if found else every.clear()

    return dominated


def _facts(schema, rows) -> Optional[pl.DataFrame]:
    if not rows:
        return None
    return to_frame(facts_table(schema.column_names, schema.types, rows), schema.types)


def _names_types(schema) -> tuple:
    return schema.column_names, schema.types


def _conformed(compiled, schema, plan: StratumPlan) -> pl.LazyFrame:
    """A rule's output with its relation's column names and types (the aggregated value of a
    count/sum/avg contribution keeps its own type)."""
    spec = plan.aggregates.get(schema.name)
    keep = spec.position if spec is not None and spec.func not in ("min", "max") else None
    return conformed(compiled.frame, schema.column_names, schema.types, keep)


def conformed(frame: pl.LazyFrame, names, types, keep: Optional[int] = None) -> pl.LazyFrame:
    """``frame`` (a rule's output, its columns in relation order) with the relation's column
    ``names`` and Datalog ``types``; the column at ``keep`` keeps its own type.

    >>> conformed(pl.LazyFrame({"a": [1]}), ["x"], ["long"]).collect().schema
    Schema([('x', Int64)])
    """
    if not names:
        return frame.select(UNIT)
    columns = []
    for position, (name, type_) in enumerate(zip(names, types, strict=True)):
        value = pl.nth(position)
        if position != keep:
            value = value.cast(polars_type(type_))
        columns.append(value.alias(name))
    return frame.select(columns)
