"""The programs of the spike as plans over a kernel's operators, and the two semi-naive loops.

A kernel (``kernel_polars``, ``kernel_duckdb``, ``kernel_acero``) offers one function per
operator: ``scan`` (Arrow in), ``to_arrow`` (Arrow out), ``materialize``, ``count``, ``select``,
``filter``, ``join`` (inner equi-join with a projection), ``distinct``, ``anti`` (anti-join),
``union`` (bag union of disjoint inputs), ``group_min`` and ``improved`` (the groups of a
candidate whose value beats the best known). Expressions are tuples: ``("l", col)`` and
``("r", col)`` name a column of a join's left or right input, ``("c", col)`` one of a single
input, ``("lit", value)`` an int64 literal, ``(op, a, b)`` for ``op`` in ``+ !=``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


def L(col: str) -> tuple:
    return ("l", col)


def R(col: str) -> tuple:
    return ("r", col)


def C(col: str) -> tuple:
    return ("c", col)


@dataclass(frozen=True)
class Program:
    """``init(k, edb)``: the exit rules (may define derived EDB views in ``edb``);
    ``step(k, recent, edb)``: the recursive rule on the last round's new facts. ``key`` and
    ``value`` only for min in recursion (None: set semantics)."""

    problem: str  # the DuckDB anchor's query (benchmarks.anchors.duckdb_sql)
    init: Callable
    step: Callable
    key: str | None = None
    value: str | None = None


def _tc_step(k, recent, edb):
    return k.join(recent, edb["arc"], [("dst", "src")], {"src": L("src"), "dst": R("dst")})


def _reach_step(k, recent, edb):
    return k.join(recent, edb["arc"], [("node", "src")], {"node": R("dst")})


def _sg_init(k, edb):
    pairs = k.join(edb["arc"], edb["arc"], [("src", "src")], {"x": L("dst"), "y": R("dst")})
    return k.filter(pairs, ("!=", C("x"), C("y")))


def _sg_step(k, recent, edb):
    # sg(X, Y) :- arc(A, X), sg(A, B), arc(B, Y): the delta first, then one arc per side
    half = k.join(recent, edb["arc"], [("x", "src")], {"x": R("dst"), "b": L("y")})
    return k.join(half, edb["arc"], [("b", "src")], {"x": L("x"), "y": R("dst")})


def _cc_init(k, edb):
    arc = edb["arc"]
    both = k.union(
        k.select(arc, {"x": C("src"), "y": C("dst")}), k.select(arc, {"x": C("dst"), "y": C("src")})
    )
    edb["edge"] = k.materialize(k.distinct(both))
    return k.distinct(k.select(edb["edge"], {"node": C("x"), "label": C("x")}))


def _cc_step(k, recent, edb):
    return k.join(recent, edb["edge"], [("node", "x")], {"node": R("y"), "label": L("label")})


def _sssp_init(k, edb):
    return k.select(edb["source"], {"node": C("node"), "d": ("lit", 0)})


def _sssp_step(k, recent, edb):
    out = {"node": R("dst"), "d": ("+", L("d"), R("weight"))}
    return k.join(recent, edb["warc"], [("node", "src")], out)


PROGRAMS = {
    "tc": Program("tc", lambda k, edb: k.select(edb["arc"], {"src": C("src"), "dst": C("dst")}), _tc_step),
    "reach": Program("reach", lambda k, edb: k.select(edb["source"], {"node": C("node")}), _reach_step),
    "sg": Program("sg", _sg_init, _sg_step),
    "cc": Program("cc", _cc_init, _cc_step, key="node", value="label"),
    "sssp": Program("sssp", _sssp_init, _sssp_step, key="node", value="d"),
}


def evaluate(k, program: Program, inputs: dict) -> tuple:
    """Arrow tables in, (Arrow table of the fixpoint, rounds) out."""
    edb = {name: k.materialize(k.scan(table)) for name, table in inputs.items()}
    loop = seminaive if program.key is None else seminaive_min
    total, rounds = loop(k, program, edb)
    return k.to_arrow(total), rounds


def seminaive(k, program: Program, edb: dict) -> tuple:
    """Set semantics: join the recent facts, drop what is known (anti-join), union."""
    total = k.materialize(k.distinct(program.init(k, edb)))
    recent, rounds = total, 0
    while k.count(recent):
        rounds += 1
        new = k.anti(k.distinct(program.step(k, recent, edb)), total)
        recent = k.materialize(new)
        total = k.materialize(k.union(total, recent))
    return total, rounds


def seminaive_min(k, program: Program, edb: dict) -> tuple:
    """Min in recursion: a group keeps its minimum; only improved groups form the next delta."""
    key, value = program.key, program.value
    best = k.materialize(k.group_min(program.init(k, edb), key, value))
    recent, rounds = best, 0
    while k.count(recent):
        rounds += 1
        candidates = k.group_min(program.step(k, recent, edb), key, value)
        recent = k.materialize(k.improved(candidates, best, key, value))
        best = k.materialize(k.union(k.anti(best, recent, [key]), recent))
    return best, rounds
