"""The incremental benchmark (benchmarks/incremental.py): change batches, the method matrix, the
report and plot from given records (no Spark), and one tiny end-to-end run on Spark."""

from __future__ import annotations

import json

import pytest

import spark_datalog as sd
from benchmarks import incremental as inc
from benchmarks import workloads as w


def test_tree_insertions_add_new_leaves_so_it_stays_a_tree():
    edges = w.tree(2, 4)  # 30 edges
    new = inc.insertions("tree", edges, 0.1)
    assert len(new) == 3
    nodes = set(w.nodes_of(edges))
    children = [child for _, child in new]
    assert all(parent in nodes for parent, _ in new)
    assert not nodes & set(children) and len(set(children)) == len(children)


def test_random_insertions_are_new_edges_between_existing_nodes():
    edges = w.gnm(30, 60, seed=5)
    new = inc.insertions("gnm", edges, 0.1)
    assert len(new) == 6 == len(set(new))
    nodes = set(w.nodes_of(edges))
    assert all(u in nodes and v in nodes and u != v for u, v in new)
    assert not set(new) & set(edges)


def test_deletions_are_existing_edges_and_at_least_one():
    edges = w.gnm(30, 60, seed=5)
    gone = inc.deletions("gnm", edges, 0.1)
    assert len(gone) == 6 and set(gone) <= set(edges)
    assert len(inc.deletions("tree", w.tree(2, 3), 0.001)) == 1
    assert inc.deletions("gnm", edges, 0.1) == gone  # seeded


def test_counting_is_measured_only_where_a_non_recursive_stratum_exists():
    for name, expected in (
        ("tc-tree", ("auto", "recompute")),
        ("sg-tree", ("auto", "recompute")),
        ("reach-gnm", ("auto", "recompute")),
        ("cc-gnm", ("auto", "counting", "recompute")),
    ):
        program = sd.Program.from_file(inc.WORKLOADS[name].program_path)
        assert inc.methods_for(program) == expected, name


def test_smaller_scales_come_first_and_explicit_sizes_replace_them():
    plan = inc.plan_sizes(("tc-tree", "cc-gnm"), ("small", "medium"))
    assert [(wl.name, size) for wl, size in plan] == [
        ("tc-tree", 10),
        ("cc-gnm", (2_000, 2_000)),
        ("tc-tree", 13),
        ("cc-gnm", (10_000, 10_000)),
    ]
    plan = inc.plan_sizes(("tc-tree",), explicit={"tc-tree": [5, 5, 6]})
    assert [size for _, size in plan] == [5, 6]
    assert inc.parse_size(inc.WORKLOADS["tc-tree"], "14") == 14
    assert inc.parse_size(inc.WORKLOADS["cc-gnm"], "500x700") == (500, 700)


class _Bench(inc.Bench):
    """The budget logic of ``Bench.measure`` with materialization times given, no Spark."""

    def __init__(self):
        super().__init__(spark=None, log=lambda *args: None)
        self.materialize_seconds = 1.0

    def materialize(self, workload, edges, tag):
        return self.root / tag, self.materialize_seconds, 5

    def _measure(self, workload, program, edges, label, *rest):
        self.sizes.append({"workload": workload.name, "size": label})


def test_a_size_is_skipped_when_its_estimate_overruns_the_budget():
    import time

    bench, tc = _Bench(), inc.WORKLOADS["tc-tree"]
    try:
        bench.measure(tc, 2, deadline=time.perf_counter() + 60)  # no previous size: measured
        materialize, _ = bench.spent["tc-tree"]
        bench.spent["tc-tree"] = (materialize, 10.0)  # as if measuring it took 10 s
        bench.materialize_seconds = 3.0  # the next size: estimate 10 s x 3.0 / 1.0 = 30 s
        bench.measure(tc, 3, deadline=time.perf_counter() + 40)  # 30 s fit in 40 s
        bench.spent["tc-tree"] = (1.0, 10.0)
        with pytest.raises(inc.OverBudget, match="estimated at 30 s"):
            bench.measure(tc, 4, deadline=time.perf_counter() + 20)
        with pytest.raises(inc.OverBudget, match="spent"):
            bench.measure(tc, 5, deadline=time.perf_counter() - 1)
        assert [s["size"] for s in bench.sizes] == ["binary tree depth 2", "binary tree depth 3"]
    finally:
        bench.close()


def _record(workload, size, edges, direction, fraction, method, seconds, jobs=10):
    return {
        "workload": workload,
        "program": "programs/x.dl",
        "size": size,
        "edges": edges,
        "facts_before": 100,
        "output": "tc",
        "direction": direction,
        "fraction": fraction,
        "changed_edges": max(1, round(edges * fraction)),
        "method": method,
        "seconds": seconds,
        "runs": [seconds],
        "jobs": jobs,
        "strata": [[0, ["tc"], "dred" if method != "recompute" else "recompute", seconds]],
        "facts_after": 101,
        "relations_after": {"tc": [101, 7]},
    }


