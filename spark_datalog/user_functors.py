"""User-defined functors: Soufflé's ``.functor f(x: number, s: symbol): number``, called ``@f(X, S)``.

Each declaration becomes an entry of the same shape as the intrinsic functors'
(:class:`spark_datalog.functors.Functor`: arity, argument kinds, result type, a reference, a
Polars and a Spark implementation), kept on the program's own calls (``ast.Call.functor``,
``ir.Call.functor``): the global table is never changed, and analysis, the reference
interpreter, the Polars kernel and Spark evaluate ``@f`` through the code that evaluates
``cat`` or ``strlen``.

The entry's implementations call the Python function the declaration is *bound* to
(``Program.functor("f", fn)``, ``Program.parse(..., functors={"f": fn})``, ``--functor
f=module:function``), or the Spark SQL function it is bound to by :func:`spark_function`
(``--functor f=spark:name``):

- a function on values (the default): called once per row (on Spark inside a ``pandas_udf``,
  one Arrow batch at a time);
- ``vectorized=True``: a function of pandas Series (one per argument) returning a sequence of
  as many values; called on whole batches by the kernel (``map_batches``) and Spark (a
  ``pandas_udf``), and on one-row Series by the reference;
- a Spark SQL function (a built-in, or one the user registered: ``spark.udf.register``, a Java
  UDF, ``CREATE FUNCTION``): Spark calls it by name (``functions.call_function``) inside its
  own plans, with no Python in between. The reference and the kernel run the Python function
  given with it (``spark_function(name, python=fn)``), and without one refuse the program. A
  stratum calling it runs in Spark plans, never on the kernel in a Spark task
  (``placement``).

A ``stateful`` functor may take and return records and ADTs, in the form
:mod:`spark_datalog.functor_values` describes. The function is called only where every
argument is defined; ``None`` (or NaN) as a value is undefined (the literal fails, as a
division by zero does); an integer value out of the range of the declared type is undefined
too. An exception it raises stops the evaluation with a
:class:`~spark_datalog.errors.FunctorError` naming the functor (:func:`failure_located`).

Example::

    >>> import spark_datalog as sd
    >>> program = sd.Program.parse(
    ...     ".functor twice(x: number): number  .decl p(x: number)  p(1). q(Y) :- p(X), Y = @twice(X).",
    ...     functors={"twice": lambda x: 2 * x},
    ... )
    >>> sd.reference.evaluate(program, {})["q"]
    {(2,)}
"""

from __future__ import annotations

import numbers
import re
from dataclasses import dataclass
from typing import Callable, Optional

from .errors import FunctorError
from .functor_values import given, holds_compound, taken
from .recursive_records import NIL, is_recursive_type, stored_type
from .functors import Functor, fits
from .record_types import as_struct, is_record
from .syntax import ast

__all__ = [
    "Binding",
    "FunctorFailure",
    "SparkFunction",
    "entry",
    "failure_located",
    "load_binding",
    "load_function",
    "spark_function",
    "vectorized",
]

_MARKER = re.compile(r"\[spark_datalog functor (@\w+) @ (\d+):(\d+)\] ([^\n\r]*)")
_KINDS = {"int": "integer", "long": "integer", "double": "number", "string": "string", "bool": "bool"}


def vectorized(function: Callable) -> Callable:
    """Mark ``function`` as vectorized (it takes pandas Series and returns as many values), so
    that ``functors={"f": vectorized(fn)}`` and ``--functor f=module:fn`` bind it as such.

    >>> vectorized(lambda a: a * 2).spark_datalog_vectorized
    True
    """
    function.spark_datalog_vectorized = True  # type: ignore[attr-defined]
    return function


@dataclass(frozen=True)
class SparkFunction:
    """A functor's binding to the Spark SQL function ``name``, with ``python`` (a function on
    values, or :func:`vectorized`) for the reference and the kernel. Made by
    :func:`spark_function`."""

    name: str
    python: Optional[Callable] = None


def spark_function(name: str, python: Optional[Callable] = None) -> SparkFunction:
    """Bind a functor to the Spark SQL function ``name`` (a built-in such as ``"upper"``, or
    one registered in the Spark session: ``spark.udf.register``, a Java UDF, ``CREATE
    FUNCTION``; a qualified name is fine). Spark calls it in its plans, by name, on the
    arguments cast to the declared types, and casts its value to the declared result type
    (null, or NaN, is undefined). ``python``: the same function in Python, which the reference
    and the kernel run (without it they refuse the program). The function must be
    deterministic, as a Python functor must.

    >>> import spark_datalog as sd
    >>> program = sd.Program.parse(
    ...     '.functor up(s: symbol): symbol  .decl p(s: symbol)  p("a").  q(T) :- p(S), T = @up(S).'
    ... )
    >>> bound = program.functor("up", spark_function("upper", python=str.upper))
    >>> sd.reference.evaluate(bound, {})["q"]
    {('A',)}
    """
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"spark_function: {name!r} is not a function name")
    if python is not None and not callable(python):
        raise TypeError(f"spark_function({name!r}): python={python!r} is not callable")
    return SparkFunction(name.strip(), python)


