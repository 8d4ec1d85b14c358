"""Properties of the reference interpreter on random programs (tests/programs.py):
naive and semi-naive agree, results are supported models, and min/max-in-recursion and
aggregates agree with plain-Python algorithms."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

import programs
import spark_datalog as sd
from programs import VARIABLES, settings
from spark_datalog.reference import evaluate
from spark_datalog.reference.body import head_tuple, order_body, substitutions
from spark_datalog.reference.relation import Relation
from spark_datalog.reference.terms import Undefined
import contextlib

STRATEGIES = {
    "positive": programs.positive_programs(),
    "stratified": programs.stratified_programs(),
    "aggregate": programs.aggregate_programs(),
    "prem": programs.prem_programs(),
}


def _both(drawn):
    text, edb = drawn
    program = sd.Program.parse(text)  # every drawn program passes analysis
    naive = evaluate(program, edb, strategy="naive")
    seminaive = evaluate(program, edb, strategy="seminaive")
    assert naive == seminaive, text
    return program, edb, seminaive


@settings()
@given(programs.positive_programs())
def test_naive_equals_seminaive_on_positive_programs(drawn):
    _both(drawn)


@settings()
@given(programs.stratified_programs())
def test_naive_equals_seminaive_with_stratified_negation(drawn):
    _both(drawn)


@settings()
@given(programs.aggregate_programs())
def test_naive_equals_seminaive_with_stratified_aggregates(drawn):
    _both(drawn)


@settings()
@given(programs.prem_programs())
def test_naive_equals_seminaive_with_min_max_in_recursion(drawn):
    _both(drawn)


@settings()
@given(programs.any_program())
def test_any_program_passes_analysis(drawn):
    text, edb = drawn
    checked = sd.Program.parse(text).checked
    assert set(edb) <= set(checked.edb)


# -- expression arguments of atoms: a semi-naive delta atom read before its inputs are bound ----

_EXPRESSION_RELATIONS = (("a", 2), ("r", 2), ("s", 1))


@st.composite
def expression_programs(draw):
    """Recursive programs whose body atoms have expression arguments (``r(Y + 1, B)``) over
    variables that other atoms bind, so a semi-naive variant reading the delta at such an atom
    meets the expression before its variables are bound."""
    lines = [".input a", "r(X, Y) :- a(X, Y).", "s(X) :- a(X, _)."]
    for head in (("r", 2), ("s", 1)):
        for _ in range(draw(st.integers(1, 2))):
            lines.append(_expression_rule(draw, head))
    edb = {"a": draw(st.sets(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=10))}
    return "\n".join(lines) + "\n", edb


def _expression_rule(draw, head) -> str:
    atoms = [draw(st.sampled_from(_EXPRESSION_RELATIONS)) for _ in range(draw(st.integers(2, 3)))]
    atoms[0] = draw(st.sampled_from(_EXPRESSION_RELATIONS[1:]))  # at least one recursive atom
    kinds = [[draw(st.sampled_from(("var", "var", "const", "expr"))) for _ in range(n)] for _, n in atoms]
    plain = [[draw(st.sampled_from(VARIABLES)) for _ in range(n)] for _, n in atoms]
    args = []
    for i, ((name, _), atom_kinds) in enumerate(zip(atoms, kinds, strict=True)):
        others = sorted(
            {
                v
                for j, vs in enumerate(plain)
                if j != i
                for v, k in zip(vs, kinds[j], strict=True)
                if k == "var"
            }
        )
        texts = []
        for position, kind in enumerate(atom_kinds):
            if kind == "expr" and others:
                op = draw(st.sampled_from(("+", "-", "*", "/", "mod")))
                right = draw(st.one_of(st.integers(0, 2).map(str), st.sampled_from(others)))
                texts.append(f"{draw(st.sampled_from(others))} {op} {right}")
            elif kind == "var":
                texts.append(plain[i][position])
            else:
                texts.append(str(draw(st.integers(0, 5))))
        args.append(f"{name}({', '.join(texts)})")
    bound = sorted(
        {v for vs, ks in zip(plain, kinds, strict=True) for v, k in zip(vs, ks, strict=True) if k == "var"}
    )
    head_args = [draw(st.sampled_from(bound)) if bound else "0" for _ in range(head[1])]
    order = draw(st.permutations(range(len(args))))
    return f"{head[0]}({', '.join(head_args)}) :- {', '.join(args[i] for i in order)}."


@settings(default=60)
@given(expression_programs())
def test_naive_equals_seminaive_with_expression_arguments_bound_later(drawn):
    _both(drawn)


def test_seminaive_delta_atom_with_an_expression_of_a_later_variable():
    text = ".input a\nr(X, B) :- a(X, B).\nr(X, B) :- a(X, Y), r(Y + 1, B).\n"
    edb = {"a": {(1, 2), (2, 3), (3, 4), (0, 9)}}
    _, _, result = _both((text, edb))
    # r(X, B) holds when a(X, B), or a(X, Y) and r(Y + 1, B)
    expected = set(edb["a"])
    while True:
        more = {(x, b) for x, y in edb["a"] for z, b in expected if z == y + 1} - expected
        if not more:
            break
        expected |= more
    assert result["r"] == expected


def _heads(rule, db):
    out = set()
    for subst in substitutions(rule.body, order_body(rule.body), lambda p: db[_predicate(rule.body[p])]):
        with contextlib.suppress(Undefined):
            out.add(head_tuple(rule.head, subst))
    return out


def _predicate(literal):
    return literal.atom.predicate if hasattr(literal, "atom") else literal.predicate


@settings()
@given(st.one_of(programs.positive_programs(), programs.stratified_programs()))
def test_result_is_a_supported_model(drawn):
    """Every rule applied to the result derives nothing new (a model), and every derived tuple
    is a fact or the head of a rule instance over the result (supported)."""
    program, edb, result = _both(drawn)
    checked = program.checked
    db = {name: Relation(set(edb.get(name, ())) | set(checked.facts.get(name, ()))) for name in checked.edb}
    db.update({name: Relation(rows) for name, rows in result.items()})
    derived = {name: set(checked.facts.get(name, ())) for name in checked.idb}
    for rule in checked.rules:
        derived[rule.head.predicate] |= _heads(rule, db)
    assert derived == result


# -- min/max in recursion against plain Python ------------------------------------------------

weighted = st.sets(st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(0, 5)), max_size=12)


def _floyd_warshall(arcs):
    """Shortest paths of at least one arc."""
    nodes = {x for x, _, _ in arcs} | {y for _, y, _ in arcs}
    best = {}
    for x, y, d in arcs:
        best[x, y] = min(d, best.get((x, y), d))
    for z, x, y in itertools.product(nodes, repeat=3):
        if (x, z) in best and (z, y) in best:
            through = best[x, z] + best[z, y]
            if through < best.get((x, y), through + 1):
                best[x, y] = through
    return {(x, y, d) for (x, y), d in best.items()}


SHORTEST = """
    path(X, Y, min<D>) :- arc(X, Y, D).
    path(X, Y, min<D>) :- path(X, Z, D1), path(Z, Y, D2), D = D1 + D2.
    .input arc
