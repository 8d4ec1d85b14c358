"""Random programs calling ``autoinc()`` on random data, with their results worked out directly
from the documented numbering (``spark_datalog.syntax.autoinc``): the distinct bindings of a
rule's body variables, taken by name, ranked in value order (numbers numerically with NaN
last, strings by code point), call site ``s`` of ``K`` giving ``rank * K + s``. The reference
(tests/syntax), the kernel (tests/kernel) and Spark (tests/differential) are each checked
against it, and every number is checked to be unique in the program."""

from __future__ import annotations

from hypothesis import strategies as st

from spark_datalog.reference.terms import NAN

_HEADER = """
.decl e(a: number, b: symbol, c: float)
.input e
.decl f(b: symbol)
.input f
"""
_STRINGS = ["", "a", "ab", "B", "É", "z"]  # code points: "" < "B" < "a" < "ab" < "z" < "É"
_DOUBLES = [0.0, -0.0, -1.5, 2.5, float("inf"), float("-inf"), NAN]
_ARGUMENT = {"A": 0, "B": 1, "C": 2}


@st.composite
def autoinc_cases(draw):
    """``(text, edb, expected, calls)``: 1 to 3 rules ``rN(<head variables>, autoinc(), ...)`` over
    ``e``, some filtered by ``A > k``, ``f(B)`` or ``!f(B)``; ``calls``: relation -> its number of calls."""
    edb = {
        "e": draw(
            st.sets(
                st.tuples(st.integers(-2, 2), st.sampled_from(_STRINGS), st.sampled_from(_DOUBLES)),
                max_size=8,
            )
        ),
        "f": draw(st.sets(st.tuples(st.sampled_from(_STRINGS)), max_size=3)),
    }
    rules = [draw(_rule()) for _ in range(draw(st.integers(1, 3)))]
    sites = sum(calls for _, _, calls, _ in rules)
    text, expected, calls_of, site = _HEADER, {}, {}, 0
    for n, (head, extra, calls, filters) in enumerate(rules):
        name = f"r{n}"
        columns = [f"v{v}: {_TYPE[v]}" for v in head] + [f"i{k}: number" for k in range(calls)]
        args = ", ".join(arg if arg in head or arg in extra else "_" for arg in "ABC")
        body = ", ".join([f"e({args})", *filters])
        head_args = ", ".join([*head, *["autoinc()"] * calls])
        text += f".decl {name}({', '.join(columns)})\n{name}({head_args}) :- {body}.\n.output {name}\n"
        expected[name] = _expected(edb, head, sorted(set(head) | set(extra)), filters, calls, site, sites)
        calls_of[name] = calls
        site += calls
    return text, edb, expected, calls_of


_TYPE = {"A": "number", "B": "symbol", "C": "float"}


@st.composite
def _rule(draw):
    head = draw(st.lists(st.sampled_from("ABC"), unique=True, max_size=3))
    filters, extra = [], []
    if draw(st.booleans()):
        filters.append(f"A > {draw(st.integers(-2, 1))}")
        extra.append("A")
    if draw(st.booleans()):
        filters.append(draw(st.sampled_from(["f(B)", "!f(B)"])))
        extra.append("B")
    return head, extra, draw(st.integers(1, 2)), filters


def _holds(row, filters, f) -> bool:
    for condition in filters:
        if condition.startswith("A > ") and not row[0] > int(condition[4:]):
            return False
        if condition == "f(B)" and (row[1],) not in f:
            return False
        if condition == "!f(B)" and (row[1],) in f:
            return False
    return True


def _order(value):
    if isinstance(value, float):
        return (1, 0.0) if value != value else (0, value)
    return (0, value)


def _expected(edb, head, key, filters, calls, site, sites) -> set:
    bindings = {tuple(row[_ARGUMENT[v]] for v in key) for row in edb["e"] if _holds(row, filters, edb["f"])}
    ranked = sorted(bindings, key=lambda b: tuple(_order(v) for v in b))
    out = set()
    for rank, binding in enumerate(ranked):
        values = dict(zip(key, binding, strict=True))
        out.add((*(values[v] for v in head), *(rank * sites + site + k for k in range(calls))))
    return out


def assert_unique_numbers(result: dict, calls: dict) -> None:
    """Every fact of ``result``'s relations has its own numbers (its last ``calls[name]``
    columns), distinct over the program."""
    numbers = [n for name, k in calls.items() for row in result[name] for n in row[-k:]]
    assert len(numbers) == len(set(numbers)), result


def assert_expected(result: dict, expected: dict, text: str) -> None:
    """``result`` holds ``expected``'s relations, NaN compared as one value (a harness may
    give it as the text ``NaN``)."""
    assert {name: _comparable(result[name]) for name in expected} == {
        name: _comparable(rows) for name, rows in expected.items()
    }, text


def _comparable(rows) -> set:
    return {
        tuple("NaN" if v == "NaN" or (isinstance(v, float) and v != v) else v for v in row) for row in rows
    }
