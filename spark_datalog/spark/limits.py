"""What the Spark engine accepts beyond the language's own limits.

Spark plans the expressions of a rule as trees of Column expressions, which its analyzer and
optimizer walk recursively on the driver JVM's thread stack. Measured on Spark 4.2 with the
default stack, the checked integer arithmetic of ``spark.compile`` plans at 140 nested
operations (``int`` or ``long``, in a projection or a selection) and overflows the stack from
160 on (a raw ``StackOverflowError``). So the Spark engine
takes expressions of at most ``SPARK_MAX_TERM_DEPTH`` nested operations and refuses deeper ones
before any work starts, with a :class:`LimitError` at the expression. The parser, the reference
interpreter and the local kernel take up to ``syntax.parser.MAX_TERM_DEPTH``.
"""

from __future__ import annotations

from typing import Iterator

from ..errors import LimitError
from ..syntax import ast

SPARK_MAX_TERM_DEPTH = 100


def check_spark_limits(checked) -> None:
    """Raise a LimitError at the first expression of ``checked``'s rules nested deeper than
    Spark takes.

    Example::

        check_spark_limits(program.checked)  # before planning anything on Spark
    """
    program = checked.program
    for rule in checked.rules:
        for term in _rule_terms(rule):
            operations = ast.term_depth(term) - 1
            if operations > SPARK_MAX_TERM_DEPTH:
                raise LimitError(
                    f"expression nested {operations} operations deep; the Spark engine takes at most "
                    f"{SPARK_MAX_TERM_DEPTH} (the reference interpreter more): split it with "
                    f"intermediate variables (`A = ..., B = A + ...`) (in rule {rule.text or rule})",
                    term.span.line or None,
                    term.span.column or None,
                    program.source or None,
                    program.filename,
                )


def _rule_terms(rule) -> Iterator:
    """The terms of a rule: head arguments, atom arguments, both sides of comparisons and the
    expressions of assignments."""
    yield from (arg for arg in rule.head.args if not isinstance(arg, ast.Aggregate))
    for literal in rule.body:
        if isinstance(literal, ast.Negation):
            literal = literal.atom
        if isinstance(literal, ast.Atom):
            yield from literal.args
        elif isinstance(literal, ast.Comparison):
            yield from (literal.left, literal.right)
        elif isinstance(literal, ast.Assignment):
            yield literal.expr
