"""The plans of incremental maintenance, made by the translator like a stratum's own plans.

Every backend runs these plans (the kernel in the driver or in a task, Spark in rounds); none
makes its own. ``explain(maintenance=True)`` shows them (``plan.explain.explain_maintenance``).

- **DRed** (a recursive stratum, :func:`dred_plans`): the *seeds*, each rule read with one lower
  literal as its delta over the facts that changed there (:func:`seed_plans`; a negated literal
  read as a positive atom over the facts that appeared or disappeared); over-deletion seeds
  read what disappeared under a positive atom (appeared under a negation), insertion seeds the
  other way round. Re-derivation runs the rules themselves; a min/max relation's rules are also
  read from the groups being repaired (:func:`rederive_plan`).
- **Derivation levels** (a linear recursive stratum, :func:`levels_apply`; ``incremental.levels``):
  per rule its *witness* plan (candidates of its head -> the facts of the stratum with a smaller
  level its derivations read) and per recursive rule its *successors* plan (dropped facts -> the
  facts they derive with a greater level), :func:`level_plans`.
- **Counting** (a non-recursive stratum, :func:`counting_terms`): the telescoping sum of each
  rule, one term per body literal over a changed relation (``incremental.counting`` has the
  formula): atoms before it read ``<relation>@new``, after it ``<relation>@old``, the literal
  itself ``<relation>@delta`` (``@negdelta`` when negated). A term whose literal tests existence
  (``not q(X, _)``, ``q(_, _)``) has no plan here: its key atom is planned with its change.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from ..syntax import ast
from ..analysis.checked import Column, RelationSchema
from . import ir
from .partitioning import is_linear
from .translate import binds_nothing, plan_rule

OLD, NEW, DELTA, NEG_DELTA = "@old", "@new", "@delta", "@negdelta"


@dataclass(frozen=True)
class Seed:
    """A rule read with one changed lower literal as its delta: ``plan`` derives ``relation``
    and reads ``(lower, "delta")``, the facts of ``lower`` that ``changed`` (``"inserted"`` or
    ``"deleted"``)."""

    relation: str
    plan: object
    lower: str
    changed: str


@dataclass(frozen=True)
class DredPlans:
    """The plans DRed runs for one stratum (pickled into a Spark task)."""

    relations: tuple  # ir.LocalRelation of each relation of the stratum (columns, types, min/max)
    rules: tuple  # (relation, IR plan) of every rule, for re-deriving
    delta_rules: tuple  # (relation, IR plan) of the semi-naive variants
    over_seeds: tuple  # Seed, phase 1
    insert_seeds: tuple  # Seed, phase 3
    facts: dict = field(default_factory=dict)  # relation -> the program's stated facts
    # (relation, IR plan) of each rule of a min/max relation read from its head's groups
    # (``(relation, "delta")``, any value there): phase 2 of group repair
    group_rules: tuple = ()

    @property
    def names(self) -> tuple:
        return tuple(relation.name for relation in self.relations)

    @property
    def regroups(self) -> bool:
        """Whether removals repair groups (every relation min/max) rather than over-delete."""
        return all(relation.best is not None for relation in self.relations)


def dred_plans(checked, stratum_plan, inserted: set, deleted: set) -> DredPlans:
    """The DRed plans of the recursive stratum ``stratum_plan`` when the lower relations
    ``inserted`` gained facts and those of ``deleted`` lost some."""

    def seeds(positive, negated, positive_kind, negated_kind):
        return tuple(
            dataclasses.replace(seed, changed=positive_kind if seed.changed == "positive" else negated_kind)
            for seed in seed_plans(checked, stratum_plan, positive, negated)
        )

    return DredPlans(
        relations=tuple(relation_shape(checked, stratum_plan, name) for name in stratum_plan.relations),
        rules=tuple((r.relation, r.plan) for r in stratum_plan.rules),
        delta_rules=tuple((r.relation, r.plan) for r in stratum_plan.delta_rules),
        # phase 1: deleted facts under positive atoms, appeared ones under negated atoms
        over_seeds=seeds(deleted, inserted, "deleted", "inserted"),
        # phase 3: the other way round
        insert_seeds=seeds(inserted, deleted, "inserted", "deleted"),
        facts={name: tuple(checked.facts.get(name, ())) for name in stratum_plan.relations},
        group_rules=group_rules(checked, stratum_plan),
    )


def seed_plans(checked, stratum_plan, positive: Iterable, negated: Iterable) -> list:
    """A :class:`Seed` for every rule of the stratum and every literal of it over a changed
    lower relation: a positive atom over a relation of ``positive`` (``changed="positive"``),
    or a negated atom over one of ``negated`` (``changed="negated"``, read as a positive atom,
    see :func:`negation_variant`)."""
    positive, negated = set(positive), set(negated)
    seeds = []
    for rule_plan in stratum_plan.rules:
        rule = rule_plan.rule
        for i, literal in enumerate(rule.body):
            if isinstance(literal, ast.Atom) and literal.predicate in positive:
                lower, kind, variant = literal.predicate, "positive", rule
            elif isinstance(literal, ast.Negation) and literal.atom.predicate in negated:
                lower, kind, variant = literal.atom.predicate, "negated", negation_variant(rule, i)
            else:
                continue
            seeds.append(
                Seed(rule_plan.relation, plan_rule(variant, checked, delta_position=i).plan, lower, kind)
            )
    return seeds


def negation_variant(rule: ast.Rule, i: int) -> ast.Rule:
    """``rule`` with the negated literal i read as a positive atom (over the changed facts);
    a negation with ``_`` stays as well, since one changed fact does not decide it."""
    literal = rule.body[i]
    body = rule.body[:i] + (literal.atom,) + rule.body[i + 1 :]
    if not is_plain(literal.atom):
        body += (literal,)
    return dataclasses.replace(rule, body=body)


def group_rules(checked, stratum_plan) -> tuple:
    """(relation, plan) of each rule of a min/max relation read from its head's groups: phase 2
    of group repair (``kernel.dred``)."""
    own = frozenset(stratum_plan.relations)
    aggregates = stratum_plan.aggregates
    return tuple(
        (r.relation, rederive_plan(checked, r.rule, own, aggregates[r.relation].position))
        for r in stratum_plan.rules
        if r.relation in aggregates
    )


def rederive_plan(checked, rule: ast.Rule, own: frozenset, position: Optional[int] = None) -> ir.Node:
    """The plan of ``rule`` restricted to heads among the over-deleted facts: the head atom is
    added to the body, read from ``(relation, "delta")`` and joined first, and the atoms of the
    stratum (``own``) are joined last, so the join starts from the over-deleted facts and only
    looks the stratum's remaining facts up. With ``position`` (a min/max relation's value),
    the head atom matches the group only: any value there."""
    body = rule.body
    lower = tuple(
        literal for literal in body if not (isinstance(literal, ast.Atom) and literal.predicate in own)
    )
    mine = tuple(literal for literal in body if isinstance(literal, ast.Atom) and literal.predicate in own)
    args = rule.head.args
    if position is not None:
        anonymous = ast.Variable("_#group", rule.head.span, anonymous=True)
        args = args[:position] + (anonymous,) + args[position + 1 :]
    head = ast.Atom(rule.head.predicate, args, rule.head.span)
    restricted = dataclasses.replace(rule, body=(head,) + lower + mine)
    return plan_rule(restricted, checked, delta_position=0).plan


def relation_shape(checked, stratum_plan, name: str, kind: Optional[str] = None) -> ir.LocalRelation:
    """The columns of relation ``name`` as a block of a task (``kind:name``), or as the
    stratum's relation (with its min/max) when there is no ``kind``."""
    schema = checked.relations[name]
    spec = stratum_plan.aggregates.get(name) if kind is None else None
    return ir.LocalRelation(
        name if kind is None else f"{kind}:{name}",
        tuple(schema.column_names),
        tuple(schema.types),
        (spec.func, spec.position) if spec is not None else None,
    )


