"""Errors raised from inside a lazy plan: integer overflow, and what the kernel refuses.

Polars has no expression that raises. :func:`passes` builds a Boolean expression that is true on
every row, computed by a vectorised check over whole columns (never row by row): when some row
is flagged it raises the error that :class:`Check` makes from that row's values. A node filters
on it, which keeps the check in the plan (Polars drops unused columns) and runs it on every row
the node computes. The error leaves ``collect`` as the very exception raised here.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Callable, Sequence

import polars as pl


@dataclass(frozen=True)
class Check:
    """``flag``: true on a row in error; ``values``: expressions whose values on the first
    flagged row ``error`` receives (in order) to build the exception it raises."""

    flag: pl.Expr
    values: tuple
    error: Callable[..., Exception]


def passes(checks: Sequence[Check]) -> pl.Expr:
    """A Boolean expression, true on every row, that raises the first check's error on the
    first row it flags.

    >>> frame = pl.LazyFrame({"x": [1, 2]})
    >>> check = Check(pl.col("x") > 5, (pl.col("x"),), lambda x: ValueError(x))
    >>> frame.filter(passes([check])).collect().height
    2
    """
    fields = []
    for i, check in enumerate(checks):
        fields.append(check.flag.fill_null(False).alias(f"f{i}"))
        fields += [value.alias(f"v{i}_{j}") for j, value in enumerate(check.values)]
    errors = [(check.error, len(check.values)) for check in checks]
    return pl.struct(fields).map_batches(
        lambda batch: _verify(batch, errors), return_dtype=pl.Boolean, is_elementwise=True
    )


def _verify(batch: pl.Series, errors: list) -> pl.Series:
    columns = batch.struct.unnest()
    for i, (error, count) in enumerate(errors):
        flags = columns[f"f{i}"]
        if flags.any():
            row = columns.filter(flags).row(0, named=True)
            found = error(*[row[f"v{i}_{j}"] for j in range(count)])
            token = next(_TOKENS)
            _RAISED[token] = found
            raise CheckFailed(f"[kernel check {token}] {found}")
    return pl.repeat(True, len(batch), dtype=pl.Boolean, eager=True).alias(batch.name)


class CheckFailed(Exception):
    """The carrier of an error raised inside a plan (see :func:`collect_all`)."""


_TOKENS = itertools.count()
_RAISED: dict = {}  # token -> the error a check raised, until collect_all raises it
_TOKEN = re.compile(r"\[kernel check (\d+)\]")


def collect_all(frames: Sequence[pl.LazyFrame]) -> list:
    """``pl.collect_all(frames)``, raising the error a check raised inside them.

    >>> collect_all([pl.LazyFrame({"x": [1]})])[0].height
    1
    """
    try:
        return pl.collect_all(list(frames))
    except Exception as error:
        found = _TOKEN.search(str(error))
        raised = _RAISED.pop(int(found.group(1)), None) if found else None
        if raised is None:
            raise
        raise raised from None
