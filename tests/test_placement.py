"""Where and how a stratum runs (``spark_datalog.placement``): the choices, their order and
their reasons, on real stratum plans (no Spark)."""

from __future__ import annotations

import pytest

import spark_datalog as sd
from spark_datalog.placement import Declined, Placement, UpdateCase, place_evaluation, place_update
from spark_datalog.plan.partitioning import decomposition

TC = "tc(X, Y) :- arc(X, Y). tc(X, Z) :- tc(X, Y), arc(Y, Z)."
REACH = "reach(X) :- source(X). reach(Y) :- reach(X), arc(X, Y)."
NON_LINEAR = "tc(X, Y) :- arc(X, Y). tc(X, Z) :- tc(X, Y), tc(Y, Z)."
MUTUAL = "even(X) :- zero(X). odd(Y) :- even(X), succ(X, Y). even(Y) :- odd(X), succ(X, Y)."
SSSP = "d(X, min<C>) :- source(X), C = 0. d(Y, min<C>) :- d(X, C0), arc(X, Y, W), C = C0 + W."
COUNT = "deg(X, count<Y>) :- arc(X, Y)."
PLAIN = "two(X, Z) :- arc(X, Y), arc(Y, Z)."


def _plans(text: str) -> list:
    inputs = "".join(f".input {name}\n" for name in ("arc", "source", "zero", "succ") if f"{name}(" in text)
    return sd.Program.parse(inputs + text).plans


def _recursive(text: str):
    return next(plan for plan in _plans(text) if plan.recursive)


def _first(text: str):
    return _plans(text)[0]


def _evaluation(text: str, history: tuple = (), **options) -> Placement:
    plan = _recursive(text)
    settings = {"strategy": "seminaive", "decompose": True, "bsp": False, **options}
    return place_evaluation(plan, decomposition(plan), history=history, **settings)


def test_a_stratum_with_a_key_runs_partition_local_and_says_which_column():
    placement = _evaluation(TC)
    assert (placement.method, placement.where) == ("evaluate", "partition-local")
    assert "column 1 of tc" in placement.reason


@pytest.mark.parametrize(
    "text, why", [(REACH, "no column stays"), (NON_LINEAR, "non-linear"), (MUTUAL, "mutual recursion")]
)
def test_a_stratum_without_a_key_runs_in_one_task_with_the_reason(text, why):
    placement = _evaluation(text)
    assert placement.where == "one task" and why in placement.reason


def test_bsp_comes_first_without_a_key_only_when_set():
    assert _evaluation(REACH, bsp=True).where == "bsp"
    assert _evaluation(TC, bsp=True).where == "partition-local"


def test_naive_or_decompose_false_run_in_rounds():
    assert _evaluation(TC, strategy="naive").reason == "strategy='naive'"
    assert _evaluation(TC, decompose=False).reason == "decompose=False"
    assert _evaluation(TC, decompose=False).where == "rounds"


def test_a_declined_placement_is_not_chosen_again_and_the_next_says_why():
    first = _evaluation(REACH, bsp=True)
    second = _evaluation(REACH, first.refused(Declined("its relations hold 3 rows")), bsp=True)
    assert second.where == "one task"
    third = _evaluation(REACH, second.refused(Declined("too many facts")), bsp=True)
    assert third.where == "rounds"
    text = str(third)
    assert text.startswith("evaluate, rounds of Spark joins: ")
    assert "(not BSP rounds across partitions: its relations hold 3 rows)" in text
    assert "(not partition-local (one task): too many facts)" in text
    keyed = _evaluation(TC)
    assert _evaluation(TC, keyed.refused(Declined("a partition held more"))).where == "rounds"


def test_a_non_recursive_stratum_is_one_spark_plan():
    plan = _first(PLAIN)
    placement = place_evaluation(plan, decomposition(plan), "seminaive", True, False)
    assert (placement.method, placement.where) == ("evaluate", "plan")


def _update(text: str, history: tuple = (), **case) -> Placement:
    plan = _recursive(text) if any(p.recursive for p in _plans(text)) else _first(text)
    settings = {"method": "auto", "changed": True, "moved": True, **case}
    return place_update(plan, UpdateCase(**settings), history)


