"""merge_projects: a Project directly over a Project becomes one, never losing a computed test."""

from __future__ import annotations

from spark_datalog.plan import ir
from spark_datalog.plan.merge_projects import merge_projects

SCAN = ir.Scan("e", ("X", "Y"))


def ref(name):
    return ir.ColumnRef(name)


def test_renames_are_fused():
    inner = ir.Project(SCAN, (("X", ref("X")),))
    outer = ir.Project(inner, (("c0", ref("X")), ("c1", ref("X"))))
    assert merge_projects(outer) == ir.Project(SCAN, (("c0", ref("X")), ("c1", ref("X"))))


def test_computed_column_used_once_is_inlined():
    half = ir.Arithmetic("/", ref("X"), ir.Literal(2, "long"))
    inner = ir.Project(SCAN, (("X", ref("X")), ("H", half)))
    outer = ir.Project(inner, (("c0", ref("X")), ("c1", ref("H"))))
    assert merge_projects(outer) == ir.Project(SCAN, (("c0", ref("X")), ("c1", half)))


def test_computed_column_unused_or_used_twice_is_kept():
    half = ir.Arithmetic("/", ref("X"), ref("Y"))  # Y = 0 must still drop the row
    inner = ir.Project(SCAN, (("X", ref("X")), ("H", half)))
    unused = ir.Project(inner, (("c0", ref("X")),))
    twice = ir.Project(inner, (("c0", ref("H")), ("c1", ref("H"))))
    assert merge_projects(unused) == unused
    assert merge_projects(twice) == twice


def test_merges_below_other_nodes_and_returns_new_tree():
    inner = ir.Project(ir.Project(SCAN, (("X", ref("X")),)), (("Z", ref("X")),))
    tree = ir.Distinct(ir.Select(inner, (ir.Compare("<", ref("Z"), ir.Literal(3, "long")),)))
    merged = merge_projects(tree)
    assert merged.child.child == ir.Project(SCAN, (("Z", ref("X")),))
    assert tree.child.child is inner  # the input is untouched
