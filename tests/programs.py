"""Hypothesis strategies for random Datalog programs with their EDB inputs.

Each strategy draws ``(program_text, edb)`` where ``edb`` maps every EDB relation the program
mentions to a set of tuples. Programs are valid by construction (they pass analysis):

- safe: head variables, comparison variables and named variables of negated atoms come from
  positive body atoms or assignments; ``_`` only appears in negated atoms;
- stratified: IDB relations get levels; a rule may use positively the EDB and the IDB relations
  of its own or lower levels, negatively only those of lower levels (so recursion is positive);
- count/sum/avg only over relations of lower strata, min/max in recursion only in templates
  that converge (shortest paths with non-negative weights, label propagation, bounded coin change);
- terminating: values stay in a small domain (0..5), arithmetic that can grow is guarded.

Every EDB relation a program reads is named by an ``.input`` line (a relation nothing defines
is an error). Everything is a ``long`` except the results of ``avg``, and avg relations are never
read by other rules, so there are no mixed-type joins. Use :func:`settings` for the example count.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck
from hypothesis import settings as _settings
from hypothesis import strategies as st

import spark_datalog as sd

DOMAIN = (0, 5)
VARIABLES = ("X", "Y", "Z", "W")
COMPARISONS = ("=", "!=", "<", "<=", ">", ">=")
ARITHMETIC = ("+", "-", "*", "/", "mod")


# connected components by minimum label: min in a linear recursion over an undirected graph
CONNECTED_COMPONENTS = """
.decl arc(x: long, y: long)
edge(X, Y) :- arc(X, Y).
edge(Y, X) :- arc(X, Y).
cc(X, min<L>) :- edge(X, _), L = X.
cc(Y, min<L>) :- cc(X, L), edge(X, Y).
"""


def settings(default: int = 25, **kwargs):
    """Hypothesis settings: ``max_examples`` from ``SD_HYPOTHESIS_EXAMPLES`` (else ``default``)."""
    examples = int(os.environ.get("SD_HYPOTHESIS_EXAMPLES", default))
    return _settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        **kwargs,
    )


def _values(arity: int):
    return st.sets(st.tuples(*[st.integers(*DOMAIN)] * arity), min_size=1, max_size=12)


class _Builder:
    """Collects rule texts and the EDB relations they mention, for one drawn program."""

    def __init__(self, draw, edb: list):
        self.draw = draw
        self.edb = dict(edb)  # name -> arity
        self.used: set = set()
        self.lines: list = []
        self.fresh = 0

    def _term(self, bound: list, allow_anonymous: bool = False) -> str:
        draw = self.draw
        kinds = (["var"] * 6 if bound else []) + ["const"] + (["anon"] if allow_anonymous else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "var":
            return draw(st.sampled_from(bound))
        if kind == "anon":
            return "_"
        return str(draw(st.integers(*DOMAIN)))

    def _atom(self, relation: tuple, first_is_variable: bool = False) -> tuple:
        """(text, variables) of a positive atom over ``relation`` = (name, arity)."""
        name, arity = relation
        draw = self.draw
        args = []
        for i in range(arity):
            if (i == 0 and first_is_variable) or draw(st.integers(0, 7)) > 0:
                args.append(draw(st.sampled_from(VARIABLES)))
            else:
                args.append(str(draw(st.integers(*DOMAIN))))
        if name in self.edb:
            self.used.add(name)
        return f"{name}({', '.join(args)})", [a for a in args if a[0].isupper()]

    def body(self, positive: list, negative: list = (), first=None, arithmetic: bool = True) -> tuple:
        """(literal texts, bound variables) of a random safe body."""
        draw = self.draw
        literals, bound = [], []
        atoms = [first or draw(st.sampled_from(positive))]
        atoms += [draw(st.sampled_from(positive)) for _ in range(draw(st.integers(0, 2)))]
        for i, relation in enumerate(atoms):
            text, variables = self._atom(relation, first_is_variable=(i == 0))
            literals.append(text)
            bound += [v for v in variables if v not in bound]
        if arithmetic and draw(st.integers(0, 3)) == 0:
            op = draw(st.sampled_from(ARITHMETIC))
            target = f"V{self.fresh}"
            self.fresh += 1
            left = draw(st.sampled_from(bound))
            right = draw(st.one_of(st.sampled_from(bound), st.integers(0, 3).map(str)))
            literals.append(f"{target} = {left} {op} {right}")
            if op in ("+", "-", "*"):  # keep the values in a finite range
                literals += [f"{target} >= 0", f"{target} <= 6"]
            bound.append(target)
        for _ in range(draw(st.sampled_from((0, 0, 1, 2)))):
            left = draw(st.sampled_from(bound))
            right = self._term([v for v in bound if v != left])
            literals.append(f"{left} {draw(st.sampled_from(COMPARISONS))} {right}")
        if negative:
            for _ in range(draw(st.sampled_from((0, 1, 1, 2)))):
                name, arity = draw(st.sampled_from(negative))
                if name in self.edb:
                    self.used.add(name)
                args = [self._term(bound, allow_anonymous=True) for _ in range(arity)]
                negation = draw(st.sampled_from(("not ", "!", "~")))
                literals.append(f"{negation}{name}({', '.join(args)})")
        # Literals in a random order: engines must not depend on the order they are written in.
        order = draw(st.permutations(range(len(literals))))
        return [literals[i] for i in order], bound

    def rule(self, head: tuple, positive: list, negative: list = (), first=None) -> None:
        name, arity = head
        literals, bound = self.body(positive, negative, first)
        args = [self._term(bound) for _ in range(arity)]
        self.lines.append(f"{name}({', '.join(args)}) :- {', '.join(literals)}.")

    def aggregate_rule(self, head: tuple, position: int, func: str, positive: list) -> None:
        name, arity = head
        literals, bound = self.body(positive)
        value = self.draw(st.sampled_from(bound))
        keys = [v for v in bound if v != value] or bound
        args = [self.draw(st.sampled_from(keys)) for _ in range(arity - 1)]
        args.insert(position, f"{func}<{value}>")
        self.lines.append(f"{name}({', '.join(args)}) :- {', '.join(literals)}.")

    def result(self) -> tuple:
        edb = {name: self.draw(_values(self.edb[name])) for name in sorted(self.used)}
        inputs = [f".input {', '.join(sorted(self.used))}"] if self.used else []
        return "\n".join(inputs + self.lines) + "\n", edb


_ARITY = st.integers(1, 3)


def _relations(draw, prefix: str, count, arity=_ARITY) -> list:
    return [(f"{prefix}{i}", draw(arity)) for i in range(draw(count))]


def _stratified(draw, negation: bool) -> tuple:
    """(builder, idb relations with levels) of a random (stratified) program without aggregates."""
    edb = _relations(draw, "e", st.integers(1, 3))
    idb = _relations(draw, "p", st.integers(1, 4))
    levels = [0]
    for _ in idb[1:]:
        levels.append(levels[-1] + (draw(st.integers(0, 1)) if negation else 0))
    builder = _Builder(draw, edb)
    for relation, level in zip(idb, levels, strict=True):
        lower = [r for r, lv in zip(idb, levels, strict=True) if lv < level]
        same = [r for r, lv in zip(idb, levels, strict=True) if lv <= level]
        negative = edb + lower if negation else []
        builder.rule(relation, edb + lower, negative)  # an exit rule
        for _ in range(draw(st.integers(0, 2))):
            builder.rule(relation, edb + same, negative)
    return builder, list(zip(idb, levels, strict=True))


@st.composite
def positive_programs(draw):
    """Positive programs with arbitrary (mutual, non-linear) recursion, comparisons, arithmetic."""
    builder, _ = _stratified(draw, negation=False)
    return builder.result()


@st.composite
def stratified_programs(draw):
    """Programs with stratified negation (``not``, ``!``, ``~``, with ``_``) and recursion."""
    builder, _ = _stratified(draw, negation=True)
    return builder.result()


@st.composite
def aggregate_programs(draw):
    """Stratified programs plus count/sum/avg/min/max relations over them, and rules reading the
    aggregates (positively or under negation) one stratum higher."""
    builder, idb = _stratified(draw, negation=draw(st.booleans()))
    below = list(builder.edb.items()) + [r for r, _ in idb]
    readable = []
    for i in range(draw(st.integers(1, 2))):
        func = draw(st.sampled_from(("count", "sum", "avg", "min", "max")))
        arity = draw(st.integers(1, 3))
        position = draw(st.integers(0, arity - 1))
        relation = (f"a{i}", arity)
        for _ in range(draw(st.integers(1, 2))):
            builder.aggregate_rule(relation, position, func, below)
        if func in ("min", "max") and draw(st.booleans()):
            builder.rule(relation, below)  # plain rules of a min/max relation add candidates
        if func != "avg":
            readable.append(relation)
    for i in range(draw(st.integers(0, 2)) if readable else 0):
        first = draw(st.sampled_from(readable))
        builder.rule((f"c{i}", draw(st.integers(1, 2))), below + readable, below + readable, first=first)
    return builder.result()


# ---------------------------------------------------------------------------------------------
# min/max in recursion (PreM): templates that converge


def _weighted(draw):
    return draw(
        st.sets(st.tuples(st.integers(*DOMAIN), st.integers(*DOMAIN), st.integers(0, 5)), max_size=12)
    )


@st.composite
def _shortest_paths(draw):
    base = draw(st.sampled_from(("path(X, Y, min<D>) :- arc(X, Y, D).", "path(X, Y, D) :- arc(X, Y, D).")))
    step = draw(
        st.sampled_from(
            (
                "path(X, Y, min<D>) :- path(X, Z, D1), arc(Z, Y, D2), D = D1 + D2.",
                "path(X, Y, min<D>) :- arc(X, Z, D1), path(Z, Y, D2), D = D1 + D2.",
                "path(X, Y, min<D>) :- path(X, Z, D1), path(Z, Y, D2), D = D1 + D2.",
                "path(X, Y, min<D>) :- D = D1 + D2 + 1, path(Z, Y, D2), arc(X, Z, D1).",
            )
        )
    )
    extra = draw(
        st.sampled_from(
            (
                "",
                "near(X, Y) :- path(X, Y, D), D <= 3.",
                "unreached(X, Y) :- arc(X, _, _), arc(_, Y, _), not path(X, Y, _).",
                "hops(X, count<Y>) :- path(X, Y, _).",
            )
        )
    )
    return "\n".join((".input arc", base, step, extra)) + "\n", {"arc": _weighted(draw)}


@st.composite
def _single_source(draw):
    source = draw(st.integers(*DOMAIN))
    text = (
        ".input arc\n"
        f"dist({source}, 0).\n"
        "dist(Y, min<D>) :- dist(X, D1), arc(X, Y, W), D = D1 + W.\n"
        "far(Y) :- dist(Y, D), D > 4.\n"
    )
    return text, {"arc": _weighted(draw)}


@st.composite
def _components(draw):
    func = draw(st.sampled_from(("min", "max")))
    text = f".input node, edge\nlabel(X, X) :- node(X).\nlabel(Y, {func}<L>) :- label(X, L), edge(X, Y).\n"
    if draw(st.booleans()):
        text += f"label(Y, {func}<L>) :- label(X, L), edge(Y, X).\n"
    text += "component(L, count<X>) :- label(X, L).\n"
    nodes = draw(st.sets(st.tuples(st.integers(*DOMAIN)), min_size=1, max_size=6))
    edges = draw(st.sets(st.tuples(st.integers(*DOMAIN), st.integers(*DOMAIN)), max_size=10))
    return text, {"node": nodes, "edge": edges}


@st.composite
def _coin_change(draw):
    bound = draw(st.integers(3, 15))
    text = (
        ".input coins\n"
        "num(C, 1) :- coins(C).\n"
        f"num(V, min<N>) :- num(X, Y), coins(C), V = X + C, V <= {bound}, N = Y + 1.\n"
    )
    coins = draw(st.sets(st.tuples(st.integers(1, 6)), min_size=1, max_size=4))
    return text, {"coins": coins}


def prem_programs():
    """min/max inside recursion: shortest paths (linear, left-linear, non-linear), single-source
    distances, min/max label propagation, bounded coin change."""
    return st.one_of(_shortest_paths(), _single_source(), _components(), _coin_change())


def any_program():
    return st.one_of(positive_programs(), stratified_programs(), aggregate_programs(), prem_programs())


@st.composite
def programs_with_changes(draw):
    """``(text, old_edb, new_edb)``: a random program (:func:`any_program`) and its inputs
    before and after a random change (facts kept with probability 3/4, up to 4 added)."""
    text, old_edb = draw(any_program())
    relations = sd.Program.parse(text).relations
    new_edb = {}
    for name, rows in old_edb.items():
        arity = len(relations[name].column_names)
        kept = {row for row in rows if draw(st.integers(0, 3)) > 0}
        added = draw(st.sets(st.tuples(*[st.integers(*DOMAIN)] * arity), max_size=4))
        new_edb[name] = kept | added
    return text, old_edb, new_edb


@st.composite
def limited_programs(draw):
    """Random programs with negation and recursion, with ``.limitsize`` on some of their
    relations: one below what it holds without the limit (a cut, often in the middle of a
    round), others anywhere up to one above it."""
    text, edb = draw(stratified_programs().filter(lambda case: _sizes(case)[1]))
    sizes, cut = _sizes((text, edb))
    limits = {cut[0]: draw(st.integers(1, sizes[cut[0]] - 1))}
    for name in draw(st.lists(st.sampled_from(sorted(sizes)), max_size=2, unique=True)):
        limits.setdefault(name, draw(st.integers(0, sizes[name] + 1)))
    return text + "".join(f"\n.limitsize {name}(n={n})" for name, n in limits.items()), edb


def _sizes(case) -> tuple:
    """(IDB relation -> its facts without limits, the relations holding two or more)."""
    found = sd.reference.evaluate(sd.Program.parse(case[0]), case[1])
    sizes = {name: len(rows) for name, rows in found.items()}
    return sizes, sorted(name for name, size in sizes.items() if size >= 2)
