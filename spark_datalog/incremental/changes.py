"""Change sets: signed-count frames per fact, and the counted states they turn old into new.

A *counted* frame has a relation's columns plus ``_count``. A *change* (or delta) is a counted
frame with one row per fact and a non-zero signed count: +n adds n copies (or derivations),
-n removes them. A *state* is a counted frame of the present facts (count > 0).

An *assessed* change also says, per row, how the fact's presence changes (``PRESENCE``: +1 it
appears, -1 it disappears, 0 only its count changes) and whether the row is refused
(``PROBLEM``: a null, or a deletion of copies that are not there). :func:`store_assessed`
stores assessed changes and counts those kinds in one Spark job, so the questions "did facts
appear or disappear?" and "is the change valid?" cost no job of their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING, Mapping, Optional

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import IntegralType

from ..errors import InputError
from ..eval.checkpoint import count_groups
from ..spark.counted import COUNT
from ..spark.inputs import conform_input
from ..spark.types import spark_type

if TYPE_CHECKING:
    import pyarrow as pa

ON_MISSING_DELETE = ("error", "ignore")
PRESENCE = "_presence"
PROBLEM = "_problem"
_OLD = "_count_old"
_NULL = "_null"
_FACT = "_fact"  # the key column of a relation without columns, in the driver


def conform_changes(schema, frame: DataFrame) -> DataFrame:
    """A user's change set as signed rows of ``schema``'s relation (lazy, no Spark job).

    ``frame`` holds the relation's columns (positionally) and optionally ``_count``; without it
    every row inserts one copy. The rows are not summed per fact; a column ``_null`` marks rows
    holding a null, which :func:`assess` keeps so that :func:`check_assessed` refuses them.
    """
    columns = [c for c in frame.columns if c != COUNT]
    conform_input(schema, frame.select(*[F.col(f"`{c}`") for c in columns]))  # arity and types
    if COUNT in frame.columns and not isinstance(frame.schema[COUNT].dataType, IntegralType):
        raise InputError(
            f"changes {schema.name}: {COUNT} has type {frame.schema[COUNT].dataType.simpleString()}; "
            "it holds signed integer counts (+n inserts n copies, -n deletes n)"
        )
    weight = F.col(COUNT).cast("long") if COUNT in frame.columns else F.lit(1).cast("long")
    signed = frame.select(
        *[
            F.col(f"`{c}`").cast(spark_type(column.type)).alias(column.name)
            for c, column in zip(columns, schema.columns, strict=True)
        ],
        weight.alias(COUNT),
    )
    null = reduce(lambda a, b: a | b, [F.col(c).isNull() for c in signed.columns])
    return signed.withColumn(_NULL, null)


def refuse_program_fact_deletions(checked, changes: Mapping[str, DataFrame]) -> None:
    """``InputError`` at the fact in the program text when a change set deletes (a negative net
    count for) a fact the program states: such facts are part of the program, not of its inputs.
    One Spark job per changed relation that has facts in the program, over those facts only."""
    from ..spark.inputs import facts_frame

    for name, frame in changes.items():
        stated = checked.facts.get(name)
        if not stated or COUNT not in frame.columns:
            continue
        schema = checked.relations[name]
        names = list(schema.column_names)
        change = conform_changes(schema, frame).drop(_NULL)
        deleted = (
            change.join(F.broadcast(facts_frame(frame.sparkSession, schema, stated)), names, "left_semi")
            .groupBy(*names)
            .agg(F.sum(COUNT).alias(COUNT))
            .where(F.col(COUNT) < 0)
            .limit(1)
            .collect()
        )
        if deleted:
            raise _program_fact_error(checked, name, tuple(deleted[0][c] for c in names))


def _program_fact_error(checked, name: str, values: tuple) -> InputError:
    program = checked.program
    span = next(
        (f.span for f in program.facts if f.atom.predicate == name and _same(values, tuple(f.values))),
        None,
    )
    shown = ", ".join(repr(v) for v in values)
    return InputError(
        f"changes {name}: the change set deletes {name}({shown}), a fact stated in the program text; "
        "program facts are part of the program, not of its inputs: remove it from the program instead",
        line=span.line if span else None,
        column=span.column if span else None,
        source=program.source,
        filename=getattr(program, "filename", None),
    )


def _same(value, stated) -> bool:
    """Whether a value read from Spark is the value ``stated`` in the program: a number,
    string or bool (``stated`` taken as the value's type), or a record (a ``Row``; a tuple of
    the fields stated), field by field."""
    if isinstance(value, tuple):
        return (
            isinstance(stated, tuple)
            and len(stated) == len(value)
            and all(_same(v, w) for v, w in zip(value, stated, strict=True))
        )
    return value == type(value)(stated)


def net(frame: DataFrame, columns) -> DataFrame:
    """Sum the signed counts per fact; drop facts whose sum is 0."""
    columns = list(columns)
    return frame.groupBy(*columns).agg(F.sum(COUNT).cast("long").alias(COUNT)).where(F.col(COUNT) != 0)


def assess(schema, change: DataFrame, old: DataFrame, on_missing_delete: Optional[str] = None) -> DataFrame:
    """``change`` set against the state ``old``, lazily: one row per fact with its non-zero
    count, the count before (``_count_old``), ``PRESENCE`` and ``PROBLEM``.

    A change from :func:`conform_changes` is summed per fact here (its rows with nulls are kept,
    as problems); any other must already be one (one row per fact, no zero count). With
    ``on_missing_delete="error"`` deleting an absent fact, or more copies than it has, is a
    problem; with ``"ignore"`` such a deletion is cut to the copies there are; with ``None`` it
    is not looked at (the change is known to be valid). One join with ``old``.
    """
    if on_missing_delete not in ON_MISSING_DELETE + (None,):
        raise ValueError(f"on_missing_delete must be one of {ON_MISSING_DELETE}, not {on_missing_delete!r}")
    names = list(schema.column_names)
    null = F.lit(False)
    if _NULL in change.columns:
        change = (
            change.groupBy(*names)
            .agg(F.sum(COUNT).cast("long").alias(COUNT), F.max(_NULL).alias(_NULL))
            .where((F.col(COUNT) != 0) | F.col(_NULL))
        )
        null = F.col(_NULL)
    joined = change.join(old.select(*names, F.col(COUNT).alias(_OLD)), names or F.lit(True), "left")
    before = F.coalesce(F.col(_OLD), F.lit(0).cast("long"))
    count, problem = F.col(COUNT), null
    if on_missing_delete == "error":
        problem = null | (before + count < 0)
    elif on_missing_delete == "ignore":
        count = F.greatest(count, -before)
    after = before + count
    presence = F.when((before <= 0) & (after > 0), 1).when((before > 0) & (after <= 0), -1).otherwise(0)
    problem = F.coalesce(problem, F.lit(True))  # a null count
    assessed = joined.select(
        *names, count.alias(COUNT), before.alias(_OLD), presence.alias(PRESENCE), problem.alias(PROBLEM)
    )
    if on_missing_delete == "ignore":
        assessed = assessed.where((F.col(COUNT) != 0) | F.col(PROBLEM))
    return assessed


def assess_in_driver(schema, change, old, on_missing_delete: Optional[str] = None) -> tuple:
    """:func:`assess` on pyarrow tables in this process, for a small change: ``change`` as
    :func:`conform_changes` makes it (collected), ``old`` the state's facts with ``_count``.
    Returns (the assessed rows as a pyarrow Table with :func:`assess`'s columns, its
    ``Tally``), with the same values as Spark computes them (nulls included)."""
    import polars as pl

    from ..kernel.frames import to_frame, to_table

    names, types = list(schema.column_names), list(schema.types)
    keys = names or [_FACT]  # a relation without columns: its one fact
    counted = to_frame(change.select(names + [COUNT, _NULL]), types + ["long", "bool"])
    summed = (
        _keyed(counted, names)
        .group_by(keys, maintain_order=True)
        .agg(
            pl.when(pl.col(COUNT).count() > 0).then(pl.col(COUNT).sum()).alias(COUNT),  # null: all null
            pl.col(_NULL).any().alias(_NULL),
        )
        .filter(pl.col(COUNT).ne_missing(0) | pl.col(_NULL))
    )
    stored = _keyed(to_frame(old.select(names + [COUNT]), types + ["long"]), names).rename({COUNT: _OLD})
    joined = summed.join(stored, on=keys, how="left", maintain_order="left")  # a null never joins
    assessed = joined.select(names + _assessed(on_missing_delete))
    if on_missing_delete == "ignore":
        assessed = assessed.filter(pl.col(COUNT).ne_missing(0) | pl.col(PROBLEM))
    frame = assessed.collect()
    table = to_table(frame, names + [COUNT, _OLD, PRESENCE, PROBLEM], types + ["long", "long", "int", "bool"])
    presence = frame.get_column(PRESENCE)
    tally = Tally(
        rows=frame.height,
        inserted=int((presence > 0).sum()),
        deleted=int((presence < 0).sum()),
        problems=int(frame.get_column(PROBLEM).sum()),
    )
    return table, tally


def _keyed(frame, names: list):
    """``frame`` (lazy), with the key column ``_fact`` when the relation has no columns."""
    import polars as pl

    return frame.lazy() if names else frame.lazy().with_columns(pl.lit(True).alias(_FACT))


def _assessed(on_missing_delete: Optional[str]) -> list:
    """:func:`assess`'s columns after the facts, as Polars expressions over a summed change
    joined with the counts before (``_count_old``: null for a fact not stored)."""
    import polars as pl

    before = pl.col(_OLD).fill_null(0)
    count, null = pl.col(COUNT), pl.col(_NULL)
    problem = null
    if on_missing_delete == "error":
        problem = null | (count.is_not_null() & (before + count < 0))
    elif on_missing_delete == "ignore":
        count = pl.max_horizontal(count, -before)  # as greatest: a null count is -before
    after = before + count
    presence = (
        pl.when(after.is_null())
        .then(0)
        .when((before <= 0) & (after > 0))
        .then(1)
        .when((before > 0) & (after <= 0))
        .then(-1)
        .otherwise(0)
    )
    problem = pl.when(count.is_null()).then(True).otherwise(problem)  # a null count
    return [
        count.alias(COUNT),
        before.alias(_OLD),
        presence.cast(pl.Int32).alias(PRESENCE),
        problem.alias(PROBLEM),
    ]


def signed(change: DataFrame) -> DataFrame:
    """An assessed change of a set-valued relation (count 1 per stored fact), whose +1 rows are
    facts that appear and -1 rows facts that disappear: no join needed."""
    return change.withColumn(PRESENCE, F.signum(F.col(COUNT)).cast("int")).withColumn(PROBLEM, F.lit(False))


@dataclass(frozen=True)
class Tally:
    """Row counts of a stored assessed change."""

    rows: int = 0
    inserted: int = 0  # facts that appear
    deleted: int = 0  # facts that disappear
    problems: int = 0


def assessed_presence(schema, inserted, deleted) -> tuple:
    """(assessed change, ``Tally``) of a set-valued relation whose facts ``inserted`` appear
    and ``deleted`` disappear, computed in the driver (lists of tuples, or pyarrow Tables of
    the relation's columns): the change is a pyarrow Table with :func:`assess`'s columns (no
    Spark job)."""
    import pyarrow as pa

    from ..kernel.frames import rows_table

    parts = []
    for facts, sign in ((inserted, 1), (deleted, -1)):
        table = facts if isinstance(facts, pa.Table) else rows_table(schema.column_names, schema.types, facts)
        rows = table.num_rows
        parts.append(
            table.append_column(COUNT, pa.repeat(pa.scalar(sign, pa.int64()), rows))
            .append_column(PRESENCE, pa.repeat(pa.scalar(sign, pa.int32()), rows))
            .append_column(PROBLEM, pa.repeat(pa.scalar(False), rows))
        )
    tally = Tally(
        rows=parts[0].num_rows + parts[1].num_rows, inserted=parts[0].num_rows, deleted=parts[1].num_rows
    )
    return pa.concat_tables(parts), tally


def counted_change(schema, counts: dict) -> "pa.Table":
    """A change computed in the driver, {fact: signed count}, as :func:`conform_changes` makes
    a change (collected): a pyarrow Table for :func:`assess_in_driver`."""
    import pyarrow as pa

    from ..kernel.frames import rows_table

    table = rows_table(schema.column_names, schema.types, list(counts))
    return table.append_column(COUNT, pa.array(list(counts.values()), pa.int64())).append_column(
        _NULL, pa.repeat(pa.scalar(False), len(counts))
    )


def presence_rows(table, sign: int) -> "pa.Table":
    """The facts of an assessed change held as a pyarrow Table (:func:`assess_in_driver`,
    :func:`assessed_presence`) that appear (``sign`` 1) or disappear (-1): its relation's
    columns."""
    import pyarrow.compute as pc

    test = pc.greater if sign > 0 else pc.less
    names = [c for c in table.column_names if c not in (COUNT, _OLD, PRESENCE, PROBLEM)]
    return table.filter(test(table.column(PRESENCE), 0)).select(names)


def store_assessed(frames: Mapping) -> tuple:
    """(leaves, tallies): each assessed frame computed once and stored as a local checkpoint,
    with its ``Tally``, in one Spark job for all."""
    leaves = {key: frame.localCheckpoint(eager=False) for key, frame in frames.items()}
    counts = count_groups(leaves, {key: [F.col(PRESENCE), F.col(PROBLEM)] for key in leaves})
    tallies = {}
    for key, groups in counts.items():
        tallies[key] = Tally(
            rows=sum(groups.values()),
            inserted=sum(n for (presence, _), n in groups.items() if presence > 0),
            deleted=sum(n for (presence, _), n in groups.items() if presence < 0),
            problems=sum(n for (_, problem), n in groups.items() if problem),
        )
    return leaves, tallies


def check_assessed(schema, stored: DataFrame, tally: Tally, limit: int = 5) -> None:
    """Raise ``InputError`` for the problems of a stored assessed change (no job without any):
    rows with nulls first, else the deletions of absent facts, naming the facts."""
    if not tally.problems:
        return
    names = list(schema.column_names)
    null = reduce(lambda a, b: a | b, [F.col(c).isNull() for c in names + [COUNT]])
    nulls = stored.where(F.col(PROBLEM) & null).select(*names, COUNT).limit(1).collect()
    if nulls:
        raise InputError(
            f"the change set of {schema.name} holds nulls ({nulls[0]}), which Datalog cannot represent"
        )
    bad = stored.where(F.col(PROBLEM)).limit(limit).collect()
    shown = "; ".join(
        f"{schema.name}({', '.join(repr(r[n]) for n in names)}): deleting {-r[COUNT]} "
        f"of {r[_OLD]} cop{'y' if r[_OLD] == 1 else 'ies'}"
        for r in bad
    )
    raise InputError(f"the changes delete facts that are not there (nothing was applied): {shown}")


def apply_change(old: DataFrame, change: Optional[DataFrame], columns) -> DataFrame:
    """The state after ``change``: counts added per fact, facts with a positive count kept."""
    if change is None:
        return old
    return net(old.unionByName(change), columns).where(F.col(COUNT) > 0)


def diff(old: DataFrame, new: DataFrame, columns) -> DataFrame:
    """The change turning state ``old`` into state ``new`` (counts subtracted per fact)."""
    return net(new.unionByName(old.withColumn(COUNT, -F.col(COUNT))), columns)


def signed_presence(inserted: DataFrame, deleted: DataFrame) -> DataFrame:
    """A change of +1 per inserted and -1 per deleted fact (how set-valued relations store)."""
    return inserted.withColumn(COUNT, F.lit(1).cast("long")).unionByName(
        deleted.withColumn(COUNT, F.lit(-1).cast("long"))
    )
