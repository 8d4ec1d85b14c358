"""spark_datalog: a Spark-native Datalog engine.

Public API: :class:`Program`, :class:`Materialization`, :class:`Warehouse`, the reference
interpreter module :mod:`spark_datalog.reference`, and the error classes.
"""

from .errors import (
    ArithmeticOverflowError,
    DatalogError,
    DirectiveError,
    ExecutorError,
    FunctorError,
    InputError,
    LimitError,
    SettingsError,
    NonTerminationError,
    OutputError,
    ParseError,
    SafetyError,
    SchemaError,
    SparkFailure,
    StratificationError,
    WarehouseError,
)
from .program import Materialization, Program
from . import reference
from .user_functors import spark_function, vectorized

__version__ = "0.1.0"


def __getattr__(name):
    # The warehouse pulls in pyspark and deltalake: import it only when asked for.
    if name == "Warehouse":
        from .storage import Warehouse

        return Warehouse
    raise AttributeError(f"module 'spark_datalog' has no attribute {name!r}")


__all__ = [
    "ArithmeticOverflowError",
    "DatalogError",
    "DirectiveError",
    "ExecutorError",
    "FunctorError",
    "InputError",
    "LimitError",
    "SettingsError",
    "Materialization",
    "NonTerminationError",
    "OutputError",
    "ParseError",
    "Program",
    "SafetyError",
    "SchemaError",
    "SparkFailure",
    "StratificationError",
    "Warehouse",
    "WarehouseError",
    "reference",
    "spark_function",
    "vectorized",
]
