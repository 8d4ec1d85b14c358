"""The fixpoint driver over stratum plans on Spark (naive / semi-naive, min/max, checkpoints)."""

from .driver import evaluate
from .stats import IterationStats, StratumStats

__all__ = ["evaluate", "IterationStats", "StratumStats"]
