"""The facts stated in a program, as value tuples converted to their columns' types."""

from __future__ import annotations

from ..syntax import ast

_CONVERT = {"int": int, "long": int, "double": float, "string": str, "bool": bool}


def _same(value):
    return value  # a record: converted by syntax.records


def fact_tuples(program: ast.Program, relations: dict) -> dict:
    """``{relation: frozenset(tuples)}`` for every relation with facts (an integer literal in a
    double column becomes a float)."""
    out: dict = {}
    for fact in program.facts:
        schema = relations[fact.atom.predicate]
        values = tuple(
            _CONVERT.get(c.type, _same)(v) for c, v in zip(schema.columns, fact.values, strict=True)
        )
        out.setdefault(fact.atom.predicate, set()).add(values)
    return {name: frozenset(rows) for name, rows in out.items()}
