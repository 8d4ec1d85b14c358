"""The seeds' worked examples as data: program text, EDB inputs and hand-checked results.

Every engine runs these (the reference interpreter in tests/reference, the Spark backend later).
``expected`` lists every IDB relation of the program with its complete contents, worked out by
hand in the comments (and, for shortest paths, also checked against Dijkstra in the tests).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SeedProgram:
    name: str
    origin: str  # where in the seeds the program comes from
    text: str
    edb: dict = field(default_factory=dict)  # relation -> set of tuples
    expected: dict = field(default_factory=dict)  # every IDB relation -> set of tuples
    functors: dict = field(default_factory=dict)  # user-defined functor -> its Python function

    def __str__(self) -> str:
        return self.name

    def program(self):
        """The checked program, its user-defined functors bound."""
        import spark_datalog as sd

        return sd.Program.parse(self.text, functors=self.functors)


TC_EXAMPLE_3_5 = SeedProgram(
    name="tc_example_3_5",
    origin="seed 004, Example 3.5 (repeated application of I_c)",
    text="""
        % Edge(?x,?y) -> TC(?x,?y).   TC(?x,?y), TC(?y,?z) -> TC(?x,?z).
        tc(?x, ?y) :- edge(?x, ?y).
        tc(?x, ?z) :- tc(?x, ?y), tc(?y, ?z).
        .input edge
    """,
    edb={"edge": {(1, 2), (2, 3), (3, 4)}},
    expected={"tc": {(1, 2), (2, 3), (3, 4), (1, 3), (2, 4), (1, 4)}},
)

ANCESTOR = SeedProgram(
    name="ancestor",
    origin="seed 001, the opening example",
    text="""
        parent(bill, mary).
        parent(mary, john).
        ancestor(X,Y) := parent(X,Y).
        ancestor(X,Z) := ancestor(X,Y), parent(Y,Z).
        ?- ancestor(bill, X).
    """,
    expected={"ancestor": {("bill", "mary"), ("mary", "john"), ("bill", "john")}},
)

# Tree: 1 -> 2, 3;  2 -> 4, 5;  3 -> 6;  4 -> 7;  6 -> 8.
# Siblings: (2,3), (4,5). Cousins through sg(2,3): children of 2 x children of 3 = (4,6), (5,6);
# through sg(4,6): (7,8). Each pair in both directions.
SAME_GENERATION = SeedProgram(
    name="same_generation",
    origin="seed 001, 'Program 2' (same generation)",
    text="""
        sg(X,Y) :- arc(P,X), arc(P,Y), X != Y.
        sg(X,Y) :- arc(A,X), sg(A,B), arc(B,Y).
        .input arc
    """,
    edb={"arc": {(1, 2), (1, 3), (2, 4), (2, 5), (3, 6), (4, 7), (6, 8)}},
    expected={"sg": {(2, 3), (3, 2), (4, 5), (5, 4), (4, 6), (6, 4), (5, 6), (6, 5), (7, 8), (8, 7)}},
)

# Weighted graph with the cycle 1 -> 3 -> 2 -> 4 -> 1 of length 1 + 2 + 1 + 3 = 7 (so every
# node's shortest path to itself is 7). From 1: 3 at 1, 2 at 1+2=3 (not 4 direct), 4 at 3+1=4
# (not 1+5). From 2: 4 at 1, 1 at 4, 3 at 5. From 3: 2 at 2, 4 at 3 (not 5 direct), 1 at 6.
# From 4: 1 at 3, 3 at 4, 2 at 6 (not 3+4).
_SHORTEST = {
    (1, 1, 7),
    (1, 2, 3),
    (1, 3, 1),
    (1, 4, 4),
    (2, 1, 4),
    (2, 2, 7),
    (2, 3, 5),
    (2, 4, 1),
    (3, 1, 6),
    (3, 2, 2),
    (3, 3, 7),
    (3, 4, 3),
    (4, 1, 3),
    (4, 2, 6),
    (4, 3, 4),
    (4, 4, 7),
}
SHORTEST_PATHS = SeedProgram(
    name="shortest_paths",
    origin="seed 002, Example 2.2 (rules r2.2.1-r2.2.3, min pushed into recursion)",
    text="""
        path(X, Y, min<D>) <- arc(X, Y, D).
        path(X, Y, min<D>) <- path(X, Z, Dxz), arc(Z, Y, Dzy), D = Dxz + Dzy.
        shortestpath(X, Y, D) <- path(X, Y, D).
        .input arc
    """,
    edb={"arc": {(1, 2, 4), (1, 3, 1), (3, 2, 2), (2, 4, 1), (3, 4, 5), (4, 1, 3)}},
    expected={"path": _SHORTEST, "shortestpath": _SHORTEST},
)

# Coins 2, 3, 6 (seed 002, section 4): 2, 3, 6 take one coin; 4 = 2+2, 5 = 2+3, 8 = 6+2 and
# 9 = 6+3 take two; 7 = 2+2+3 takes three. 1 cannot be made. Written bottom-up and bounded.
COIN_CHANGE = SeedProgram(
    name="coin_change",
    origin="seed 002, rules r4.3.1-r4.3.2 (coin change), bottom-up with a bound",
    text="""
        coins(2). coins(3). coins(6).
        num(C, 1) :- coins(C).
        num(V, min<N>) :- num(X, Y), coins(C), V = X + C, V <= 9, N = Y + 1.
        ?- num(9, N).
    """,
    expected={"num": {(2, 1), (3, 1), (4, 2), (5, 2), (6, 1), (7, 3), (8, 2), (9, 2)}},
)

# Employee 1: [1,5] [3,4] [4,8] [7,10] [12,15] [13,15]; employee 2: [2,3] [3,6] [10,11].
# covered: [3,4] (inside [1,5]) and [13,15] (12 < 13, 15 >= 15).
# coal starts at the lstart points; max<E> extends them: 1 -> 5 -> 8 -> 10, 4 -> 8 -> 10,
# 7 -> 10, 12 -> 15; 2 -> 3 -> 6 (touching intervals merge), 3 -> 6, 10 -> 11.
# contain: the coal rows inside another coal row: (1,4,10), (1,7,10), (2,3,6).
TEMPORAL_COALESCING = SeedProgram(
    name="temporal_coalescing",
    origin="seed 002, rules r3.3.1-r3.3.3 and r'3.3.4-r'3.3.8 (coalescing with max in recursion)",
    text="""
        lstart(Eno, S) :- inter(Eno, S, E), not covered(Eno, S, E).
        covered(Eno, S, E) :- inter(Eno, S, E), inter(Eno, S1, E1), S1 <= S, E1 > E.
        covered(Eno, S, E) :- inter(Eno, S, E), inter(Eno, S1, E1), S1 < S, E1 >= E.
        coal(Eno, S, E) :- lstart(Eno, S), inter(Eno, S, E).
        coal(Eno, S, max<E>) :- coal(Eno, S, E1), coal(Eno, S1, E), S < S1, S1 <= E1.
        final_intrvl(Eno, S, E) :- coal(Eno, S, E), not contain(Eno, S, E).
        contain(Eno, S, E) :- coal(Eno, S, E), coal(Eno, S1, E1), S1 <= S, E1 > E.
        contain(Eno, S, E) :- coal(Eno, S, E), coal(Eno, S1, E1), S1 < S, E1 >= E.
        .input inter
    """,
    edb={
        "inter": {
            (1, 1, 5),
            (1, 3, 4),
            (1, 4, 8),
            (1, 7, 10),
            (1, 12, 15),
            (1, 13, 15),
            (2, 2, 3),
            (2, 3, 6),
            (2, 10, 11),
        }
    },
    expected={
        "covered": {(1, 3, 4), (1, 13, 15)},
        "lstart": {(1, 1), (1, 4), (1, 7), (1, 12), (2, 2), (2, 3), (2, 10)},
        "coal": {(1, 1, 10), (1, 4, 10), (1, 7, 10), (1, 12, 15), (2, 2, 6), (2, 3, 6), (2, 10, 11)},
        "contain": {(1, 4, 10), (1, 7, 10), (2, 3, 6)},
        "final_intrvl": {(1, 1, 10), (1, 12, 15), (2, 2, 6), (2, 10, 11)},
    },
)

# p starts as {(1,2), (2,3)}, q as {(3,10,1)}.
# p is closed under composition: (1,3); c(2,3,4) with p(1,2), p(1,3) gives p(1,4).
# q(X,Y,Z) <- p(X,W), q(W,Y,Z) copies q(3,..) to q(2,..) and q(1,..); r(10,11) adds Y = 11;
# t(10,11,12) with q(X,10,1), q(1,11,1) adds Y = 12: q = {1,2,3} x {10,11,12} x {1}.
# u(11,2,5) with q(X,11,1), p(1,2) gives p(X,5) for X in 1, 2, 3; closure adds nothing more.
MUTUAL_RECURSION = SeedProgram(
    name="mutual_recursion",
    origin="seed 001, 'Mutual recursion' (John Liagouris's p/q query)",
    text="""
        p(1, 2). p(2, 3).
        q(3, 10, 1).
        p(X,Z)   :- p(X,Y), p(Y,Z).
        q(X,Y,Z) :- p(X,W), q(W,Y,Z).
        q(X,P,W) :- q(X,R,W), r(R,P).
        p(X,W)   :- p(X,Y), p(X,Z), c(Y,Z,W).
        p(X,W)   :- q(X,R,Y), p(Y,Z), u(R,Z,W).
        q(X,Y,Z) :- q(X,R,W), q(W,P,Z), t(R,P,Y).
        .input r, c, u, t
    """,
    edb={"r": {(10, 11)}, "c": {(2, 3, 4)}, "u": {(11, 2, 5)}, "t": {(10, 11, 12)}},
    expected={
        "p": {(1, 2), (1, 3), (1, 4), (1, 5), (2, 3), (2, 5), (3, 5)},
        "q": {(x, y, 1) for x in (1, 2, 3) for y in (10, 11, 12)},
    },
)

UNREACHABLE = SeedProgram(
    name="unreachable",
    origin="stratified negation (architecture.md: 'not', '!', '~' and the anonymous '_')",
    text="""
        source(1).
        reach(X) :- source(X).
        reach(Y) :- reach(X), edge(X, Y).
        unreachable(X) :- node(X), not reach(X).
        sink(X) :- node(X), !edge(X, _).
        isolated(X) :- node(X), ~edge(X, _), ~edge(_, X).
        .input edge, node
    """,
    edb={"node": {(1,), (2,), (3,), (4,), (5,), (6,)}, "edge": {(1, 2), (2, 3), (4, 5), (3, 1)}},
    expected={
        "reach": {(1,), (2,), (3,)},
        "unreachable": {(4,), (5,), (6,)},
        "sink": {(5,), (6,)},
        "isolated": {(6,)},
    },
)

# sale(shop, item, amount). Aggregates range over the distinct assignments of the rule's NAMED
# body variables: total/avg see (S, I, A) so shop 1's two items at 5 both count (5+5+2 = 12);
# total_by_amount sees only (S, A), so shop 1 contributes 5 and 2 once each (7);
# grand sees only A: the distinct amounts 5, 2, 7, 3 (17).
AGGREGATES = SeedProgram(
    name="stratified_aggregates",
    origin="architecture.md aggregates (count/sum/avg/min/max, stratified)",
    text="""
        items(S, count<I>) :- sale(S, I, _).
        items(S, count<I>) :- extra(S, I).
        amounts(S, count<A>) :- sale(S, _, A).
        total(S, sum<A>) :- sale(S, I, A).
        total_by_amount(S, sum<A>) :- sale(S, _, A).
        grand(sum<A>) :- sale(_, _, A).
        mean(S, avg<A>) :- sale(S, I, A).
        cheapest(S, min<A>) :- sale(S, _, A).
        dearest(S, max<A>) :- sale(S, _, A).
        big(S) :- total(S, T), T > 10.
        .input sale, extra
    """,
    edb={
        "sale": {(1, 10, 5), (1, 11, 5), (1, 12, 2), (2, 10, 7), (2, 13, 2), (3, 14, 3)},
        "extra": {(1, 10), (3, 20)},
    },
    expected={
        "items": {(1, 3), (2, 2), (3, 2)},
        "amounts": {(1, 2), (2, 2), (3, 1)},
        "total": {(1, 12), (2, 9), (3, 3)},
        "total_by_amount": {(1, 7), (2, 9), (3, 3)},
        "grand": {(17,)},
        "mean": {(1, 4.0), (2, 4.5), (3, 3.0)},
        "cheapest": {(1, 2), (2, 2), (3, 3)},
        "dearest": {(1, 5), (2, 7), (3, 3)},
        "big": {(1,)},
    },
)

CYCLE = SeedProgram(
    name="cycle",
    origin="a two-node cycle terminates under set semantics",
    text="""
        arc(1, 2). arc(2, 1).
        tc(X, Y) :- arc(X, Y).
        tc(X, Z) :- tc(X, Y), arc(Y, Z).
    """,
    expected={"tc": {(1, 2), (2, 1), (1, 1), (2, 2)}},
)

# Integer '/' truncates toward zero, 'mod' takes the sign of the dividend, a zero divisor drops
# the row; '/' with a double operand is float division.
ARITHMETIC = SeedProgram(
    name="arithmetic",
    origin="COMMON.md arithmetic semantics",
    text="""
        .decl word(w: symbol)
        n(-7). n(7). n(0).
        d(2). d(-2). d(0).
        divmod(X, Y, Q, M) :- n(X), d(Y), Q = X / Y, M = X mod Y.
        half(X, H) :- n(X), H = X / 2.0.
        shifted(X + 1, Y * 2 - X) :- n(X), d(Y), Y > 0.
        ordered(A, B) :- word(A), word(B), A < B.
    """,
    edb={"word": {("apple",), ("Banana",), ("cherry",)}},
    expected={
        "divmod": {
            (-7, 2, -3, -1),
            (-7, -2, 3, -1),
            (7, 2, 3, 1),
            (7, -2, -3, 1),
            (0, 2, 0, 0),
            (0, -2, 0, 0),
        },
        "half": {(-7, -3.5), (7, 3.5), (0, 0.0)},
        "shifted": {(-6, 11), (8, -3), (1, 4)},
        "ordered": {("Banana", "apple"), ("Banana", "cherry"), ("apple", "cherry")},
    },
)

# Bodies without a positive atom start from the one-row relation; zero-arity relations are
# propositions (true iff they hold the empty tuple).
NO_POSITIVE_ATOM = SeedProgram(
    name="bodies_without_atoms",
    origin="architecture.md: zero-arity predicates, assignments",
    text="""
        three(X) :- X = 3.
        yes :- 1 < 2.
        no() :- 2 < 1.
        big(X) :- three(X), yes, not no.
        small(Y) :- Y = 10 / 5, !big(Y).
    """,
    expected={"three": {(3,)}, "yes": {()}, "no": set(), "big": {(3,)}, "small": {(2,)}},
)

SEED_PROGRAMS = (
    TC_EXAMPLE_3_5,
    ANCESTOR,
    SAME_GENERATION,
    SHORTEST_PATHS,
    COIN_CHANGE,
    TEMPORAL_COALESCING,
    MUTUAL_RECURSION,
    UNREACHABLE,
    AGGREGATES,
    CYCLE,
    ARITHMETIC,
    NO_POSITIVE_ATOM,
)

# Runaway arithmetic recursion: every engine must stop it with NonTerminationError.
RUNAWAY = SeedProgram(
    name="runaway",
    origin="architecture.md: the max_iterations guard",
    text="""
        n(0).
        n(Y) :- n(X), Y = X + 1.
    """,
)
