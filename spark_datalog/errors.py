"""The error hierarchy. Every error a user can cause carries a source position.

``DatalogError`` is the base. Errors found while checking a program are collected and raised
together: the raised error is the first one (so ``except SafetyError`` works) and ``.errors``
holds them all, in source order.
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence


class DatalogError(Exception):
    """Base class of every error spark_datalog raises on purpose.

    ``line`` and ``column`` are 1-based and may be ``None`` when the error has no place in the
    program text (for example a missing input). ``source`` is the program text, used to show the
    offending line with a caret under the column.

    A preprocessed text (``syntax.preprocess.Preprocessed``, whose lines came from several files)
    carries a map of where its lines were written: given one as ``source``, the error moves
    there, so ``filename``, ``line``, ``column`` and ``source`` are those of the file holding the
    text (``sort_key()`` keeps the position in the preprocessed text, to sort errors by).
    """

    kind = "error"

    def __init__(
        self,
        message: str,
        line: Optional[int] = None,
        column: Optional[int] = None,
        source: Optional[str] = None,
        filename: Optional[str] = None,
    ):
        self.message = message
        self.line = line
        self.column = column
        self.source = source
        self.filename = filename
        self._preprocessed_at: Optional[tuple] = None
        self._place_in_file()
        self.errors: list[DatalogError] = [self]
        super().__init__(self.render())

    def _place_in_file(self) -> None:
        """Move the error from a preprocessed ``source`` to the file its line was written in."""
        origin = getattr(self.source, "origin", None)
        if origin is None:
            return
        self._preprocessed_at = (self.line or 0, self.column or 0)
        filename, self.line, self.column, self.source = origin.locate(self.line, self.column)
        if filename is not None or self.line is not None:
            self.filename = filename

    def sort_key(self) -> tuple:
        """The error's place in the program text (in the preprocessed text, for one)."""
        return self._preprocessed_at or (self.line or 0, self.column or 0)

    def render(self) -> str:
        """The message with its position and, when the source is known, the line and a caret."""
        where = ""
        if self.line is not None:
            where = f"{self.filename or '<program>'}:{self.line}:{self.column or 1}: "
        text = f"{where}{self.kind}: {self.message}"
        snippet = source_excerpt(self.source, self.line, self.column)
        if snippet:
            text += "\n" + snippet
        return text

    def __str__(self) -> str:
        if len(self.errors) <= 1:
            return self.render()
        rest = "\n".join(e.render() for e in self.errors[1:])
        return f"{self.render()}\n{rest}\n({len(self.errors)} errors)"

    def with_source(self, source: Optional[str], filename: Optional[str] = None) -> "DatalogError":
        """Attach the program text (and file name) so the message can show the offending line."""
        if source is not None and self.source is None:
            self.source = source
            self._place_in_file()
        if filename is not None and self.filename is None:
            self.filename = filename
        self.args = (self.render(),)
        return self


class ParseError(DatalogError):
    """The program text does not follow the grammar."""

    kind = "parse error"


class SafetyError(DatalogError):
    """A rule is not range-restricted: a variable is not bound by a positive atom or assignment."""

    kind = "safety error"


class StratificationError(DatalogError):
    """Negation or count/sum/avg through a recursive cycle, or conflicting aggregates."""

    kind = "stratification error"


class SchemaError(DatalogError):
    """Arity or type mismatch: between uses of a predicate, its declaration, or an input."""

    kind = "schema error"


class InputError(DatalogError):
    """An input is missing, unreadable or holds values the program cannot accept (such as nulls)."""

    kind = "input error"


class DirectiveError(DatalogError):
    """An I/O directive asks for what is not supported: an ``IO=`` kind other than ``file``,
    ``stdout`` and ``sqlite``, or a parameter such as ``columns=`` (``souffle_io``)."""

    kind = "directive error"


class OutputError(DatalogError):
    """An output cannot be written where its directive says (an ``IO=sqlite`` database)."""

    kind = "output error"


