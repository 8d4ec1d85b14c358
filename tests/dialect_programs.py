"""Programs in Soufflé's dialect with hand-checked results, run on every engine.

The reference interpreter (tests/syntax), the local kernel (tests/kernel/test_differential.py)
and Spark (tests/differential/test_spark_vs_reference.py) must each give ``expected``: the
constructs are lowered to the core language by the parser, so this checks that every engine runs
the lowered programs alike (auxiliary relations, aggregates over bodies, components).
"""

from __future__ import annotations

from seed_programs import SeedProgram


BODY_AGGREGATES = SeedProgram(
    name="body_aggregates",
    origin="Soufflé's aggregates over bodies: tuples counted, empty groups 0 for count and sum",
    text="""
        .type Id <: number
        .decl w(x: Id, v: number)
        .decl node(x: Id)
        .input w, node
        s(T) :- T = sum V : { w(_, V) }.
        distinct(T) :- T = count : { w(_, V), V > 0 }.
        per(X, N) :- node(X), N = count : { w(Y, _), Y > X }.
        low(X, M) :- node(X), M = min V : { w(Y, V), Y >= X }.
        high(X, M) :- node(X), M = max V * 2 : w(X, V).
        nested(N) :- N = count : { node(X), 2 = count : { w(Y, _), Y > X } }.
        none(N) :- N = sum V : { w(_, V), V > 100 }.
        .output s, distinct, per, low, high, nested, none
    """,
    edb={"w": {(1, 5), (2, 5), (3, 7)}, "node": {(1,), (2,), (3,), (4,)}},
    expected={
        "s": {(17,)},
        "distinct": {(3,)},
        "per": {(1, 2), (2, 1), (3, 0), (4, 0)},
        "low": {(1, 5), (2, 5), (3, 7)},
        "high": {(1, 10), (2, 10), (3, 14)},
        "nested": {(1,)},
        "none": {(0,)},
    },
)

MEAN = SeedProgram(
    name="body_aggregate_mean",
    origin="Soufflé's mean over a body, per group",
    text="""
        .decl score(who: symbol, s: number)
        .input score
        avg(W, A) :- score(W, _), A = mean S : score(W, S).
        .output avg
    """,
    edb={"score": {("a", 1), ("a", 2), ("b", 4)}},
    expected={"avg": {("a", 1.5), ("b", 4.0)}},
)

EQREL = SeedProgram(
    name="eqrel_components",
    origin="Soufflé's eqrel: the equivalence closure, evaluated as connected components",
    text="""
        .type Name <: symbol
        .decl link(x: Name, y: Name)
        .decl same(x: Name, y: Name) eqrel
        .input link
        same(X, Y) :- link(X, Y).
        same("f", "f").
        .output same
    """,
    edb={"link": {("a", "b"), ("c", "b"), ("d", "e")}},
    expected={
        "same": {(x, y) for group in ({"a", "b", "c"}, {"d", "e"}, {"f"}) for x in group for y in group},
    },
)

RULE_FORMS = SeedProgram(
    name="disjunction_and_heads",
    origin="Soufflé's disjunction in bodies and several heads",
    text="""
        .decl e(x: number, y: number) btree
        .input e
        src(X), dst(Y) :- e(X, Y).
        either(X) :- e(X, 1) ; e(1, X).
        both(X) :- src(X), (dst(X), X > 1 ; X = 1).
        .output src, dst, either, both
    """,
    edb={"e": {(1, 2), (2, 3), (3, 1)}},
    expected={
        "src": {(1,), (2,), (3,)},
        "dst": {(1,), (2,), (3,)},
        "either": {(3,), (2,)},
        "both": {(1,), (2,), (3,)},
    },
)

COMPONENTS = SeedProgram(
    name="components",
    origin="Soufflé's components: instances of a parameterised component with a base and an override",
    text="""
        .comp Closure<T> {
            .decl edge(x: T, y: T)
            .decl reach(x: T, y: T) overridable
            reach(X, Y) :- edge(X, Y).
            reach(X, Z) :- reach(X, Y), edge(Y, Z).
        }
        .comp Symmetric<T> : Closure<T> {
            .override reach
            reach(X, Y) :- edge(X, Y) ; edge(Y, X).
            reach(X, Z) :- reach(X, Y), reach(Y, Z).
        }
        .decl arc(x: number, y: number)
        .input arc
        .init directed = Closure<number>
        .init undirected = Symmetric<number>
        directed.edge(X, Y) :- arc(X, Y).
        undirected.edge(X, Y) :- arc(X, Y).
        .output directed.reach, undirected.reach
    """,
    edb={"arc": {(1, 2), (2, 3)}},
    expected={
        "directed.reach": {(1, 2), (2, 3), (1, 3)},
        "undirected.reach": {(x, y) for x in (1, 2, 3) for y in (1, 2, 3)},
    },
)

RECORDS = SeedProgram(
    name="records",
    origin="Soufflé's records: construction in heads, patterns in bodies, joins and recursion on records",
    text="""
        .type Point = [x: number, y: number]
        .type Seg = [a: Point, b: Point]
        .decl seg(s: Seg)
        .input seg
        .decl pt(p: Point)
        .decl reach(a: Point, b: Point)
        .decl xs(x: number)
        .decl diag(p: Point)
        .decl far(p: Point)
        .decl shifted(p: Point)
        .decl labelled(p: Point, l: symbol)
        .decl common(p: Point)
        pt([0, 0]).
        pt(A) :- seg([A, _]).
        pt(B) :- seg([_, B]).
        reach(A, B) :- seg([A, B]).
        reach(A, C) :- reach(A, B), seg([B, C]).
        xs(X) :- pt([X, _]).
        diag(P) :- pt(P), P = [X, X].
        far(P) :- pt(P), P != [0, 0], !reach([0, 0], P).
        shifted([X + 1, Y * 2]) :- pt([X, Y]), X < 2.
        labelled(P, "origin") :- pt(P), P = [0, 0].
        common(P) :- reach(P, _), reach(_, P).
        nested(X, Y) :- seg([[X, 0], [Y, _]]).
        .output pt, reach, xs, diag, far, shifted, labelled, common, nested
    """,
    edb={"seg": {(((0, 0), (1, 1)),), (((1, 1), (2, 0)),), (((5, 5), (6, 6)),)}},
    expected={
        "pt": {((0, 0),), ((1, 1),), ((5, 5),), ((2, 0),), ((6, 6),)},
        "reach": {((0, 0), (1, 1)), ((1, 1), (2, 0)), ((5, 5), (6, 6)), ((0, 0), (2, 0))},
        "xs": {(0,), (1,), (5,), (2,), (6,)},
        "diag": {((0, 0),), ((1, 1),), ((5, 5),), ((6, 6),)},
        "far": {((5, 5),), ((6, 6),)},
        "shifted": {((1, 0),), ((2, 2),)},
        "labelled": {((0, 0), "origin")},
        "common": {((1, 1),)},
        "nested": {(0, 1)},
    },
)

DIALECT_PROGRAMS = (BODY_AGGREGATES, MEAN, EQREL, RULE_FORMS, COMPONENTS, RECORDS)
