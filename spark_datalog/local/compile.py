"""Compile the relational-algebra IR into Python functions over in-memory tuples.

The second backend the IR was made for: where the Spark backend builds DataFrames, this one
builds small closures that evaluate a plan on rows held in one process (a Spark task, see
``eval.partitioned``). A row is a tuple in the node's ``columns`` order.

A subtree that reads no *dynamic* relation (the relations of the stratum being evaluated) gives
the same rows every round: it is evaluated once, and a join or anti-join against it builds its
hash index once, so each round costs only the work on the delta. Values follow
``reference.terms``, the language's specification: integer ``/`` truncates toward zero, ``mod``
keeps the dividend's sign, and a zero divisor makes the row fail.
"""

from __future__ import annotations

import operator
from operator import itemgetter
from typing import Any, Callable, Iterable, Mapping, Optional, Sized

import pyarrow as pa

from ..plan import ir
from ..reference.aggregates import reduce_values
from ..overflow import BOUNDS, operation_overflow
from ..reference.terms import Undefined, arithmetic, coerce, compare, integer_type, normal
from . import arrow, columnar
from .columnar import ColumnarPlan

Rows = Iterable[tuple]
Frames = Mapping  # (relation, "full" | "delta") -> collection of tuples


class Plan:
    """A compiled node: ``rows(frames)`` yields its rows; ``static`` when it reads no dynamic
    relation, in which case its rows are computed once and kept. ``scan``: the frame key a bare
    scan reads (None for other nodes); ``reads``: the frame keys of every scan under it.
    ``columnar``: the same plan over Arrow tables, used when its deltas hold at least
    ``columnar_rows`` rows (``COLUMNAR_ROWS`` when None; see ``compile_plan``)."""

    def __init__(self, columns: tuple, static: bool, produce: Callable[[Frames], Rows]):
        self.columns = columns
        self.static = static
        self._produce = produce
        self._kept: Optional[list[tuple]] = None
        self.scan: Optional[tuple[str, str]] = None
        self.reads: frozenset = frozenset()
        self.columnar: Optional[ColumnarPlan] = None
        self.columnar_rows: Optional[int] = None

    def rows(self, frames: Frames) -> Rows:
        if self.columnar is not None and _delta_rows(frames, self.reads) >= (
            COLUMNAR_ROWS if self.columnar_rows is None else self.columnar_rows
        ):
            table = self.columnar.table(frames)
            if table is not None:
                return arrow.table_rows(table)
        if not self.static:
            return self._produce(frames)
        if self._kept is None:
            self._kept = list(self._produce(frames))
        return self._kept


def compile_plan(
    node, dynamic: frozenset, columnar: bool = False, columnar_rows: Optional[int] = None
) -> Plan:
    """The compiled form of ``node``; ``dynamic``: names of relations that change between
    evaluations (scans of any other relation are read once). With ``columnar``, an evaluation
    whose delta scans read at least ``columnar_rows`` rows (default ``COLUMNAR_ROWS``) runs over
    Arrow tables (``local.columnar``) when every node and value allows it: the same rows,
    without a tuple per intermediate row."""
    try:
        compiler = _NODE_COMPILERS[type(node)]
    except KeyError:
        raise TypeError(f"not an IR node: {node!r}") from None
    plan = compiler(node, dynamic)
    plan.reads = frozenset((scan.relation, scan.source) for scan in ir.scans(node))
    if columnar and any(source == "delta" for _, source in plan.reads):
        bulk = ColumnarPlan(node, dynamic)
        plan.columnar = bulk if bulk.supported else None
        plan.columnar_rows = columnar_rows
    return plan


def _delta_rows(frames: Frames, reads: frozenset) -> int:
    """How many rows the delta scans among ``reads`` read in ``frames``."""
    total = 0
    for key in reads:
        if key[1] == "delta":
            rows = frames.get(key)
            total += (
                rows.num_rows if isinstance(rows, pa.Table) else (len(rows) if isinstance(rows, Sized) else 0)
            )
    return total


# ---------------------------------------------------------------------------------------------
# Relational nodes


