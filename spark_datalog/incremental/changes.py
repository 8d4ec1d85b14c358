"""Change sets: signed-count frames per fact, and the counted states they turn old into new.

A *counted* frame has a relation's columns plus ``_count``. A *change* (or delta) is a counted
frame with one row per fact and a non-zero signed count: +n adds n copies (or derivations),
-n removes them. A *state* is a counted frame of the present facts (count > 0).
"""

from __future__ import annotations

from typing import Optional

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..errors import InputError
from ..spark.counted import COUNT
from ..spark.inputs import conform_input
from ..spark.types import spark_type

ON_MISSING_DELETE = ("error", "ignore")
_OLD = "_count_old"


def conform_changes(schema, frame: DataFrame) -> DataFrame:
    """A user's change set as a change of ``schema``'s relation, summed per fact.

    ``frame`` holds the relation's columns (positionally) and optionally ``_count``; without it
    every row inserts one copy. Nulls are refused (``InputError``).
    """
    columns = [c for c in frame.columns if c != COUNT]
    conform_input(schema, frame.select(*[F.col(f"`{c}`") for c in columns]))  # arity and types
    weight = F.col(COUNT).cast("long") if COUNT in frame.columns else F.lit(1).cast("long")
    signed = frame.select(*[F.col(f"`{c}`").cast(spark_type(column.type)).alias(column.name)
                            for c, column in zip(columns, schema.columns)], weight.alias(COUNT))
    nulls = signed.where(" OR ".join(f"`{c}` IS NULL" for c in signed.columns)).limit(1).collect()
    if nulls:
        raise InputError(f"the change set of {schema.name} holds nulls ({nulls[0]}), which "
                         "Datalog cannot represent")
    return net(signed, schema.column_names)


def net(frame: DataFrame, columns) -> DataFrame:
    """Sum the signed counts per fact; drop facts whose sum is 0."""
    columns = list(columns)
    return (frame.groupBy(*columns).agg(F.sum(COUNT).cast("long").alias(COUNT))
            .where(F.col(COUNT) != 0))


def check_deletes(schema, old: DataFrame, change: DataFrame, on_missing_delete: str = "error",
                  limit: int = 5) -> DataFrame:
    """The change to apply to ``old`` (a state): deleting an absent fact or more copies than it
    has raises ``InputError`` naming the facts (``"error"``), or is cut to what exists
    (``"ignore"``)."""
    if on_missing_delete not in ON_MISSING_DELETE:
        raise ValueError(f"on_missing_delete must be one of {ON_MISSING_DELETE}, not "
                         f"{on_missing_delete!r}")
    names = list(schema.column_names)
    deletes = change.where(F.col(COUNT) < 0)
    joined = deletes.join(old.withColumnRenamed(COUNT, _OLD), names, "left")
    have = F.coalesce(F.col(_OLD), F.lit(0))
    if on_missing_delete == "error":
        bad = joined.where(have + F.col(COUNT) < 0).limit(limit).collect()
        if bad:
            shown = "; ".join(
                f"{schema.name}({', '.join(repr(r[n]) for n in names)}): deleting {-r[COUNT]} "
                f"of {r[_OLD] or 0} cop{'y' if (r[_OLD] or 0) == 1 else 'ies'}" for r in bad)
            raise InputError(f"the changes delete facts that are not there (nothing was "
                             f"applied): {shown}")
        return change
    capped = joined.select(*names, F.greatest(F.col(COUNT), -have).alias(COUNT))
    return change.where(F.col(COUNT) > 0).unionByName(capped).where(F.col(COUNT) != 0)


def apply_change(old: DataFrame, change: Optional[DataFrame], columns) -> DataFrame:
    """The state after ``change``: counts added per fact, facts with a positive count kept."""
    if change is None:
        return old
    return net(old.unionByName(change), columns).where(F.col(COUNT) > 0)


def diff(old: DataFrame, new: DataFrame, columns) -> DataFrame:
    """The change turning state ``old`` into state ``new`` (counts subtracted per fact)."""
    return net(new.unionByName(old.withColumn(COUNT, -F.col(COUNT))), columns)


def presence_changes(old: DataFrame, change: DataFrame, columns) -> tuple:
    """(inserted, deleted): facts of the relation's columns that become present / absent."""
    names = list(columns)
    joined = change.join(old.withColumnRenamed(COUNT, _OLD), names, "left")
    before = F.coalesce(F.col(_OLD), F.lit(0))
    after = before + F.col(COUNT)
    inserted = joined.where((before <= 0) & (after > 0)).select(*names)
    deleted = joined.where((before > 0) & (after <= 0)).select(*names)
    return inserted, deleted


def signed_presence(inserted: DataFrame, deleted: DataFrame) -> DataFrame:
    """A change of +1 per inserted and -1 per deleted fact (how set-valued relations store)."""
    return (inserted.withColumn(COUNT, F.lit(1).cast("long"))
            .unionByName(deleted.withColumn(COUNT, F.lit(-1).cast("long"))))