class NonTerminationError(DatalogError):
    """A recursive stratum did not reach its fixpoint within ``max_iterations``."""

    kind = "non-termination"


class ArithmeticOverflowError(DatalogError):
    """An integer result (of ``+ - * /`` or ``sum<>``) does not fit its type: 64-bit ``long``
    or 32-bit ``int``. Carries the position of the expression (or aggregate) and names the rule."""

    kind = "arithmetic overflow"


class LimitError(DatalogError):
    """The program is beyond what the engine asked to run it takes: an expression nested deeper
    than Spark plans (``spark.limits``). Carries the position of the expression."""

    kind = "limit"


class FunctorError(DatalogError):
    """A user-defined functor (``.functor``) cannot be evaluated: it is bound to no function, or
    its function raised. Carries the position of its ``.functor`` declaration."""

    kind = "functor error"


class WarehouseError(DatalogError):
    """The warehouse refused an operation (foreign program, incompatible table, concurrent run)."""

    kind = "warehouse error"


class ExecutorError(DatalogError):
    """Spark's executors cannot run the engine's Python tasks: their Python workers cannot import
    ``spark_datalog`` (found before any task runs, ``spark.executors``)."""

    kind = "executor error"


def source_excerpt(source: Optional[str], line: Optional[int], column: Optional[int]) -> str:
    """The source line ``line`` followed by a caret under ``column`` (both 1-based)."""
    if not source or not line:
        return ""
    lines = source.splitlines()
    if not 1 <= line <= len(lines):
        return ""
    text = lines[line - 1].replace("\t", " ")
    col = max(1, column or 1)
    gutter = f"{line:>4} | "
    return f"{gutter}{text}\n{' ' * len(gutter)}{' ' * (col - 1)}^"


def raise_collected(
    errors: Sequence[DatalogError], source: Optional[str] = None, filename: Optional[str] = None
) -> None:
    """Raise the first of ``errors`` (sorted by position) carrying all of them in ``.errors``."""
    if not errors:
        return
    for error in errors:
        error.with_source(source, filename)
    ordered = sorted(errors, key=lambda e: e.sort_key())
    first = ordered[0]
    first.errors = list(ordered)
    raise first


def collect(errors: Iterable[DatalogError]) -> list[DatalogError]:
    """Flatten errors that themselves carry several collected errors."""
    out: list[DatalogError] = []
    for error in errors:
        out.extend(error.errors if error.errors else [error])
    return out


class SettingsError(DatalogError):
    """A ``spark.datalog.*`` setting of the session holds a value the engine cannot read (see
    ``spark_datalog.settings``). Has no position."""

    kind = "setting"


class SparkFailure(DatalogError):
    """Spark failed while running the engine's plans (a task raised, e.g. an invalid regular
    expression given to ``match`` from the data): the root cause's message, not its traceback.
    Made from Py4J and PySpark exceptions by :func:`spark_failure`."""

    kind = "spark failure"


def spark_failure(error: BaseException) -> Optional[SparkFailure]:
    """``error`` as a :class:`SparkFailure` when it is a Py4J or PySpark exception, else None.

    >>> spark_failure(ValueError("x")) is None
    True
    """
    cause = _java_root_cause(error)
    if cause is not None:
        return SparkFailure(cause)
    if type(error).__module__.startswith(("pyspark.errors", "py4j")):
        lines = [line for line in str(error).splitlines() if line.strip()]
        return SparkFailure(lines[0] if lines else type(error).__name__)
    return None


def _java_root_cause(error: BaseException) -> Optional[str]:
    """``Class: message`` (first line) of the innermost cause of a Py4J Java error, or None."""
    java = getattr(error, "java_exception", None)
    if java is None or not type(error).__module__.startswith("py4j"):
        return None
    try:
        while java.getCause() is not None:
            java = java.getCause()
        message = java.getMessage()
        first = str(message).splitlines()[0] if message else ""
        return f"{java.getClass().getName()}: {first}".rstrip(": ")
    except Exception:  # the JVM is gone: the Python side's first line
        return str(error).splitlines()[0]
