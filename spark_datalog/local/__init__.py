"""The local backend: the IR evaluated on in-memory rows inside one process.

``compile`` turns plans into Python functions over tuples, ``fixpoint`` runs one relation's
semi-naive rounds with them, and ``partition`` wraps that as the task of a Spark job (used by
``eval.partitioned`` for decomposable strata). Nothing here builds Spark plans.
"""
