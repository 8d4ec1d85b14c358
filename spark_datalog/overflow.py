"""Integer overflow: the ranges of ``int`` and ``long``, and the one error every engine raises.

An integer result of ``+ - * /`` must fit the type analysis gave the expression (``int``: 32
bits, ``long``: 64 bits), and an integer ``sum<>`` must fit ``long``. The engines detect it
where they compute (the reference and the Python kernels compare results with the bounds, the
Spark compiler builds checked Column expressions), and report it as an :class:`Overflow`
carrying a *marker*: ``[spark_datalog overflow @ LINE:COLUMN] detail`` for an expression at
that position, ``[spark_datalog overflow @ sum:RELATION] detail`` for a sum. The marker
survives a trip through a Spark task (a Python worker's traceback, Spark's ``raise_error``
message), so :func:`located` can turn any of them into an :class:`ArithmeticOverflowError`
naming the rule, with its position and the program text.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Iterator, Optional

from .errors import ArithmeticOverflowError, FunctorError

BOUNDS = {"int": (-(2**31), 2**31 - 1), "long": (-(2**63), 2**63 - 1)}

_MARKER = re.compile(
    r"\[spark_datalog overflow @ ([^\]\s]+)\] ([^\n\r]*?)(?: SQLSTATE: \w+)?\s*(?:$|[\n\r])", re.M
)


def fits(value: int, type_: str) -> bool:
    """Whether the integer ``value`` lies in the range of ``type_`` (``int`` or ``long``)."""
    low, high = BOUNDS[type_]
    return low <= value <= high


def marker(where: str, detail: str) -> str:
    """The text that identifies an overflow at ``where`` (``LINE:COLUMN`` or ``sum:RELATION``)."""
    return f"[spark_datalog overflow @ {where}] {detail}"


def span_where(span) -> str:
    """``where`` of an expression at ``span`` (an ``ast.Span``)."""
    return f"{span.line}:{span.column}"


def sum_where(relation: str) -> str:
    return f"sum:{relation}"


class Overflow(ArithmeticError):
    """An integer result out of its type's range, found by an engine's kernel; not yet located
    in the program (see :func:`located`)."""

    def __init__(self, where: str, detail: str):
        self.where = where
        self.detail = detail
        super().__init__(marker(where, detail))


def operation_overflow(span, left, op: str, right, type_: str) -> Overflow:
    """The Overflow of ``left op right`` (the expression at ``span``) out of ``type_``."""
    return Overflow(span_where(span), f"{left} {op} {right} does not fit {type_}")


def sum_overflow(relation: str) -> Overflow:
    return Overflow(sum_where(relation), "the sum does not fit long")


def located(error: BaseException, checked) -> Optional[ArithmeticOverflowError]:
    """The ArithmeticOverflowError an exception stands for (an :class:`Overflow`, or any
    exception whose text carries an overflow marker), located in ``checked``'s program; None
    when it is no overflow."""
    if isinstance(error, ArithmeticOverflowError):
        return error
    if isinstance(error, Overflow):
        return overflow_error(checked, error.where, error.detail)
    found = _MARKER.search(str(error))
    if found is None:
        return None
    return overflow_error(checked, found.group(1), found.group(2).strip())


def overflow_error(checked, where: str, detail: str) -> ArithmeticOverflowError:
    """The error for an overflow at ``where`` of ``checked`` (a CheckedProgram), naming the rule."""
    program = checked.program
    if where.startswith("sum:"):
        relation = where[len("sum:") :]
        rule, span = _sum_rule(checked, relation)
        message = f"sum<> of relation '{relation}' overflows: {detail}"
    else:
        line_text, _, column_text = where.partition(":")
        span = (int(line_text), int(column_text))
        rule = _rule_at(checked, *span)
        message = detail
    if rule is not None:
        message += f" (in rule {rule.text or rule})"
    line, column = span if span and span[0] else (None, None)
    return ArithmeticOverflowError(message, line, column, program.source or None, program.filename)


def _rule_at(checked, line: int, column: int):
    """The rule whose text holds the position: the last one starting at or before it."""
    found = None
    for rule in sorted(checked.rules, key=lambda r: (r.span.line, r.span.column)):
        if rule.span.line and (rule.span.line, rule.span.column) <= (line, column):
            found = rule
    return found


def _sum_rule(checked, relation: str):
    """The first rule computing ``sum<>`` into ``relation`` and its aggregate's position."""
    for rule in checked.rules:
        if rule.head.predicate == relation and rule.aggregate is not None:
            span = rule.aggregate[1].span
            return rule, (span.line, span.column)
    return None, None


@contextmanager
def overflows_located(checked) -> Iterator[None]:
    """Re-raise an overflow found inside the block (by any engine, also inside a Spark task)
    as an ArithmeticOverflowError located in ``checked``'s program, and the failure of a
    user-defined functor's function as a FunctorError (``user_functors.failure_located``)."""
    try:
        yield
    except ArithmeticOverflowError:
        raise
    except FunctorError as error:  # bound to no function (found while evaluating): the line too
        raise error.with_source(checked.program.source or None, checked.program.filename) from None
    except Exception as error:
        from .user_functors import failure_located

        found = located(error, checked) or failure_located(error, checked)
        if found is None:
            raise
        raise found from None
