"""Semi-naive variants of a recursive rule (as Soufflé does it, at translation time).

A rule of a recursive stratum with k positive body atoms over relations of that same stratum
gets k variants; the i-th reads the delta (the facts new in the previous iteration) at the i-th
such atom and the full relation everywhere else. Negated atoms and aggregates never refer to the
rule's own stratum (stratification), so they always read full relations.
"""

from __future__ import annotations

from ..analysis.checked import CheckedProgram, Stratum
from ..syntax import ast


def delta_variants(rule: ast.Rule, checked: CheckedProgram, stratum: Stratum) -> tuple:
    """The semi-naive ``RulePlan`` variants of ``rule`` (empty outside a recursive stratum)."""
    from .translate import plan_rule  # translate imports this module

    if not stratum.recursive:
        return ()
    return tuple(
        plan_rule(rule, checked, delta_position=i)
        for i, literal in enumerate(rule.body)
        if isinstance(literal, ast.Atom) and literal.predicate in stratum.relations
    )
