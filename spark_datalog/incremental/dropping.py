"""Which facts of a levelled stratum lose their support (``incremental.levels``), on the kernel.

:func:`dropped` decides the candidates (facts that lost a derivation) in increasing order of
level, one level at a time, each as Polars joins: a candidate keeps its level if some
derivation over the new lower relations reads a fact of the stratum with a smaller level that
was not dropped (the ``#witness`` plans of :class:`LevelPlans`: the rule with its head read
from the candidates), or if it is stated; otherwise it is dropped, and the facts it derives with
a greater level (the ``#successors`` plans: the semi-naive variant with the head's level looked
up) become candidates. Deciding a whole level at once is what deciding its facts one by one
did: a fact's support has a smaller level, all decided before, and a fact is only ever pended
at its own stored level, larger than the dropped fact's, so no level is pended again after it
is decided. Python loops here run over levels and rules, never over facts.
"""

from __future__ import annotations

from typing import Mapping, Optional

import polars as pl

from ..kernel.compile import compile_node
from ..kernel.fixpoint import conformed
from ..kernel.frames import facts_table, to_frame
from ..kernel.types import UNIT
from ..plan.maintenance import CANDIDATES, LEVELS, level_plans
from ..plan.maintenance import LEVEL


class LevelPlans:
    """The IR plans of ``dropped`` for one stratum: per rule, its ``#witness`` plan
    (candidates of its head -> the facts of the stratum with a smaller level that its
    derivations read, after the candidate; for an exit rule, the candidates it derives), and
    per recursive rule its ``#successors`` plan (dropped facts -> the facts they derive that
    have a greater level, and that level)."""

    def __init__(self, checked, stratum_plan):
        own = frozenset(stratum_plan.relations)
        self.own, self.checked = own, checked
        self.schemas = {name: checked.relations[name] for name in own}
        # (head, body or None, plan), (head, plan): made by the translator (plan.maintenance)
        self.witnesses, self.successors = level_plans(checked, stratum_plan)

    def names(self, name: str) -> list:
        """The columns of relation ``name``'s facts."""
        return list(self.schemas[name].column_names)

    def keys(self, name: str) -> list:
        """The columns that hold ``name``'s facts in a kernel frame (``UNIT`` when none)."""
        return self.names(name) or [UNIT]

    def stated(self, name: str) -> pl.DataFrame:
        """The facts of ``name`` stated in the program."""
        schema = self.schemas[name]
        table = facts_table(schema.column_names, schema.types, self.checked.facts.get(name, ()))
        return to_frame(table, schema.types)

    def supported(self, frames: Mapping, batch: Mapping, lost: Optional[Mapping] = None) -> dict:
        """Relation -> the facts of ``batch`` (relation -> facts with their ``LEVEL``, also in
        ``frames`` as the candidates) that a witness derives from facts of smaller level (read
        from ``frames``: the levels and the lower relations) not ``lost`` (relation -> facts),
        or that the program states."""
        found: dict = {name: [] for name in self.own}
        for head, body, plan in self.witnesses:
            if not batch[head].height:
                continue
            width = len(self.names(head))
            names, types = self.names(head), list(self.schemas[head].types)
            if body is not None:
                names += [f"__body{i}" for i in range(len(self.names(body)))]
                types += list(self.schemas[body].types)
            rows = conformed(compile_node(plan, frames).frame, names, types)
            if body is not None and lost is not None and lost[body].height:
                rows = _not_lost(rows, lost[body], self.names(body), names[width:])
            found[head].append(_facts(rows, names[:width]))
        result = {}
        for name in self.own:
            facts = batch[name].lazy().select(self.keys(name))
            stated = facts.join(self.stated(name).lazy(), on=self.keys(name), how="semi")
            result[name] = pl.concat([stated, *found[name]], how="vertical").unique()
        return dict(zip(result, pl.collect_all(list(result.values())), strict=True))


def _not_lost(rows: pl.LazyFrame, lost: pl.DataFrame, names: list, columns: list) -> pl.LazyFrame:
    """The ``rows`` whose fact of the stratum (its ``names`` in ``columns``) is not ``lost``."""
    if not names:  # the fact without columns is lost
        return rows.clear()
    return rows.join(lost.lazy().rename(dict(zip(names, columns, strict=True))), on=columns, how="anti")


def _facts(rows: pl.LazyFrame, names: list) -> pl.LazyFrame:
    """The columns ``names`` of ``rows`` (``UNIT`` when none)."""
    return rows.select(names) if names else rows.with_columns(pl.lit(True).alias(UNIT)).select(UNIT)


