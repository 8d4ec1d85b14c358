"""The default bound on the rounds of one recursive stratum, shared by every engine.

The reference interpreter, ``Program.materialize`` (partition-local fixpoints and rounds of
Spark joins), ``Program.update`` (every maintenance path), the materialize job and the command
line all stop a recursive stratum that has not reached its fixpoint after ``MAX_ITERATIONS``
rule-application rounds, with a ``NonTerminationError`` naming the stratum's relations and the
bound. Programs such as ``n(Y) :- n(X), Y = X + 1.`` never reach one. Pass another bound, or
``None`` for none (not in the reference), where an entry point takes ``max_iterations``.
"""

MAX_ITERATIONS = 100_000
