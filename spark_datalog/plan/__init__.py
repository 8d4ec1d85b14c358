"""Rules to relational algebra: the IR, the translator, semi-naive variants and explain().

Nothing in this package imports pyspark: the IR is shared by every backend.
"""

from .delta import delta_variants
from .explain import explain
from .translate import plan_program, plan_rule

__all__ = ["delta_variants", "explain", "plan_program", "plan_rule"]