def test_a_linear_stratum_is_maintained_by_dred_in_the_driver_then_a_task_then_rounds():
    first = _update(TC, linear=True)
    assert (first.method, first.where) == ("dred", "driver")
    second = _update(TC, first.refused(Declined("too large")), linear=True)
    assert second.where == "one task"
    third = _update(TC, second.refused(Declined("too large for a task")), linear=True)
    assert (third.method, third.where) == ("dred", "rounds")
    assert _update(NON_LINEAR).where == "one task"
    assert _update(TC, linear=True, decompose=False).where == "rounds"


def test_over_deletion_declines_to_recomputing():
    first = _update(TC, linear=True)
    then = _update(TC, first.refused(Declined("over 10 facts over-deleted", recompute=True)), linear=True)
    assert (then.method, then.where) == ("recompute", "evaluation")
    assert "over 10 facts over-deleted" in str(then)


def test_removals_reaching_min_max_relations_repair_groups_in_the_driver_or_recompute():
    repair = _update(SSSP, linear=True, regroup=True, repairs=True)
    assert (repair.method, repair.where) == ("dred", "driver")
    assert _update(
        SSSP, repair.refused(Declined("too large")), linear=True, regroup=True, repairs=True
    ).method == ("recompute")
    assert _update(SSSP, linear=True, regroup=True, repairs=False).method == "recompute"
    assert _update(SSSP, linear=True, regroup=True, repairs=True, decompose=False).method == "recompute"


def test_unchanged_counting_and_groups():
    assert _update(TC, changed=False).method == "unchanged"
    assert _update(TC, moved=False).method == "unchanged"
    assert _update(TC, method="recompute").reason == "method='recompute'"
    held = _update(PLAIN, held=True)
    assert (held.method, held.where) == ("counting", "driver")
    assert _update(PLAIN, held.refused(Declined("too large"))).where == "plan"
    assert _update(PLAIN, held=False).where == "plan"
    assert _update(COUNT).method == "groups"
    assert _update(COUNT, moved=False).method == "unchanged"


def test_driver_memory_zero_keeps_maintenance_out_of_the_driver_and_says_which_setting():
    placement = _update(TC, linear=True, driver=False)
    assert (placement.method, placement.where) == ("dred", "one task")
    ((ruled_out, refusal),) = placement.declined
    assert ruled_out.where == "driver" and refusal.reason == "spark.datalog.driverMemory is 0"
    assert str(placement).endswith("(not in the driver: spark.datalog.driverMemory is 0)")
    # the next refusal goes on from there, and the driver is not chosen again
    rounds = _update(TC, placement.refused(Declined("too large for a task")), linear=True, driver=False)
    assert rounds.where == "rounds" and [p.where for p, _ in rounds.declined] == ["driver", "one task"]
    # counting of changes held in the driver runs in a Spark plan
    counting = _update(PLAIN, held=True, driver=False)
    assert (counting.method, counting.where) == ("counting", "plan")
    assert "spark.datalog.driverMemory is 0" in str(counting)
    # min/max removals the driver would repair are recomputed
    regroup = _update(SSSP, linear=True, regroup=True, repairs=True, driver=False)
    assert regroup.method == "recompute" and "spark.datalog.driverMemory is 0" in str(regroup)
    # strata the driver would not run are placed as before, without the setting in their reason
    assert _update(NON_LINEAR, driver=False) == _update(NON_LINEAR)
    decomposing = {"linear": True, "decompose": False}
    assert _update(TC, driver=False, **decomposing) == _update(TC, **decomposing)
    assert _update(PLAIN, held=False, driver=False) == _update(PLAIN, held=False)


SPANNING_TREE = """
    .decl st(x: number, y: number) choice-domain y
    st(1, Y) :- arc(1, Y).
    st(X, Y) :- st(_, X), arc(X, Y).
"""
MATCHING = ".decl m(x: number, y: number) choice-domain x, y\nm(X, Y) :- arc(X, Y)."


