"""The Spark backend: IR -> DataFrame compiler, input checking, session helpers.

The names below are imported on first use (PEP 562), so that ``python -m
spark_datalog.spark.jars`` (``make run``) runs its module without having imported it already
through this package (which made ``runpy`` warn on every run).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "compile_node": ".compile",
    "prepare_inputs": ".inputs",
    "local_session": ".session",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    """``spark_datalog.spark.local_session`` and the other exports, imported when first read."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
