"""The maintenance plans (``plan.maintenance``) and their explain() text: DRed's seeds and
group repair for recursive strata, counting's telescoping terms, touched groups."""

from __future__ import annotations

import spark_datalog as sd
from dialect_programs import SPANNING_TREE
from spark_datalog.plan import ir
from spark_datalog.plan.explain import explain_maintenance
from spark_datalog.plan.maintenance import (
    counting_terms,
    dred_plans,
    level_plans,
    levels_apply,
    seed_plans,
    touched_plans,
)

from .helpers import checked, golden, plans

TC = """
    .decl arc(src: long, dst: long)
    .decl tc(src: long, dst: long)
    tc(X, Y) :- arc(X, Y).
    tc(X, Z) :- tc(X, Y), arc(Y, Z).
"""

MIXED = """
    .decl arc(x: long, y: long)
    .decl gone(x: long)
    ok(X, Y) :- arc(X, Y), !gone(X).
    has(X) :- arc(X, _), !gone(_).
    n(X, count<Y>) :- arc(X, Y).
"""

SSSP = """
    .decl arc(x: long, y: long)
    sp(X, min<D>) :- arc(X, _), D = 0.
    sp(Y, min<E>) :- sp(X, D), arc(X, Y), E = D + 1.
"""


def _stratum(text: str, relation: str):
    return next(p for p in plans(text) if relation in p.relations)


def _delta_scans(plan) -> list:
    return [(s.relation, s.source) for s in ir.scans(plan) if s.source == "delta"]


def test_dred_seeds_read_each_changed_lower_literal_as_the_delta():
    program, stratum = checked(TC), _stratum(TC, "tc")
    seeds = seed_plans(program, stratum, {"arc"}, set())
    assert [(s.relation, s.lower, s.changed) for s in seeds] == [("tc", "arc", "positive")] * 2
    assert all(_delta_scans(s.plan) == [("arc", "delta")] for s in seeds)
    both = dred_plans(program, stratum, inserted={"arc"}, deleted={"arc"})
    assert {s.changed for s in both.over_seeds} == {"deleted"}
    assert {s.changed for s in both.insert_seeds} == {"inserted"}
    only_inserted = dred_plans(program, stratum, inserted={"arc"}, deleted=set())
    assert only_inserted.over_seeds == () and len(only_inserted.insert_seeds) == 2


def test_a_negated_lower_literal_seeds_the_other_phase():
    text = """
        .decl arc(x: long, y: long)
        .decl blocked(x: long)
        r(X) :- arc(0, X), !blocked(X).
        r(Y) :- r(X), arc(X, Y), !blocked(Y).
    """
    program, stratum = checked(text), _stratum(text, "r")
    plans_ = dred_plans(program, stratum, inserted={"blocked"}, deleted=set())
    # a blocked fact that appeared removes derivations: phase 1, read as a positive atom
    assert [(s.lower, s.changed) for s in plans_.over_seeds] == [("blocked", "inserted")] * 2
    assert plans_.insert_seeds == ()
    assert all(("blocked", "delta") in _delta_scans(s.plan) for s in plans_.over_seeds)


def test_counting_has_one_term_per_changed_literal_and_flags_existence_tests():
    program, stratum = checked(MIXED), _stratum(MIXED, "ok")
    terms = counting_terms(program, stratum, {"arc", "gone"})
    terms += counting_terms(program, _stratum(MIXED, "has"), {"arc", "gone"})
    found = [(t.relation, t.position, t.rule.body[t.position].predicate, t.tests_existence) for t in terms]
    assert found == [
        ("ok", 0, "arc@delta", False),
        ("ok", 1, "gone@negdelta", False),
        ("has", 0, "arc@delta", False),
        ("has", 1, "gone@negdelta", True),
    ]
    first = terms[0].plan
    assert _delta_scans(first) == [("arc@delta", "delta")]
    assert {s.relation for s in ir.scans(first)} == {"arc@delta", "gone@old"}  # later literals: old
    assert {s.relation for s in ir.scans(terms[1].plan)} == {"arc@new", "gone@negdelta"}  # earlier: new
    assert counting_terms(program, stratum, {"gone"})[0].position == 1


