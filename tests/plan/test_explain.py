"""Golden explain() texts: each pins one translation decision (join order, selection pushdown,
placement of comparisons, assignments, negation, aggregates, products, delta variants)."""

from __future__ import annotations

from spark_datalog.plan import explain

from .helpers import checked, explained, golden, plans


def test_transitive_closure_with_its_delta_variant():
    text = """
        .decl arc(src: long, dst: long)
        .decl tc(src: long, dst: long)
        tc(X, Y) :- arc(X, Y).
        tc(X, Z) :- tc(X, Y), arc(Y, Z).
    """
    assert explained(text) == golden("""
        stratum 0: tc (recursive, decomposes by src)
          % tc(X, Y) :- arc(X, Y).
          Project[src=X, dst=Y]
            Scan arc(X, Y)
          % tc(X, Z) :- tc(X, Y), arc(Y, Z).
          Project[src=X, dst=Z]
            Join on (Y)
              Scan tc(X, Y)
              Scan arc(Y, Z)
          variant: delta at atom 1 (tc)
          Project[src=X, dst=Z]
            Join on (Y)
              Scan tc(X, Y) [delta]
              Scan arc(Y, Z)
    """)


def test_nonlinear_transitive_closure_has_two_variants_each_starting_at_its_delta():
    text = """
        .decl tc(src: long, dst: long)
        tc(X, Y) :- arc(X, Y).
        tc(X, Z) :- tc(X, Y), tc(Y, Z).
        .input arc
    """
    assert explained(text) == golden("""
        stratum 0: tc (recursive)
          % tc(X, Y) :- arc(X, Y).
          Project[src=X, dst=Y]
            Scan arc(X, Y)
          % tc(X, Z) :- tc(X, Y), tc(Y, Z).
          Project[src=X, dst=Z]
            Join on (Y)
              Scan tc(X, Y)
              Scan tc(Y, Z)
          variant: delta at atom 1 (tc)
          Project[src=X, dst=Z]
            Join on (Y)
              Scan tc(X, Y) [delta]
              Scan tc(Y, Z)
          variant: delta at atom 2 (tc)
          Project[src=X, dst=Z]
            Join on (Y)
              Scan tc(Y, Z) [delta]
              Scan tc(X, Y)
    """)


def test_same_generation_joins_connected_atoms_and_filters_after_the_join():
    text = """
        sg(X, Y) :- arc(P, X), arc(P, Y), X != Y.
        sg(X, Y) :- arc(A, X), sg(A, B), arc(B, Y).
        .input arc
    """
    assert explained(text) == golden("""
        stratum 0: sg (recursive)
          % sg(X, Y) :- arc(P, X), arc(P, Y), X != Y.
          Project[X, Y]
            Select(X != Y)
              Join on (P)
                Scan arc(P, X)
                Scan arc(P, Y)
          % sg(X, Y) :- arc(A, X), sg(A, B), arc(B, Y).
          Project[X, Y]
            Join on (B)
              Join on (A)
                Scan arc(A, X)
                Scan sg(A, B)
              Scan arc(B, Y)
          variant: delta at atom 2 (sg)
          Project[X, Y]
            Join on (B)
              Join on (A)
                Scan sg(A, B) [delta]
                Scan arc(A, X)
              Scan arc(B, Y)
    """)


def test_constants_and_repeated_variables_are_selected_on_the_scan():
    text = """
        .decl arc(src: long, dst: long)
        .decl lbl(node: long, colour: string)
        p(X) :- arc(X, X), arc(1, X), lbl(X, "red").
    """
    assert explained(text) == golden("""
        stratum 0: p
          % p(X) :- arc(X, X), arc(1, X), lbl(X, "red").
          Project[X]
            Join on (X)
              Join on (X)
                Project[X]
                  Select(#1_2 = X)
                    Scan arc(X, #1_2)
                Project[X]
                  Select(#2_1 = 1)
                    Scan arc(#2_1, X)
              Project[X]
                Select(#3_2 = "red")
                  Scan lbl(X, #3_2)
    """)


def test_filtered_atom_is_joined_first():
    assert explained("p(X, Y) :- a(X, Y), b(Y, 3). .input a, b") == golden("""
        stratum 0: p
          % p(X, Y) :- a(X, Y), b(Y, 3).
          Project[X, Y]
            Join on (Y)
              Project[Y]
                Select(#2_2 = 3)
                  Scan b(Y, #2_2)
              Scan a(X, Y)
    """)


def test_comparisons_are_placed_as_soon_as_their_variables_are_bound():
    # X < 5 only needs a(X, Y): it is applied on that scan, before the join
    assert explained("q(X, Z) :- a(X, Y), b(Y, Z), X < 5, X < Z. .input a, b") == golden("""
        stratum 0: q
          % q(X, Z) :- a(X, Y), b(Y, Z), X < 5, X < Z.
          Project[X, Z]
            Select(X < Z)
              Join on (Y)
                Select(X < 5)
                  Scan a(X, Y)
                Scan b(Y, Z)
    """)


def test_assignment_adds_a_column_and_equalities_between_atoms_become_join_keys():
    text = """
        .decl m(x: long, w: double)
        r(X, Z) :- m(X, W), m(W2, V), Z = W + V, Z > 3, X = W2.
    """
    # Z is double, so the literal 3 is typed double; X = W2 is the join key, not a product
    assert explained(text) == golden("""
        stratum 0: r
          % r(X, Z) :- m(X, W), m(W2, V), Z = W + V, Z > 3, X = W2.
          Project[X, Z]
            Select(Z > 3.0)
              Project[X, W, W2, V, Z=(W + V)]
                Join on (X)
                  Scan m(X, W)
                  Project[W2, V, X=W2]
                    Scan m(W2, V)
    """)


