"""The reference interpreter: the test oracle every other engine is compared against.

It evaluates the checked AST rules directly (seed 004's Infer: substitutions extended literal by
literal, see :mod:`.body`), stratum by stratum. A non-recursive stratum runs once; a recursive one
runs to a fixpoint, naive (every rule over the full relations until nothing changes) or
semi-naive (a rule with k atoms of the stratum runs as k variants, the i-th reading the previous
iteration's delta at its i-th such atom and the full relations elsewhere). Simple on purpose.

A relation with a greedy ``choice-domain`` (:mod:`.choice`) keeps, of each round's new tuples,
those the greedy choice accepts; they are the round's delta. A recursive relation with a
subsumption (:mod:`spark_datalog.syntax.subsumption`) keeps, of its tuples and the round's new
ones, those no other of them dominates; the new ones kept are the round's delta.

A relation with ``.limitsize r(n=N)`` takes, in the round that reaches N, the least new tuples
up to N, and the stratum stops there (:mod:`spark_datalog.limits`).

Relations with a ``min``/``max`` aggregate keep, per group, only the best row over all their
candidates (plain rules and facts included); inside recursion (Pre-Mappability) this happens after
every iteration, a better value replaces the old row and the delta holds the improved rows.

``max_iterations`` bounds the number of rule applications in one recursive stratum, counting the
last one that finds nothing new: a transitive closure over a 3-edge chain needs 4.
"""

from __future__ import annotations

import logging
from typing import Iterable, Mapping, Optional

from ..analysis.checked import CheckedProgram, RelationSchema, Stratum
from ..bounds import MAX_ITERATIONS
from ..errors import InputError, NonTerminationError, StratificationError
from ..limits import least, room
from ..overflow import overflows_located
from ..syntax import ast
from .aggregates import PREMAPPABLE, aggregate, best_per_group, better, group_of
from .body import head_tuple, order_body, substitutions
from .choice import greedy, taken_keys
from .relation import Relation
from .terms import Undefined, coerce

log = logging.getLogger("spark_datalog.reference")

STRATEGIES = ("naive", "seminaive")


def evaluate(
    program, edb: Optional[dict] = None, strategy: str = "seminaive", max_iterations: int = MAX_ITERATIONS
) -> dict:
    """Every IDB relation of ``program`` as a set of tuples; with ``.output``, the output
    relations (EDB ones too), and only the strata they need are evaluated.

    ``program`` is a :class:`CheckedProgram` or an object with a ``.checked`` one (``sd.Program``).
    ``edb`` maps EDB relation names to sets of tuples; they are unioned with the program's facts,
    and missing relations are empty. ``strategy`` is ``"naive"`` or ``"seminaive"``. Raises
    :class:`NonTerminationError` when a recursive stratum needs more than ``max_iterations``
    iterations, :class:`InputError` for input that does not fit the program.

    Example::

        >>> import spark_datalog as sd
        >>> found = evaluate(sd.Program.parse(".input e. tc(X,Y) :- e(X,Y). tc(X,Z) :- tc(X,Y), e(Y,Z)."),
        ...                  {"e": {(1, 2), (2, 3)}})
        >>> sorted(found["tc"])
        [(1, 2), (1, 3), (2, 3)]
    """
    checked = program if isinstance(program, CheckedProgram) else getattr(program, "checked", None)
    if not isinstance(checked, CheckedProgram):
        raise TypeError(f"expected a CheckedProgram or an object with .checked, got {program!r}")
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")

    facts = _initial_rows(checked, checked.bound_inputs({} if edb is None else edb))
    db = {name: Relation(facts[name]) for name in checked.edb}
    with overflows_located(checked):
        for stratum in checked.evaluated:
            run = _StratumRun(checked, stratum, db, facts)
            if stratum.recursive:
                run.fixpoint(strategy, max_iterations)
            else:
                run.once()
    return {name: set(db[name].tuples) if name in db else set() for name in checked.returned}


# ---------------------------------------------------------------------------------------------
# Inputs


