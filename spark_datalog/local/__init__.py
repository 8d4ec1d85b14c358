"""The former tuple evaluator, no longer run by maintenance: ``compile`` turns plans into
Python functions over tuples (or Arrow columns, ``columnar``), ``fixpoint`` runs semi-naive
rounds with them (``by_value``: min/max best value first), ``arrow`` holds facts as Arrow
tables probed by key. ``incremental.dred_linear`` and ``.levels`` run on the kernel
(``spark_datalog.kernel``); what is left here is imported by tests that are moving off it and,
for ``arrow``, by ``incremental.changes`` and ``storage.datafiles``: it is retired once they
have moved (issue 21).
"""
