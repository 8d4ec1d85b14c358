"""A hand-written PySpark semi-naive loop, as a data engineer would write it without this engine.

Each iteration joins the last delta with the edges (or with the accumulated relation), removes
duplicates, keeps only what is new (``left_anti`` against the total, or "better than the best
value so far" for min problems), unions it into the total and counts the new rows to decide
whether to stop: one action per iteration. Both the new rows and the total are kept with a lazy
``localCheckpoint`` (stored when the count first computes them), which also makes them leaves of
the next iteration's plan. Caching alone does not cut the logical plan: the plan of iteration k
then contains every earlier iteration, and analysing and printing it grows until the loop spends
more time planning than computing (measured here with ``cache()`` instead: 2 s per iteration on
a 12-edge chain rising to 11 s by iteration 13, and a Java heap overflow while building the plan
text on a 20-edge chain; with the checkpoints, 0.2-1 s per iteration throughout). Spark releases
the checkpoint blocks of dropped frames itself (ContextCleaner).
"""

from __future__ import annotations

from pyspark.sql import functions as F

from . import Outcome

SYSTEM = "pyspark-loop"
KIND = "spark"

_UNSUPPORTED = {
    "pointsto": "no hand-written loop: four mutually dependent joins per iteration",
    "rdfs": "no hand-written loop: eight self-joins of the triple relation per iteration",
}


def supports(problem: str):
    if problem in _PROBLEMS:
        return None
    return _UNSUPPORTED.get(problem, f"no hand-written loop for {problem}")


def _cut(frame):
    """The frame as a leaf of later plans: stored when first computed, lineage dropped."""
    return frame.localCheckpoint(eager=False)


def _set_fixpoint(base, step):
    """Semi-naive loop with set semantics: ``step(delta, total)`` gives candidate rows.
    Returns (total, iterations)."""
    total = _cut(base.distinct())
    delta = total
    new_rows = total.count()
    iterations = 1
    while new_rows:
        iterations += 1
        new = _cut(step(delta, total).distinct().join(total, on=total.columns, how="left_anti"))
        new_rows = new.count()  # the one action of the iteration; it also computes the total
        total, delta = _cut(total.unionByName(new)), new
    return total, iterations


def _min_fixpoint(base, step, key: str, value: str):
    """Semi-naive loop keeping the minimum ``value`` per ``key``: the delta is the set of keys
    whose value improved. Returns (total, iterations)."""
    total = _cut(base.groupBy(key).agg(F.min(value).alias(value)))
    delta = total
    improved = total.count()
    iterations = 1
    while improved:
        iterations += 1
        best = step(delta).groupBy(key).agg(F.min(value).alias(value))
        old = total.withColumnRenamed(value, "_old")
        new = _cut(
            best.join(old, on=key, how="left")
            .where(F.col("_old").isNull() | (F.col(value) < F.col("_old")))
            .drop("_old")
        )
        improved = new.count()
        merged = total.join(new.select(key), on=key, how="left_anti").unionByName(new)
        total, delta = _cut(merged), new
    return total, iterations


def _tc(f, cached):
    arc = f["arc"]

    def step(delta, total):
        return (
            delta.alias("d")
            .join(arc.alias("a"), F.col("d.dst") == F.col("a.src"))
            .select(F.col("d.src").alias("src"), F.col("a.dst").alias("dst"))
        )

    return _set_fixpoint(arc.select("src", "dst"), step)


def _tc_nonlinear(f, cached):
    def step(delta, total):
        left = (
            delta.alias("d")
            .join(total.alias("t"), F.col("d.dst") == F.col("t.src"))
            .select(F.col("d.src").alias("src"), F.col("t.dst").alias("dst"))
        )
        right = (
            total.alias("t")
            .join(delta.alias("d"), F.col("t.dst") == F.col("d.src"))
            .select(F.col("t.src").alias("src"), F.col("d.dst").alias("dst"))
        )
        return left.unionByName(right)

    return _set_fixpoint(f["arc"].select("src", "dst"), step)