def _scan(node: ir.Scan, dynamic) -> Plan:
    key = (node.relation, node.source)

    def produce(frames):
        if key not in frames:
            raise KeyError(f"no rows for {node.source} relation {node.relation!r}")
        rows = frames[key]
        return arrow.table_rows(rows) if isinstance(rows, pa.Table) else rows

    plan = Plan(node.columns, node.relation not in dynamic, produce)
    plan.scan = key
    return plan


def _unit(node: ir.Unit, dynamic) -> Plan:
    return Plan((), True, lambda frames: [()])


def _select(node: ir.Select, dynamic) -> Plan:
    child = compile_plan(node.child, dynamic)
    holds = _predicate(node.conditions, child.columns)
    return Plan(child.columns, child.static, lambda frames: filter(holds, child.rows(frames)))


def _project(node: ir.Project, dynamic) -> Plan:
    child = compile_plan(node.child, dynamic)
    exprs = [expr for _, expr in node.outputs]
    if exprs and all(isinstance(expr, ir.ColumnRef) for expr in exprs):
        # columns only: one C-level itemgetter per row, and nothing can be undefined
        picked = itemgetter(*[child.columns.index(expr.name) for expr in exprs])
        if len(exprs) == 1:
            return Plan(
                node.columns, child.static, lambda frames: [(picked(row),) for row in child.rows(frames)]
            )
        return Plan(node.columns, child.static, lambda frames: list(map(picked, child.rows(frames))))
    outputs = [_expression(expr, child.columns) for expr in exprs]

    def produce(frames):
        for row in child.rows(frames):
            try:
                yield tuple(output(row) for output in outputs)
            except Undefined:
                continue

    return Plan(node.columns, child.static, produce)


def _join(node: ir.Join, dynamic) -> Plan:
    left = compile_plan(node.left, dynamic)
    right = compile_plan(node.right, dynamic)
    left_key = _key(node.on, left.columns)
    right_key = _key(node.on, right.columns)
    rest = [i for i, c in enumerate(right.columns) if c not in node.on]
    right_rest = (
        itemgetter(*rest) if len(rest) > 1 else ((lambda row: (row[rest[0]],)) if rest else (lambda row: ()))
    )
    if right.static or not left.static:
        # probe the right side's index with each left row (the index is built once if static)
        whole_rows = not rest and list(node.on) == list(right.columns)
        index = _Index(
            right, right_key, right_rest, whole_rows, [right.columns.index(c) for c in node.on], rest
        )

        def produce(frames):
            if right.static and (index.complete or not index.held(frames)):
                rows, lookup = left.rows(frames), index.get(frames)
            else:  # indexed anew: only the right rows some left row can meet
                rows = list(left.rows(frames))
                if len(rows) >= BULK_JOIN_ROWS and index.held(frames):
                    joined = columnar.joined(
                        rows, left.columns, frames[right.scan], right.columns, node.on, node.columns
                    )
                    if joined is not None:
                        return joined
                lookup = index.get(frames, set(map(left_key, rows)))
            found = lookup.get
            return [row + tail for row in rows for tail in found(left_key(row), ())]
    else:
        # a static left side against a dynamic right side: index the left side once
        index = _Index(left, left_key, lambda row: row)

        def produce(frames):
            lookup = index.get(frames)
            for row in right.rows(frames):
                heads = lookup.get(right_key(row))
                if heads:
                    tail = right_rest(row)
                    for head in heads:
                        yield head + tail

    return Plan(node.columns, left.static and right.static, produce)


def _antijoin(node, dynamic) -> Plan:
    """An ``AntiJoin`` (left rows whose key the right side lacks) or a ``SemiJoin`` (has)."""
    keep = isinstance(node, ir.SemiJoin)
    left = compile_plan(node.left, dynamic)
    right = compile_plan(node.right, dynamic)
    left_key = _key(node.on, left.columns)
    right_key = _key(node.on, right.columns)
    kept_keys = [None]

    def keys(frames):
        if right.static and kept_keys[0] is not None:
            return kept_keys[0]
        found = {right_key(row) for row in right.rows(frames)}
        if right.static:
            kept_keys[0] = found
        return found

    def produce(frames):
        found = keys(frames)
        return (row for row in left.rows(frames) if (left_key(row) in found) is keep)

    return Plan(node.columns, left.static and right.static, produce)


