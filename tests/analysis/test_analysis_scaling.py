"""Analysis does work linear in the size of the program (issue 19 item 9).

No clock: the evidence is the number of Python lines analysis executes (a loop over every rule
inside a loop over the strata shows up there) and the number of evidence records type inference
moves between classes (the copying of a union-find without union by size does not: it is C code).
Doubling the program may at most double them, with a margin for constant costs.
"""

from __future__ import annotations

import sys

import pytest

from spark_datalog.analysis import analyse, classes
from spark_datalog.syntax.parser import parse

RATIO = 2.2


def chain(count: int) -> str:
    """``count`` declared relations with a fact each, a chain of ``count`` strata reading them with
    a constant, a comparison and a negation, and a count aggregate per link."""
    lines = [".input label", ".output top"]
    for i in range(count):
        lines.append(f".decl d{i}(a: long, b: long)")
        lines.append(f"d{i}({i}, {i + 1}).")
        source = "d0" if i == 0 else f"r{i - 1}"
        lines.append(f"s{i}(X) :- label(X, _).")
        lines.append(f"r{i}(X, Y) :- {source}(X, Z), d{i}(Z, Y), label(Y, {i % 10}), X != Y, !s{i}(X).")
        lines.append(f"c{i}(X, count<Y>) :- r{i}(X, Y).")
    lines.append(f"top(X, N) :- c{count - 1}(X, N).")
    return "\n".join(lines) + "\n"


def _analysed(tree):
    """Analyse ``tree`` and read what the back ends read of the checked program."""
    checked = analyse(tree)
    for name in checked.relations:
        checked.stratum_of(name)
        _ = name in checked.edb or name in checked.demanded
    return checked.evaluated


def _lines_run(text: str) -> int:
    """The number of Python lines and calls executed analysing ``text`` (parsing excluded)."""
    tree = parse(text)
    counted = [0]

    def trace(frame, event, arg):
        counted[0] += 1
        return trace

    sys.settrace(trace)
    try:
        _analysed(tree)
    finally:
        sys.settrace(None)
    return counted[0]


def test_chain_analyses():
    evaluated = _analysed(parse(chain(3)))
    assert len(evaluated) == 2 * 3 + 2  # s and r per link, the last count (.output top), then top


@pytest.mark.parametrize("count", [300])
def test_lines_executed_grow_linearly(count):
    small, large = _lines_run(chain(count)), _lines_run(chain(2 * count))
    assert large <= RATIO * small, (small, large)


def test_type_evidence_moved_grows_linearly(monkeypatch):
    """Every rule reads the same undeclared column: its class grows with the program, and each
    merge must move the smaller class's evidence, not the growing one's."""
    moved = [0]

    class Counting(classes.deque):  # type: ignore[misc, name-defined]
        def extend(self, items):
            items = list(items)
            moved[0] += len(items)
            super().extend(items)

        def extendleft(self, items):
            items = list(items)
            moved[0] += len(items)
            super().extendleft(items)

    monkeypatch.setattr(classes, "deque", Counting)

    def evidence_moved(count: int) -> int:
        moved[0] = 0
        text = ".input e\n" + "".join(f"p{i}(X) :- e(X, {i}), X > {i}.\n" for i in range(count))
        analyse(parse(text))
        return moved[0]

    small, large = evidence_moved(1000), evidence_moved(2000)
    assert large <= RATIO * small, (small, large)
