"""``update``: fold the changes of the EDB relations into a materialized warehouse, in one run.

The strata are maintained in order; each stratum sees the net changes of every relation below
it (EDB changes, then the changes the lower strata produced), so a deletion below can insert
above through negation. Per stratum the method, and where it runs, is what
``placement.place_update`` decides (asked again, with the reason, when a placement is declined
at run time; the report keeps the final ``Placement``):

- ``unchanged``: nothing it reads changed (no work, no new version), or only multiplicities
  changed below a stratum that reads sets (recursive or aggregate);
- ``counting`` (``.counting``): non-recursive strata without aggregates (negated atoms with
  ``_`` included); in the driver (``.counting_local``: no Spark job) when the changes it reads
  were computed there and the relations it reads and writes are readable from storage within
  what ``spark.datalog.driverMemory`` allows (and no changed relation occurs negated);
- ``groups`` (``.aggregates``): non-recursive strata of an aggregate relation (count, sum, avg,
  min, max): only the groups touched by the changes are evaluated again, from the new state,
  and their rows replace the old ones (any non-aggregate relation of such a stratum would be
  maintained by counting);
- ``dred`` (``.dred``): recursive strata (set relations, also under changed negated relations;
  min/max relations on insertions). A linear stratum runs the three phases in the driver, in
  memory, from its stored facts and those of the relations it reads, read once and kept as
  pyarrow Tables probed by key (``.dred_linear``: work proportional to the change after that
  read, no Spark job); another whose inputs fit one task runs them there (``.dred_local``: one
  Spark job instead of one or two per round); a larger one, or ``decompose=False``, runs them
  as rounds of Spark joins (``spark.datalog.driverMemory=0`` keeps every stratum out of the
  driver). A linear stratum of min/max relations with integer or string values
  also takes removals in the driver: the *affected groups* (those whose stored best has a
  derivation through a removed fact or another affected group) are evaluated again from the
  new state and the other groups; the cost is proportional to the affected groups and their
  neighbours (``dred_linear._affected``);
- ``recompute``: the stratum evaluated afresh from the new state of what it reads, and diffed
  against its old state. Used for every stratum with ``method="recompute"`` (the baseline), and
  as the fallback of the others: a removal (a deletion below, or an insertion under a negation)
  reaching a min/max recursion the driver cannot repair (not linear, double values, too large,
  or ``decompose=False``); and, with ``method="auto"``, a linear stratum whose DRed
  over-deletes more than ``spark.datalog.overDeletionMin`` facts plus
  ``spark.datalog.overDeletionShare`` of it (recomputing then costs less, as measured; logged).
  Its cost is the stratum's full evaluation plus a diff with its stored state.

``method="counting"`` and ``"dred"`` pick that algorithm where it applies and otherwise the same
as ``"auto"``: counts must stay derivation counts in non-recursive strata, and counting does not
terminate on recursive ones. The report says which method each stratum used, where and why.

Every change is stored once, together with how it moves the relation's facts (its presence
changes) and, for EDB changes, whether it deletes absent facts — one Spark job per stratum
(``changes.store_assessed``). The presence of a set-valued relation's change (recursive strata
and aggregate relations, which store count 1 per fact) is the sign of its rows; other changes
are joined with the relation's old state. Shortcuts keep small updates at one job: an EDB
change of at most ``spark.datalog.driverRows`` rows is assessed in the driver against its table
read by delta-rs (``changes.assess_in_driver``: one job, collecting the change; the table within
what ``spark.datalog.driverMemory`` allows), and the
changes computed in the driver (by that, a linear DRed or counting in the driver) stay there
as pyarrow Tables (``local``): strata above read them without a job, and the warehouse
commits them without Spark. The Spark frames of the old states and of such changes are made
only when a Spark plan reads them.

All changed tables are committed with ``Warehouse.apply_changes`` inside one warehouse run
(``mode="incremental"``); the changes are computed from the tables' versions at the run's
first start (``RunInfo.base_versions``), so a failed run re-run with the same run id computes
the same changes and the warehouse's application transactions skip the tables already done.
Every change has one row per fact (``netted``), and a set-valued relation's change that only
adds facts is appended without reading the table (``new_facts_only``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Mapping, Optional

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from .. import progress
from ..bounds import MAX_ITERATIONS
from ..errors import InputError, WarehouseError
from ..eval.former_names import refuse_former_names
from ..placement import Declined, Placement, UpdateCase, logged, place_update
from ..spark.counted import COUNT, count_derivations
from ..spark.inputs import facts_frame, input_frame, require_mapping
from ..spark.labels import describe, group_id, labelled
from ..spark.limits import check_spark_limits
from ..settings import DRIVER_MEMORY_SETTING, KERNEL_VALUE_BYTES, settings_of
from ..storage.datafiles import collect_small, is_arrow
from ..syntax import ast
from .aggregates import aggregate_changes
from .changes import (
    ON_MISSING_DELETE,
    PRESENCE,
    apply_change,
    assess,
    assess_in_driver,
    assessed_presence,
    check_assessed,
    conform_changes,
    counted_change,
    diff,
    presence_rows,
    refuse_program_fact_deletions,
    signed,
    signed_presence,
    store_assessed,
)
from .counting import counting_changes, negation_change
from .counting_local import local_counting_changes
from .dred import dred_applies, dred_changes
from .dred_linear import RecomputeInstead, linear_dred_applies, linear_dred_changes, repairs_groups
from .dred_local import local_dred_changes
from .levels import computed_levels, keep_levels, levels_apply, stored_levels

METHODS = ("auto", "dred", "counting", "recompute")

log = logging.getLogger("spark_datalog")


@dataclass
class RelationReport:
    """What one update did to one relation: facts that appeared / disappeared, Delta versions."""

    relation: str
    inserted: int = 0
    deleted: int = 0
    version_before: Optional[int] = None
    version_after: Optional[int] = None


@dataclass
class StratumReport:
    """How one stratum was maintained: ``method`` (``placement.method``) and why."""

    index: int
    relations: tuple
    method: str
    seconds: float
    placement: Optional[Placement] = None


@dataclass
class UpdateReport:
    """The result of ``update``: per relation and per stratum, and the run."""

    run_id: str
    relations: dict = field(default_factory=dict)  # name -> RelationReport
    strata: list = field(default_factory=list)  # StratumReport, in order
    consumed: dict = field(default_factory=dict)  # EDB relation -> version consumed
    already_committed: bool = False
    seconds: float = 0.0

    @property
    def changed(self) -> list:
        """Relations that got a new version."""
        return [r.relation for r in self.relations.values() if r.version_after != r.version_before]

    def __str__(self) -> str:
        lines = [f"update run {self.run_id}" + (" (already committed)" if self.already_committed else "")]
        for r in self.relations.values():
            lines.append(
                f"  {r.relation}: +{r.inserted} -{r.deleted} facts, version "
                f"{r.version_before} -> {r.version_after}"
            )
        for s in self.strata:
            where = "" if s.placement is None else f" · {s.placement.explained()}"
            lines.append(
                f"  stratum {s.index} ({', '.join(s.relations)}): {s.method}, {s.seconds:.2f}s{where}"
            )
        return "\n".join(lines)


def update(
    program,
    spark,
    warehouse,
    changes: Optional[Mapping[str, object]] = None,
    method: str = "auto",
    on_missing_delete: str = "error",
    run_id: Optional[str] = None,
    max_iterations: Optional[int] = MAX_ITERATIONS,
    checkpoint_interval: int = 10,
    decompose: bool = True,
) -> UpdateReport:
    """Maintain the program's relations in ``warehouse`` under changes of its EDB relations.

    ``changes`` maps EDB relations to change sets (the relation's columns, and ``_count``: +n
    inserts n copies, -n deletes n; without ``_count`` each row inserts one). Without
    ``changes``, each EDB relation's changes since the version the last committed run consumed
    are used: from its external Delta source when it was read from one, else from the
    warehouse's own table. Deleting a fact that is not there raises ``InputError`` naming it and
    nothing is applied (``on_missing_delete="ignore"`` drops such deletions). ``method`` is one
    of ``METHODS`` (see the module docstring). ``max_iterations`` bounds the rounds of each
    semi-naive phase (``NonTerminationError``); every ``checkpoint_interval`` rounds the
    phases compact their states, as the driver does. ``decompose`` (as in ``materialize``)
    lets a recursive stratum run DRed in memory (in the driver for linear strata,
    ``incremental.dred_linear``, else in one Spark task, ``incremental.dred_local``) and a
    recomputed stratum use partition-local fixpoints; ``False`` always runs Spark rounds.
    The session setting ``spark.datalog.driverMemory`` bounds what the driver holds while it
    maintains a stratum (``0``: nothing is maintained in the driver; see ``settings``).
    """
    _check_arguments(method, on_missing_delete, checkpoint_interval)
    started = time.perf_counter()
    warehouse.check_writable()
    program = _typed(program, warehouse)
    frames = _change_frames(program.checked, spark, changes)
    refuse_former_names(warehouse, program, run_id)
    known_run = run_id is not None and any(r["run_id"] == run_id for r in warehouse.runs())
    checked_changes = {}
    if frames and on_missing_delete == "error" and not known_run and warehouse.pending_run() is None:
        # before the run: a refusal leaves no trace
        with labelled(spark, f"update · check changes · {', '.join(frames)}", group_id("update", "changes")):
            checked_changes = _check_changes(program.checked, warehouse, frames)
    run = warehouse.start_run(program.fingerprint, run_id=run_id, mode="incremental")
    try:
        if run.already_committed:
            report = _committed_report(run)
        else:
            settings = (method, on_missing_delete, max_iterations, checkpoint_interval, decompose)
            report = _Update(program, spark, warehouse, run, *settings).run(frames, checked_changes)
    except BaseException:
        warehouse.abort_run(run)
        raise
    warehouse.commit_run(run, details={"method": method})
    report.seconds = time.perf_counter() - started
    return report


def _check_arguments(method: str, on_missing_delete: str, checkpoint_interval) -> None:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, not {method!r}")
    if on_missing_delete not in ON_MISSING_DELETE:
        raise ValueError(f"on_missing_delete must be one of {ON_MISSING_DELETE}, not {on_missing_delete!r}")
    if checkpoint_interval is None or checkpoint_interval < 1:
        raise ValueError("checkpoint_interval must be a positive number of iterations")


def _change_frames(checked, spark, changes) -> Optional[dict]:
    """The ``changes`` as Spark DataFrames (pandas DataFrames and pyarrow Tables taken;
    anything else refused), checked to name EDB relations of the program; None without any."""
    check_spark_limits(checked)
    require_mapping(changes, "changes")
    for name in changes or {}:
        if name not in checked.relations:
            raise InputError(f"changes given for a relation the program does not mention: {name}")
        if checked.relations[name].kind != "edb":
            raise InputError(
                f"changes given for a derived (IDB) relation: {name}; only EDB relations take changes"
            )
    if changes is None:
        return None
    frames = {name: input_frame(spark, name, value, "changes") for name, value in changes.items()}
    refuse_program_fact_deletions(checked, frames)
    return frames


def _committed_report(run) -> UpdateReport:
    """The report of a run committed before (re-run with its id): the versions it produced."""
    return UpdateReport(
        run.run_id,
        already_committed=True,
        consumed=dict(run.consumed),
        relations={
            name: RelationReport(name, version_before=run.base_versions.get(name), version_after=v)
            for name, v in run.produced.items()
        },
    )


def _check_changes(checked, warehouse, changes) -> dict:
    """Raise ``InputError`` for nulls and deletions of absent facts, against the tables as they
    are (one Spark job for all the changes, which are stored).

    Returns relation -> (stored assessed change — a frame, or a pyarrow Table when assessed in
    the driver —, its ``Tally``, table version it was checked against), so the run assesses
    again only a table that changed since.
    """
    frames, versions, in_driver = {}, {}, {}
    for name, frame in changes.items():
        schema = checked.relations[name]
        change = conform_changes(schema, frame)
        if warehouse.exists(name):
            versions[name] = warehouse.version(name)
            # a small change against a table delta-rs reads (the files it may meet): assessed
            # here, one job
            found = settings_of(frame.sparkSession)
            small = collect_small(change, found.driver_rows) if found.driver_budget() else None
            old = (
                None
                if small is None
                else warehouse.read_facts(
                    name,
                    versions[name],
                    found.driver_read_rows(KERNEL_VALUE_BYTES),
                    with_counts=True,
                    meeting=small,
                )
            )
            if old is not None:
                in_driver[name] = assess_in_driver(schema, small, old, "error")
                continue
            old = warehouse.read(name, with_counts=True, version=versions[name]).where(F.col(COUNT) > 0)
            frames[name] = assess(schema, change, old, "error")
    leaves, tallies = store_assessed(frames)
    for name, leaf in leaves.items():
        check_assessed(checked.relations[name], leaf, tallies[name])
    for name, (table, tally) in in_driver.items():
        if tally.problems:  # read by Spark only to be reported
            spark = changes[name].sparkSession
            check_assessed(checked.relations[name], spark.createDataFrame(table), tally)
        leaves[name], tallies[name] = table, tally
    return {name: (leaves[name], tallies[name], versions[name]) for name in leaves}


def _typed(program, warehouse):
    """The program with undeclared EDB relations typed from their warehouse tables."""
    types = {}
    for name in program.checked.edb:
        if not program.checked.relations[name].declared and warehouse.exists(name):
            types[name] = tuple(t for _, t in warehouse.schema(name))
    return program.with_input_types(types)


class _Update:
    def __init__(
        self,
        program,
        spark,
        warehouse,
        run,
        method,
        on_missing_delete,
        max_iterations,
        checkpoint_interval=10,
        decompose=True,
    ):
        self.program = program
        self.checked = program.checked
        self.spark = spark
        self.wh = warehouse
        self.run_info = run
        self.method = method
        self.on_missing_delete = on_missing_delete
        self.max_iterations = max_iterations
        self.checkpoint_interval = checkpoint_interval
        self.decompose = decompose
        self.settings = settings_of(spark)
        self.read_at: dict = {}  # relation -> the table version its old state was read at
        # the frames below are made on first use: an update whose strata all run in the driver
        # needs none of them (each costs Py4J round trips)
        self.old = _Lazy()  # relation -> old state (counted)
        self.deltas = _Lazy()  # relation -> non-empty change (counted, stored, one row per fact)
        self.presence: dict = {}  # relation -> _Presence
        self.tallies: dict = {}  # relation -> Tally of its delta
        # relation -> its delta's assessed rows as a pyarrow Table, when computed in the driver:
        # they reach the warehouse and the linear DRed without a Spark job
        self.local: dict = {}
        self.levelled: list = []  # (stratum plan, Levels): strata whose levels to keep
        # relations storing count 1 per present fact (StratumPlan.set_valued)
        self.set_valued = {name for plan in program.plans for name in plan.relations if plan.set_valued(name)}

    # -- driving -------------------------------------------------------------------------

    def run(self, changes, checked_changes=None) -> UpdateReport:
        checked, wh, run = self.checked, self.wh, self.run_info
        base = dict(run.base_versions)
        # the inputs, and what the outputs need (``checked.demanded``: the strata evaluated)
        stored = [n for n in checked.relations if n in checked.edb or n in checked.demanded]
        missing = [n for n in stored if n not in base]
        if missing:
            raise WarehouseError(
                f"the warehouse {wh.root} has no table for {', '.join(missing)}; "
                "materialize the program into it before updating it"
            )
        for name in stored:
            self._state(name, base[name])
        with labelled(self.spark, "update · read changes", group_id("update", "changes")):
            applied, consumed = self._edb_changes(changes, base, checked_changes or {})
        report = UpdateReport(run.run_id)
        for plan in self.program.plans:
            started = time.perf_counter()
            label = f"update · stratum {plan.index} · {', '.join(plan.relations)}"
            with labelled(self.spark, label, group_id("update", "stratum", plan.index)):
                placement = self._stratum(plan)
            seconds = time.perf_counter() - started
            report.strata.append(
                StratumReport(plan.index, tuple(plan.relations), placement.method, seconds, placement)
            )
            progress.stratum_maintained(report.strata[-1], self._changes_of(plan))
        with labelled(self.spark, "update · commit", group_id("update", "commit")):
            self._commit(applied, consumed, base, report)
        self._keep_levels()
        return report

    def _changes_of(self, plan) -> dict:
        """Relation of ``plan`` -> (facts inserted, facts deleted), for the progress line."""
        return {
            name: (self.presence[name][2], self.presence[name][3])
            for name in plan.relations
            if name in self.presence
        }

    def _state(self, name, version) -> None:
        """Read ``name``'s old state at ``version`` (when first used)."""
        self.read_at[name] = version
        self.old.promise(
            name, lambda: self.wh.read(name, with_counts=True, version=version).where(F.col(COUNT) > 0)
        )

    def _columns(self, name):
        return list(self.checked.relations[name].column_names)

    def _edb_changes(self, changes, base, checked_changes) -> tuple:
        """Set the EDB deltas; return (the EDB tables to apply them to, consumed versions)."""
        checked, wh = self.checked, self.wh
        applied, consumed, found, stored = set(), {}, {}, {}
        if changes is not None:
            for name, frame in changes.items():
                schema = checked.relations[name]
                leaf, tally, version = checked_changes.get(name, (None, None, None))
                if leaf is not None and version == base[name]:
                    stored[name] = (leaf, tally)
                else:
                    found[name] = assess(
                        schema, conform_changes(schema, frame), self.old[name], self.on_missing_delete
                    )
            applied = set(changes)
        else:
            committed = [r for r in wh.runs() if r["status"] == "committed"]
            for name in checked.edb:
                # the latest run that consumed the relation (a run writing other tables only,
                # like a hand-made change of an input table, records nothing for it)
                last: dict = next(
                    (r for r in reversed(committed) if (r.get("consumed") or {}).get(name) is not None), {}
                )
                since = (last.get("consumed") or {}).get(name)
                source = (last.get("sources") or {}).get(name)
                if since is None:
                    continue
                if source:
                    from ..storage.locations import load_input_changes

                    table = load_input_changes(self.spark, source, wh.schema(name), name, since)
                    schema = checked.relations[name]
                    change = table.df.toDF(*schema.column_names, COUNT)  # summed per fact
                    found[name] = assess(schema, change, self.old[name], self.on_missing_delete)
                    applied.add(name)
                    consumed[name] = (table.version, source)
                elif since != base[name]:
                    self._state(name, since)
                    # the table's own changes (summed per fact): valid by construction
                    found[name] = assess(
                        checked.relations[name],
                        wh.changes(name, since, base[name]).toDF(*self._columns(name), COUNT),
                        self.old[name],
                    )
                    consumed[name] = (base[name], None)
        self._absorb(found, stored=stored)
        applied = {name for name in applied if name in self.deltas}
        return applied, consumed

    def _absorb(self, changes: dict, stored: Optional[dict] = None) -> None:
        """Store the non-empty ``changes`` as deltas, with their presence changes, in one Spark
        job (``changes.store_assessed``).

        ``changes``: relation -> an assessed change (``changes.assess``), a change of a
        set-valued relation (its sign is its presence), or another change (assessed here,
        against the relation's old state). ``stored``: relation -> (leaf, ``Tally``) of
        assessed changes stored already, a leaf being a frame or a pyarrow Table computed in
        the driver (kept in ``local``). Refused changes raise ``InputError``.
        """
        frames = {}
        for name, change in changes.items():
            if PRESENCE in change.columns:
                frames[name] = change
            elif name in self.set_valued:
                frames[name] = signed(change)
            else:
                frames[name] = assess(self.checked.relations[name], change, self.old[name])
        leaves, tallies = store_assessed(frames)
        local = {}
        for name, (leaf, tally) in (stored or {}).items():
            if is_arrow(leaf):  # its frame is made when a Spark plan reads it
                local[name] = leaf
                leaf = _memo(lambda table=leaf: self.spark.createDataFrame(table))
            leaves[name], tallies[name] = leaf, tally
        for name, leaf in leaves.items():
            if tallies[name].problems or not callable(leaf):
                check_assessed(self.checked.relations[name], _made(leaf), tallies[name])
        for name, leaf in leaves.items():
            tally = tallies[name]
            if not tally.rows:
                continue
            columns = self._columns(name)
            if name in local:
                self.local[name] = local[name]
            self.deltas.promise(name, lambda leaf=leaf, c=columns: _made(leaf).select(*c, COUNT))
            self.presence[name] = _Presence(
                lambda leaf=leaf, c=columns: (
                    _made(leaf).where(F.col(PRESENCE) > 0).select(*c),
                    _made(leaf).where(F.col(PRESENCE) < 0).select(*c),
                ),
                tally.inserted,
                tally.deleted,
            )
            self.tallies[name] = tally

    def new_state(self, name):
        return apply_change(self.old[name], self.deltas.get(name), self._columns(name))

    def new_facts(self, name):
        """The relation's facts after its change (plain). Without facts that disappeared, the
        old ones and those that appeared: no shuffle of the old state."""
        plain = self.old[name].select(*self._columns(name))
        if name not in self.deltas:
            return plain
        inserted, _, n_inserted, n_deleted = self.presence[name]
        if n_deleted:
            return self.new_state(name).select(*self._columns(name))
        return plain.union(inserted) if n_inserted else plain

    # -- one stratum ---------------------------------------------------------------------

    def _stratum(self, plan) -> Placement:
        """Maintains one stratum as ``placement.place_update`` places it (asked again when a
        placement is declined at run time); returns the placement it ran in."""
        positive, negated = _read_predicates(plan)
        reads = (positive | negated) - set(plan.relations)
        changed = {r for r in reads if r in self.deltas}
        case = self._case(plan, changed)
        history: tuple = ()
        while True:
            placement = logged(plan, place_update(plan, case, history))
            results = self._maintained(placement, plan, reads, changed, negated)
            if not isinstance(results, Declined):
                self._absorb(results)
                return placement
            history = placement.refused(results)

    def _moved(self, changed: set) -> set:
        """The changed relations whose set of facts changed (not only multiplicities)."""
        return {r for r in changed if r in self.presence and (self.presence[r][2] or self.presence[r][3])}

    def _case(self, plan, changed: set) -> UpdateCase:
        """What ``place_update`` needs to know of the stratum, given what it reads that ``changed``."""
        moved = self._moved(changed)
        inserted = {r for r in moved if self.presence[r][2]}
        deleted = {r for r in moved if self.presence[r][3]}
        return UpdateCase(
            self.method,
            bool(changed),
            bool(moved),
            self.decompose,
            linear=linear_dred_applies(plan),
            regroup=plan.recursive and not dred_applies(plan, inserted, deleted),
            repairs=repairs_groups(self.checked, plan),
            held=changed <= set(self.local),
            driver=self.settings.driver_budget() > 0,
        )

    def _maintained(self, placement: Placement, plan, reads: set, changed: set, negated: set):
        """relation -> changes of the stratum maintained as ``placement`` says (``{}`` when
        they were absorbed as computed in the driver), or ``Declined``."""
        method, where = placement.method, placement.where
        if method == "unchanged":
            return {}
        if method == "recompute":
            return self._recompute(plan, reads)
        if method == "dred":
            return self._dred(where, plan, reads, changed)
        if method == "counting":
            if where == "driver":
                return self._counting_in_driver(plan, reads, changed)
            results = self._counting(plan, reads, changed, negated)
        else:  # groups; the non-aggregate relations of the stratum by counting
            results = self._counting(plan, reads, changed, negated)
            moved = self._moved(changed)
            if moved:
                results.update(self._groups(plan, reads, moved))
        return results

    def _counting(self, plan, reads, changed, negated) -> dict:
        if set(plan.relations) <= set(plan.aggregates):
            return {}
        old = {name: self.old[name] for name in reads}
        new = {name: self.new_state(name) for name in reads}
        changes = {name: self.deltas[name] for name in changed}
        negation = {}
        for name in changed & negated:
            inserted, deleted, _, _ = self.presence[name]
            negation[name] = negation_change(inserted, deleted)
        return counting_changes(self.spark, self.checked, plan, old, new, changes, negation)

    def _counting_in_driver(self, plan, reads, changed):
        """``_counting`` in the driver (``.counting_local``; every change it reads was computed
        there): ``{}`` (the changes are stored as they are, no Spark job), or ``Declined`` when
        a relation it reads, or writes, is too large for the driver."""
        max_rows = self.settings.driver_read_rows(KERNEL_VALUE_BYTES)

        def stored(name, limit):
            return self.wh.read_facts(name, self.read_at[name], limit, with_counts=True)

        changes = {name: self.local[name].select([*self._columns(name), COUNT]) for name in changed}
        counts = local_counting_changes(self.checked, plan, reads, changes, stored, max_rows)
        too_large = Declined(
            f"a relation it reads or writes has over {max_rows} rows for the driver ({DRIVER_MEMORY_SETTING})"
        )
        if counts is None:
            return too_large
        assessed = {}
        for name, facts in counts.items():
            if not facts:
                continue
            schema = self.checked.relations[name]
            change = counted_change(schema, facts)
            old = (
                self.wh.read_facts(name, self.read_at[name], max_rows, with_counts=True, meeting=change)
                if schema.arity
                else None
            )
            if old is None:
                return too_large
            assessed[name] = assess_in_driver(schema, change, old)
        self._absorb({}, stored=assessed)
        return {}

    def _groups(self, plan, reads, moved) -> dict:
        old = {name: self.old[name].select(*self._columns(name)) for name in reads}
        new = {name: self.new_facts(name) for name in reads}
        facts = {name: self.presence[name][0].unionByName(self.presence[name][1]) for name in moved}
        stored = {name: self.old[name] for name in plan.aggregates}
        return aggregate_changes(self.spark, self.checked, plan, old, new, facts, stored)

    def _dred(self, where: str, plan, reads, changed):
        """The stratum's changes by DRed ``where`` the placement says: in the driver (``{}``:
        stored as they are, no Spark job), in one Spark task on the kernel, or in rounds of
        Spark joins; ``Declined`` when the driver or the task cannot hold it, or when
        recomputing costs less."""
        plain = _Lazy()  # the linear path reads none of them when it reads the warehouse
        for name in list(reads) + list(plan.relations):
            plain.promise(name, lambda name=name: self.old[name].select(*self._columns(name)))
        appeared = [n for n in changed if self.presence[n][2]]
        gone = [n for n in changed if self.presence[n][3]]
        if where == "driver":
            try:
                return self._dred_in_driver(plan, plain, appeared, gone)
            except RecomputeInstead as reason:
                return Declined(str(reason), recompute=True)
        # every round reads the changed lower relations' new states: those that lost facts are
        # stored (when first read; even a lazy checkpoint ran a job at once here, measured, so
        # the linear path above goes without them), the others are their old facts and the
        # stored ones that appeared
        new = {}
        for name in reads:
            new[name] = self.new_facts(name)
            if name in self.deltas and self.presence[name][3]:
                new[name] = new[name].localCheckpoint(eager=False)
        inserted = {n: self.presence[n][0] for n in appeared}
        deleted = {n: self.presence[n][1] for n in gone}
        arguments = (self.spark, self.checked, plan, plain, new, inserted, deleted, self.max_iterations)
        if where == "one task":
            results = local_dred_changes(*arguments)
            if isinstance(results, Declined):
                return results
        else:
            results = dred_changes(*arguments, self.checkpoint_interval)
        return {name: signed_presence(ins, dels) for name, (ins, dels) in results.items()}

    def _dred_in_driver(self, plan, plain, appeared: list, gone: list):
        """``{}`` when the linear DRed in the driver (``.dred_linear``) maintained the stratum
        (its changes absorbed as they are), else ``Declined``."""
        # presence rows the driver holds are passed as they are (no job to collect them)
        held = [
            {
                name: presence_rows(self.local[name], sign)
                if name in self.local
                else self.presence[name][index]
                for name in names
            }
            for names, index, sign in ((appeared, 0, 1), (gone, 1, -1))
        ]
        levels = (
            stored_levels(self.wh, self.program.fingerprint, plan, self.read_at)
            if levels_apply(self.checked, plan)
            else None
        )
        facts = linear_dred_changes(
            self.spark,
            self.checked,
            plan,
            plain,
            held[0],
            held[1],
            self.max_iterations,
            stored=lambda name, rows: self.wh.read_facts(name, self.read_at[name], rows),
            recompute_if_larger=self.method == "auto",
            levels=levels,
        )
        if isinstance(facts, Declined):
            return facts
        if levels is not None:
            self.levelled.append((plan, levels))
        stored = {
            name: assessed_presence(self.checked.relations[name], *changes) for name, changes in facts.items()
        }
        self._absorb({}, stored=stored)
        return {}

    def _recompute(self, plan, reads) -> dict:
        from ..eval.driver import evaluate

        counted = {name: self.new_state(name) for name in reads}
        frames = {name: frame.select(*self._columns(name)) for name, frame in counted.items()}
        results, _ = evaluate(
            self.spark,
            self.checked,
            [plan],
            frames,
            max_iterations=self.max_iterations,
            checkpoint_interval=self.checkpoint_interval,
            decompose=self.decompose,
        )
        changes = {}
        for name in plan.relations:
            if plan.set_valued(name):
                fresh = results[name].withColumn(COUNT, F.lit(1).cast("long"))
            else:
                fresh = self._derivation_counts(plan, name, counted)
            changes[name] = diff(self.old[name], fresh, self._columns(name))
        return changes

    def _derivation_counts(self, plan, name, counted) -> DataFrame:
        """Derivation counts of a non-recursive, non-aggregate relation (``eval.commit``'s)."""
        scans = {(rel, "full"): frame for rel, frame in counted.items()}
        columns = self._columns(name)
        parts = [
            count_derivations(rp.plan, scans, self.spark).toDF(*columns, COUNT)
            for rp in plan.rules
            if rp.relation == name
        ]
        facts = self.checked.facts.get(name)
        if facts:
            parts.append(
                facts_frame(self.spark, self.checked.relations[name], facts).withColumn(
                    COUNT, F.lit(1).cast("long")
                )
            )
        if not parts:
            return self.old[name].limit(0)
        union = parts[0]
        for part in parts[1:]:
            union = union.unionByName(part)
        return union.groupBy(*columns).agg(F.sum(COUNT).cast("long").alias(COUNT)).where(F.col(COUNT) != 0)

    # -- committing ----------------------------------------------------------------------

    def _keep_levels(self) -> None:
        """Store the levels of the strata maintained with them (``incremental.levels``), for
        the versions just committed; a stratum maintained without them (none were stored for
        its old state) whose over-deletion flooded gets them computed once, in memory."""
        versions = {name: self.run_info.produced.get(name, version) for name, version in self.read_at.items()}
        for plan, levels in self.levelled:
            if levels.old is not None:
                tables = levels.new
            elif levels.flooded:
                tables = computed_levels(self.wh, self.checked, plan, versions, test=False)
            else:
                continue
            if tables is not None:
                keep_levels(self.wh, self.program.fingerprint, plan, versions, tables)

    def _commit(self, applied, consumed, base, report) -> None:
        wh, run, checked = self.wh, self.run_info, self.checked
        order = [n for n in checked.edb if n in applied]
        order += [n for plan in self.program.plans for n in plan.relations if n in self.deltas]
        for name in order:
            describe(self.spark, f"update · commit · {name}")
            schema = checked.relations[name]
            tally = self.tallies[name]
            # a set-valued relation's change that only adds facts adds rows it does not store
            # (its tables hold count 1 per present fact and no other row)
            new_facts_only = name in self.set_valued and not tally.deleted and tally.inserted == tally.rows
            change = (
                self.local[name].select([*self._columns(name), COUNT])
                if name in self.local
                else self.deltas[name]
            )
            wh.apply_changes(
                name,
                list(zip(schema.column_names, schema.types, strict=True)),
                change,
                run,
                netted=True,
                new_facts_only=new_facts_only,
            )
        for name in checked.edb:
            if name in consumed:
                version, source = consumed[name]
                run.consume(name, version, source)
            else:
                run.consume(name, run.produced.get(name, base[name]))
        report.consumed = dict(run.consumed)
        for name in self.read_at:  # the stored relations
            entry = RelationReport(
                name, version_before=base[name], version_after=run.produced.get(name, base[name])
            )
            if name in self.presence:
                entry.inserted, entry.deleted = self.presence[name][2], self.presence[name][3]
            report.relations[name] = entry


