"""Evaluate relational-algebra plans over pyarrow Tables, a whole column at a time.

The local backend's path for many rows: equi-joins, anti-joins, unions, distinct, selections
comparing columns and literals, and projections of columns map directly onto Arrow kernels, so a
plan over hundreds of thousands of rows runs without making each intermediate row a tuple. Only
what Arrow computes exactly as ``reference.terms`` does is done here, on integer and string
values: anything else (arithmetic, aggregates, a column of doubles or booleans, values of mixed
types, a product without join columns) makes ``ColumnarPlan.table`` return None, and the caller
evaluates the plan on tuples (``local.compile``), which gives the same rows. ``joined`` is the
same join for a plan evaluated on tuples that meets a held table with many rows at once.
"""

from __future__ import annotations

from typing import Callable, Optional

import pyarrow as pa
import pyarrow.compute as pc

from ..plan import ir
from . import arrow

# comparisons Arrow evaluates as Python compares two integers or two strings (UTF-8 byte order
# is code point order)
_COMPARISONS = {
    "=": pc.equal,
    "!=": pc.not_equal,
    "<": pc.less,
    "<=": pc.less_equal,
    ">": pc.greater,
    ">=": pc.greater_equal,
}
_LITERAL_TYPES = {"int": pa.int64(), "long": pa.int64(), "string": pa.string()}


class Unsupported(Exception):
    """A node or a value this module does not evaluate exactly as the tuple backend."""


class ColumnarPlan:
    """A plan evaluated over Arrow tables. ``dynamic``: the relations that change between
    evaluations; the others' tables (and what is computed from them alone) are kept, as
    ``local.compile`` keeps them."""

    def __init__(self, node, dynamic: frozenset):
        self.node, self.dynamic = node, dynamic
        self._kept: dict = {}
        self.supported = _supported(node)

    def table(self, frames) -> Optional[pa.Table]:
        """The plan's rows as a table whose columns are the plan's, or None when a node or a
        value is beyond this module (the caller then evaluates on tuples)."""
        if not self.supported:
            return None
        try:
            return self._evaluate(self.node, frames)
        except (Unsupported, *arrow.MISFITS):
            return None

    def _evaluate(self, node, frames) -> pa.Table:
        static = not any(scan.relation in self.dynamic for scan in ir.scans(node))
        if static and id(node) in self._kept:
            return self._kept[id(node)][1]
        table = _EVALUATORS[type(node)](self, node, frames)
        if static:
            self._kept[id(node)] = (node, table)  # the node is kept so its id stays its own
        return table


def _supported(node) -> bool:
    if type(node) not in _EVALUATORS:
        return False
    if isinstance(node, ir.Select) and not all(_comparable(c) for c in node.conditions):
        return False
    if isinstance(node, ir.Project) and not all(isinstance(e, ir.ColumnRef) for _, e in node.outputs):
        return False
    if isinstance(node, (ir.Join, ir.AntiJoin)) and not node.on:
        return False
    if not node.columns:
        return False
    return all(_supported(child) for child in ir.children(node))


def _comparable(condition) -> bool:
    return condition.op in _COMPARISONS and all(
        isinstance(side, ir.ColumnRef) or (isinstance(side, ir.Literal) and side.type in _LITERAL_TYPES)
        for side in (condition.left, condition.right)
    )


def joined(
    rows, columns: tuple, table: pa.Table, table_columns: tuple, on: tuple, out: tuple
) -> Optional[list]:
    """The equi-join of ``rows`` (tuples named by ``columns``) with ``table`` (its columns named
    ``table_columns``) on ``on``, as tuples named by ``out``: one Arrow hash join, for a
    tuple-evaluated plan joining many rows with a held table. None when a value is beyond this
    module (the caller then joins tuples)."""
    try:
        result = _joined(_as_table(rows, columns, "rows"), _as_table(table, table_columns, "table"), on, out)
    except (Unsupported, *arrow.MISFITS):
        return None
    return arrow.table_rows(result)


def _scan(plan: ColumnarPlan, node: ir.Scan, frames) -> pa.Table:
    return _as_table(frames[(node.relation, node.source)], node.columns, node.relation)


def _as_table(rows, columns: tuple, what: str) -> pa.Table:
    """``rows`` (a pyarrow Table, or tuples) as a table of integer and string ``columns``."""
    if isinstance(rows, pa.Table):
        table = rows
    else:
        rows = rows if isinstance(rows, list) else list(rows)
        table = pa.Table.from_arrays(
            [pa.array(values) for values in arrow.transposed(rows, len(columns))], names=list(columns)
        )
    for field in table.schema:
        if not (
            pa.types.is_integer(field.type)
            or pa.types.is_string(field.type)
            or (pa.types.is_null(field.type) and not table.num_rows)
        ):
            raise Unsupported(f"column {field.name} of {what}: {field.type}")
    return table.rename_columns(list(columns))


