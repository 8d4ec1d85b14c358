"""How a query is answered: the one place that decides, and says why.

Three ways, tried in this order:

- ``stored``: the queried relation is materialized in the warehouse and current (the program
  and every table are as the last committed run left them): the answer rule runs over the
  stored table alone, a filtered read.
- ``magic``: the magic-set rewrite (:mod:`.magic`) of the program and the answer rule, which
  derives only what the query needs. ``magic="auto"`` (default) uses it when the query binds an
  argument of a derived relation and the rewritten program is stratified; ``magic=True``
  requires it (a ``StratificationError`` says why it cannot); ``magic=False`` never uses it.
- ``full``: the program plus the answer rule, evaluated for the answer relation only (the
  strata the queried relation needs).

Example::

    >>> import spark_datalog as sd
    >>> p = sd.Program.parse(".input arc. tc(X, Y) :- arc(X, Y). tc(X, Z) :- tc(X, Y), arc(Y, Z).")
    >>> plan = plan_query(p, "tc(1, X)")
    >>> plan.strategy, plan.reason
    ('magic', 'argument 1 of tc is bound: only the facts it needs are derived')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Union

from ..analysis import analyse
from ..errors import DatalogError, StratificationError
from ..syntax import ast
from .magic import NotRewritable, rewrite
from .text import CheckedQuery, checked_query, query_program

if TYPE_CHECKING:
    from ..program import Program

MAGIC_CHOICES = ("auto", True, False)


@dataclass(frozen=True)
class QueryPlan:
    """The decision for one query: ``strategy`` (``stored``, ``magic`` or ``full``), its
    ``reason``, the program to evaluate (a ``Program`` whose only output is the answer
    relation) and, for ``stored``, the warehouse version of the table read."""

    query: CheckedQuery
    strategy: str
    reason: str
    program: "Program"
    stored_version: Optional[int] = None

    def describe(self) -> str:
        """``query: ...`` / ``answered by: ...`` lines and the rules evaluated."""
        lines = [
            f"query: {self.query.text}",
            f"answered by: {self.strategy} ({self.reason})",
            "rules evaluated:",
        ]
        lines += [f"  {rule}" for rule in self.program.checked.rules]
        facts = self.program.checked.program.facts
        magic_seeds = [f for f in facts if f.atom.predicate.startswith("magic_")]
        lines += [f"  {fact}" for fact in magic_seeds]
        return "\n".join(lines)


def plan_query(
    program, query: Union[str, ast.Query, ast.Atom], magic: Union[str, bool] = "auto", warehouse=None
) -> QueryPlan:
    """Decide how ``query`` is answered for ``program`` (a ``spark_datalog.Program``)."""
    if magic not in MAGIC_CHOICES:
        raise ValueError(f"magic must be one of 'auto', True, False, not {magic!r}")
    checked_q = checked_query(program.checked, query)
    if warehouse is not None:
        stored = _stored_plan(program, checked_q, warehouse)
        if stored is not None:
            return stored
    full = _program(analyse(query_program(program.checked, checked_q)))
    if magic is False:
        return QueryPlan(checked_q, "full", "magic sets not asked for", full)
    try:
        rewritten = _magic_program(full.checked, checked_q, forced=magic is True)
    except NotRewritable as why:
        if magic is True:
            raise StratificationError(
                f"the magic-set rewrite of `{checked_q.text}` cannot be used: {why}"
            ) from None
        return QueryPlan(checked_q, "full", str(why), full)
    return QueryPlan(checked_q, "magic", _bound_reason(program, checked_q), rewritten)


def _magic_program(full_checked, query: CheckedQuery, forced: bool):
    """The rewritten ``Program``; ``NotRewritable`` when the query binds nothing (unless
    ``forced``) or the rewritten program does not pass the checks."""
    atom = query.atom
    if atom.predicate not in full_checked.idb:
        raise NotRewritable(f"{atom.predicate} is an input relation: its facts are read and filtered")
    if not forced and not any(isinstance(a, ast.Constant) for a in atom.args):
        raise NotRewritable("the query binds no argument: the whole relation is needed")
    problem = ""
    for adorned in ((True, True), (False, True), (False, False)):  # (negation, aggregates)
        try:
            return _program(analyse(rewrite(full_checked, query.answer, *adorned)))
        except DatalogError as err:  # magic relations closed a cycle through negation or an aggregate
            problem = err.message
    raise NotRewritable(f"the rewritten program is not stratified ({problem})")


def _bound_reason(program, query: CheckedQuery) -> str:
    positions = [str(i + 1) for i, a in enumerate(query.atom.args) if isinstance(a, ast.Constant)]
    plural = "s" if len(positions) > 1 else ""
    where = ", ".join(positions)
    verb = "are" if plural else "is"
    needed = "only the facts it needs are derived"
    return f"argument{plural} {where} of {query.atom.predicate} {verb} bound: {needed}"


def _stored_plan(program, query: CheckedQuery, warehouse) -> Optional[QueryPlan]:
    """The plan reading the stored table of the queried relation, when it is current."""
    from ..eval.commit import current_versions

    name = query.atom.predicate
    versions = current_versions(warehouse, program)
    if versions is None or versions.get(name) is None:
        return None
    reason = f"{name} is materialized in the warehouse and current (version {versions[name]})"
    return QueryPlan(query, "stored", reason, reader_program(program, query), versions[name])


def reader_program(program, query: CheckedQuery) -> "Program":
    """The answer rule alone, over the queried relation given as an input (its computed or
    stored facts): a filtered read."""
    name = query.atom.predicate
    schema = program.checked.relations[name]
    decl = ast.Declaration(name, tuple(ast.ColumnDecl(c.name, c.type) for c in schema.columns))
    reader = ast.Program(
        declarations=(decl,),
        directives=(ast.Directive("input", name), ast.Directive("output", query.answer)),
        rules=(query.rule,),
    )
    return _program(analyse(reader))


def _program(checked) -> "Program":
    from ..program import Program

    return Program(checked)