# -- counting -------------------------------------------------------------------------------


@dataclass(frozen=True)
class CountingTerm:
    """One term of a rule's telescoping sum: ``rule`` (the ``rule_number``-th of the stratum,
    deriving ``relation``) rewritten with body literal ``position`` read as the change and its
    other atoms as ``@new`` / ``@old``; ``plan`` its IR, None for an existence test (its key
    atom is planned with its change, ``incremental.counting``)."""

    relation: str
    rule_number: int
    position: int
    rule: ast.Rule
    plan: Optional[ir.Node]

    @property
    def tests_existence(self) -> bool:
        return self.plan is None


def counting_terms(checked, stratum_plan, changed: Iterable) -> list:
    """The :class:`CountingTerm` of every rule of the non-recursive stratum (but those of
    aggregate relations) and every body literal over a relation of ``changed``."""
    changed = set(changed)
    terms = []
    for number, rule_plan in enumerate(stratum_plan.rules):
        if rule_plan.relation in stratum_plan.aggregates:
            continue
        for i, literal in enumerate(rule_plan.rule.body):
            atom = body_atom(literal)
            if atom is None or atom.predicate not in changed:
                continue
            variant = term(rule_plan.rule, i)
            negated = isinstance(literal, ast.Negation)
            exists = binds_nothing(atom) or (negated and not is_plain(atom))
            plan = None if exists else plan_rule(variant, aliased(checked, variant), delta_position=i).plan
            terms.append(CountingTerm(rule_plan.relation, number, i, variant, plan))
    return terms


