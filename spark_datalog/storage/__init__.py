"""Storage: a warehouse of Delta tables holding relations with signed counts.

The storage layer knows nothing about rules: it stores relations (a name, typed columns and a
signed ``_count`` per row), records runs, and reads inputs named by location.
"""

from __future__ import annotations

from .detect import choose_backend, delta_jar_available
from .locations import InputTable, load_input, load_input_changes, read_input
from .runs import APP_ID, CommitResult, RunInfo
from .schema import COUNT_COLUMN, TYPES
from .warehouse import FAIL_AFTER_COMMITS_ENV, InjectedFailure, Warehouse

__all__ = [
    "APP_ID",
    "COUNT_COLUMN",
    "FAIL_AFTER_COMMITS_ENV",
    "TYPES",
    "CommitResult",
    "InjectedFailure",
    "InputTable",
    "RunInfo",
    "Warehouse",
    "choose_backend",
    "delta_jar_available",
    "load_input",
    "load_input_changes",
    "read_input",
]