def dropped(
    plans: LevelPlans,
    checked,
    seeds: Mapping,
    levels: Mapping,
    lower: Mapping,
    removed: Optional[Mapping] = None,
) -> dict:
    """Relation -> its facts that lose their support (a frame; see the module docstring).
    ``seeds``: relation -> facts that lost a derivation; ``levels``: relation -> its old facts
    with their ``LEVEL``; ``lower``: relation -> its new facts; ``removed``: relation -> old
    facts that no longer hold whatever their support (old rows of min/max groups that
    improved): they are dropped, and the facts they derive are candidates. All Polars frames
    with the relations' column names."""
    run = _Dropping(plans, levels, lower)
    for name, facts in seeds.items():
        if facts.height:
            run.push(name, run.levelled(name, facts))
    if removed and any(frame.height for frame in removed.values()):
        run.drop({name: run.levelled(name, facts) for name, facts in removed.items() if facts.height})
    while (level := run.lowest()) is not None:
        run.decide(level)
    return {name: pl.concat(frames, how="vertical").unique() for name, frames in run.lost.items()}


class _Dropping:
    """The state of one ``dropped``: facts pending (with their levels), decided, lost."""

    def __init__(self, plans: LevelPlans, levels: Mapping, lower: Mapping):
        self.plans, self.levels = plans, levels
        self.frames = {(name, "full"): frame for name, frame in lower.items()}
        self.frames.update({(LEVELS + name, "full"): frame for name, frame in levels.items()})
        self.pending: dict = {name: [] for name in plans.own}  # frames of facts with levels
        self.decided: dict = {name: [self._empty(name)] for name in plans.own}
        self.lost: dict = {name: [self._empty(name).drop(LEVEL)] for name in plans.own}

    def _empty(self, name: str) -> pl.DataFrame:
        return self.levels[name].clear()

    def levelled(self, name: str, facts: pl.DataFrame) -> pl.DataFrame:
        """The stored rows (facts and their level) of ``facts``."""
        return self.levels[name].join(facts, on=self.plans.keys(name), how="semi")

    def push(self, name: str, rows) -> None:
        """Pends ``rows`` (facts with their level; a lazy frame is collected)."""
        rows = rows.collect() if isinstance(rows, pl.LazyFrame) else rows
        if rows.height:
            self.pending[name].append(rows)

    def lowest(self) -> Optional[int]:
        """The smallest level pending (None when nothing is)."""
        for name, frames in self.pending.items():
            self.pending[name] = [pl.concat(frames, how="vertical").unique()] if frames else []
        levels = [frames[0][LEVEL].min() for frames in self.pending.values() if frames and frames[0].height]
        return min(levels) if levels else None  # type: ignore[type-var]

    def drop(self, rows: Mapping) -> None:
        """Drops ``rows`` (relation -> facts with their levels) and pends what they derive."""
        for name, frame in rows.items():
            self.decided[name].append(frame)
            self.lost[name].append(frame.drop(LEVEL))
        self._pend_successors(rows)

    def decide(self, level: int) -> None:
        """Decides the facts pending at ``level``: those without a derivation from a smaller
        level (nor stated) are lost, and the facts they derive are pended."""
        batch = {}
        for name, frames in self.pending.items():
            rows = frames[0] if frames else self._empty(name)
            decided = pl.concat(self.decided[name], how="vertical")
            batch[name] = rows.filter(pl.col(LEVEL) == level).join(
                decided, on=self.plans.keys(name), how="anti"
            )
            self.pending[name] = [rows.filter(pl.col(LEVEL) != level)]
            self.decided[name].append(batch[name])
        frames = {**self.frames, **{(CANDIDATES + name, "delta"): rows for name, rows in batch.items()}}
        lost = {name: pl.concat(parts, how="vertical") for name, parts in self.lost.items()}
        supported = self.plans.supported(frames, batch, lost)
        gone = {
            name: rows.join(supported[name], on=self.plans.keys(name), how="anti")
            for name, rows in batch.items()
        }
        if any(rows.height for rows in gone.values()):
            for name, rows in gone.items():
                self.lost[name].append(rows.drop(LEVEL))
            self._pend_successors(gone)

    def _pend_successors(self, rows: Mapping) -> None:
        frames = dict(self.frames)
        for name in self.plans.own:
            frames[(CANDIDATES + name, "delta")] = rows.get(name, self._empty(name))
        for head, plan in self.plans.successors:
            names = self.plans.names(head) + [LEVEL]
            types = list(self.plans.schemas[head].types) + ["long"]
            found = conformed(compile_node(plan, frames).frame, names, types)
            if names == [LEVEL]:  # a relation without columns: its facts hold ``UNIT``
                found = found.with_columns(pl.lit(True).alias(UNIT)).select(UNIT, LEVEL)
            self.push(head, found)