def touched_plans(checked, stratum_plan, name: str, changed: Iterable) -> list:
    """The plans of the contributions to the aggregate relation ``name`` that read a relation
    of ``changed``: each rule with its head aggregate replaced by the aggregated variable (the
    touched groups need the contributions' keys), as the terms of the telescoping sum, a
    negated literal read over its relation's change (``@delta``) as well."""
    changed = set(changed)
    plans = []
    for rule_plan in stratum_plan.rules:
        if rule_plan.relation != name:
            continue
        rule = _plain_head(rule_plan.rule)
        for i, literal in enumerate(rule.body):
            atom = body_atom(literal)
            if atom is not None and atom.predicate in changed:
                variant = term(rule, i, negated_suffix=DELTA)
                plans.append(plan_rule(variant, aliased(checked, variant), delta_position=i).plan)
    return plans


def _plain_head(rule: ast.Rule) -> ast.Rule:
    """``rule`` with its head aggregate replaced by the aggregated variable."""
    args = tuple(a.variable if isinstance(a, ast.Aggregate) else a for a in rule.head.args)
    return dataclasses.replace(rule, head=dataclasses.replace(rule.head, args=args))


def term(rule: ast.Rule, i: int, negated_suffix: str = NEG_DELTA) -> ast.Rule:
    """Rule ``rule`` rewritten as the i-th term of the telescoping sum: atoms before literal i
    read ``<relation>@new``, after it ``<relation>@old``; literal i becomes a positive atom over
    ``<relation>@delta`` (``negated_suffix`` for a negated one)."""
    body = []
    for j, literal in enumerate(rule.body):
        atom = body_atom(literal)
        if atom is None:
            body.append(literal)
        elif j == i:
            suffix = negated_suffix if isinstance(literal, ast.Negation) else DELTA
            body.append(dataclasses.replace(atom, predicate=atom.predicate + suffix))
        else:
            renamed = dataclasses.replace(atom, predicate=atom.predicate + (NEW if j < i else OLD))
            body.append(
                dataclasses.replace(literal, atom=renamed) if isinstance(literal, ast.Negation) else renamed
            )
    return dataclasses.replace(rule, body=tuple(body))


def body_atom(literal) -> Optional[ast.Atom]:
    """The atom of a positive or negated body literal, else None."""
    if isinstance(literal, ast.Atom):
        return literal
    if isinstance(literal, ast.Negation):
        return literal.atom
    return None


def is_plain(atom: ast.Atom) -> bool:
    """No ``_`` among the arguments (so ``not`` tests one fact, and its change joins as a fact)."""
    return not any(
        isinstance(v, ast.Variable) and v.anonymous for arg in atom.args for v in ast.term_variables(arg)
    )


def aliased(checked, rule: ast.Rule, extra: Optional[dict] = None) -> Any:
    """``checked`` knowing the aliases (``arc@old`` …) the atoms of ``rule`` read, with their
    bases' schemas, and the schemas of ``extra`` (alias -> RelationSchema)."""
    relations = dict(checked.relations)
    for literal in rule.body:
        atom = body_atom(literal)
        if atom is not None and atom.predicate not in relations and "@" in atom.predicate:
            base = atom.predicate.rsplit("@", 1)[0]
            relations[atom.predicate] = dataclasses.replace(checked.relations[base], name=atom.predicate)
    relations.update(extra or {})
    return dataclasses.replace(checked, relations=relations)


