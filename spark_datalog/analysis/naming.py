"""Column names of relations without ``.decl``.

An undeclared relation defined by rules takes its column names from the head of its *first*
rule in the program text (as SQL's ``UNION`` takes them from its first ``SELECT``):

- a plain variable names its column (``?x`` gives ``x``);
- a head aggregate names it ``<func>_<variable>`` (``count<Y>`` gives ``count_Y``);
- anything else keeps the positional name ``c<position>``: a constant or an expression, a
  variable starting with ``_`` (names starting with ``_`` are the engine's: ``_count``), and a
  name that two positions would share, compared ignoring case as Spark and Delta compare column
  names (``p(X, X)``, ``p(X, ?x)``), or that equals the positional name of another position.

Relations without rules (inputs and facts) keep ``c0, c1, ...``; declared ones their declared
names. Example::

    >>> from spark_datalog.syntax.parser import parse
    >>> head_names(parse("tc(X, Y) :- arc(X, Y). tc(X, Z) :- tc(X, Y), arc(Y, Z).").rules)
    {'tc': ('X', 'Y')}
"""

from __future__ import annotations

from typing import Optional

from ..syntax import ast


def positional(position: int) -> str:
    """The name of a column that nothing else names: ``c<position>``."""
    return f"c{position}"


def head_names(rules) -> dict:
    """``{relation: (name, ...)}`` for every relation with a rule, from its first rule's head."""
    names: dict = {}
    for rule in rules:
        head = rule.head
        if head.predicate not in names:
            names[head.predicate] = unique_names([_candidate(arg) for arg in head.args])
    return names


def _candidate(arg) -> Optional[str]:
    """The name a head argument gives its column, or ``None``."""
    if type(arg) is ast.Aggregate:
        variable = _candidate(arg.variable)
        return None if variable is None else f"{arg.func}_{variable}"
    if type(arg) is not ast.Variable or arg.anonymous:
        return None
    name = arg.name.removeprefix("?")
    return None if name.startswith("_") else name


def unique_names(candidates: list) -> tuple:
    """Each candidate, or its positional name where it is ``None`` or would not be unique.

    Example::

        >>> unique_names(["X", None, "x", "c1", "Y"])
        ('c0', 'c1', 'c2', 'c3', 'Y')
    """
    folded = [None if c is None else c.casefold() for c in candidates]
    kept = [c if c is not None and folded.count(c.casefold()) == 1 else None for c in candidates]
    while True:
        taken = {positional(i) for i, c in enumerate(kept) if c is None}
        clashing = [i for i, c in enumerate(kept) if c is not None and c.casefold() in taken]
        if not clashing:
            return tuple(positional(i) if c is None else c for i, c in enumerate(kept))
        for i in clashing:
            kept[i] = None
