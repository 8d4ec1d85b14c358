"""The reference interpreter: a small, obviously-correct evaluator used as the test oracle.

``evaluate(program, edb)`` returns every IDB relation as a set of tuples;
``answer(program, query, edb)`` the answers of one query. The value semantics
every engine must match (arithmetic, comparison, types) live in :mod:`.terms`.
"""

from .interpreter import STRATEGIES, evaluate
from .query import answer

__all__ = ["answer", "evaluate", "STRATEGIES"]