def _row(schema: RelationSchema, values, what: str) -> tuple:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise InputError(f"{what}: a row is a tuple of values, not a {type(values).__name__} ({values!r})")
    row = tuple(values)
    if len(row) != schema.arity:
        raise InputError(f"{what}: {row!r} has {len(row)} values, {schema.name} has arity {schema.arity}")
    try:
        return tuple(coerce(v, t) for v, t in zip(row, schema.types, strict=True))
    except TypeError as error:
        raise InputError(f"{what}: {row!r} does not fit {schema}: {error}") from None


def input_rows(name: str, value) -> Iterable:
    """The rows of the input ``value`` of ``name``: a collection of tuples, a pandas DataFrame or
    a pyarrow Table (its rows); anything else is an ``InputError`` naming the relation."""
    if type(value).__module__.startswith("pandas") and type(value).__name__ == "DataFrame":
        import pyarrow as pa

        value = pa.Table.from_pandas(value, preserve_index=False)  # Python values, not NumPy's
    if type(value).__module__.startswith("pyarrow") and hasattr(value, "to_pylist"):
        return [tuple(row.values()) for row in value.to_pylist()]
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise InputError(
            f"input {name}: expected a set of tuples, a pandas DataFrame or a pyarrow Table, "
            f"not a {type(value).__name__}"
        )
    return value


def _initial_rows(checked: CheckedProgram, edb: dict) -> dict:
    """{relation: set of rows} from the EDB inputs and the program's facts, typed."""
    if not isinstance(edb, Mapping):
        raise InputError(f"inputs must map relation names to sets of tuples, not a {type(edb).__name__}")
    rows: dict[str, set] = {name: set() for name in checked.relations}
    for name, tuples in edb.items():
        schema = checked.relations.get(name)
        if schema is None:
            raise InputError(f"input {name!r} is not a relation of the program")
        if schema.kind != "edb":
            raise InputError(f"input {name!r} is derived by rules; only EDB relations can be given")
        rows[name].update(_row(schema, t, f"input {name}") for t in input_rows(name, tuples))
    for name, tuples in checked.facts.items():
        rows[name].update(_row(checked.relations[name], t, f"fact of {name}") for t in tuples)
    return rows


# ---------------------------------------------------------------------------------------------
# Strata


