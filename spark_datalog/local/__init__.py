"""The tuple evaluator the driver-side maintenance (``incremental.dred_linear``, ``.levels``)
still uses: ``compile`` turns plans into Python functions over tuples (or Arrow columns,
``columnar``), ``fixpoint`` runs semi-naive rounds with them, ``arrow`` holds stored facts as
Arrow tables probed by key. It moves to the kernel (``spark_datalog.kernel``) with them.
"""
