"""Progress of an evaluation, reported through logging as the work goes.

The engine reports its steps here and nowhere else: each stratum when it starts and when it is
done (its method, rounds, facts and seconds), each round of a recursive stratum, each stratum
an update maintains, and the steps of a job (inputs, commit, queries). Records go to the
``spark_datalog.progress`` logger: stratum and step lines at INFO, round lines at DEBUG.
A library caller gets them only by configuring logging; the command line and the job show them
on stderr (``logsetup``: ``--quiet``, ``--verbose``, ``--log-level``).

Example::

    import logging
    logging.basicConfig(level=logging.INFO)   # stratum lines; DEBUG adds the rounds
    program.materialize(spark, inputs={"arc": arcs})
"""

from __future__ import annotations

import logging
from typing import Optional

LOGGER = "spark_datalog.progress"
log = logging.getLogger(LOGGER)


def seconds(value: float) -> str:
    """Seconds as a person reads them: ``2.83s``, ``41ms``, ``0.02ms``.

    Example::

        >>> seconds(0.0412), seconds(2.834), seconds(0.00002)
        ('41ms', '2.83s', '0.02ms')
    """
    if value >= 1:
        return f"{value:.2f}s"
    if value >= 0.001:
        return f"{value * 1000:.0f}ms"
    return f"{value * 1000:.2f}ms"


def _stratum(index: int, relations) -> str:
    return f"stratum {index} · {', '.join(relations)}"


def step(text: str, *args) -> None:
    """A step of a job or command: ``step("reading %d inputs", 2)``."""
    log.info(text, *args)


def stratum_started(plan, strategy: str) -> None:
    """A stratum (a ``StratumPlan``) starts being evaluated."""
    kind = f"recursive, {strategy}" if plan.recursive else "non-recursive"
    log.info("%s · started (%s)", _stratum(plan.index, plan.relations), kind)


def round_finished(index: int, relations, stats, where: str = "") -> None:
    """One round (``eval.stats.IterationStats``) of stratum ``index`` is done; ``where``
    qualifies its seconds (``in tasks``)."""
    from .eval.stats import per_relation

    log.debug(
        "%s · iteration %d: %d new rows%s in %s%s",
        _stratum(index, relations),
        stats.iteration,
        stats.total,
        per_relation(stats.new_rows),
        seconds(stats.seconds),
        f" {where}" if where else "",
    )


def stratum_finished(stats) -> None:
    """A stratum is done: ``stats`` is its ``eval.stats.StratumStats``."""
    log.info("%s · done: %s", _stratum(stats.index, stats.relations), stats.outcome())


def stratum_maintained(report, changes: Optional[dict] = None) -> None:
    """An update maintained a stratum: ``report`` is its ``incremental.update.StratumReport``,
    ``changes`` relation -> (facts inserted, facts deleted)."""
    counts = ", ".join(f"{name} +{ins} -{dels}" for name, (ins, dels) in (changes or {}).items())
    placement = report.placement
    log.info(
        "%s · %s in %s%s%s",
        _stratum(report.index, report.relations),
        report.method,
        seconds(report.seconds),
        f": {counts}" if counts else "",
        f"; {placement.explained()}" if placement is not None else "",
    )