def _payload(records, skipped=()):
    meta = {
        "command": "python -m benchmarks.incremental",
        "started": "s",
        "finished": "f",
        "wall_seconds": 12.0,
        "load_average": {"start": [0.5, 0.4, 0.3], "end": [0.6, 0.5, 0.4]},
        "machine": {"logical_cores": 2, "cpu": "cpu", "memory_gib": 24, "python": "3.11"},
        "versions": {"pyspark": "4.2.0", "java": "17", "deltalake": "1.6.6", "spark-datalog": "0.1.0"},
        "spark": {
            "master": "local[2]",
            "spark.sql.shuffle.partitions": "4",
            "spark.sql.adaptive.enabled": "true",
            "spark.driver.memory": "4g",
        },
        "git_commit": None,
        "repeats": 1,
        "budget_seconds": 1440,
        "json": "r.json",
    }
    sizes = [
        {
            "workload": "tc-tree",
            "size": s,
            "edges": e,
            "facts": {"tc": [100, 7]},
            "output": "tc",
            "materialize_seconds": 1.0,
            "materialize_jobs": 9,
            "seconds": 30.0,
        }
        for s, e in (("small", 1000), ("big", 10000))
    ]
    return {"meta": meta, "sizes": sizes, "skipped": list(skipped), "results": records}


def _records():
    records = []
    for size, edges, recompute in (("small", 1000, 4.0), ("big", 10000, 40.0)):
        for direction, auto in (("insert", 2.0), ("delete", 10.0)):
            for fraction in (0.001, 0.01, 0.1):
                records.append(_record("tc-tree", size, edges, direction, fraction, "auto", auto))
                records.append(_record("tc-tree", size, edges, direction, fraction, "recompute", recompute))
    return records


def test_ratios_are_recompute_over_incremental_and_counting_is_na_when_not_measured():
    found = {(c["size"], c["direction"], c["fraction"]): c for c in inc.cells(_records())}
    assert found[("small", "insert", 0.01)]["ratio_auto"] == pytest.approx(2.0)
    assert found[("big", "delete", 0.1)]["ratio_auto"] == pytest.approx(4.0)
    assert found[("big", "delete", 0.1)]["ratio_counting"] is None


def test_markdown_states_the_targets_at_the_largest_size_and_lists_skipped_sizes():
    skipped = [{"workload": "tc-tree", "size": "huge", "edges": 10**6, "reason": "budget"}]
    text = inc.markdown(_payload(_records(), skipped), "plots/incremental.png")
    # big: insert 40/2 = 20 >= 5 met; delete 40/10 = 4 >= 3 met; the small size is not judged
    assert (
        "tc-tree · big · insert: ratio 20.00 (target 5): **met**; by size: 2.00 (1,000 "
        "edges) → 20.00 (10,000 edges)"
    ) in text
    assert "tc-tree · big · delete: ratio 4.00 (target 3): **met**" in text
    assert "tc-tree · small · insert: ratio" not in text
    assert "| small | insert | 1% | 10 | 2.00 (10) | n/a | 4.00 (10) | 2.00 | n/a |" in text
    assert "huge (1,000,000 edges): skipped, budget" in text
    assert "![ratio recompute / incremental vs batch size](plots/incremental.png)" in text
    assert "budget 24 min" in text


def test_a_missed_target_says_not_met():
    records = [
        _record("tc-tree", "small", 1000, "insert", 0.01, "auto", 2.0),
        _record("tc-tree", "small", 1000, "insert", 0.01, "recompute", 3.0),
    ]
    text = inc.markdown(_payload(records), None)
    assert "ratio 1.50 (target 5): **not met**" in text


def test_plot_is_written(tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "plots" / "incremental.png"
    assert inc.plot(_records(), path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not inc.plot([], tmp_path / "none.png")


@pytest.mark.spark
def test_tiny_matrix_end_to_end(spark, tmp_path):
    """cc on a tiny random graph, insertions: counting (edge), DRed (cc, min in recursion) and
    the recompute baseline agree; outputs written. (Deletions take the same path; kept out for
    time: each update is ~60 Spark jobs.)"""
    pytest.importorskip("matplotlib")
    out = {
        "out_md": tmp_path / "INCREMENTAL.md",
        "out_json": tmp_path / "incremental.json",
        "out_plot": tmp_path / "plots" / "incremental.png",
    }
    payload = inc.run(
        workloads=("cc-gnm",),
        explicit={"cc-gnm": [(12, 10)]},
        fractions=(0.2,),
        directions=("insert",),
        spark=spark,
        warm_up=False,
        log=lambda *args: None,
        command="test",
        **out,
    )
    records = payload["results"]
    assert len(records) == 3  # auto, counting, recompute
    used = {r["method"]: {s[1][0]: s[2] for s in r["strata"]} for r in records}
    assert used == {
        "auto": {"edge": "counting", "cc": "dred"},
        "counting": {"edge": "counting", "cc": "dred"},
        "recompute": {"edge": "recompute", "cc": "recompute"},
    }
    after = {json.dumps(r["relations_after"], sort_keys=True) for r in records}
    assert len(after) == 1 and records[0]["facts_after"] == records[0]["relations_after"]["cc"][0]
    assert all(r["jobs"] > 0 and r["seconds"] > 0 for r in records)
    assert json.loads(out["out_json"].read_text())["results"] == records
    assert "| G(12, 10) | insert | 20% | 2 |" in out["out_md"].read_text()
    assert out["out_plot"].exists()