def _union(node: ir.Union_, dynamic) -> Plan:
    parts = []
    for child in node.children:
        compiled = compile_plan(child, dynamic)
        order = [compiled.columns.index(c) for c in node.columns]
        parts.append((compiled, None if order == list(range(len(order))) else itemgetter(*order)))

    def produce(frames):
        for compiled, reorder in parts:
            rows = compiled.rows(frames)
            if reorder is None:
                yield from rows
            elif len(node.columns) == 1:
                yield from ((reorder(row),) for row in rows)
            else:
                yield from (reorder(row) for row in rows)

    return Plan(node.columns, all(c.static for c, _ in parts), produce)


def _distinct(node: ir.Distinct, dynamic) -> Plan:
    child = compile_plan(node.child, dynamic)
    return Plan(child.columns, child.static, lambda frames: set(child.rows(frames)))


def _aggregate(node: ir.Aggregate, dynamic) -> Plan:
    child = compile_plan(node.child, dynamic)
    group = _key(node.group_by, child.columns)
    argument = child.columns.index(node.argument)
    width = len(node.group_by)

    def produce(frames):
        groups: dict = {}
        for row in child.rows(frames):
            groups.setdefault(group(row), []).append(row[argument])
        for key, values in groups.items():
            head = key if width > 1 else ((key,) if width == 1 else ())
            yield head + (reduce_values(node.func, values),)

    return Plan(node.columns, child.static, produce)


_NODE_COMPILERS: dict[type, Callable[..., Plan]] = {
    ir.Scan: _scan,
    ir.Unit: _unit,
    ir.Select: _select,
    ir.Project: _project,
    ir.Join: _join,
    ir.AntiJoin: _antijoin,
    ir.SemiJoin: _antijoin,
    ir.Union_: _union,
    ir.Distinct: _distinct,
    ir.Aggregate: _aggregate,
}


class _Index:
    """Rows of a plan grouped by a key (key -> tuple of projected rows); built once when the
    plan is static, on every call otherwise, then only over the rows whose key is among the
    ``wanted`` ones when given. With ``whole_rows`` (the key is the whole row, in order, and
    nothing is projected), rows given as a ``set`` are probed as they are: a membership test
    instead of building an index over them. A scan of a relation held as a pyarrow Table
    (``arrow.is_held``: a large stored relation) is indexed on every call over its ``wanted``
    rows only, found in bulk by Arrow (``arrow.matching``, at ``positions``), so its other
    rows never become tuples. Once the probes of a static held table have matched half its
    rows, its whole index is built and kept: many small probes (a fixpoint of many rounds) then
    cost a lookup each."""

    def __init__(
        self,
        plan: Plan,
        key,
        project,
        whole_rows: bool = False,
        positions: Optional[list] = None,
        rest: Optional[list] = None,
    ):
        self.plan, self.key, self.project = plan, key, project
        self.whole_rows = whole_rows
        # key positions, and projected ones (none given: empty)
        self.positions: list = positions or []
        self.rest: list = rest or []
        self._built: Optional[dict] = None
        self._matched = 0  # rows of a static held table its probes have matched so far

    @property
    def complete(self) -> bool:
        """Whether the index over all the plan's rows is built and kept."""
        return self._built is not None

    def held(self, frames) -> bool:
        """Whether the plan is a scan of a held table that can be probed by key."""
        return (
            self.plan.scan is not None and bool(self.positions) and arrow.is_held(frames.get(self.plan.scan))
        )

    def get(self, frames, wanted: Optional[set] = None):
        if self._built is not None:
            return self._built
        if wanted is not None and self.held(frames):
            table = frames[self.plan.scan]
            found = arrow.matching(table, self.positions, wanted)
            if found is not None:
                self._matched += found.num_rows
                if self.plan.static and 2 * self._matched >= table.num_rows:
                    self._built = self._from_columns(table)
                    return self._built
                return self._from_columns(found)
        rows = self.plan.rows(frames)
        if self.whole_rows and isinstance(rows, (set, frozenset)):
            return _Members(rows, len(self.plan.columns) == 1)
        index = self._indexed(rows, wanted)
        if self.plan.static and wanted is None:
            self._built = index
        return index

    def _from_columns(self, table: pa.Table) -> dict:
        """The index over the rows of a held ``table`` (keys and projected rows taken from its
        columns, not from a tuple per row)."""
        if len(self.positions) == 1:
            keys = table.column(self.positions[0]).to_pylist()
        else:
            keys = arrow.table_rows(table.select(self.positions))
        projected = arrow.table_rows(table.select(self.rest)) if self.rest else [()] * table.num_rows
        index: dict = {}
        found = index.get
        for key, row in zip(keys, projected, strict=True):
            rows = found(key)
            if rows is None:
                index[key] = [row]
            else:
                rows.append(row)
        return index

    def _indexed(self, rows, wanted: Optional[set] = None) -> dict:
        index: dict = {}
        key, project = self.key, self.project
        for row in rows:
            found = key(row)
            if wanted is None or found in wanted:
                index.setdefault(found, []).append(project(row))
        return index