def _reach(f, cached):
    arc = f["arc"]

    def step(delta, total):
        return (
            delta.alias("r")
            .join(arc.alias("a"), F.col("r.node") == F.col("a.src"))
            .select(F.col("a.dst").alias("node"))
        )

    return _set_fixpoint(f["source"].select("node"), step)


def _sg(f, cached):
    a, b = f["arc"].alias("a"), f["arc"].alias("b")
    base = (
        a.join(b, F.col("a.src") == F.col("b.src"))
        .where(F.col("a.dst") != F.col("b.dst"))
        .select(F.col("a.dst").alias("x"), F.col("b.dst").alias("y"))
    )

    def step(delta, total):
        return (
            delta.alias("s")
            .join(a, F.col("a.src") == F.col("s.x"))
            .join(b, F.col("b.src") == F.col("s.y"))
            .select(F.col("a.dst").alias("x"), F.col("b.dst").alias("y"))
        )

    return _set_fixpoint(base, step)


def _cc(f, cached):
    arc = f["arc"]
    edge = (
        arc.select(F.col("src").alias("x"), F.col("dst").alias("y"))
        .unionByName(arc.select(F.col("dst").alias("x"), F.col("src").alias("y")))
        .distinct()
        .cache()
    )
    base = edge.select(F.col("x").alias("node"), F.col("x").alias("label"))

    def step(delta):
        return (
            delta.alias("c")
            .join(edge.alias("e"), F.col("c.node") == F.col("e.x"))
            .select(F.col("e.y").alias("node"), F.col("c.label").alias("label"))
        )

    cached.append(edge)
    return _min_fixpoint(base, step, key="node", value="label")


def _sssp(f, cached):
    warc = f["warc"]
    base = f["source"].select("node", F.lit(0).cast("long").alias("d"))

    def step(delta):
        return (
            delta.alias("p")
            .join(warc.alias("w"), F.col("p.node") == F.col("w.src"))
            .select(F.col("w.dst").alias("node"), (F.col("p.d") + F.col("w.weight")).alias("d"))
        )

    return _min_fixpoint(base, step, key="node", value="d")


def _pymk(f, cached):
    arc = f["arc"]
    uarc = (
        arc.select(F.col("src").alias("x"), F.col("dst").alias("y"))
        .unionByName(arc.select(F.col("dst").alias("x"), F.col("src").alias("y")))
        .distinct()
        .cache()
    )
    a, b, c = uarc.alias("a"), uarc.alias("b"), uarc.alias("c")
    pairs = (
        a.join(b, F.col("a.x") == F.col("b.x"))
        .where(F.col("a.y") != F.col("b.y"))
        .select(F.col("a.y").alias("y"), F.col("b.y").alias("z"), F.col("a.x").alias("x"))
    )
    friends = c.select(F.col("c.x").alias("y"), F.col("c.y").alias("z"))
    result = (
        pairs.join(friends, on=["y", "z"], how="left_anti")
        .groupBy("y", "z")
        .agg(F.countDistinct("x").alias("n"))
        .cache()
    )
    cached.append(uarc)
    return result, None


_PROBLEMS = {
    "tc": _tc,
    "tc_nonlinear": _tc_nonlinear,
    "reach": _reach,
    "sg": _sg,
    "cc": _cc,
    "sssp": _sssp,
    "pymk": _pymk,
}


def run(spark, frames: dict, task) -> Outcome:
    """Run the hand-written loop for the task's problem and count the result (the last action)."""
    cached: list = []  # frames the problem cached besides its result
    result, iterations = _PROBLEMS[task.problem](frames, cached)
    facts = result.count()

    def release():
        for frame in cached + [result]:
            frame.unpersist(blocking=False)

    return Outcome(
        facts=facts,
        iterations=iterations,
        fetch=lambda: {tuple(r) for r in result.collect()},
        release=release,
    )
