"""Programs in Soufflé's dialect with hand-checked results, run on every engine.

The reference interpreter (tests/syntax), the local kernel (tests/kernel/test_differential.py)
and Spark (tests/differential/test_spark_vs_reference.py) must each give ``expected``: the
constructs are lowered to the core language by the parser, so this checks that every engine runs
the lowered programs alike (auxiliary relations, aggregates over bodies, components).
"""

from __future__ import annotations

from seed_programs import SeedProgram
from spark_datalog import vectorized


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
        fixed(X, N) :- X = 1, N = count : { w(Y, _), Y > X }.
        either(Z, N) :- (Z = 0 ; Z = 3), N = count : { w(Y, _), Y > Z }.
        shifted(M) :- X = 2, N = count : { w(Y, _), Y >= X }, M = N + X.
        .output s, distinct, per, low, high, nested, none, fixed, either, shifted
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
        "fixed": {(1, 2)},  # groups bound by a comparison, not an atom
        "either": {(0, 3), (3, 0)},
        "shifted": {(4,)},
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
    origin="Soufflé's disjunction in bodies, several heads, true/false literals and a .plan",
    text="""
        .decl e(x: number, y: number) btree
        .input e
        src(X), dst(Y) :- e(X, Y), true.
        either(X) :- e(X, 1) ; e(1, X).
        .plan 0:(1)
        both(X) :- src(X), (dst(X), X > 1 ; X = 1).
        never(X) :- e(X, _), false.
        always(X) :- e(X, Y), !false, !true ; e(Y, X), true.
        .output src, dst, either, both, never, always
    """,
    edb={"e": {(1, 2), (2, 3), (3, 1)}},
    expected={
        "src": {(1,), (2,), (3,)},
        "dst": {(1,), (2,), (3,)},
        "either": {(3,), (2,)},
        "both": {(1,), (2,), (3,)},
        "never": set(),
        "always": {(1,), (2,), (3,)},
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

CASTS = SeedProgram(
    name="subtypes_and_casts",
    origin="Soufflé's subtypes with as(expr, Type): the engines compute the expression",
    text="""
        .type Id <: number
        .type Node = Id
        .type Weight <: number
        .decl e(x: Id, y: Node)
        .decl w(x: Id, v: Weight)
        .decl shifted(x: Id, y: Id)
        .decl doubled(x: Id, v: Weight)
        .decl label(x: Id, s: symbol)
        .input e, w
        shifted(X, as(Y + 10, Id)) :- e(X, Y).
        doubled(X, as(X * 2, Weight)) :- e(X, _).
        heavier(X, V) :- e(X, Y), w(Y, V), V > as(X, Weight).
        label(X, to_string(X)) :- e(X, _).
        .output shifted, doubled, heavier, label
    """,
    edb={"e": {(1, 2), (2, 3)}, "w": {(2, 5), (3, 1)}},
    expected={
        "shifted": {(1, 12), (2, 13)},
        "doubled": {(1, 2), (2, 4)},
        "heavier": {(1, 5)},
        "label": {(1, "1"), (2, "2")},
    },
)

INPUT_RULES = SeedProgram(
    name="input_rules",
    origin="Soufflé's rules and facts adding to .input relations (an eqrel one too)",
    text="""
        .decl edge(x: number, y: number)
        .input edge
        edge(Y, X) :- edge(X, Y).
        edge(0, 1).
        deg(X, N) :- edge(X, _), N = count : { edge(X, _) }.
        .decl same(x: symbol, y: symbol) eqrel
        .input same
        same("p", "q").
        .output edge, deg, same
    """,
    edb={"edge": {(1, 2), (3, 3)}, "same": {("a", "b"), ("b", "c")}},
    expected={
        "edge": {(0, 1), (1, 0), (1, 2), (2, 1), (3, 3)},
        "deg": {(0, 1), (1, 2), (2, 1), (3, 1)},
        "same": {(x, y) for group in ({"a", "b", "c"}, {"p", "q"}) for x in group for y in group},
    },
)

GENERATORS = SeedProgram(
    name="generators",
    origin="Soufflé's range, urange and frange: end exclusive, default step -1 when descending, "
    "step 0 gives the start once, a wrong-direction step nothing; in heads, facts, comparisons",
    text="""
        .decl p(a: number, b: number)
        .input p
        .decl ints(t: symbol, x: number)
        ints("up", X) :- X = range(0, 5).
        ints("down", X) :- X = range(3, 0).
        ints("step", X) :- X = range(1, 10, 4).
        ints("negstep", X) :- X = range(10, 1, -3).
        ints("zero", X) :- X = range(7, 9, 0).
        ints("zero_empty", X) :- X = range(7, 7, 0).
        ints("wrong_way", X) :- X = range(0, 5, -1).
        ints("unsigned", X) :- X = urange(2, 5).
        ints("computed", X) :- p(A, B), X = range(A * 2, B + 3, 2).
        ints("undefined", X) :- p(A, B), X = range(0, A / (B - 5)).
        ints("compared", X) :- p(X, _), X < range(2, 5).
        ints("member", X) :- p(X, _), X = range(2, 5).
        ints("member2", X) :- p(_, X), range(0, 4) = X.
        ints("fact", range(1, 3)).
        span(A, Y) :- p(A, B), Y = range(A, B).
        pairs(X, Y) :- X = range(0, 2), Y = range(X, 2).
        .decl fl(t: symbol, x: float)
        fl("frange", X) :- X = frange(0, 1, 0.25).
        fl("range", X) :- X = range(1.0, 0.0, -0.5).
        fl("mixed", X) :- X = frange(0, 2).
        .output ints, span, pairs, fl
    """,
    edb={"p": {(1, 3), (5, 5), (4, 2)}},
    expected={
        "ints": {
            *(("up", x) for x in range(5)),
            *(("down", x) for x in (3, 2, 1)),
            *(("step", x) for x in (1, 5, 9)),
            *(("negstep", x) for x in (10, 7, 4)),
            ("zero", 7),
            *(("unsigned", x) for x in (2, 3, 4)),
            # p(1, 3): range(2, 6, 2); p(5, 5): range(10, 8, 2) and p(4, 2): range(8, 5, 2) are empty
            ("computed", 2),
            ("computed", 4),
            # 1 / -2 = 0: range(0, 0) is empty; 5 / 0 is undefined; 4 / -3 = -1: range(0, -1) is 0
            ("undefined", 0),
            # X < some value of range(2, 5): only X = 1 of 1, 5, 4
            ("compared", 1),
            # X bound by p: a test that X is one of the values (1, 5, 4 in [2, 5); 3, 5, 2 in [0, 4))
            ("member", 4),
            ("member2", 3),
            ("member2", 2),
            ("fact", 1),
            ("fact", 2),
        },
        # p(1, 3): 1, 2; p(5, 5): nothing; p(4, 2): 4, 3
        "span": {(1, 1), (1, 2), (4, 4), (4, 3)},
        "pairs": {(0, 0), (0, 1), (1, 1)},
        "fl": {
            *(("frange", x) for x in (0.0, 0.25, 0.5, 0.75)),
            ("range", 1.0),
            ("range", 0.5),
            ("mixed", 0.0),
            ("mixed", 1.0),
        },
    },
)

DIALECT_PROGRAMS = (BODY_AGGREGATES, MEAN, EQREL, RULE_FORMS, COMPONENTS, CASTS, INPUT_RULES, GENERATORS)

SUBSUMPTION = SeedProgram(
    name="subsumption",
    origin="Soufflé's subsumption: least lengths over a cycle (a min in recursion) and intervals "
    "inside others dropped (negation)",
    text="""
        .decl e(x: number, y: number, d: number)
        .decl iv(lo: number, hi: number)
        .input e, iv
        .decl path(x: number, y: number, d: number)
        path(X, Y, D) :- e(X, Y, D).
        path(X, Y, D + W) :- path(X, Z, D), e(Z, Y, W).
        path(X, Y, D1) <= path(X, Y, D2) :- D2 <= D1.
        .decl outer(lo: number, hi: number)
        outer(L, H) :- iv(L, H).
        outer(L1, H1) <= outer(L2, H2) :- L2 <= L1, H1 <= H2.
        .decl widest(lo: number, hi: number)
        widest(L, H) :- iv(L, H).
        widest(L, H1) <= widest(L, H2) :- H1 < H2.
        .output path, outer, widest
    """,
    edb={
        "e": {(1, 2, 5), (2, 1, 1), (1, 3, 9), (2, 3, 2)},
        "iv": {(0, 10), (2, 5), (3, 12), (0, 4), (20, 30)},
    },
    expected={
        "path": {(1, 2, 5), (1, 1, 6), (1, 3, 7), (2, 1, 1), (2, 2, 6), (2, 3, 2)},
        "outer": {(0, 10), (3, 12), (20, 30)},
        "widest": {(0, 10), (2, 5), (3, 12), (20, 30)},
    },
)

CHOICE = SeedProgram(
    name="choice_domain",
    origin="Soufflé's choice-domain outside recursion: the least candidate per key, in column order",
    text="""
        .decl student(s: symbol, majr: symbol, year: number)
        .decl professor(p: symbol, majr: symbol)
        .input student, professor
        .decl advisor(s: symbol, year: number, p: symbol) choice-domain (s, year)
        advisor(S, Y, P) :- student(S, M, Y), professor(P, M).
        .decl room(p: symbol, floor: number, n: number) choice-domain p
        room(P, F, N) :- professor(P, _), floor(F, N), N > F.
        .decl floor(f: number, n: number)
        floor(2, 1). floor(2, 7). floor(1, 9). floor(1, 3).
        .output advisor, room
    """,
    edb={
        "student": {("ann", "cs", 1), ("bob", "math", 2), ("ann", "cs", 2), ("cy", "art", 1)},
        "professor": {("zed", "cs"), ("amy", "cs"), ("kim", "math")},
    },
    expected={
        "advisor": {("ann", 1, "amy"), ("ann", 2, "amy"), ("bob", 2, "kim")},
        "room": {("zed", 1, 3), ("amy", 1, 3), ("kim", 1, 3)},
    },
)

# Soufflé's spanning tree (a greedy choice-domain in recursion), over SPANNING_GRAPH
SPANNING_TREE = """
    .decl e(x: number, y: number)
    .input e
    .decl st(x: number, y: number) choice-domain y
    st(1, Y) :- e(1, Y).
    st(X, Y) :- st(_, X), e(X, Y).
"""
# 1 -> 2, 3; 2 -> 4; 3 -> 4, 5; 4 -> 5, 6; 5 -> 6, 1; 6 -> 2
SPANNING_GRAPH = {(1, 2), (1, 3), (2, 4), (3, 4), (3, 5), (4, 5), (4, 6), (5, 6), (5, 1), (6, 2)}

GREEDY_CHOICE = SeedProgram(
    name="choice_domain_greedy",
    origin="Soufflé's choice-domain in recursion (its spanning tree) and with several keys: "
    "the greedy choice of each round's candidates in value order",
    text=SPANNING_TREE
    + """
        reached(Y) :- st(_, Y).
        .decl label(n: number, c: symbol)
        label(2, "b"). label(3, "a"). label(4, "a"). label(5, "c"). label(6, "b").
        .decl pair(a: number, b: number, c: symbol) choice-domain a, b, c
        pair(9, 9, "z").
        pair(X, Y, C) :- e(X, Y), label(Y, C).
        .output st, reached, pair
    """,
    edb={"e": SPANNING_GRAPH},
    expected={
        "st": {(1, 2), (1, 3), (2, 4), (3, 5), (4, 6), (5, 1)},
        "reached": {(1,), (2,), (3,), (4,), (5,), (6,)},
        "pair": {(1, 2, "b"), (2, 4, "a"), (3, 5, "c"), (9, 9, "z")},
    },
)

DIALECT_PROGRAMS += (SUBSUMPTION, CHOICE, GREEDY_CHOICE)

# Subsumption with a general body in recursion: each round's dominated tuples removed
# (spark_datalog.syntax.subsumption). Intervals grown along segments, an interval inside
# another dropped; paths keeping, per pair, those no other path beats on length and cost.
INTERVALS = """
    .decl seg(a: number, b: number)
    .input seg
    .decl iv(a: number, b: number)
    iv(A, B) :- seg(A, B).
    iv(A, C) :- iv(A, B), seg(B, C).
    iv(A, B) <= iv(C, D) :- C <= A, B <= D.
"""
# round 1: the segments, (2, 3) (3, 4) (5, 6) inside (2, 7); round 2: (1, 3) (1, 7) from
# (1, 2), and (1, 7) holds (1, 2) (1, 3) (2, 7); round 3: nothing from (1, 7)
INTERVAL_SEGMENTS = {(1, 2), (2, 3), (3, 4), (5, 6), (2, 7), (10, 12)}
PARETO_PATHS = """
    .decl e(x: number, y: number, l: number, c: number)
    .input e
    .decl path(x: number, y: number, l: number, c: number)
    path(X, Y, L, C) :- e(X, Y, L, C).
    path(X, Z, L1 + L2, C1 + C2) :- path(X, Y, L1, C1), e(Y, Z, L2, C2).
    path(X, Y, L1, C1) <= path(X, Y, L2, C2) :- L2 <= L1, C2 <= C1.
"""
# a cycle 1 -> 2 -> 1 and 1 -> 3 -> 2: (length, cost) 1 -> 2 is (1, 5) direct, (3, 2) by 3
PARETO_GRAPH = {(1, 2, 1, 5), (1, 3, 2, 1), (3, 2, 1, 1), (2, 1, 1, 1)}
# per pair, the paths no other beats on both (worked out by hand): 1 -> 1 by 2 (2, 6) or by 3
# and 2 (4, 3); 2 -> 2 by 1 (2, 6) or by 1 and 3 (4, 3); 3 -> 3 by 2 and 1 (4, 3); a path
# around a cycle is beaten by its prefix
PARETO_FRONT = {
    (1, 2, 1, 5), (1, 2, 3, 2), (1, 3, 2, 1), (1, 1, 2, 6), (1, 1, 4, 3),
    (2, 1, 1, 1), (2, 3, 3, 2), (2, 2, 2, 6), (2, 2, 4, 3),
    (3, 2, 1, 1), (3, 1, 2, 2), (3, 3, 4, 3),
}  # fmt: skip

SUBSUMPTION_ROUNDS = SeedProgram(
    name="subsumption_rounds",
    origin="Soufflé's subsumption with any body in recursion: maximal intervals, Pareto paths",
    text=INTERVALS + PARETO_PATHS + ".output iv, path",
    edb={"seg": INTERVAL_SEGMENTS, "e": PARETO_GRAPH},
    expected={"iv": {(1, 7), (10, 12)}, "path": PARETO_FRONT},
)

DIALECT_PROGRAMS += (SUBSUMPTION_ROUNDS,)

USER_FUNCTORS = SeedProgram(
    name="user_functors",
    origin="Soufflé's user-defined functors bound to Python functions (vectorized, stateful, nullary)",
    text="""
        .type Node <: number
        .functor norm2(a: float, b: float): float
        .functor tag(s: symbol, n: Node): symbol
        .functor half(n: number): number
        .functor inv(n: number): number
        .functor shout(s: symbol): symbol stateful
        .functor base(): number
        .decl e(x: Node, y: Node)
        .input e
        dist(X, Y, D) :- e(X, Y), D = @norm2(X, Y).
        loud(S, B) :- label(L), S = @shout(L), B = @base() + 1.
        label(S) :- e(X, _), S = @tag("n", X).
        even(X, H) :- e(X, _), H = @half(X).
        safe(X, Q) :- e(X, _), X != 0, Q = @inv(X).
        reach(X, Y) :- e(X, Y).
        reach(X, Z) :- reach(X, Y), e(Y, Z), @half(Z) >= 0.
        .output dist, label, even, safe, reach, loud
    """,
    edb={"e": {(3, 4), (4, 2), (0, 3)}},
    expected={
        # a*a + b*b on whole Series (the reference calls it on one-row Series)
        "dist": {(3, 4, 25.0), (4, 2, 20.0), (0, 3, 9.0)},
        "label": {("n3",), ("n4",), ("n0",)},
        # half is undefined (None) for an odd number: the literal fails
        "even": {(4, 2), (0, 0)},
        # inv raises on 0: X != 0 before it keeps it from being called there, on every engine
        "safe": {(3, 4), (4, 3)},
        # (0, 3) -> 3 is odd: not extended through it; 4 and 2 are even
        "reach": {(3, 4), (4, 2), (0, 3), (3, 2), (0, 4), (0, 2)},
        # a stateful functor gets values (symbols as str); one without parameters is called per row
        "loud": {("N3!", 41), ("N4!", 41), ("N0!", 41)},
    },
    functors={
        "shout": lambda s: s.upper() + "!",
        "base": lambda: 40,
        "norm2": vectorized(lambda a, b: a * a + b * b),
        "tag": lambda s, n: f"{s}{n}",
        "half": lambda n: n // 2 if n % 2 == 0 else None,
        "inv": lambda n: 12 // n,
    },
)

DIALECT_PROGRAMS += (USER_FUNCTORS,)

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

DIALECT_PROGRAMS += (RECORDS,)

AUTOINC = SeedProgram(
    name="autoinc",
    origin="Soufflé's autoinc(): fresh numbers, here rank * sites + site, the rank that of the "
    "rule's distinct body binding (variables by name, values in order: strings by code point)",
    text="""
        .decl person(name: symbol, age: number)
        .input person
        .decl val(x: float)
        .input val
        .decl id(name: symbol, i: number)
        id(N, autoinc()) :- person(N, _).
        .decl pair(name: symbol, i: number, j: number)
        pair(N, autoinc(), autoinc()) :- person(N, A), A > 30.
        .decl tagged(i: number)
        tagged(I + 1000) :- I = autoinc(), person(_, A), A < 30.
        .decl fl(x: float, i: number)
        fl(X, autoinc()) :- val(X).
        .decl unit(i: number)
        unit(autoinc()) :- person(_, _).
        .decl odd(name: symbol, i: number)
        odd(N, I) :- person(N, _), I = autoinc(), I % 2 = 1.
        .output id, pair, tagged, fl, unit, odd
    """,
    edb={
        "person": {("bob", 40), ("alice", 25), ("Émile", 35), ("carol", 25), ("dave", 31)},
        "val": {(2.0,), (-1.5,), (1e300,), (0.5,)},
    },
    # 7 call sites: id 0, pair 1 and 2, tagged 3, fl 4, unit 5, odd 6. Names by code point:
    # alice, bob, carol, dave, Émile (É is U+00C9, after the lower-case letters).
    expected={
        "id": {("alice", 0), ("bob", 7), ("carol", 14), ("dave", 21), ("Émile", 28)},
        # bindings (A, N) with A > 30, A compared first: (31, dave), (35, Émile), (40, bob)
        "pair": {("dave", 1, 2), ("Émile", 8, 9), ("bob", 15, 16)},
        # one binding (A = 25): rank 0, site 3
        "tagged": {(1003,)},
        "fl": {(-1.5, 4), (0.5, 11), (2.0, 18), (1e300, 25)},
        # no named variable: one binding
        "unit": {(5,)},
        # ranks 0..4 give 6, 13, 20, 27, 34: the odd ones are bob's and dave's
        "odd": {("bob", 13), ("dave", 27)},
    },
)

DIALECT_PROGRAMS += (AUTOINC,)

# Soufflé's algebraic data types. A Shape value is the struct (branch index by name, one struct
# per branch with fields; the other branches' hold defaults): see record_types.adt_type.
_SHAPE_DEFAULTS = {"Circle": ((0, 0), 0), "Label": ("", (0,)), "Rect": (0, 0)}
_SHAPE_BRANCHES = ("Circle", "Empty", "Label", "Rect")
COLORS = {"Blue": (0,), "Green": (1,), "Red": (2,)}


def shape(branch: str, *values) -> tuple:
    """The tuple of the ``ADTS`` program's ``Shape`` value ``$branch(values)``."""
    structs = (values if b == branch else default for b, default in _SHAPE_DEFAULTS.items())
    return (_SHAPE_BRANCHES.index(branch), *structs)


ADTS = SeedProgram(
    name="adts",
    origin="Soufflé's algebraic data types: built in heads, matched in bodies, nested, =, !=, recursion",
    text="""
        .type Color = Red {} | Green {} | Blue {}
        .type Point = [x: number, y: number]
        .type Shape = Circle {c: Point, r: number} | Rect {w: number, h: number}
                    | Label {text: symbol, color: Color} | Empty {}
        .decl raw(kind: symbol, a: number, b: number)
        .input raw
        .decl shape(s: Shape)
        shape($Circle([A, A], B)) :- raw("circle", A, B).
        shape($Rect(A, B)) :- raw("rect", A, B).
        shape($Label("big", $Red)) :- raw("rect", A, B), A * B > 10.
        shape($Label("small", $Blue())) :- raw("circle", _, B), B < 3.
        shape($Empty).
        radius(R) :- shape($Circle(_, R)).
        centred(R) :- shape($Circle([0, 0], R)).
        squares(W) :- shape($Rect(W, W)).
        coloured(T) :- shape($Label(T, C)), C != $Green.
        red(T) :- shape(S), S = $Label(T, $Red).
        .decl is_rect(s: Shape)
        is_rect(S) :- shape(S), S = $Rect(_, _).
        .decl non_rect(s: Shape)
        non_rect(S) :- shape(S), !is_rect(S).
        .decl grown(s: Shape)
        grown(S) :- is_rect(S).
        grown($Rect(W + 1, H)) :- grown($Rect(W, H)), W < 4.
        .decl same(s: Shape)
        same(S) :- shape(S), grown(S).
        .output shape, radius, centred, squares, coloured, red, is_rect, non_rect, grown, same
    """,
    edb={"raw": {("circle", 0, 2), ("circle", 1, 5), ("rect", 3, 3), ("rect", 2, 6)}},
    expected={
        "shape": {
            (shape("Circle", (0, 0), 2),),
            (shape("Circle", (1, 1), 5),),
            (shape("Rect", 3, 3),),
            (shape("Rect", 2, 6),),
            (shape("Label", "big", COLORS["Red"]),),
            (shape("Label", "small", COLORS["Blue"]),),
            (shape("Empty"),),
        },
        "radius": {(2,), (5,)},
        "centred": {(2,)},
        "squares": {(3,)},
        "coloured": {("big",), ("small",)},
        "red": {("big",)},
        "is_rect": {(shape("Rect", 3, 3),), (shape("Rect", 2, 6),)},
        "non_rect": {
            (shape("Circle", (0, 0), 2),),
            (shape("Circle", (1, 1), 5),),
            (shape("Label", "big", COLORS["Red"]),),
            (shape("Label", "small", COLORS["Blue"]),),
            (shape("Empty"),),
        },
        "grown": {(shape("Rect", w, h),) for w, h in ((3, 3), (4, 3), (2, 6), (3, 6), (4, 6))},
        "same": {(shape("Rect", 3, 3),), (shape("Rect", 2, 6),)},
    },
)

DIALECT_PROGRAMS += (ADTS,)


def encoded(*items, tail: str = "nil") -> str:
    """The value of the ``LISTS`` program's list ``[items[0], [items[1], ... tail]]`` (its
    encoding: see spark_datalog.recursive_records)."""
    from spark_datalog.recursive_records import encode

    for item in reversed(items):
        tail = encode((item, tail), "")
    return tail


LISTS = SeedProgram(
    name="lists",
    origin="Soufflé's recursive record types: lists built in heads, destructured in bodies, "
    "compared with nil (a bare nil in the default dialect), negated, read as inputs",
    text="""
        .type List = [head: number, tail: List]
        .decl n(x: number)
        .input n
        .decl given(l: List)
        .input given
        .decl upto(l: List)
        upto([1, nil]) :- n(1).
        upto([X + 1, [X, T]]) :- upto([X, T]), n(X + 1).
        .decl suffix(l: List)
        suffix(L) :- upto(L).
        suffix(L) :- given(L).
        suffix(T) :- suffix([_, T]), T != nil.
        .decl elem(x: number)
        elem(H) :- suffix(L), L = [H, _].
        .decl last(x: number)
        last(H) :- suffix([H, nil]).
        .decl total(l: List, s: number)
        total(nil, 0).
        total(L, H + S) :- suffix(L), L = [H, T], total(T, S).
        .decl shared(l: List)
        shared(L) :- given(L), upto(L).
        .decl fresh(l: List)
        fresh(L) :- given(L), !upto(L), L != [5, nil].
        .decl twos(l: List)
        twos(L) :- suffix(L), L = [2, [_, _]].
        .output upto, suffix, elem, last, total, shared, fresh, twos
    """,
    edb={
        "n": {(1,), (2,), (3,)},
        "given": {(encoded(2, 1),), (encoded(5),), (encoded(9, 8),)},
    },
    expected={
        "upto": {(encoded(1),), (encoded(2, 1),), (encoded(3, 2, 1),)},
        "suffix": {(encoded(*items),) for items in ((1,), (2, 1), (3, 2, 1), (5,), (9, 8), (8,))},
        "elem": {(1,), (2,), (3,), (5,), (8,), (9,)},
        "last": {(1,), (5,), (8,)},
        "total": {("nil", 0)}
        | {(encoded(*items), sum(items)) for items in ((1,), (2, 1), (3, 2, 1), (5,), (9, 8), (8,))},
        "shared": {(encoded(2, 1),)},
        "fresh": {(encoded(9, 8),)},
        "twos": {(encoded(2, 1),)},
    },
)

DIALECT_PROGRAMS += (LISTS,)

FLOAT_LISTS = SeedProgram(
    name="float_lists",
    origin="Soufflé's recursive record types with float fields: built, destructured, negated; "
    "-0.0 is 0.0 in an encoding too",
    text="""
        .type F = [x: float, t: F]
        .decl given(l: F)
        .input given
        .decl scaled(l: F)
        scaled([X * 2.0, T]) :- given([X, T]).
        .decl suffix(l: F)
        suffix(L) :- given(L).
        suffix(L) :- scaled(L).
        suffix(T) :- suffix([_, T]), T != nil.
        .decl elem(x: float)
        elem(X) :- suffix([X, _]).
        .decl zero(l: F)
        zero(L) :- suffix(L), L = [0.0, _].
        .decl fresh(l: F)
        fresh(L) :- scaled(L), !given(L).
        .output scaled, suffix, elem, zero, fresh
    """,
    edb={"given": {(encoded(1.5, 0.0),), (encoded(-0.0),), (encoded(0.75),)}},
    expected={
        "scaled": {(encoded(3.0, 0.0),), (encoded(0.0),), (encoded(1.5),)},
        "suffix": {(encoded(*items),) for items in ((1.5, 0.0), (0.0,), (0.75,), (3.0, 0.0), (1.5,))},
        "elem": {(1.5,), (0.0,), (0.75,), (3.0,)},
        "zero": {(encoded(0.0),)},
        "fresh": {(encoded(3.0, 0.0),), (encoded(1.5),)},
    },
)

DIALECT_PROGRAMS += (FLOAT_LISTS,)


def term(index: int, *fields) -> str:
    """The value of a recursive ADT's branch number ``index`` (by name) with ``fields`` (its
    encoding: see spark_datalog.recursive_records)."""
    from spark_datalog.recursive_records import encode

    return encode((index, *fields), "")


EMPTY = term(0)
LEAF_A, LEAF_B, LEAF_C = term(1, "a:1", True), term(1, "b", False), term(1, "c", True)
NODE_B = term(2, encoded(LEAF_B))
TREE = term(2, encoded(LEAF_A, EMPTY, NODE_B))

SHAPES = SeedProgram(
    name="shapes",
    origin="Soufflé's recursive ADTs in a recursive group with a list of them (Shape and Shapes): "
    "branches matched in bodies (a bool and a symbol field), built in heads, negated, read as inputs",
    text="""
        .type Shape = Leaf {tag: symbol, on: bool} | Node {kids: Shapes} | Empty {}
        .type Shapes = [first: Shape, rest: Shapes]
        .decl given(s: Shape)
        .input given
        .decl part(s: Shape)
        part(S) :- given(S).
        part(F) :- list(KS), KS = [F, _].
        .decl list(ks: Shapes)
        list(KS) :- part($Node(KS)).
        list(R) :- list([_, R]), R != nil.
        .decl lit(t: symbol)
        lit(T) :- part($Leaf(T, true)).
        .decl count(s: Shape, n: number)
        count($Leaf(T, B), 1) :- part($Leaf(T, B)).
        count($Empty, 0) :- part($Empty).
        count($Node(KS), N) :- part($Node(KS)), sum_of(KS, N).
        .decl sum_of(ks: Shapes, n: number)
        sum_of(nil, 0).
        sum_of(KS, A + B) :- list(KS), KS = [F, R], count(F, A), sum_of(R, B).
        .decl wrapped(s: Shape)
        wrapped($Node([S, nil])) :- part(S), S != $Empty(), !part($Node([S, nil])).
        .output part, list, lit, count, sum_of, wrapped
    """,
    edb={"given": {(TREE,), (LEAF_C,)}},
    expected={
        "part": {(TREE,), (LEAF_C,), (LEAF_A,), (EMPTY,), (NODE_B,), (LEAF_B,)},
        "list": {
            (encoded(LEAF_A, EMPTY, NODE_B),),
            (encoded(EMPTY, NODE_B),),
            (encoded(NODE_B),),
            (encoded(LEAF_B),),
        },
        "lit": {("a:1",), ("c",)},
        "count": {(LEAF_A, 1), (LEAF_B, 1), (LEAF_C, 1), (EMPTY, 0), (NODE_B, 1), (TREE, 2)},
        "sum_of": {
            ("nil", 0),
            (encoded(LEAF_B), 1),
            (encoded(NODE_B), 1),
            (encoded(EMPTY, NODE_B), 1),
            (encoded(LEAF_A, EMPTY, NODE_B), 2),
        },
        "wrapped": {(term(2, encoded(s)),) for s in (TREE, LEAF_C, LEAF_A, NODE_B)},
    },
)

DIALECT_PROGRAMS += (SHAPES,)

# a greedy choice-domain on record, ADT and list columns: values in value order, a record's or
# a (non-recursive) ADT's field by field (an ADT's branch index first: Circle 0, Rect 1), a
# list's by its encoded text. Points E = [-1, "c"] < D = [0, "z"] < A = [1, "a"] < B = [1, "b"]
# < C = [2, "a"]; near: A -> B, C; B -> C, D; C -> D, E; D -> A; E -> A.
_A, _B, _C, _D, _E = (1, "a"), (1, "b"), (2, "a"), (0, "z"), (-1, "c")


def _circle(r: int) -> tuple:
    return (0, (r,), (0, 0))


def _rect(w: int, h: int) -> tuple:
    return (1, (0,), (w, h))


RECORD_CHOICE = SeedProgram(
    name="choice_domain_records",
    origin="Soufflé's choice-domain on record, ADT and list columns: records and ADTs in value "
    "order field by field, lists by their encoded text",
    text="""
        .type Point = [x: number, y: symbol]
        .type Shape = Rect {w: number, h: number} | Circle {r: number}
        .type List = [h: number, t: List]
        .decl near(p: Point, q: Point)
        .input near
        .decl pairs(p: Point, q: Point) choice-domain p, q
        pairs(P, Q) :- near(P, Q).
        .decl st(p: Point, q: Point) choice-domain q
        st([1, "a"], Q) :- near([1, "a"], Q).
        st(P, Q) :- st(_, P), near(P, Q).
        .decl shape(n: number, s: Shape) choice-domain n
        shape(X, $Rect(X, 1)) :- near([X, _], _).
        shape(X, $Rect(0, X)) :- near(_, [X, _]).
        shape(X, $Circle(X)) :- near([X, "z"], _).
        .decl chain(n: number, l: List) choice-domain n, l
        chain(1, [2, nil]). chain(1, [10, nil]). chain(1, [1, [5, nil]]).
        chain(2, [-1, nil]). chain(2, [1, nil]).
        .output pairs, st, shape, chain
    """,
    edb={"near": {(_A, _B), (_A, _C), (_B, _C), (_B, _D), (_C, _D), (_C, _E), (_D, _A), (_E, _A)}},
    expected={
        # in order: (E, A) (D, A)x (A, B) (A, C)x (B, D) (B, C)x (C, E) (C, D)x
        "pairs": {(_E, _A), (_A, _B), (_B, _D), (_C, _E)},
        # round 1: (A, B) (A, C); 2: (B, D) (B, C)x (C, E) (C, D)x; 3: (E, A) before (D, A)x
        "st": {(_A, _B), (_A, _C), (_B, _D), (_C, _E), (_E, _A)},
        # per n the least shape: Circle (index 0) first, then Rect(w, h) by w, then h
        "shape": {(-1, _rect(-1, 1)), (0, _circle(0)), (1, _rect(0, 1)), (2, _rect(0, 2))},
        # texts: [1, [5, nil]] 1:18:1:53:nil < [2, nil] 1:23:nil < [10, nil] 2:103:nil;
        # [1, nil] 1:13:nil < [-1, nil] 2:-13:nil
        "chain": {(1, encoded(1, 5)), (2, encoded(1))},
    },
)

DIALECT_PROGRAMS += (RECORD_CHOICE,)

# record and ADT values of stateful functors: a record given as a Record (a tuple of its
# fields), an ADT as (branch name, its fields...); returned as any sequence of those. Shape's
# branches by name: Circle 0, Empty 1, Rect 2; its struct (index, Circle's (c, r), Rect's (w, h)).


def _shape(index: int, circle=((0, 0), 0), rect=(0, 0)) -> tuple:
    return (index, circle, rect)


RECORD_FUNCTORS = SeedProgram(
    name="user_functors_records",
    origin="Soufflé's stateful user-defined functors over records and ADTs, bound to Python functions",
    text="""
        .type Point = [x: number, y: number]
        .type Shape = Circle {c: Point, r: number} | Rect {w: number, h: number} | Empty {}
        .functor shift(p: Point, d: number): Point stateful
        .functor area(s: Shape): number stateful
        .functor grow(s: Shape): Shape stateful
        .decl pt(p: Point)
        .input pt
        .decl sh(s: Shape)
        sh($Circle([0, 0], 2)). sh($Rect(2, 3)). sh($Empty).
        moved(Q) :- pt(P), Q = @shift(P, 10).
        area(S, A) :- sh(S), A = @area(S).
        grown(T) :- sh(S), T = @grow(S).
        big(R) :- grown($Circle(_, R)).
        .output moved, area, grown, big
    """,
    edb={"pt": {((1, 2),), ((3, -1),)}},
    expected={
        # shift is undefined (None) for a negative y: no tuple for [3, -1]
        "moved": {((11, 12),)},
        # the area of $Empty is None: undefined, no tuple
        "area": {(_shape(0, circle=((0, 0), 2)), 12), (_shape(2, rect=(2, 3)), 6)},
        "grown": {(_shape(0, circle=((0, 0), 3)),), (_shape(2, rect=(3, 3)),), (_shape(1),)},
        "big": {(3,)},
    },
    # lambdas: Spark's executors get them by value (a function of this module by reference)
    functors={
        "shift": lambda p, d: [p[0] + d, p[1] + d] if type(p).__name__ == "Record" and p[1] >= 0 else None,
        "area": lambda s: 3 * s[2] * s[2] if s[0] == "Circle" else (s[1] * s[2] if s[0] == "Rect" else None),
        "grow": lambda s: (
            ("Circle", s[1], s[2] + 1)
            if s[0] == "Circle"
            else (["Rect", s[1] + 1, s[2]] if s[0] == "Rect" else s)
        ),
    },
)

DIALECT_PROGRAMS += (RECORD_FUNCTORS,)
