"""Benchmarks of spark_datalog against the systems a user would pick instead.

``python -m benchmarks run --suite quick`` (``make bench``) measures every benchmark side by
side in one run and writes ``benchmarks/RESULTS.md``; see README.md in this folder.
"""
