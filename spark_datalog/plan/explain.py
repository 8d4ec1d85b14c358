"""A deterministic, readable text of stratum plans: the basis of golden tests and debugging.

Example output (a recursive stratum whose rounds keep some columns in place *decomposes* by
them, see ``partitioning.decomposition``)::

    stratum 1: tc (recursive, decomposes by src)
      % tc(X, Z) :- tc(X, Y), arc(Y, Z).
      Project[src=X, dst=Z]
        Join on (Y)
          Scan tc(X, Y)
          Scan arc(Y, Z)
      variant: delta at atom 1 (tc)
      Project[src=X, dst=Z]
        Join on (Y)
          Scan tc(X, Y) [delta]
          Scan arc(Y, Z)

Each node is one line (its label), its children indented below it.
"""

from __future__ import annotations

from ..syntax import ast
from . import ir, maintenance
from .partitioning import decomposition

INDENT = "  "


def explain(stratum_plans, checked=None) -> str:
    """The text of every stratum, rule and semi-naive variant; ``checked`` adds relation schemas."""
    lines: list = []
    for stratum in stratum_plans:
        lines.append(_stratum_header(stratum))
        if checked is not None:
            lines += [INDENT + "relation " + str(checked.relations[name]) for name in stratum.relations]
        else:
            lines += [
                f"{INDENT}aggregate {name}: {spec.func} on column {spec.position}"
                for name, spec in stratum.aggregates.items()
            ]
        lines += [
            f"{INDENT}greedy choice-domain of {name}: keys " + ", ".join(_columns(key) for key in keys)
            for name, keys in stratum.choices.items()
        ]
        lines += [
            f"{INDENT}limit of {name}: at most {n} facts, the least new ones of the round reaching it"
            for name, n in stratum.limits.items()
        ]
        for name, (every, plans) in stratum.subsumed.items():
            lines.append(
                f"{INDENT}subsumption of {name} in each round: its dominated facts ({every}: its facts)"
            )
            lines += [line for rule_plan in plans for line in _plan_lines(rule_plan)]
        # each rule is followed by its semi-naive variants
        variants = list(stratum.delta_rules)
        for rule_plan in stratum.rules:
            lines += _plan_lines(rule_plan)
            lines += [line for v in variants if v.rule is rule_plan.rule for line in _plan_lines(v)]
            variants = [v for v in variants if v.rule is not rule_plan.rule]
        for variant in variants:  # variants of rules without a full plan (not made by plan_program)
            lines.append(INDENT + "% " + _rule_text(variant.rule))
            lines += _plan_lines(variant)
    return "\n".join(lines) + "\n"


def _columns(key: tuple) -> str:
    """Column positions as the column numbers they are: ``(1, 3)``."""
    return "(" + ", ".join(str(position + 1) for position in key) + ")"


def explain_maintenance(stratum_plans, checked) -> str:
    """The text of the plans incremental maintenance runs for every stratum
    (``plan.maintenance``), for a change of every relation each reads: DRed's seeds and
    group-repair plans for a recursive stratum, the telescoping terms of counting for a
    non-recursive one, the touched-group plans of its aggregate relations; a stratum calling
    ``autoinc()``, making a greedy choice, applying a subsumption in its rounds or limiting a
    relation is recomputed."""
    lines: list = []
    for stratum in stratum_plans:
        lower = sorted(_reads(stratum) - set(stratum.relations))
        if stratum.numbered:
            lines.append(
                _stratum_header(stratum) + ": recompute (autoinc() numbers all of a rule's bindings at once)"
            )
            continue
        if stratum.choices or stratum.subsumed or stratum.limits:
            lines.append(f"{_stratum_header(stratum)}: recompute ({_whole_reason(stratum)})")
            continue
        if stratum.recursive:
            lines.append(_stratum_header(stratum) + ": DRed")
            lines += _dred_lines(maintenance, checked, stratum, lower)
            continue
        lines.append(f"{_stratum_header(stratum)}: {_non_recursive_method(stratum)}")
        lines += _counting_lines(maintenance, checked, stratum, lower)
        for name in stratum.aggregates:
            lines.append(f"{INDENT}touched groups of {name}: the keys of the contributions that changed")
            for plan in maintenance.touched_plans(checked, stratum, name, lower):
                lines += explain_node(plan, depth=2)
    return "\n".join(lines) + "\n"


def _whole_reason(stratum) -> str:
    """Why a stratum making a greedy choice, removing dominated facts in its rounds or limiting
    a relation is recomputed."""
    if stratum.choices:
        return "choice-domain chooses greedily"
    return "subsumption in each round" if stratum.subsumed else ".limitsize keeps the least facts"


def _non_recursive_method(stratum) -> str:
    aggregates = set(stratum.aggregates)
    if not aggregates:
        return "counting"
    return "touched groups" if aggregates >= set(stratum.relations) else "counting, touched groups"


def _counting_lines(maintenance, checked, stratum, lower: list) -> list:
    """Each rule's telescoping terms, one per body literal over a lower relation."""
    lines: list = []
    rule_number = None
    for counted in maintenance.counting_terms(checked, stratum, lower):
        if counted.rule_number != rule_number:
            rule_number = counted.rule_number
            lines.append(INDENT + "% " + _rule_text(counted.rule))
        changed = counted.rule.body[counted.position].predicate.rsplit("@", 1)[0]
        lines.append(f"{INDENT}term: literal {counted.position + 1} ({changed}) changed")
        if counted.tests_existence:
            lines.append(INDENT * 2 + "(an existence test: its key atom is planned with its change)")
        else:
            lines += explain_node(counted.plan, depth=2)
    return lines