class _Lazy(MutableMapping):
    """A mapping whose values may be promised: ``promise(key, make)`` stores ``make`` and the
    value is ``make()``, made on its first read (``key in`` does not make it)."""

    def __init__(self):
        self._values: dict = {}
        self._promised: dict = {}

    def promise(self, key, make) -> None:
        self._values.pop(key, None)
        self._promised[key] = make

    def __getitem__(self, key):
        if key not in self._values and key in self._promised:
            self._values[key] = self._promised.pop(key)()
        return self._values[key]

    def __setitem__(self, key, value) -> None:
        self._promised.pop(key, None)
        self._values[key] = value

    def __delitem__(self, key) -> None:
        if self._promised.pop(key, None) is None:
            del self._values[key]

    def __contains__(self, key) -> bool:
        return key in self._values or key in self._promised

    def __iter__(self):
        return iter(list(self._values) + [k for k in self._promised if k not in self._values])

    def __len__(self) -> int:
        return len(set(self._values) | set(self._promised))


class _Presence(Sequence):
    """(facts that appear, facts that disappear, how many appear, how many disappear) of a
    relation's change; the two frames are made by ``frames()`` on first use."""

    def __init__(self, frames, inserted: int, deleted: int):
        self._frames = _memo(frames)
        self._counts = (inserted, deleted)

    def __getitem__(self, index):
        return self._frames()[index] if index in (0, 1) else self._counts[index - 2]

    def __len__(self) -> int:
        return 4


def _memo(make):
    """``make`` called once, on the first call of the function returned."""
    made = []

    def once():
        if not made:
            made.append(make())
        return made[0]

    return once


def _made(leaf):
    """A stored leaf: a frame, or the function making it (``_memo``)."""
    return leaf() if callable(leaf) else leaf


def _read_predicates(plan) -> tuple:
    """(the relations the stratum's rules read positively, those they read negated); its rules
    include those of the dominated tuples of a subsumption its rounds apply (their pseudo
    relation of all tuples is no relation that is read)."""
    positive, negated = set(), set()
    rounds = [(pseudo, rule_plan) for pseudo, plans in plan.subsumed.values() for rule_plan in plans]
    for pseudo, rule_plan in [("", rule_plan) for rule_plan in plan.rules] + rounds:
        for literal in rule_plan.rule.body:
            if isinstance(literal, ast.Atom) and literal.predicate != pseudo:
                positive.add(literal.predicate)
            elif isinstance(literal, ast.Negation):
                negated.add(literal.atom.predicate)
    return positive, negated