class FunctorFailure(Exception):
    """The user's function raised: its text carries a marker that survives a Spark task."""


class Binding:
    """The function a declared functor is bound to (set after parsing; None until then)."""

    def __init__(self, declared: ast.FunctorDecl):
        self.name = "@" + declared.name
        self.line, self.column = declared.span.line, declared.span.column
        self.params = tuple(p.type for p in declared.params)
        self.result = declared.result
        self.function: Optional[Callable] = None
        self.vectorized = False
        # the Spark SQL function it is bound to (:func:`spark_function`), None for Python
        self.spark_name: Optional[str] = None

    def bind(self, function, vectorized: Optional[bool] = None) -> None:
        """Bind ``function`` (a Python function, or a :class:`SparkFunction`); ``vectorized``
        None: as :func:`vectorized` marked the Python function."""
        spark_name = None
        if isinstance(function, SparkFunction):
            self.require_primitive(function.name)
            spark_name, function = function.name, function.python
        elif not callable(function):
            raise TypeError(f"functor {self.name}: {function!r} is not callable")
        if vectorized is None:
            vectorized = getattr(function, "spark_datalog_vectorized", False) is True
        self.function, self.vectorized, self.spark_name = function, vectorized, spark_name

    def require_primitive(self, spark_name: str) -> None:
        """A FunctorError unless every parameter and the result are primitive types: records
        and ADTs reach a Spark SQL function only in the engine's own encoding."""
        if any(holds_compound(t) for t in (*self.params, self.result)):
            message = (
                f"functor {self.name} takes or returns a record or ADT: it can be bound to a Python "
                f"function, not to the Spark SQL function {spark_name!r}"
            )
            raise FunctorError(message, self.line, self.column)

    def is_bound(self) -> bool:
        """Whether it is bound, to a Python function or a Spark SQL function."""
        return self.function is not None or self.spark_name is not None

    def require(self) -> Callable:
        """The bound Python function; a FunctorError (at the ``.functor`` line) when there is
        none (unbound, or bound to a Spark SQL function alone)."""
        if self.function is None:
            message = self.spark_only_message() if self.spark_name else self.unbound_message()
            raise FunctorError(message, self.line, self.column)
        return self.function

    def spark_only_message(self) -> str:
        return (
            f"functor {self.name} is bound to the Spark SQL function {self.spark_name!r}, which only "
            f"the Spark engine runs: give the same function in Python for this engine with "
            f'spark_function("{self.spark_name}", python=fn)'
        )

    def unbound_message(self) -> str:
        bare = self.name[1:]
        return (
            f"functor {self.name} is declared but bound to no function: give one with "
            f'Program.functor("{bare}", fn), functors={{"{bare}": fn}} or --functor {bare}=module:function'
        )

    def marker(self, error: BaseException) -> str:
        detail = f"{type(error).__name__}: {error}".replace("\n", " ")
        return f"[spark_datalog functor {self.name} @ {self.line}:{self.column}] {detail}"

    def call(self, function: Callable, values) -> object:
        """``function(*values)`` as the declared result (None: undefined)."""
        try:
            value = function(*values)
        except Exception as error:
            raise FunctorFailure(self.marker(error)) from None
        return self.value(value)

    def value(self, value) -> object:
        """A value the function returned, as the declared result type (a record or ADT as a
        ``Record``: :func:`~spark_datalog.functor_values.taken`); None when undefined (NaN too:
        Spark's Arrow batches cannot tell it from a null)."""
        result = self.result
        if value is None and is_recursive_type(result):
            return NIL  # a list's end is a value: a recursive type's result is never undefined
        if value is None or (isinstance(value, numbers.Real) and value != value):
            return None
        if holds_compound(result):
            try:
                return taken(value, result)
            except TypeError as error:
                raise FunctorFailure(self.marker(error)) from None
        if result in ("int", "long"):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise FunctorFailure(self.marker(TypeError(f"returned {value!r}, not an integer")))
            return int(value) if fits(int(value), result) else None
        if result == "double":
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise FunctorFailure(self.marker(TypeError(f"returned {value!r}, not a number")))
            return float(value)
        if result == "string" and not isinstance(value, str):
            raise FunctorFailure(self.marker(TypeError(f"returned {value!r}, not a string")))
        return bool(value) if result == "bool" else value

    def arguments(self, values) -> list:
        """The values as the declared parameter types (an integer given for a float, widened)."""
        return [float(v) if t == "double" else v for v, t in zip(values, self.params, strict=True)]

    def rows(self, columns: list, count: int) -> list:
        """The values of the function on ``count`` rows given as columns (lists; none for a
        functor without parameters) where no value is None."""
        function = self.require()
        valid = [i for i in range(count) if all(c[i] is not None for c in columns)]
        columns = [
            [given(v, t) for v in c] if holds_compound(t) else c
            for c, t in zip(columns, self.params, strict=True)
        ]
        out: list = [None] * count
        if not valid:
            return out
        if self.vectorized:
            import pandas as pd

            series = [pd.Series([c[i] for i in valid]) for c in columns]
            try:
                values = list(function(*series)) if series else [function() for _ in valid]
            except Exception as error:
                raise FunctorFailure(self.marker(error)) from None
            if len(values) != len(valid):
                mismatch = ValueError(f"returned {len(values)} values for {len(valid)} rows")
                raise FunctorFailure(self.marker(mismatch))
            for i, value in zip(valid, values, strict=True):
                out[i] = self.value(None if _missing(value) else value)
            return out
        for i in valid:
            out[i] = self.call(function, [c[i] for c in columns])
        return out


