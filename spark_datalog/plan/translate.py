"""Checked rules to select-project-join plans (seed 004, Algorithm 1, with pushdown).

For one rule:

1. The positive atoms, in the order of :func:`order_atoms`, become scans with their constant and
   repeated-variable selections pushed onto them (:func:`scan_atom`), joined on their shared
   variables; an equality ``A = B`` between the two sides of a join is melded into it. A join
   with ``on=()`` (a product) appears only for genuinely disconnected atoms. An atom that binds
   no variable (``e(_, _)``, ``m()``) is an existence test: a ``SemiJoin`` on no columns.
2. Every other body literal is placed as soon as its variables are bound — on the atom's own
   node before the join when the atom binds them all, else right after the join that binds the
   last of them: comparisons become one ``Select``, negated atoms an ``AntiJoin`` (``on=()``
   when the negated atom shares no variable: left rows survive iff the right side is empty),
   assignments a ``Project`` keeping every column and adding the computed one, and a
   generator's assignment (``X = range(A, B)``) a ``Generate``: one row per value.
3. A rule calling ``autoinc()``: the literals using the calls' values are held back until the
   rest is placed; then the distinct bindings are numbered (``Number``), each call's value
   computed from the rank, and the held literals placed (:mod:`spark_datalog.syntax.autoinc`).
4. The head becomes a final ``Project`` naming the relation's columns, in order.

Head aggregates: the plan yields *contributions*, not the aggregated relation. For count, sum
and avg the body is reduced to the distinct satisfying assignments of its named variables
(``Distinct``), then projected to the relation's columns (group columns, and the aggregated
variable at the aggregate position). For min and max the ``Distinct`` is left out — duplicates
cannot change a minimum, and it would cost a shuffle in every iteration of a PreM recursion.
The driver unions the contributions of every rule of the relation and aggregates them per group
using ``StratumPlan.aggregates``.
"""

from __future__ import annotations

from typing import Optional

from .. import functors
from ..analysis.checked import CheckedProgram
from ..syntax import ast
from . import ir
from .delta import delta_variants
from .expressions import coerce, to_compare, to_expr, variable_types
from .merge_projects import merge_projects
from .order_atoms import order_atoms
from .scan_atom import FRESH_PREFIX, expression_arguments, is_fresh, scan_atom
from ..syntax.autoinc import Numbering, is_counter, numbering


def plan_program(checked: CheckedProgram) -> tuple:
    """One ``StratumPlan`` per stratum of ``checked`` that an output needs
    (``checked.evaluated``), in evaluation order."""
    plans = []
    for stratum in checked.evaluated:
        aggregates = {
            name: checked.relations[name].aggregate
            for name in stratum.relations
            if checked.relations[name].aggregate is not None
        }
        plans.append(
            ir.StratumPlan(
                index=stratum.index,
                relations=stratum.relations,
                recursive=stratum.recursive,
                uses_prem=stratum.uses_prem,
                rules=tuple(plan_rule(rule, checked) for rule in stratum.rules),
                delta_rules=tuple(
                    variant for rule in stratum.rules for variant in delta_variants(rule, checked, stratum)
                ),
                aggregates=aggregates,
                choices={name: keys for name, keys in checked.choices.items() if name in stratum.relations},
                subsumed=_subsumed(checked, stratum),
                limits={name: n for name, n in checked.limits.items() if name in stratum.relations},
            )
        )
    return tuple(plans)


def _subsumed(checked: CheckedProgram, stratum) -> dict:
    """Relation of ``stratum`` -> (its pseudo relation of all tuples, the plans of its dominated
    tuples) for each subsumption the stratum's rounds apply."""
    return {
        name: (every, tuple(plan_rule(rule, checked) for rule in rules))
        for name, (every, rules) in checked.subsumed.items()
        if name in stratum.relations
    }


