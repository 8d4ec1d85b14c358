"""Name -> system: what kind it is (Spark or Python), whether it can run a problem, and the
module that runs it. Spark systems run in the benchmark's SparkSession on shared cached input
frames; Python systems run in the worker process on the input lists."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class System:
    name: str
    kind: str  # "spark" | "python"
    module_name: str
    strategy: Optional[str] = None  # the engine's evaluation strategy
    decompose: bool = True  # the engine: partition-local fixpoints where a stratum decomposes

    @property
    def module(self):
        return importlib.import_module(self.module_name)

    def unsupported(self, problem: str) -> Optional[str]:
        """Why this system cannot run ``problem`` (None when it can)."""
        return self.module.supports(problem)

    def prepare(self, task):
        """Spark systems: what is loaded once per case before timing (the engine's program)."""
        return self.module.load(task) if self.strategy else None

    def run_spark(self, spark, frames: dict, task, prepared):
        if self.strategy:
            return self.module.run(spark, frames, task, prepared, self.strategy, self.decompose)
        return self.module.run(spark, frames, task)


SYSTEMS = {
    s.name: s
    for s in (
        System("reference", "python", "benchmarks.anchors.reference"),
        System("duckdb", "python", "benchmarks.anchors.duckdb_sql"),
        System("networkx", "python", "benchmarks.anchors.networkx_anchor"),
        System("spark-cte", "spark", "benchmarks.anchors.spark_cte"),
        System("pyspark-loop", "spark", "benchmarks.anchors.pyspark_loop"),
        System("engine-seminaive", "spark", "benchmarks.engine", strategy="seminaive"),
        System("engine-rounds", "spark", "benchmarks.engine", strategy="seminaive", decompose=False),
        System("engine-naive", "spark", "benchmarks.engine", strategy="naive"),
        System("graphframes", "spark", "benchmarks.anchors.graphframes_anchor"),
    )
}

ENGINE = "engine-seminaive"
