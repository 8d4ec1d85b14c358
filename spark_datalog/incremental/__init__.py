"""Incremental maintenance of a materialized warehouse: change sets, counting, DRed, update.

``update(program, spark, warehouse, changes=None, method="auto")`` folds signed EDB changes into
the derived tables (see :mod:`.update`).
"""

from .update import METHODS, UpdateReport, update

__all__ = ["update", "UpdateReport", "METHODS"]