def _dred_lines(maintenance, checked, stratum, lower: list) -> list:
    """The seeds of each lower relation read (phase 1 and 3) and the group-repair plans."""
    lines = [INDENT + "re-derive: the stratum's rules over what remains, kept among the removed facts"]
    for seed in maintenance.seed_plans(checked, stratum, lower, lower):
        how = "as the delta" if seed.changed == "positive" else "negated, read as the delta"
        lines.append(f"{INDENT}seed of {seed.relation}: {seed.lower} {how}")
        lines += explain_node(seed.plan, depth=1)
    for name, plan in maintenance.group_rules(checked, stratum):
        lines.append(f"{INDENT}group repair of {name}: its rules from the repaired groups [delta]")
        lines += explain_node(plan, depth=1)
    if maintenance.levels_apply(checked, stratum):
        witnesses, successors = maintenance.level_plans(checked, stratum)
        for head, _, plan in witnesses:
            lines.append(f"{INDENT}level witness of {head}: its candidates [delta], facts of smaller level")
            lines += explain_node(plan, depth=1)
        for head, plan in successors:
            lines.append(f"{INDENT}level successors of {head}: dropped facts [delta], facts of greater level")
            lines += explain_node(plan, depth=1)
    return lines


def _reads(stratum) -> set:
    return {scan.relation for rule_plan in stratum.rules for scan in ir.scans(rule_plan.plan)}


def _plan_lines(rule_plan) -> list:
    """A full plan under its rule's text, or a variant under its label."""
    if rule_plan.delta_position is None:
        header = "% " + _rule_text(rule_plan.rule)
    else:
        body = rule_plan.rule.body
        atom = body[rule_plan.delta_position]
        # count positive atoms only: analysis may move comparisons, never atoms
        ordinal = sum(isinstance(lit, ast.Atom) for lit in body[: rule_plan.delta_position]) + 1
        header = f"variant: delta at atom {ordinal} ({atom.predicate})"
    return [INDENT + header] + explain_node(rule_plan.plan, depth=1)


def explain_node(node, depth: int = 0) -> list:
    """The lines of ``node``'s tree, one node per line, children indented one level deeper."""
    lines = [INDENT * depth + _LABELS[type(node)](node)]
    for child in ir.children(node):
        lines += explain_node(child, depth + 1)
    return lines


def _stratum_header(stratum) -> str:
    tags = (["recursive"] if stratum.recursive else []) + (["PreM"] if stratum.uses_prem else [])
    split = decomposition(stratum)
    if split is not None and split.key:
        columns = next(r.plan.columns for r in stratum.rules if r.relation == split.relations[0])
        tags.append("decomposes by " + _names(columns[i] for i in split.key))
    suffix = f" ({', '.join(tags)})" if tags else ""
    return f"stratum {stratum.index}: {', '.join(stratum.relations)}{suffix}"


def _rule_text(rule) -> str:
    text = rule.text or str(rule)
    return " ".join(text.split())  # one line, whatever the source layout


def _names(names) -> str:
    return ", ".join(names)


def _scan(node: ir.Scan) -> str:
    source = " [delta]" if node.source == "delta" else ""
    return f"Scan {node.relation}({_names(node.columns)}){source}"


def _select(node: ir.Select) -> str:
    return f"Select({', '.join(str(c) for c in node.conditions)})"


def _project(node: ir.Project) -> str:
    outputs = [name if expr == ir.ColumnRef(name) else f"{name}={expr}" for name, expr in node.outputs]
    return f"Project[{_names(outputs)}]"


def _join(node: ir.Join) -> str:
    return f"Join on ({_names(node.on)})" + (" [cross product]" if not node.on else "")


def _antijoin(node: ir.AntiJoin) -> str:
    return f"AntiJoin on ({_names(node.on)})" + (" [right side must be empty]" if not node.on else "")


def _semijoin(node: ir.SemiJoin) -> str:
    return f"SemiJoin on ({_names(node.on)})" + (" [exists]" if not node.on else "")


def _union(node: ir.Union_) -> str:
    return "Union"


def _distinct(node: ir.Distinct) -> str:
    return "Distinct"


def _aggregate(node: ir.Aggregate) -> str:
    return f"Aggregate[by ({_names(node.group_by)}); {node.output}={node.func}({node.argument})]"


def _number(node: ir.Number) -> str:
    return f"Number[{node.output}]"


def _generate(node: ir.Generate) -> str:
    return f"Generate[{node.output}={node.func}({_names(node.args)})]"


_LABELS = {
    ir.Scan: _scan,
    ir.Unit: lambda node: "Unit (one empty row)",
    ir.Select: _select,
    ir.Project: _project,
    ir.Join: _join,
    ir.AntiJoin: _antijoin,
    ir.SemiJoin: _semijoin,
    ir.Union_: _union,
    ir.Distinct: _distinct,
    ir.Aggregate: _aggregate,
    ir.Generate: _generate,
    ir.Number: _number,
}