def test_touched_groups_read_the_change_of_each_literal():
    program, stratum = checked(MIXED), _stratum(MIXED, "n")
    (plan,) = touched_plans(program, stratum, "n", {"arc"})
    assert _delta_scans(plan) == [("arc@delta", "delta")]
    assert touched_plans(program, stratum, "n", {"gone"}) == []


def test_group_repair_reads_the_repaired_groups_first():
    program, stratum = checked(SSSP), _stratum(SSSP, "sp")
    plans_ = dred_plans(program, stratum, inserted=set(), deleted={"arc"})
    assert plans_.regroups
    assert len(plans_.group_rules) == 2
    for _, plan in plans_.group_rules:
        assert ("sp", "delta") in _delta_scans(plan)


def test_explain_shows_the_maintenance_plans():
    text = explain_maintenance(plans(TC), checked(TC))
    assert text == golden("""
        stratum 0: tc (recursive, decomposes by src): DRed
          re-derive: the stratum's rules over what remains, kept among the removed facts
          seed of tc: arc as the delta
          Project[src=X, dst=Y]
            Scan arc(X, Y) [delta]
          seed of tc: arc as the delta
          Project[src=X, dst=Z]
            Join on (Y)
              Scan arc(Y, Z) [delta]
              Scan tc(X, Y)
          level witness of tc: its candidates [delta], facts of smaller level
          Project[c0=X, c1=Y]
            Join on (X, Y)
              Scan #candidates:tc(X, Y, _#head_level) [delta]
              Scan arc(X, Y)
          level witness of tc: its candidates [delta], facts of smaller level
          Project[c0=X, c1=Z, c2=X, c3=Y]
            Select(_#body_level < _#head_level)
              Join on (X, Y)
                Join on (Z)
                  Scan #candidates:tc(X, Z, _#head_level) [delta]
                  Scan arc(Y, Z)
                Scan #levels:tc(X, Y, _#body_level)
          level successors of tc: dropped facts [delta], facts of greater level
          Project[c0=X, c1=Z, c2=_#head_level]
            Select(_#body_level < _#head_level)
              Join on (X, Z)
                Join on (Y)
                  Scan #candidates:tc(X, Y, _#body_level) [delta]
                  Scan arc(Y, Z)
                Scan #levels:tc(X, Z, _#head_level)
    """)
    mixed = explain_maintenance(plans(MIXED), checked(MIXED))
    assert "term: literal 2 (gone) changed" in mixed
    assert "(an existence test: its key atom is planned with its change)" in mixed
    assert "touched groups of n" in mixed
    assert "group repair of sp" in explain_maintenance(plans(SSSP), checked(SSSP))


def test_level_plans_only_for_levelled_strata():
    program, stratum = checked(TC), _stratum(TC, "tc")
    assert levels_apply(program, stratum)
    witnesses, successors = level_plans(program, stratum)
    assert [(head, body) for head, body, _ in witnesses] == [("tc", None), ("tc", "tc")]
    assert [head for head, _ in successors] == ["tc"]
    assert all(("#candidates:tc", "delta") in _delta_scans(plan) for _, _, plan in witnesses)
    nonlinear = """
        .decl arc(src: long, dst: long)
        tc(X, Y) :- arc(X, Y).
        tc(X, Z) :- tc(X, Y), tc(Y, Z).
    """
    assert not levels_apply(checked(nonlinear), _stratum(nonlinear, "tc"))
    assert "level witness" not in explain_maintenance(plans(nonlinear), checked(nonlinear))


def test_program_explain_appends_maintenance_when_asked():
    program = sd.Program.parse(TC)
    plain = program.explain()
    assert "maintenance" not in plain
    full = program.explain(maintenance=True)
    assert full.startswith(plain)
    assert "seed of tc: arc as the delta" in full


def test_a_greedy_choice_is_explained_and_recomputed_not_levelled():
    program = sd.Program.parse(SPANNING_TREE, dialect="souffle")
    (stratum,) = program.plans
    assert stratum.choices == {"st": ((1,),)} and stratum.set_valued("st")
    assert not levels_apply(program.checked, stratum)
    full = program.explain(maintenance=True)
    assert "greedy choice-domain of st: keys (2)" in full
    assert "st (recursive): recompute (choice-domain chooses greedily)" in full