class _StratumRun:
    """Evaluates one stratum into ``db`` (relation name -> Relation), reading lower strata."""

    def __init__(self, checked: CheckedProgram, stratum: Stratum, db: dict, facts: dict):
        self.checked = checked
        self.stratum = stratum
        self.db = db
        self.facts = facts
        self.members = set(stratum.relations)
        self.best: dict = {}  # min/max relation -> {group: row}
        self.choices = {name: keys for name, keys in checked.choices.items() if name in self.members}
        self.taken: dict = {}  # greedy choice relation -> per key, the values taken
        self.subsumed = {name: found for name, found in checked.subsumed.items() if name in self.members}
        self.limits = {name: n for name, n in checked.limits.items() if name in self.members}

    def _schema(self, name: str) -> RelationSchema:
        return self.checked.relations[name]

    def _rows(self, rule: ast.Rule, order: list, relation_for) -> list:
        """Typed head rows of ``rule`` for every satisfying substitution (with repetitions)."""
        schema = self._schema(rule.head.predicate)
        out = []
        for subst in substitutions(rule.body, order, relation_for):
            try:
                out.append(
                    tuple(
                        coerce(v, t) for v, t in zip(head_tuple(rule.head, subst), schema.types, strict=True)
                    )
                )
            except Undefined:
                continue
        return out

    def _full(self, body: tuple):
        def relation_for(position: int) -> Relation:
            literal = body[position]
            atom = literal.atom if isinstance(literal, ast.Negation) else literal
            relation = self.db.get(atom.predicate)
            return relation if relation is not None else Relation()

        return relation_for

    # -- non-recursive --------------------------------------------------------------------------

    def once(self) -> None:
        for name in self._dependency_order():
            spec = self._schema(name).aggregate
            rules = [r for r in self.stratum.rules if r.head.predicate == name]
            if spec is not None and spec.func not in PREMAPPABLE:
                self.db[name] = Relation(self._aggregate(name, rules))
                continue
            rows = set(self.facts[name])
            for rule in rules:
                rows.update(self._rows(rule, order_body(rule.body), self._full(rule.body)))
            if spec is not None:
                rows = set(best_per_group(rows, spec.position, spec.func).values())
            if name in self.choices:
                rows = set(greedy(rows, self.choices[name], taken_keys(self.choices[name], ())))
            self.db[name] = Relation(least(rows, self.limits.get(name)))

    def _dependency_order(self) -> list:
        """The stratum's relations, each after the ones of this stratum it reads."""
        needs: dict[str, set[str]] = {name: set() for name in self.stratum.relations}
        for rule in self.stratum.rules:
            for literal in rule.body:
                atom = literal.atom if isinstance(literal, ast.Negation) else literal
                if isinstance(atom, ast.Atom) and atom.predicate in self.members:
                    needs[rule.head.predicate].add(atom.predicate)
        order: list = []
        while len(order) < len(needs):
            ready = [n for n in needs if n not in order and needs[n] <= set(order)]
            if not ready:
                raise StratificationError(f"{self.stratum} is marked non-recursive but has a cycle")
            order.extend(ready)
        return order

    def _aggregate(self, name: str, rules: list) -> set:
        """count/sum/avg: contributions from the distinct satisfying assignments of each rule's
        named body variables, unioned over the rules, reduced per group."""
        schema = self._schema(name)
        spec = schema.aggregate
        assert spec is not None  # once() calls this for aggregate relations only
        if self.facts[name]:
            raise StratificationError(f"{name} has a {spec.func} aggregate and cannot also have facts")
        contributions = []
        for rule in rules:
            named = sorted(
                {v.name for lit in rule.body for v in ast.literal_variables(lit) if not v.anonymous}
            )
            seen = set()
            for subst in substitutions(rule.body, order_body(rule.body), self._full(rule.body)):
                assignment = tuple(subst[v] for v in named)
                if assignment in seen:
                    continue
                seen.add(assignment)
                try:
                    row = head_tuple(rule.head, subst)
                except Undefined:
                    continue
                contributions.append((group_of(row, spec.position), row[spec.position]))
        rows = aggregate(contributions, spec.position, spec.func, name)
        return {tuple(coerce(v, t) for v, t in zip(row, schema.types, strict=True)) for row in rows}

    # -- recursive ------------------------------------------------------------------------------

    def _check_recursive(self) -> None:
        for name in self.stratum.relations:
            spec = self._schema(name).aggregate
            if spec is not None and spec.func not in PREMAPPABLE:
                raise StratificationError(
                    f"{spec.func} aggregate of {name} inside recursion ({self.stratum})"
                )
        for rule in self.stratum.rules:
            for literal in rule.body:
                if isinstance(literal, ast.Negation) and literal.atom.predicate in self.members:
                    raise StratificationError(
                        f"negation of {literal.atom.predicate} inside recursion ({self.stratum})",
                        rule.span.line or None,
                        rule.span.column or None,
                    )

    def fixpoint(self, strategy: str, max_iterations: int) -> None:
        self._check_recursive()
        for name in self.stratum.relations:
            spec = self._schema(name).aggregate
            if spec is None:
                self.db[name] = Relation(self.facts[name])
                if name in self.choices:
                    self.taken[name] = taken_keys(self.choices[name], self.facts[name])
            else:
                self.best[name] = best_per_group(self.facts[name], spec.position, spec.func)
                self.db[name] = Relation(self.best[name].values())
        # Literal orders per rule: the full rule, and one semi-naive variant per stratum atom.
        plans = []
        for rule in self.stratum.rules:
            recursive = [
                i
                for i, lit in enumerate(rule.body)
                if isinstance(lit, ast.Atom) and lit.predicate in self.members
            ]
            plans.append(
                (rule, order_body(rule.body), [(i, order_body(rule.body, first=i)) for i in recursive])
            )

        iteration, delta = 0, None
        while delta is None or (any(delta.values()) and not self._reached()):
            if iteration == max_iterations:
                raise self._non_termination(max_iterations, delta)
            iteration += 1
            candidates: dict[str, list] = {name: [] for name in self.stratum.relations}
            for rule, order, variants in plans:
                out = candidates[rule.head.predicate]
                if delta is None or strategy == "naive":
                    out.extend(self._rows(rule, order, self._full(rule.body)))
                else:  # rules without stratum atoms have no variant: they only fire the first time
                    for position, variant_order in variants:
                        out.extend(
                            self._rows(rule, variant_order, self._delta_at(rule.body, position, delta))
                        )
            delta = self._merge(candidates)
            log.debug(
                "%s iteration %d: %d new tuples", self.stratum, iteration, sum(len(r) for r in delta.values())
            )

    def _non_termination(self, max_iterations: int, delta: Optional[dict]) -> NonTerminationError:
        size = sum(len(r) for r in delta.values()) if delta else 0
        span = self.stratum.rules[0].span if self.stratum.rules else ast.NO_SPAN
        program = self.checked.program
        return NonTerminationError(
            f"stratum {self.stratum.index} ({', '.join(self.stratum.relations)}) did not reach a "
            f"fixpoint within {max_iterations} iterations; the last iteration derived {size} new tuples",
            span.line or None,
            span.column or None,
            program.source or None,
            program.filename,
        )

    def _delta_at(self, body: tuple, position: int, delta: dict):
        full = self._full(body)

        def relation_for(p: int) -> Relation:
            return delta[body[p].predicate] if p == position else full(p)

        return relation_for

    def _merge(self, candidates: dict) -> dict:
        """Add the candidate rows; {relation: Relation of the rows that are new or improved}."""
        delta = {}
        for name, rows in candidates.items():
            relation = self.db[name]
            spec = self._schema(name).aggregate
            if name in self.subsumed:
                delta[name] = self._subsume(name, rows)
                continue
            new = Relation()
            if name in self.choices:  # the greedy choice among the round's new tuples
                rows = greedy([r for r in rows if r not in relation], self.choices[name], self.taken[name])
            if spec is None:
                fresh = {row for row in rows if row not in relation}
                if name in self.limits:  # the least new tuples up to the limit
                    fresh = set(least(fresh, room(self.limits[name], len(relation))))
                for row in fresh:
                    relation.add(row)
                    new.add(row)
            else:
                best = self.best[name]
                for group, row in best_per_group(rows, spec.position, spec.func).items():
                    current = best.get(group)
                    if current is None or better(spec.func, row[spec.position], current[spec.position]):
                        if current is not None:
                            relation.discard(current)
                        relation.add(row)
                        best[group] = row
                        new.add(row)
            delta[name] = new
        return delta

    def _reached(self) -> bool:
        """Whether a limited relation holds its N facts: the stratum stops (``limits``)."""
        return any(len(self.db[name]) >= n for name, n in self.limits.items())

    def _subsume(self, name: str, rows: list) -> Relation:
        """The round's subsumption: ``name`` keeps the tuples of R ∪ N (N: the new ``rows``) that
        no other one dominates; returns the new ones kept (the round's delta)."""
        relation = self.db[name]
        fresh = {row for row in rows if row not in relation}
        if not fresh:  # no tuple of R dominates another: nothing changes
            return Relation()
        every = set(relation.tuples) | fresh
        dominated = self._dominated(name, every)
        self.db[name] = Relation(every - dominated)
        return Relation(fresh - dominated)

    def _dominated(self, name: str, every: set) -> set:
        """The tuples of ``every`` the rules of ``name``'s dominated tuples derive, with its
        pseudo relation of all tuples bound to ``every``."""
        pseudo, rules = self.subsumed[name]
        bound = Relation(every)
        found: set = set()
        for rule in rules:
            full = self._full(rule.body)

            def relation_for(position: int, body=rule.body, full=full) -> Relation:
                literal = body[position]
                atom = literal.atom if isinstance(literal, ast.Negation) else literal
                return bound if isinstance(atom, ast.Atom) and atom.predicate == pseudo else full(position)

            found.update(self._rows(rule, order_body(rule.body), relation_for))
        return found
