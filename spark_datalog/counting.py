"""The one counting algorithm of a non-recursive stratum, for every backend.

A fact's count is its number of derivations; a change of the relations a rule reads changes
its head's counts by the telescoping sum of its terms (``plan.maintenance.counting_terms``;
``incremental.counting`` has the formula). Each term's derivations are weighted by the signed
counts of the facts they join (the product of the weights) and summed per head fact; the
terms of a relation are summed again, and facts whose change is zero are dropped. The frames
and their operations come from a :class:`Backend`: Spark's (``incremental.counting``) or the
kernel's in the driver (``incremental.counting_local``).
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol


class Backend(Protocol):
    """What counting needs of a backend's frames (of facts with a signed count)."""

    def plan_of(self, term: Any, frames: dict) -> Any:
        """The IR plan of a term (``term.plan``; an existence test's is made with its change,
        which the backend adds to ``frames``)."""

    def derivations(self, plan: Any, frames: Mapping, schema: Any) -> Any:
        """Per head fact of ``plan`` (as the relation ``schema``'s columns), the summed weight
        of its derivations."""

    def net(self, parts: list, schema: Any) -> Any:
        """The weights of ``parts`` summed per fact, zero sums dropped."""


def counted_changes(backend: Backend, checked, terms: list, frames: dict) -> dict:
    """Relation -> the change of its facts' derivation counts (``backend.net``) for every
    relation with a term among ``terms`` (``plan.maintenance.CountingTerm``), reading the
    ``@old`` / ``@new`` / ``@delta`` frames of ``frames``.

    >>> class Sets:  # a toy backend: a term's plan is a dict of fact -> weight
    ...     def plan_of(self, term, frames): return term.plan
    ...     def derivations(self, plan, frames, schema): return plan
    ...     def net(self, parts, schema):
    ...         total = {}
    ...         for part in parts:
    ...             for fact, weight in part.items(): total[fact] = total.get(fact, 0) + weight
    ...         return {fact: weight for fact, weight in total.items() if weight}
    >>> from types import SimpleNamespace as S
    >>> terms = [S(relation="p", plan={1: 1, 2: -1}), S(relation="p", plan={2: 1})]
    >>> counted_changes(Sets(), S(relations={"p": None}), terms, {})
    {'p': {1: 1}}
    """
    parts: dict = {}
    for term in terms:
        schema = checked.relations[term.relation]
        plan = backend.plan_of(term, frames)
        parts.setdefault(term.relation, []).append(backend.derivations(plan, frames, schema))
    return {name: backend.net(found, checked.relations[name]) for name, found in parts.items()}