INTERVALS = (
    "iv(A, B) :- arc(A, B).\niv(A, C) :- iv(A, B), arc(B, C).\niv(A, B) <= iv(C, D) :- C <= A, B <= D."
)
GREEDY = "choice-domain chooses greedily among each round's candidates"


@pytest.mark.parametrize(
    "text, reason",
    [
        (SPANNING_TREE, GREEDY),
        (MATCHING, GREEDY),
        (INTERVALS, "subsumption removes the dominated facts of each round"),
    ],
)
def test_a_greedy_choice_or_a_subsumption_in_recursion_runs_in_rounds_and_is_recomputed(text, reason):
    plan = _first(text)
    placement = place_evaluation(plan, decomposition(plan), "seminaive", True, True)
    assert (placement.where, placement.reason) == ("rounds", reason)
    update = _update(text, linear=True)
    assert (update.method, update.reason) == ("recompute", placement.reason)


NEAR = ".functor near(x: number, y: number): number\n"
NEAR_TC = "tc(X, Y) :- arc(X, Y). tc(X, Z) :- tc(X, Y), arc(Y, Z), @near(X, Z) < 3."
NEAR_PLAIN = "two(X, Z) :- arc(X, Y), arc(Y, Z), @near(X, Z) < 3."
SPARK_ONLY = "@near is the Spark SQL function 'greatest', which runs only in Spark plans"


def _bound_plans(text: str, function) -> list:
    return sd.Program.parse(".input arc\n" + NEAR + text, functors={"near": function}).plans


def test_a_stratum_calling_a_spark_sql_functor_runs_only_in_spark_plans_and_says_why():
    (plan,) = _bound_plans(NEAR_TC, sd.spark_function("greatest", python=max))
    evaluation = place_evaluation(plan, decomposition(plan), "seminaive", True, True)
    assert (evaluation.where, evaluation.reason) == ("rounds", SPARK_ONLY)
    update = place_update(plan, UpdateCase("auto", True, True, linear=True))
    assert (update.method, update.where, update.reason) == ("dred", "rounds", SPARK_ONLY)
    regrouped = place_update(plan, UpdateCase("auto", True, True, linear=True, regroup=True, repairs=True))
    assert (regrouped.method, regrouped.where) == ("recompute", "evaluation")
    (plain,) = _bound_plans(NEAR_PLAIN, sd.spark_function("greatest"))
    counting = place_update(plain, UpdateCase("auto", True, True, held=True))
    assert (counting.method, counting.where, counting.reason) == ("counting", "plan", SPARK_ONLY)


def test_a_python_functor_leaves_the_placement_as_it_was():
    (plan,) = _bound_plans(NEAR_TC, max)
    assert plan.spark_sql_functors == {}
    assert place_evaluation(plan, decomposition(plan), "seminaive", True, True).where == "partition-local"
    assert place_update(plan, UpdateCase("auto", True, True, linear=True)).where == "driver"


LIMITED_TC = TC + "\n.limitsize tc(n=5)"


def test_a_limited_stratum_runs_its_rounds_in_one_task_else_in_rounds_never_partitioned():
    plan = _recursive(LIMITED_TC)
    assert decomposition(plan).key == ()  # partitions would run rounds of their own
    placement = _evaluation(LIMITED_TC, bsp=True)
    assert placement.where == "one task" and "limitsize keeps the least new facts" in placement.reason
    declined = _evaluation(LIMITED_TC, history=placement.refused(Declined("a partition held more")))
    assert declined.where == "rounds" and "limitsize" in declined.reason
    assert _evaluation(LIMITED_TC, decompose=False).where == "rounds"


@pytest.mark.parametrize("text", [LIMITED_TC, PLAIN + "\n.limitsize two(n=1)"])
def test_a_limited_stratum_is_recomputed_by_an_update_and_explained(text):
    plan = _first(text)
    placement = place_update(plan, UpdateCase("auto", True, True, linear=True, held=True))
    assert placement.method == "recompute" and "limitsize" in placement.reason
    assert plan.set_valued(plan.relations[0])
    explained = sd.Program.parse(".input arc\n" + text).explain(maintenance=True)
    assert "at most" in explained and "recompute (.limitsize keeps the least facts)" in explained