def plan_rule(rule: ast.Rule, checked: CheckedProgram, delta_position: Optional[int] = None) -> ir.RulePlan:
    """The plan of ``rule``; with ``delta_position`` the atom at that body index reads the delta."""
    relations = checked.relations
    body = rule.body
    var_types = variable_types(body, relations)
    # (body index, literal) still to place; arithmetic atom arguments add equalities
    pending = [(i, literal) for i, literal in enumerate(body) if not isinstance(literal, ast.Atom)]
    counters = numbering(body)
    held = [item for item in pending if counters is not None and item[0] in counters.held]
    pending = [item for item in pending if item not in held]
    held = [item for item in held if not is_counter(item[1])]  # Number computes them
    node, tests = None, []
    for i in order_atoms(body, first=delta_position, carried=carried_variables(rule, delta_position)):
        atom = body[i]
        source = "delta" if i == delta_position else "full"
        atom_node = scan_atom(atom, i, relations[atom.predicate].types, source)
        if binds_nothing(atom):  # an existence test, placed once there are rows to filter
            tests.append(atom_node)
            continue
        computed = expression_arguments(atom, i)
        if node is not None:  # join on `p(X + 1)`'s argument if X is already bound
            node = _compute(node, [(f, t) for f, t in computed if _terms_bound(t, node)], var_types)
            computed = [(f, t) for f, t in computed if f not in node.columns]
        pending += [(i, ast.Comparison("=", ast.Variable(f), t, atom.span)) for f, t in computed]
        atom_node, pending = _place_ready(atom_node, pending, relations, var_types)
        if node is not None:
            atom_node, pending = _equate(node, atom_node, pending)
            atom_node = ir.Join(node, atom_node, on=_shared(node, atom_node))
        node, pending = _place_ready(atom_node, pending, relations, var_types)
        node, tests = _exists(node, tests), []
    if node is None:  # no binding atom: start from the one-row, no-column relation
        node, pending = _place_ready(ir.Unit(), pending, relations, var_types)
    node = _exists(node, tests)
    if counters is not None and not pending:
        node, pending = _place_ready(_numbered(node, counters), held, relations, var_types)
    if pending:
        unplaced = ", ".join(str(literal) for _, literal in pending)
        raise ValueError(f"{rule.span}: unbound variables in {unplaced} (rule {rule})")
    plan = merge_projects(_head(rule, node, relations[rule.head.predicate], var_types))
    return ir.RulePlan(rule=rule, relation=rule.head.predicate, plan=plan, delta_position=delta_position)


def carried_variables(rule: ast.Rule, delta_position: Optional[int]) -> frozenset:
    """Variables the delta atom, over the head's relation, holds at the same positions as the
    head: the recursion carries them unchanged (``X`` in ``tc(X, Z) :- tc(X, Y), arc(Y, Z).``)."""
    if delta_position is None:
        return frozenset()
    delta = rule.body[delta_position]
    if not isinstance(delta, ast.Atom) or delta.predicate != rule.head.predicate:
        return frozenset()
    return frozenset(
        h.name
        for h, b in zip(rule.head.args, delta.args, strict=True)
        if isinstance(h, ast.Variable)
        and isinstance(b, ast.Variable)
        and not h.anonymous
        and h.name == b.name
    )


def binds_nothing(atom: ast.Atom) -> bool:
    """Whether a positive ``atom`` binds no variable (only ``_`` and constants: ``e(_, _)``,
    ``m()``, ``e(1, _)``): it only tests that a matching fact exists, and is planned as a
    ``SemiJoin`` on no columns, not a join that would multiply the rows by its facts."""
    return all(v.anonymous for arg in atom.args for v in ast.term_variables(arg))


def _exists(node, tests: list):
    """``node`` filtered by the existence tests (scans of atoms that bind nothing)."""
    for test in tests:
        node = ir.SemiJoin(node, test, on=())
    return node


def _shared(left, right) -> tuple:
    return tuple(c for c in left.columns if c in right.columns)


def _equate(left, right, pending):
    """Meld ``A = B`` (A bound on the left, B on the right) into the coming join: the right side
    gets a copy of B named A, so the join matches on it instead of a product and a selection."""
    for item in list(pending):
        literal = item[1]
        if not (isinstance(literal, ast.Comparison) and literal.op == "="):
            continue
        sides = (literal.left, literal.right)
        if not all(isinstance(v, ast.Variable) and not v.anonymous for v in sides):
            continue
        for a, b in ((sides[0].name, sides[1].name), (sides[1].name, sides[0].name)):
            if a in left.columns and a not in right.columns and b in right.columns and b not in left.columns:
                outputs = tuple((c, ir.ColumnRef(c)) for c in right.columns) + ((a, ir.ColumnRef(b)),)
                right = ir.Project(right, outputs)
                pending = [p for p in pending if p is not item]
                break
    return right, pending


def _inputs(literal) -> set:
    """Variables that must be bound before ``literal`` can be placed."""
    if isinstance(literal, ast.Assignment):
        return {v.name for v in ast.term_variables(literal.expr)}
    return {v.name for v in ast.literal_variables(literal) if not v.anonymous}


def _place_ready(node, pending, relations, var_types):
    """Place every pending literal whose inputs ``node`` binds; returns (node, still pending)."""
    while True:
        bound = set(node.columns)
        ready = [(i, literal) for i, literal in pending if _inputs(literal) <= bound]
        if not ready:
            return node, pending
        pending = [item for item in pending if item not in ready]
        conditions = [
            to_compare(literal.op, literal.left, literal.right, var_types)
            for _, literal in ready
            if isinstance(literal, ast.Comparison)
        ]
        if conditions:
            node = ir.Select(node, tuple(conditions))
        for i, literal in ready:
            if isinstance(literal, ast.Negation):
                node = _antijoin(node, literal.atom, i, relations, var_types)
            elif isinstance(literal, ast.Assignment):
                node = _assign(node, literal, var_types)