"""


@settings()
@given(weighted, st.sampled_from(("naive", "seminaive")))
def test_shortest_paths_match_floyd_warshall(arcs, strategy):
    result = evaluate(sd.Program.parse(SHORTEST), {"arc": arcs}, strategy=strategy)
    assert result["path"] == _floyd_warshall(arcs)


LABELS = """
    label(X, X) :- node(X).
    label(Y, min<L>) :- label(X, L), edge(X, Y).
    .input node, edge
"""


@settings()
@given(
    st.sets(st.integers(0, 7), min_size=1, max_size=6),
    st.sets(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=12),
    st.sampled_from(("naive", "seminaive")),
)
def test_min_label_propagation_is_the_smallest_node_reaching(nodes, edges, strategy):
    result = evaluate(
        sd.Program.parse(LABELS), {"node": {(n,) for n in nodes}, "edge": edges}, strategy=strategy
    )
    reaches = {(n, n) for n in nodes}
    while True:
        more = {(x, z) for (x, y) in reaches for (y2, z) in edges if y == y2} - reaches
        if not more:
            break
        reaches |= more
    expected = {}
    for x, y in reaches:
        expected[y] = min(x, expected.get(y, x))
    assert result["label"] == set(expected.items())


COINS = """
    num(C, 1) :- coins(C).
    num(V, min<N>) :- num(X, Y), coins(C), V = X + C, V <= 20, N = Y + 1.
    .input coins
"""


@settings()
@given(st.sets(st.integers(1, 9), min_size=1, max_size=4), st.sampled_from(("naive", "seminaive")))
def test_coin_change_matches_dynamic_programming(coins, strategy):
    result = evaluate(sd.Program.parse(COINS), {"coins": {(c,) for c in coins}}, strategy=strategy)
    fewest = {0: 0}
    for value in range(1, 21):
        options = [fewest[value - c] + 1 for c in coins if value - c in fewest]
        if options:
            fewest[value] = min(options)
    assert result["num"] == {(v, n) for v, n in fewest.items() if v > 0}


# -- stratified aggregates against plain Python ------------------------------------------------

AGGREGATES = """
    n(K, count<V>) :- a(K, I, V).
    s(K, sum<V>) :- a(K, I, V).
    m(K, avg<V>) :- a(K, I, V).
    lo(K, min<V>) :- a(K, _, V).
    hi(K, max<V>) :- a(K, _, V).
    sv(K, sum<V>) :- a(K, _, V).
    .input a
"""


@settings()
@given(st.sets(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(-5, 5)), max_size=15))
def test_aggregates_match_python(rows):
    result = evaluate(sd.Program.parse(AGGREGATES), {"a": rows})
    groups: dict = {}
    for k, _, v in rows:
        groups.setdefault(k, []).append(v)
    assert result["n"] == {(k, len(set(vs))) for k, vs in groups.items()}
    assert result["s"] == {(k, sum(vs)) for k, vs in groups.items()}
    assert result["m"] == {(k, sum(vs) / len(vs)) for k, vs in groups.items()}
    assert result["lo"] == {(k, min(vs)) for k, vs in groups.items()}
    assert result["hi"] == {(k, max(vs)) for k, vs in groups.items()}
    # with I anonymous, the named variables are (K, V): each distinct value counts once
    assert result["sv"] == {(k, sum(set(vs))) for k, vs in groups.items()}