def test_integer_literals_meeting_doubles_are_typed_double():
    text = """
        .decl m(x: double)
        .decl out(x: double, y: double)
        out(X, 1) :- m(X), X > 3, X != X + 2.
    """
    assert explained(text) == golden("""
        stratum 0: out
          % out(X, 1) :- m(X), X > 3, X != X + 2.
          Project[x=X, y=1.0]
            Select(X > 3.0, X != (X + 2.0))
              Scan m(X)
    """)


def test_negation_becomes_an_antijoin_and_ground_negation_an_emptiness_test():
    text = """
        .decl flag()
        lonely(X) :- node(X), not arc(X, _), not flag().
        hidden(X) :- node(X), not lbl(X, "red", 1), ~arc(X, X).
        .input node, arc, lbl
    """
    assert explained(text) == golden("""
        stratum 0: lonely
          % lonely(X) :- node(X), not arc(X, _), not flag().
          Project[X]
            AntiJoin on () [right side must be empty]
              AntiJoin on (X)
                Scan node(X)
                Project[X]
                  Scan arc(X, #2_2)
              Scan flag()
        stratum 1: hidden
          % hidden(X) :- node(X), not lbl(X, "red", 1), ~arc(X, X).
          Project[X]
            AntiJoin on (X)
              AntiJoin on (X)
                Scan node(X)
                Project[X]
                  Select(#2_2 = "red", #2_3 = 1)
                    Scan lbl(X, #2_2, #2_3)
              Project[X]
                Select(#3_2 = X)
                  Scan arc(X, #3_2)
    """)


def test_aggregate_rules_yield_contributions():
    # count/sum: distinct assignments of the named body variables; min/max need no Distinct
    text = """
        deg(X, count<Y>) :- arc(X, Y).
        total(sum<D>) :- w(_, Y, D), Y > 0.
        cheapest(X, min<D>) :- w(X, _, D).
        .input arc, w
    """
    assert explained(text) == golden("""
        stratum 0: deg
          aggregate deg: count on column 1
          % deg(X, count<Y>) :- arc(X, Y).
          Project[X, count_Y=Y]
            Distinct
              Scan arc(X, Y)
        stratum 1: total
          aggregate total: sum on column 0
          % total(sum<D>) :- w(_, Y, D), Y > 0.
          Project[sum_D=D]
            Distinct
              Select(Y > 0)
                Project[Y, D]
                  Scan w(#1_1, Y, D)
        stratum 2: cheapest
          aggregate cheapest: min on column 1
          % cheapest(X, min<D>) :- w(X, _, D).
          Project[X, min_D=D]
            Scan w(X, #1_2, D)
    """)


def test_min_in_recursion_computes_the_candidate_in_the_head():
    text = """
        path(X, Y, min<D>) :- w(X, Y, D).
        path(X, Y, min<D>) :- path(X, Z, D1), w(Z, Y, D2), D = D1 + D2.
        .input w
    """
    assert explained(text) == golden("""
        stratum 0: path (recursive, PreM, decomposes by X)
          aggregate path: min on column 2
          % path(X, Y, min<D>) :- w(X, Y, D).
          Project[X, Y, min_D=D]
            Scan w(X, Y, D)
          % path(X, Y, min<D>) :- path(X, Z, D1), w(Z, Y, D2), D = D1 + D2.
          Project[X, Y, min_D=(D1 + D2)]
            Join on (Z)
              Scan path(X, Z, D1)
              Scan w(Z, Y, D2)
          variant: delta at atom 1 (path)
          Project[X, Y, min_D=(D1 + D2)]
            Join on (Z)
              Scan path(X, Z, D1) [delta]
              Scan w(Z, Y, D2)
    """)


def test_disconnected_atoms_give_a_cross_product():
    assert explained("pair(X, Y) :- a(X), b(Y). .input a, b") == golden("""
        stratum 0: pair
          % pair(X, Y) :- a(X), b(Y).
          Project[X, Y]
            Join on () [cross product]
              Scan a(X)
              Scan b(Y)
    """)


def test_arithmetic_arguments_are_computed_and_joined_on():
    text = "q(X) :- r(X + 1, Y), p(X), not s(X * 2, _). .input r, p, s"
    assert explained(text) == golden("""
        stratum 0: q
          % q(X) :- r(X + 1, Y), p(X), not s(X * 2, _).
          Project[X]
            Join on (#1_1)
              Project[X, #1_1=(X + 1)]
                AntiJoin on (#3_1)
                  Project[X, #3_1=(X * 2)]
                    Scan p(X)
                  Project[#3_1]
                    Scan s(#3_1, #3_2)
              Project[Y, #1_1]
                Scan r(#1_1, Y)
    """)


def test_explain_with_checked_program_lists_relation_schemas():
    text = ".decl tc(src: long, dst: long)\ntc(X, Y) :- arc(X, Y). .input arc"
    program = checked(text)
    from spark_datalog.plan import plan_program

    assert explain(plan_program(program), program).splitlines()[:2] == [
        "stratum 0: tc",
        "  relation IDB tc(src: long, dst: long)",
    ]


def test_explain_is_deterministic():
    text = "sg(X, Y) :- arc(A, X), sg(A, B), arc(B, Y).\nsg(X, Y) :- arc(P, X), arc(P, Y). .input arc"
    assert explain(plans(text)) == explain(plans(text))