def _antijoin(node, atom: ast.Atom, index: int, relations, var_types):
    """``node`` without the rows matching the negated ``atom`` (all its variables are bound)."""
    right = scan_atom(atom, index, relations[atom.predicate].types)
    computed = expression_arguments(atom, index)
    if not computed:
        return ir.AntiJoin(node, right, on=right.columns)
    # `not p(X + 1)`: compute the argument on the left, match it, then drop it again
    antijoin = ir.AntiJoin(_compute(node, computed, var_types), right, on=right.columns)
    return ir.Project(antijoin, tuple((c, ir.ColumnRef(c)) for c in node.columns))


def _terms_bound(term, node) -> bool:
    return {v.name for v in ast.term_variables(term)} <= set(node.columns)


def _compute(node, computed, var_types):
    """``node`` plus a column per (name, term) of ``computed``."""
    if not computed:
        return node
    keep = tuple((c, ir.ColumnRef(c)) for c in node.columns)
    return ir.Project(node, keep + tuple((f, to_expr(t, var_types)) for f, t in computed))


def _assign(node, assignment: ast.Assignment, var_types):
    name = assignment.variable.name
    if isinstance(assignment.expr, ast.Call) and assignment.expr.name in functors.GENERATORS:
        return _generate(node, name, assignment.expr, var_types)
    if name in node.columns:  # already bound (by an earlier assignment): it is a test
        return ir.Select(node, (to_compare("=", assignment.variable, assignment.expr, var_types),))
    outputs = tuple((c, ir.ColumnRef(c)) for c in node.columns)
    return ir.Project(node, outputs + ((name, to_expr(assignment.expr, var_types)),))


def _generate(node, name: str, call: ast.Call, var_types):
    """``node`` with one row per value of the generator ``call`` in column ``name`` (a test
    of the values when ``name`` is bound already). Arguments that are not plain columns are
    computed into temporary columns first, dropped after."""
    keep = tuple((c, ir.ColumnRef(c)) for c in node.columns)
    computed, args = [], []
    for k, arg in enumerate(call.args):
        expr = to_expr(arg, var_types)
        if isinstance(expr, ir.ColumnRef):
            args.append(expr.name)
        else:
            args.append(f"{FRESH_PREFIX}{name}_{call.name}{k}")
            computed.append((args[-1], expr))
    child = ir.Project(node, keep + tuple(computed)) if computed else node
    output = name if name not in node.columns else f"{FRESH_PREFIX}{name}_{call.name}"
    typed = to_expr(call, var_types)
    assert isinstance(typed, ir.Call)
    generated = ir.Generate(child, call.name, tuple(args), output, typed.type)
    if output != name:
        test = ir.Compare("=", ir.ColumnRef(name), ir.ColumnRef(output))
        return ir.Project(ir.Select(generated, (test,)), keep)
    if computed:
        return ir.Project(generated, keep + ((name, ir.ColumnRef(name)),))
    return generated


def _numbered(node, counters: Numbering):
    """The distinct bindings of ``counters.key`` in ``node``, each with the value of every
    ``autoinc`` call (``rank * sites + site``, :mod:`spark_datalog.syntax.autoinc`)."""
    rank = f"{FRESH_PREFIX}rank"
    keys = tuple((c, ir.ColumnRef(c)) for c in counters.key)
    ranked = ir.Number(ir.Distinct(ir.Project(node, keys)), rank)
    values = tuple((name, _counter_value(rank, site, sites)) for name, site, sites in counters.calls)
    return ir.Project(ranked, keys + values)


def _counter_value(rank: str, site: int, sites: int) -> ir.Expr:
    scaled = ir.Arithmetic("*", ir.ColumnRef(rank), ir.Literal(sites, "long"), "long")
    return ir.Arithmetic("+", scaled, ir.Literal(site, "long"), "long")


def _head(rule: ast.Rule, node, schema, var_types):
    if rule.aggregate is not None and rule.aggregate[1].func not in ast.PREMAPPABLE_FUNCTIONS:
        named = tuple(c for c in node.columns if not is_fresh(c))
        if named != node.columns:
            node = ir.Project(node, tuple((c, ir.ColumnRef(c)) for c in named))
        node = ir.Distinct(node)
    outputs: list = []
    for name, column_type, arg in zip(schema.column_names, schema.types, rule.head.args, strict=True):
        if isinstance(arg, ast.Aggregate):
            outputs.append((name, ir.ColumnRef(arg.variable.name)))
        else:
            outputs.append((name, coerce(to_expr(arg, var_types), column_type)))
    return ir.Project(node, tuple(outputs))
