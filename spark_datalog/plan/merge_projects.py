"""Fuse a Project directly over another Project into one.

``Project[c0=X](Project[X](…))`` becomes ``Project[c0=X](…)``: the outer expressions are rewritten
over the inner one's child. A computed inner column (an ``Arithmetic``) is inlined only when the
outer projection uses it exactly once: inlining it twice would compute it twice, and dropping it
would lose its meaning as a test (``Y = X / 0`` removes the row even when ``Y`` is unused).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from . import ir


def merge_projects(node) -> ir.Node:
    """``node`` with every mergeable Project-over-Project fused, bottom up (a new tree)."""
    node = _with_children(node, tuple(merge_projects(c) for c in ir.children(node)))
    if not (isinstance(node, ir.Project) and isinstance(node.child, ir.Project)):
        return node
    inner = dict(node.child.outputs)
    uses = Counter(name for _, expr in node.outputs for name in _references(expr))
    if any(isinstance(expr, ir.COMPUTED) and uses[name] != 1 for name, expr in inner.items()):
        return node
    outputs = tuple((name, _substitute(expr, inner)) for name, expr in node.outputs)
    return ir.Project(node.child.child, outputs)


def _with_children(node, kids):
    if isinstance(node, (ir.Scan, ir.Unit)):
        return node
    if isinstance(node, (ir.Join, ir.AntiJoin, ir.SemiJoin)):
        return replace(node, left=kids[0], right=kids[1])
    if isinstance(node, ir.Union_):
        return replace(node, children=kids)
    return replace(node, child=kids[0])


def _references(expr) -> list:
    """Column names ``expr`` reads, with repetitions."""
    if isinstance(expr, ir.ColumnRef):
        return [expr.name]
    return [name for operand in ir.operands(expr) for name in _references(operand)]


def _substitute(expr, inner: dict):
    if isinstance(expr, ir.ColumnRef):
        return inner[expr.name]
    if isinstance(expr, ir.Arithmetic):
        return replace(expr, left=_substitute(expr.left, inner), right=_substitute(expr.right, inner))
    if isinstance(expr, ir.Call):
        return replace(expr, args=tuple(_substitute(a, inner) for a in expr.args))
    return expr
