"""``.limitsize r(n=N)``: a relation keeps at most N facts, the same ones on every engine.

Soufflé exits a stratum's fixpoint loop once a limited relation holds N tuples; which ones
depends on its evaluation order. Here every engine runs the same rounds (the reference's loop,
``seminaive.rounds`` for the kernel and Spark; a non-recursive stratum is one round), so the
limit has one meaning: after a round, a limited relation whose facts and the round's new ones
reach N keeps its facts and the least new ones in value order (the order the greedy
``choice-domain`` uses: tuples compared column by column) up to exactly N, and the stratum
stops there (no further round; its other relations keep what they have). Facts stated in the
program (and an ``.input`` relation's input: ``syntax.input_rules``) are candidates of the
first round. The reference cuts Python rows (:func:`least`), the kernel a Polars frame
(``kernel.relation.SetRelation``), Spark a DataFrame (``eval.state.SetState``, and a
non-recursive stratum's plan in ``eval.driver``). Where such a stratum runs and that ``update``
recomputes it is decided in ``placement`` (``LIMITED``).
"""

from __future__ import annotations

from typing import Iterable, Optional

from .record_types import order_key


def room(limit: int, held: int) -> int:
    """How many new facts a relation holding ``held`` may still take under its ``limit``.

    >>> room(5, 3), room(5, 7)
    (2, 0)
    """
    return max(0, limit - held)


def least(rows: Iterable, count: Optional[int]) -> list:
    """The ``count`` least distinct ``rows`` in value order (all, in any order, when ``count``
    is None).

    >>> least({(2, "b"), (1, "z"), (2, "a")}, 2)
    [(1, 'z'), (2, 'a')]
    """
    if count is None:
        return list(set(rows))
    return sorted(set(rows), key=lambda row: tuple(map(order_key, row)))[:count]


def reached(relations: Iterable) -> bool:
    """Whether a limited relation among ``relations`` (the semi-naive loop's, each maybe with
    a ``reached`` flag) holds its N facts: the stratum stops."""
    return any(getattr(relation, "reached", False) for relation in relations)