def _select(plan: ColumnarPlan, node: ir.Select, frames) -> pa.Table:
    table = plan._evaluate(node.child, frames)
    if not table.num_rows:  # (Arrow compares no null-typed empty column)
        return table
    mask = None
    for condition in node.conditions:
        left, right = (_operand(table, side) for side in (condition.left, condition.right))
        if not _alike(left.type, right.type):
            raise Unsupported("an integer compared with a string")
        test = _COMPARISONS[condition.op](left, right)
        mask = test if mask is None else pc.and_(mask, test)
    return table.filter(mask)


def _operand(table: pa.Table, side):
    if isinstance(side, ir.ColumnRef):
        return table.column(side.name)
    return pa.scalar(side.value, _LITERAL_TYPES[side.type])


def _alike(a, b) -> bool:
    """Whether values of types ``a`` and ``b`` compare as Python compares them: both integers,
    or both strings (a null type is an empty input's, with no value at all)."""
    return pa.types.is_null(a) or pa.types.is_null(b) or pa.types.is_string(a) == pa.types.is_string(b)


def _project(plan: ColumnarPlan, node: ir.Project, frames) -> pa.Table:
    table = plan._evaluate(node.child, frames)
    positions = [table.column_names.index(expr.name) for _, expr in node.outputs]
    return pa.Table.from_arrays([table.column(p) for p in positions], names=list(node.columns))


def _join(plan: ColumnarPlan, node: ir.Join, frames) -> pa.Table:
    return _joined(
        plan._evaluate(node.left, frames), plan._evaluate(node.right, frames), node.on, node.columns
    )


def _joined(left: pa.Table, right: pa.Table, on: tuple, out: tuple) -> pa.Table:
    left, right = _aligned(left, right, on)
    if not (left.num_rows and right.num_rows):  # (Arrow joins no null-typed empty column)
        columns = {
            **dict(zip(right.column_names, right.columns, strict=True)),
            **dict(zip(left.column_names, left.columns, strict=True)),
        }
        return pa.Table.from_arrays([columns[name].slice(0, 0) for name in out], names=list(out))
    # Arrow builds its hash table on the right side: put the smaller one there
    if right.num_rows <= left.num_rows:
        result = left.join(right, list(on), join_type="inner")
    else:
        result = right.join(left, list(on), join_type="inner")
    return result.select(list(out))


def _antijoin(plan: ColumnarPlan, node: ir.AntiJoin, frames) -> pa.Table:
    left, right = _aligned(plan._evaluate(node.left, frames), plan._evaluate(node.right, frames), node.on)
    if not (left.num_rows and right.num_rows):
        return left
    return left.join(right.select(list(node.on)), list(node.on), join_type="left anti")


def _aligned(left: pa.Table, right: pa.Table, on) -> tuple:
    """``left`` and ``right`` with their join columns of one type (integers widened; an empty
    input's null columns take the other side's type)."""
    for name in on:
        a, b = left.schema.field(name).type, right.schema.field(name).type
        if a == b:
            continue
        if not _alike(a, b):
            raise Unsupported(f"join column {name}: an integer against a string")
        common = b if pa.types.is_null(a) else a if pa.types.is_null(b) else pa.int64()
        left, right = _cast(left, name, common), _cast(right, name, common)
    return left, right


def _cast(table: pa.Table, name: str, type_) -> pa.Table:
    position = table.column_names.index(name)
    if table.schema.field(position).type == type_:
        return table
    return table.set_column(position, name, table.column(position).cast(type_))


def _union(plan: ColumnarPlan, node: ir.Union_, frames) -> pa.Table:
    parts = [plan._evaluate(child, frames).select(list(node.columns)) for child in node.children]
    for name in node.columns:
        types = {part.schema.field(name).type for part in parts} - {pa.null()}
        if len(types) > 1 and any(pa.types.is_string(t) for t in types):
            raise Unsupported(f"column {name}: integers and strings")
        common = types.pop() if len(types) == 1 else pa.int64() if types else pa.null()
        parts = [_cast(part, name, common) for part in parts]
    return pa.concat_tables(parts)


def _distinct(plan: ColumnarPlan, node: ir.Distinct, frames) -> pa.Table:
    table = plan._evaluate(node.child, frames)
    if not table.num_rows:
        return table
    return table.group_by(list(node.columns), use_threads=False).aggregate([]).select(list(node.columns))


_EVALUATORS: dict[type, Callable[..., pa.Table]] = {
    ir.Scan: _scan,
    ir.Select: _select,
    ir.Project: _project,
    ir.Join: _join,
    ir.AntiJoin: _antijoin,
    ir.Union_: _union,
    ir.Distinct: _distinct,
}