class _Members:
    """A set of rows read as an ``_Index`` on whole rows: a row's key maps to ``[()]``."""

    FOUND = [()]

    def __init__(self, rows, single: bool):
        self.rows, self.single = rows, single  # a one-column key is the bare value

    def get(self, key, default=()):
        return self.FOUND if ((key,) if self.single else key) in self.rows else default


def _key(names: tuple, columns: tuple):
    """A function from a row to its values at ``names`` (hashable; equal for equal values)."""
    positions = [columns.index(n) for n in names]
    if not positions:
        return lambda row: ()
    return itemgetter(*positions)  # a value for one position, a tuple for several


# ---------------------------------------------------------------------------------------------
# Scalar expressions


def _expression(expr, columns: tuple) -> Callable[[tuple], object]:
    """A function from a row to the value of ``expr``; raises Undefined on a zero divisor."""
    if isinstance(expr, ir.ColumnRef):
        return itemgetter(columns.index(expr.name))
    if isinstance(expr, ir.Literal):
        value = coerce(expr.value, expr.type)  # a double literal is a float, as Spark casts it
        return lambda row: value
    if isinstance(expr, ir.Arithmetic):
        return _arithmetic(expr, _expression(expr.left, columns), _expression(expr.right, columns))
    raise TypeError(f"not an IR expression: {expr!r}")


def _arithmetic(expr: ir.Arithmetic, left, right) -> Callable[[tuple], object]:
    """A function from a row to ``left op right``, raising Overflow for an integer result out of
    the range of the expression's integer type (two comparisons on the usual path)."""
    op, bounds = expr.op, integer_type(expr.type)
    low, high = BOUNDS[bounds]

    def value(row):
        a, b = left(row), right(row)
        result = arithmetic(op, a, b)
        if type(result) is not int:  # a double never overflows; it is made canonical
            return normal(result)
        if low <= result <= high:
            return result
        raise operation_overflow(expr.span, a, op, b, bounds)

    return value


def _predicate(conditions: tuple, columns: tuple) -> Callable[[tuple], bool]:
    """A function from a row to whether every condition holds (an undefined value fails)."""
    tests = []
    for condition in conditions:
        left = _expression(condition.left, columns)
        right = _expression(condition.right, columns)
        tests.append((condition.op, _OPERATORS[condition.op], left, right))

    def holds(row) -> bool:
        try:
            for op, test, left, right in tests:
                a, b = left(row), right(row)
                # two values of one plain type compare as Python compares them (``compare``
                # does the same after its checks); other pairs go through ``compare``
                # (a NaN, which is not equal to itself, also goes through ``compare``)
                plain = type(a) is type(b) and type(a) in _PLAIN and a == a and b == b
                if not (test(a, b) if plain else compare(op, a, b)):
                    return False
            return True
        except Undefined:
            return False

    return holds


# Many left rows against a held table: the join runs in Arrow (``columnar.joined``), which costs
# converting the rows both ways but beats pairing them one by one in Python from about here.
BULK_JOIN_ROWS = 20_000

# Deltas of at least this many rows: a plan compiled ``columnar`` runs over Arrow tables. Each
# Arrow join reads its other side whole, so small deltas are cheaper on tuples and indexes.
COLUMNAR_ROWS = 10_000

_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_PLAIN = frozenset({int, float, str})