# -- derivation levels ------------------------------------------------------------------------

CANDIDATES = "#candidates:"  # (name, "delta"): facts to decide, with their level
LEVELS = "#levels:"  # (name, "full"): the stratum's old facts with their levels
LEVEL = "_level"  # the column of a fact's level (``storage.levels``)


def levels_apply(checked, stratum_plan) -> bool:
    """True for a stratum maintained with levels: recursive and linear, its relations all sets
    or all min/max ones without a double value (whose stored best may differ in the last bit
    from the same derivation computed again, which would hide a derivation of it). Not a
    stratum run as a whole (``autoinc()``, a greedy choice): an update recomputes it."""
    if not (stratum_plan.recursive and is_linear(stratum_plan)) or stratum_plan.whole:
        return False
    aggregates = stratum_plan.aggregates
    return not aggregates or (
        set(aggregates) == set(stratum_plan.relations)
        and all(
            checked.relations[name].columns[spec.position].type != "double"
            for name, spec in aggregates.items()
        )
    )


def level_plans(checked, stratum_plan) -> tuple:
    """(witnesses, successors) of a levelled stratum: ``(head, body relation or None, plan)``
    of every rule's ``#witness`` plan and ``(head, plan)`` of every recursive rule's
    ``#successors`` plan (:func:`levelled_plan`)."""
    own = frozenset(stratum_plan.relations)
    witnesses, successors = [], []
    for rule_plan in stratum_plan.rules:
        rule = rule_plan.rule
        mine = [a.predicate for a in rule.body if isinstance(a, ast.Atom) and a.predicate in own]
        body = mine[0] if mine else None
        witnesses.append((rule.head.predicate, body, levelled_plan(checked, rule, own, True)))
        if body is not None:
            successors.append((rule.head.predicate, levelled_plan(checked, rule, own, False)))
    return witnesses, successors


def levelled_plan(checked, rule: ast.Rule, own: frozenset, from_head: bool) -> ir.Node:
    """The IR plan of ``rule`` read from its head (``from_head``: the ``#witness`` plan) or
    from its fact of the stratum (the ``#successors`` plan), each side with its level: the
    side read first from ``(CANDIDATES + relation, "delta")``, the other looked up in
    ``(LEVELS + relation, "full")``, the second's level smaller than the head's."""
    span = rule.head.span
    relations = dict(checked.relations)

    def levelled(atom, prefix, level):
        schema = checked.relations[atom.predicate]
        name = prefix + atom.predicate
        relations[name] = RelationSchema(name, schema.columns + (Column(LEVEL, "long"),), "idb")
        return ast.Atom(name, atom.args + (level,), atom.span)

    # a min/max head is read with its value: only derivations of that value support it
    rule = dataclasses.replace(
        rule,
        head=ast.Atom(
            rule.head.predicate,
            tuple(arg.variable if isinstance(arg, ast.Aggregate) else arg for arg in rule.head.args),
            span,
        ),
    )
    head_level = ast.Variable("_#head_level", span)
    body_level = ast.Variable("_#body_level", span)
    mine = [literal for literal in rule.body if isinstance(literal, ast.Atom) and literal.predicate in own]
    lower = tuple(
        literal for literal in rule.body if not (isinstance(literal, ast.Atom) and literal.predicate in own)
    )
    smaller = ast.Comparison("<", body_level, head_level, span)
    if from_head:
        body = (levelled(rule.head, CANDIDATES, head_level),) + lower
        outputs = rule.head.args
        types = checked.relations[rule.head.predicate].types
        if mine:
            body += (levelled(mine[0], LEVELS, body_level), smaller)
            outputs += mine[0].args
            types += checked.relations[mine[0].predicate].types
    else:
        body = (
            (levelled(mine[0], CANDIDATES, body_level),)
            + lower
            + (levelled(rule.head, LEVELS, head_level), smaller)
        )
        outputs = rule.head.args + (head_level,)
        types = checked.relations[rule.head.predicate].types + ("long",)
    relations["#pair"] = RelationSchema(
        "#pair", tuple(Column(f"c{i}", t) for i, t in enumerate(types)), "idb"
    )
    paired = dataclasses.replace(rule, head=ast.Atom("#pair", outputs, span), body=body)
    return plan_rule(paired, dataclasses.replace(checked, relations=relations), delta_position=0).plan
