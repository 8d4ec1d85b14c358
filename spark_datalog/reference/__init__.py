"""The reference interpreter: a small, obviously-correct evaluator used as the test oracle.

``evaluate(program, edb)`` returns every IDB relation as a set of tuples. The value semantics
every engine must match (arithmetic, comparison, types) live in :mod:`.terms`.
"""

from .interpreter import STRATEGIES, evaluate

__all__ = ["evaluate", "STRATEGIES"]
