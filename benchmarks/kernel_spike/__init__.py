"""Issue 21, deliverable 1: the spike that chooses the columnar library of the local kernel.

The same semi-naive loops (``loops``) run on three kernels (Polars, DuckDB's relational API, Arrow
Acero), each a handful of functions, one per relational operator the engine's IR needs; every
measurement runs in a fresh subprocess (``measure``) and is checked against DuckDB's
``WITH RECURSIVE`` anchor. ``python -m benchmarks.kernel_spike --help``.
"""