def _missing(value) -> bool:
    """pandas' missing values (``pd.NA``, ``NaT``) as None; NaN stays a value."""
    return value is None or type(value).__name__ in ("NAType", "NaTType")


def entry(declared: ast.FunctorDecl) -> Functor:
    """The registry entry of a declaration, with a fresh (unbound) :class:`Binding`."""
    binding = Binding(declared)
    kinds = tuple(_KINDS.get(p.type, p.type) for p in declared.params)  # a record: its type
    arity = len(declared.params)
    return Functor(
        binding.name,
        arity,
        arity,
        kinds,
        declared.result,
        lambda _type, *values: _reference(binding, values),
        lambda _type, *args: _polars(binding, args),
        lambda _type, *args: _spark(binding, args),
        binding=binding,
    )


def _reference(binding: Binding, values) -> object:
    from .functors import Undefined

    value = binding.rows([[v] for v in binding.arguments(values)], 1)[0]
    if value is None:
        raise Undefined(f"{binding.name} is undefined")
    return value


def _polars(binding: Binding, args):
    """The values of the function over whole columns (``map_batches``): the function is called
    on the rows where every argument is defined."""
    import polars as pl

    from .kernel.types import polars_type

    binding.require()
    dtype = polars_type(binding.result)
    typed = [
        arg.cast(polars_type(t)).alias(f"a{i}")
        for i, (arg, t) in enumerate(zip(args, binding.params, strict=True))
    ]
    # a row's index as the first field: the struct has the frame's length also without arguments
    rows = pl.int_range(pl.len()).alias("row")

    def apply(batch: pl.Series) -> pl.Series:
        frame = batch.struct.unnest()
        columns = [frame[c].to_list() for c in frame.columns[1:]]
        values = binding.rows(columns, len(frame))
        return pl.Series(batch.name, [as_struct(v, binding.result) for v in values], dtype=dtype)

    return pl.struct(rows, *typed).map_batches(apply, return_dtype=dtype, is_elementwise=True)


def _spark(binding: Binding, args):
    """The Spark SQL function the functor is bound to (:func:`_spark_sql`), else its Python
    function in a ``pandas_udf`` (:func:`_spark_udf`)."""
    if binding.spark_name is not None:
        return _spark_sql(binding, binding.spark_name, args)
    return _spark_udf(binding, args)


def _spark_sql(binding: Binding, name: str, args):
    """``name(args)`` by name (``call_function``), the arguments cast to the declared types,
    called only where every one is defined (a ``when``), its value cast to the declared type;
    null or NaN is undefined."""
    from pyspark.sql import functions as F

    from .spark.types import spark_type

    defined = F.lit(True)
    for arg in args:
        defined = defined & arg.isNotNull()
    typed = [arg.cast(spark_type(t)) for arg, t in zip(args, binding.params, strict=True)]
    value = F.call_function(name, *typed).cast(spark_type(binding.result))
    if binding.result == "double":
        value = F.nanvl(value, F.lit(None).cast("double"))
    return F.when(defined, value)


