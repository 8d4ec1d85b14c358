"""Queries on the reference interpreter: the oracle for the magic-set rewrite.

``answer(program, "tc(1, X)", edb)`` evaluates the program the query plan chooses (with
``magic=False``, the default here: the whole program plus the answer rule) and returns the
answer rows as a set of tuples, one value per distinct named variable; a query without named
variables gives ``{(True,)}`` or ``{(False,)}``, like the one-row boolean answer on Spark.

Example::

    >>> import spark_datalog as sd
    >>> p = sd.Program.parse(".input e. tc(X,Y) :- e(X,Y). tc(X,Z) :- tc(X,Y), e(Y,Z).")
    >>> sorted(answer(p, "tc(1, X)", {"e": {(1, 2), (2, 3)}}))
    [(2,), (3,)]
"""

from __future__ import annotations

from typing import Optional

from ..analysis.checked import CheckedProgram
from ..bounds import MAX_ITERATIONS
from .interpreter import evaluate


def answer(
    program,
    query,
    edb: Optional[dict] = None,
    magic=False,
    strategy: str = "seminaive",
    max_iterations: int = MAX_ITERATIONS,
) -> set:
    """The answers of ``query`` (text, ``ast.Query`` or ``ast.Atom``) over ``edb``; ``magic``
    as for ``Program.query`` (``"auto"``, ``True``, ``False``)."""
    from ..program import Program
    from ..query.plan import plan_query

    if isinstance(program, CheckedProgram):
        program = Program(program)
    plan = plan_query(program, query, magic=magic)
    relations = plan.program.checked.relations
    bound = program.checked.bound_inputs(edb or {})
    given = {name: rows for name, rows in bound.items() if name in relations}
    rows = evaluate(plan.program, given, strategy=strategy, max_iterations=max_iterations)[plan.query.answer]
    if plan.query.is_ground:
        return {(bool(rows),)}
    return set(rows)
