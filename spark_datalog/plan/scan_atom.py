"""One body atom as a scan with its selections pushed onto it (seed 004, Algorithm 1).

Each position of the atom becomes a column. A variable seen for the first time in the atom names
its column; every other position (a constant, a repeated variable, an anonymous ``_``) gets a
fresh name ``#<literal>_<position>`` (1-based). Fresh names start with ``#``, which no user
variable can (variables start with a letter, ``_`` or ``?``), so they never collide. Constants
and repeated variables become a selection right on the scan, and a projection then drops the
fresh columns: the node exposes exactly the atom's distinct named variables, in order.

An arithmetic argument (``p(X + 1)``) also gets a fresh column, which the node keeps: the
translator equates it with the expression once the expression's variables are bound
(see :func:`expression_arguments`).
"""

from __future__ import annotations

from ..syntax import ast
from . import ir
from .expressions import coerce

FRESH_PREFIX = "#"


def fresh_name(index: int, position: int) -> str:
    """The column name of position ``position`` of body literal ``index`` (both 0-based)."""
    return f"{FRESH_PREFIX}{index + 1}_{position + 1}"


def is_fresh(name: str) -> bool:
    return name.startswith(FRESH_PREFIX)


def scan_atom(atom: ast.Atom, index: int, column_types: tuple, source: str = "full") -> ir.Node:
    """The IR node reading ``atom`` (body literal ``index``) from ``source``."""
    columns, conditions, variables = [], [], []
    for position, arg in enumerate(atom.args):
        fresh = fresh_name(index, position)
        if isinstance(arg, ast.Variable) and not arg.anonymous and arg.name not in variables:
            columns.append(arg.name)
            variables.append(arg.name)
            continue
        columns.append(fresh)
        if isinstance(arg, ast.Variable) and not arg.anonymous:
            conditions.append(ir.Compare("=", ir.ColumnRef(fresh), ir.ColumnRef(arg.name)))
        elif isinstance(arg, ast.Constant):
            value = coerce(ir.Literal(arg.value, arg.type), column_types[position])
            conditions.append(ir.Compare("=", ir.ColumnRef(fresh), value))
    node: ir.Node = ir.Scan(atom.predicate, tuple(columns), source)
    if conditions:
        node = ir.Select(node, tuple(conditions))
    keep = tuple(variables) + tuple(name for name, _ in expression_arguments(atom, index))
    if keep != node.columns:
        node = ir.Project(node, tuple((name, ir.ColumnRef(name)) for name in keep))
    return node


def expression_arguments(atom: ast.Atom, index: int) -> list:
    """(fresh column, term) of each arithmetic argument of ``atom`` (body literal ``index``)."""
    return [
        (fresh_name(index, position), arg)
        for position, arg in enumerate(atom.args)
        if isinstance(arg, ast.OPERATIONS)
    ]