def _spark_udf(binding: Binding, args):
    """A ``pandas_udf`` (Arrow batches): a vectorized function gets the batch's Series, another
    is called row by row. The function is not called where an argument is null: the UDF gets
    the arguments with nulls replaced and a column saying where every one is defined (a
    nullable integer column would reach pandas as doubles). A record argument or result travels
    as the field ``v`` of a struct (a column of dicts, null where undefined: a struct's own
    column would reach pandas as a DataFrame)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from .spark.types import spark_type

    binding.require()
    defined = F.lit(True)
    typed = []
    for arg, t in zip(args, binding.params, strict=True):
        defined = defined & arg.isNotNull()
        typed.append(F.struct(arg.alias("v")) if is_record(t) else _spark_primitive(arg, t))
    result = spark_type(binding.result)
    compound = is_record(binding.result)

    def batch(flags, *series):
        import pandas as pd

        keep = flags.tolist()
        columns = [_spark_values(s, keep) for s in series]
        values = binding.rows(columns, len(keep))
        if compound:
            return pd.DataFrame({"v": [as_struct(v, binding.result) for v in values]})
        return pd.Series(values, dtype=object)

    returned = T.StructType([T.StructField("v", result)]) if compound else result
    call = F.pandas_udf(batch, returned)(defined, *typed)  # type: ignore[call-overload]
    return call.getField("v") if compound else call


def _spark_primitive(arg, type_: str):
    from pyspark.sql import functions as F

    from .spark.types import spark_type

    stored = stored_type(type_)  # a recursive type's value: its encoded text
    return F.coalesce(arg.cast(spark_type(stored)), F.lit(_PLACEHOLDER[stored]).cast(spark_type(stored)))


def _spark_values(series, keep: list) -> list:
    """A UDF argument's values (a wrapped record's: its field ``v``), None where not ``keep``."""
    values = series["v"].tolist() if hasattr(series, "columns") else series.tolist()
    return [v if k else None for v, k in zip(values, keep, strict=True)]


_PLACEHOLDER = {"int": 0, "long": 0, "double": 0.0, "string": "", "bool": False}


def failure_located(error: BaseException, checked) -> Optional[FunctorError]:
    """The FunctorError an exception stands for (its text carries a functor's failure marker,
    also from inside a Spark task), at the functor's ``.functor`` line; None otherwise."""
    if isinstance(error, FunctorError):
        return error
    found = _MARKER.search(str(error))
    if found is None:
        return None
    name, line, column, detail = found.group(1), int(found.group(2)), int(found.group(3)), found.group(4)
    program = checked.program
    detail = re.sub(r"\s*SQLSTATE: \w+\s*$", "", detail.strip())
    message = f"functor {name} raised {detail}"
    return FunctorError(message, line or None, column or None, program.source or None, program.filename)


# ``--functor f=spark:name``: the functor is the Spark SQL function ``name``
SPARK_PREFIX = "spark:"


def load_binding(reference: str, ship: bool = False) -> "Callable | SparkFunction":
    """What ``reference`` binds a functor to: ``"spark:name"`` the Spark SQL function ``name``
    (:func:`spark_function`), else the Python function :func:`load_function` loads.

    >>> load_binding("spark:upper")
    SparkFunction(name='upper', python=None)
    """
    if reference.startswith(SPARK_PREFIX):
        try:
            return spark_function(reference[len(SPARK_PREFIX) :])
        except TypeError as error:
            raise ValueError(str(error)) from None
    return load_function(reference, ship)


def load_function(reference: str, ship: bool = False) -> Callable:
    """The function ``"module:function"`` names (importlib); ValueError when it cannot be loaded.
    With ``ship``, a module of the user's (not installed: outside the interpreter's prefixes) is
    registered with Spark's cloudpickle to travel by value, so executors need not import it.

    >>> load_function("math:sqrt")(4.0)
    2.0
    """
    import importlib

    module_name, sep, attribute = reference.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"{reference!r} is not module:function")
    try:
        found: object = importlib.import_module(module_name)
        for part in attribute.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"cannot load {reference!r}: {error}") from None
    if not callable(found):
        raise ValueError(f"{reference!r} is not callable")
    if ship:
        _ship_by_value(module_name)
    return found


def _ship_by_value(module_name: str) -> None:
    import sys

    module = sys.modules[module_name]
    path = getattr(module, "__file__", None)
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    if path is None or any(str(path).startswith(prefix) for prefix in prefixes):
        return
    try:
        from pyspark import cloudpickle
    except ImportError:  # pragma: no cover - no Spark: nothing to ship to
        return
    cloudpickle.register_pickle_by_value(module)
