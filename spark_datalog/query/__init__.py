"""Queries: ``?- tc(1, X).`` answered by a filtered read, by the magic-set rewrite or by full
evaluation (:mod:`.plan` decides). ``text`` checks a query and builds its answer rule, ``sips``
and ``magic`` rewrite the program for it, ``run`` answers it on Spark."""

from .plan import QueryPlan, plan_query
from .text import CheckedQuery, checked_query

__all__ = ["CheckedQuery", "QueryPlan", "checked_query", "plan_query"]
