"""Where and how each stratum runs: decided here, in one place, each choice with its reason.

A stratum's :class:`Placement` names the method (``evaluate`` when materializing; ``counting``,
``groups``, ``dred``, ``recompute`` or ``unchanged`` when maintaining), where it runs and why.

The runners (``eval.driver``, ``incremental.update``) ask :func:`place_evaluation` or
:func:`place_update`, try the placement, and when it does not fit at run time (a relation to
broadcast is too large, a task outgrows its memory budget, the executors cannot import the
kernel, DRed over-deletes so much that recomputing costs less) they get a :class:`Declined`
with the reason and ask again with the placements declined so far: the answer is the next
choice. The final placement, with what was declined on the way, is what the stratum's stats,
the job summary and the update report print, and what the log says when it is chosen.

Evaluation of a recursive stratum, in order of preference:

- ``partition-local``: the stratum decomposes (``plan.partitioning.decomposition`` has a key):
  its facts are hash-partitioned on the key and every partition runs its own fixpoint on the
  kernel (``eval.partitioned``);
- ``bsp``: no key, and ``spark.datalog.bspMinRows`` is set: rounds across all partitions, only
  new facts shuffled (``eval.bsp``);
- ``one task``: no key: the whole fixpoint in one Spark task on the kernel;
- ``rounds``: rounds of Spark joins (``eval.driver``): ``strategy="naive"``,
  ``decompose=False``, a stratum numbering its bindings (``autoinc()``, which needs them all),
  a stratum with a greedy ``choice-domain`` (recursive or not: each round's candidates are
  filtered together, ``eval.choice``), a stratum applying a subsumption in each round (its
  dominated facts removed, ``eval.subsumption``), or when the others were declined.

A recursive stratum with a ``.limitsize`` relation (the least new facts of the round reaching
the limit, then it stops: ``limits``) runs its rounds in one task, else in rounds of Spark
joins, started afresh: never in partitions or BSP, whose rounds are not the stratum's.

Maintenance (``incremental.update``): ``unchanged`` when nothing it reads changed its facts;
``counting`` for a non-recursive stratum without aggregates (in the driver when the changes it
reads are held there); ``groups`` for aggregates; ``dred`` for a recursive one (linear: in the
driver; else in one task; else in rounds of Spark joins); ``recompute`` when asked for, for a
stratum numbering its bindings (``autoinc()``: a change shifts the numbers of other facts)
or making a greedy choice (a change of one candidate changes which others are chosen) or
applying a subsumption in each round (what stays depends on the order facts were found in)
or limiting a relation (``.limitsize``: which facts the limit keeps depends on all of them),
when removals reach min/max relations that cannot be repaired, or when DRed was declined with
``recompute=True``. With ``spark.datalog.driverMemory=0`` (``UpdateCase.driver`` false) the
driver is declined without being tried, the reason naming the setting: the next choice runs.

A stratum calling a functor bound to a Spark SQL function (``spark_function``) runs only in
Spark plans: in rounds of Spark joins when recursive, never on the kernel (in a task or the
driver).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Optional

from .settings import DRIVER_MEMORY_SETTING

log = logging.getLogger("spark_datalog")

# where a stratum runs -> how the reports say it
WHERE = {
    "plan": "Spark plans",
    "partition-local": "partition-local",
    "bsp": "BSP rounds across partitions",
    "one task": "partition-local (one task)",
    "rounds": "rounds of Spark joins",
    "driver": "in the driver",
    "evaluation": "by evaluating it again",
    "nowhere": "nothing to do",
}


@dataclass(frozen=True)
class Declined:
    """A placement that did not fit at run time, and why; ``recompute``: recomputing the
    stratum costs less than what was tried (maintenance); ``warn``: logged as a warning (the
    user may want to raise a setting); ``derived``: relation -> the facts it derived before it
    stopped (a backend's frames), which the next placement continues from, and ``leaf`` what
    holds them (released once the stratum is done)."""

    reason: str
    recompute: bool = False
    warn: bool = False
    derived: Optional[dict] = field(default=None, compare=False)
    leaf: object = field(default=None, compare=False)


@dataclass(frozen=True)
class Placement:
    """How one stratum runs: ``method``, ``where`` (a key of ``WHERE``) and ``reason``;
    ``declined``: the ``(Placement, Declined)`` pairs declined before it (tried, or ruled out
    by a setting: the driver when ``spark.datalog.driverMemory`` is 0).

    >>> str(Placement("evaluate", "rounds", "decompose=False"))
    'evaluate, rounds of Spark joins: decompose=False'
    """

    method: str
    where: str
    reason: str
    declined: tuple = field(default=())

    def __str__(self) -> str:
        return f"{self.method}, {self.explained()}"

    def explained(self) -> str:
        """Where it runs and why, and what was declined before: ``rounds of Spark joins:
        what runs in tasks did not fit (not partition-local: ...)``."""
        text = f"{WHERE[self.where]}: {self.reason}"
        for placement, refusal in self.declined:
            text += f" (not {WHERE[placement.where]}: {refusal.reason})"
        return text

    def refused(self, refusal: Declined) -> tuple:
        """The history to ask again with once this placement was refused (logged)."""
        level = logging.WARNING if refusal.warn else logging.INFO
        log.log(level, "%s declined: %s", WHERE[self.where], refusal.reason)
        return (*self.declined, (self, refusal))


def place_evaluation(
    plan, split, strategy: str, decompose: bool, bsp: bool, history: tuple = ()
) -> Placement:
    """Where the stratum ``plan`` is evaluated: ``split`` is its decomposition (None when not
    recursive), ``bsp`` whether ``spark.datalog.bspMinRows`` is set, ``history`` the
    placements refused so far (``Placement.refused``).

    >>> from types import SimpleNamespace as S
    >>> place_evaluation(S(recursive=False), None, "seminaive", True, False).where
    'plan'
    """
    if _round_filter_reason(plan):
        return Placement("evaluate", "rounds", _round_filter_reason(plan), history)
    if not plan.recursive:
        return Placement("evaluate", "plan", "not recursive, one round", history)
    spark_only = _spark_sql_reason(plan)
    if spark_only:
        return Placement("evaluate", "rounds", spark_only, history)
    if strategy != "seminaive":
        return Placement("evaluate", "rounds", f"strategy={strategy!r}", history)
    if getattr(plan, "numbered", False):
        return Placement("evaluate", "rounds", _NUMBERED, history)
    if not decompose:
        return Placement("evaluate", "rounds", "decompose=False", history)
    tried = _tried(history)
    if getattr(plan, "limits", None):  # no decomposition key (``plan.partitioning``)
        if "one task" not in tried:
            return Placement("evaluate", "one task", f"{LIMITED}: its rounds in one task", history)
        return Placement("evaluate", "rounds", f"{LIMITED}: what runs in a task did not fit", history)
    if split.key and "partition-local" not in tried:
        return Placement("evaluate", "partition-local", _key_reason(plan, split), history)
    if not split.key and bsp and "bsp" not in tried:
        reason = f"{_no_key_reason(plan)}; spark.datalog.bspMinRows is set"
        return Placement("evaluate", "bsp", reason, history)
    if not split.key and "one task" not in tried:
        return Placement("evaluate", "one task", f"{_no_key_reason(plan)}: one fixpoint in one task", history)
    return Placement("evaluate", "rounds", "what runs in tasks did not fit", history)


@dataclass(frozen=True)
class UpdateCase:
    """What ``place_update`` needs to know of a stratum's update: the method asked for
    (``incremental.update.METHODS``); whether a relation it reads ``changed``, and whether
    facts appeared or disappeared there (``moved``; else only multiplicities changed);
    ``regroup``: removals reach min/max relations, which DRed does not maintain (``repairs``:
    the driver can repair their groups); ``held``: the changes it reads are held in the
    driver; ``decompose``; whether it is ``linear``; and whether the ``driver`` may maintain
    strata at all (``spark.datalog.driverMemory`` is not 0)."""

    method: str
    changed: bool
    moved: bool
    decompose: bool = True
    linear: bool = False
    regroup: bool = False
    repairs: bool = False
    held: bool = False
    driver: bool = True


# why a stratum numbering its rules' bindings (``autoinc()``) runs as a whole
_NUMBERED = "autoinc() numbers all of a rule's bindings at once"

# why a stratum with a greedy ``choice-domain`` runs in rounds and is recomputed
_CHOICE = "choice-domain chooses greedily among each round's candidates"

# why a stratum applying a subsumption in each round runs in rounds and is recomputed
_SUBSUMED = "subsumption removes the dominated facts of each round"

# why a stratum with a ``.limitsize`` relation runs in rounds and is recomputed
LIMITED = "limitsize keeps the least new facts of the round that reaches the limit"

# the driver, ruled out by the setting (``UpdateCase.driver``)
NO_DRIVER = Declined(f"{DRIVER_MEMORY_SETTING} is 0")


def place_update(plan, case: UpdateCase, history: tuple = ()) -> Placement:
    """How the stratum ``plan`` is maintained (see the module docstring); ``history`` as for
    ``place_evaluation``.

    >>> from types import SimpleNamespace as S
    >>> place_update(S(recursive=True, aggregates={}), UpdateCase("auto", True, True, linear=True)).where
    'driver'
    """
    if case.method == "recompute":
        return Placement("recompute", "evaluation", "method='recompute'", history)
    if any(refusal.recompute for _, refusal in history):
        return Placement("recompute", "evaluation", "recomputing costs less", history)
    if not case.changed:
        return Placement("unchanged", "nowhere", "nothing it reads changed", history)
    if _whole_reason(plan):
        return Placement("recompute", "evaluation", _whole_reason(plan), history)
    if not plan.recursive:
        return _placed_non_recursive(plan, case, history)
    return _placed_recursive(plan, case, history)


def _placed_recursive(plan, case: UpdateCase, history: tuple) -> Placement:
    if not case.moved:
        return Placement("unchanged", "nowhere", "only multiplicities changed below: the same sets", history)
    if case.regroup and not (case.repairs and case.decompose):
        reason = "removals reach min/max relations it cannot repair"
        return Placement("recompute", "evaluation", reason, history)
    tried, spark_only = _tried(history), _spark_sql_reason(plan)
    if case.decompose and case.linear and "driver" not in tried and not spark_only:
        driver = Placement("dred", "driver", "linear: DRed from the stored facts, in memory", history)
        if case.driver:
            return driver
        history = (*history, (driver, NO_DRIVER))
    if case.regroup:
        return Placement("recompute", "evaluation", "removals reach min/max relations", history)
    if spark_only:
        return Placement("dred", "rounds", spark_only, history)
    if case.decompose and "one task" not in tried:
        return Placement("dred", "one task", "DRed on the kernel, if its inputs fit a task", history)
    why = "what runs in memory did not fit" if case.decompose else "decompose=False"
    return Placement("dred", "rounds", why, history)


def _placed_non_recursive(plan, case: UpdateCase, history: tuple) -> Placement:
    if plan.aggregates:
        if not case.moved and set(plan.relations) <= set(plan.aggregates):
            reason = "only multiplicities changed below, and aggregates range over sets"
            return Placement("unchanged", "nowhere", reason, history)
        return Placement("groups", "plan", "aggregates: the touched groups evaluated again", history)
    spark_only = _spark_sql_reason(plan)
    if spark_only:
        return Placement("counting", "plan", spark_only, history)
    if case.held and case.decompose and "driver" not in _tried(history):
        driver = Placement("counting", "driver", "the changes it reads are held in the driver", history)
        if case.driver:
            return driver
        history = (*history, (driver, NO_DRIVER))
    return Placement("counting", "plan", "not recursive: derivation counts", history)


def _whole_reason(plan) -> str:
    """Why an update recomputes the stratum ``plan`` as a whole ("" when it need not)."""
    if getattr(plan, "numbered", False):
        return _NUMBERED
    if getattr(plan, "limits", None):
        return LIMITED
    return _round_filter_reason(plan)


def _round_filter_reason(plan) -> str:
    """Why the stratum ``plan`` filters each round's candidates together ("" when it does not):
    a greedy ``choice-domain``, or a subsumption in recursion."""
    if getattr(plan, "choices", None):
        return _CHOICE
    return _SUBSUMED if getattr(plan, "subsumed", None) else ""


def _spark_sql_reason(plan) -> str:
    """Why the stratum ``plan`` runs only in Spark plans ("" when it need not): a functor it
    calls is bound to a Spark SQL function, which the kernel cannot run."""
    bound = getattr(plan, "spark_sql_functors", None)
    if not bound:
        return ""
    name, function = sorted(bound.items())[0]
    return f"{name} is the Spark SQL function {function!r}, which runs only in Spark plans"


def logged(plan, placement: Placement) -> Placement:
    """``placement``, logged as the choice for the stratum ``plan``."""
    log.info("stratum %d · %s · %s", plan.index, ", ".join(plan.relations), placement)
    return placement


def _tried(history: tuple) -> set:
    return {placement.where for placement, _ in history}


def _key_reason(plan, split) -> str:
    columns = ", ".join(str(position + 1) for position in split.key)
    return f"no rule changes column {columns} of {plan.relations[0]}: a fixpoint per partition"


def _no_key_reason(plan) -> str:
    from .plan.partitioning import is_linear

    if len(plan.relations) > 1:
        return "no decomposition key (mutual recursion)"
    if not is_linear(plan):
        return "no decomposition key (non-linear rules)"
    return "no decomposition key (no column stays in every rule)"
