"""The public facade: a checked Datalog program and what can be done with it.

Example::

    import spark_datalog as sd
    program = sd.Program.parse('''
        .input arc
        tc(X, Y) :- arc(X, Y).
        tc(X, Z) :- tc(X, Y), arc(Y, Z).
    ''')
    program.strata                       # [['tc']]
    result = program.materialize(spark, inputs={"arc": arc_df})
    result["tc"].show()
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterator, Mapping, Optional, Sequence

from .analysis import analyse
from .bounds import MAX_ITERATIONS
from .analysis.checked import CheckedProgram, RelationSchema, positional_schema
from .syntax import ast
from .syntax.parser import parse

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from .incremental.update import UpdateReport


class Program:
    """A parsed and checked Datalog program. Build it with :meth:`parse` or :meth:`from_file`."""

    def __init__(self, checked: CheckedProgram):
        self.checked = checked
        self._plans: Optional[tuple] = None

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def parse(
        cls,
        text: str,
        filename: Optional[str] = None,
        dialect: str = "datalog",
        include_dirs: Sequence[str] = (),
        functors: Optional[Mapping[str, Callable]] = None,
        macros: Optional[Mapping[str, str]] = None,
    ) -> "Program":
        """Parse and check ``text``; raises ParseError, SafetyError, StratificationError or
        SchemaError (the first one, with every error found in ``.errors``). ``dialect="souffle"``
        reads lower-case names in terms as variables, as Soufflé does (README, The language).
        Preprocessor directives (``#include``, ``#define``, ``#ifdef``, ...) are carried out
        first: included files are found relative to ``filename``'s directory (the current
        directory without one), then in ``include_dirs``. ``functors`` binds user-defined
        functors (``.functor``) to Python functions, as :meth:`functor` does. ``macros`` are
        defined before the text is read, as Soufflé's ``-M`` defines them: ``{"N": "10"}`` is
        ``#define N 10`` (``ValueError`` for a name that is not one)."""
        with _collector_paused():  # parsing allocates much and frees nothing: no cycles to find
            program = cls(analyse(parse(text, filename, dialect, include_dirs, macros)))
        for name, function in (functors or {}).items():
            program.functor(name, function)
        return program

    @classmethod
    def from_file(
        cls,
        path,
        dialect: str = "datalog",
        include_dirs: Sequence[str] = (),
        functors: Optional[Mapping[str, Callable]] = None,
        macros: Optional[Mapping[str, str]] = None,
    ) -> "Program":
        """Parse and check the program in the file at ``path`` (UTF-8; ``ParseError`` at the first
        byte that is not, ``OSError`` when the file cannot be read); ``#include`` finds files
        relative to its directory, then in ``include_dirs``. ``functors`` and ``macros`` as for
        :meth:`parse`."""
        from .textfiles import read_utf8

        text = read_utf8(path)
        return cls.parse(
            text,
            filename=str(path),
            dialect=dialect,
            include_dirs=include_dirs,
            functors=functors,
            macros=macros,
        )

    def functor(self, name: str, function, vectorized: Optional[bool] = None) -> "Program":
        """Bind the user-defined functor ``name`` (declared ``.functor name(...): type``, called
        ``@name(...)``) to ``function``; returns the program. ``function`` takes the arguments'
        values (``number``: int, ``float``: float, ``symbol``: str) and returns one of the
        declared type, or None (undefined: the literal fails). With ``vectorized=True`` it takes
        one pandas Series per argument and returns as many values (a Series, an array, a list):
        the kernel and Spark call it on whole batches (``vectorized=None``: as
        ``spark_datalog.vectorized`` marked the function). It must not depend on state (Spark may
        call it on a row more than once, in any order, in other processes). ``function`` may
        also be a Spark SQL function, ``spark_datalog.spark_function("name", python=fn)``:
        Spark runs it in its own plans. A ``name`` the program does not declare is a
        ``FunctorError``.

        >>> program = Program.parse(".functor half(x: float): float  .decl p(x: float)  p(3.0)."
        ...                         "  q(Y) :- p(X), Y = @half(X).").functor("half", lambda x: x / 2)
        >>> from spark_datalog import reference
        >>> reference.evaluate(program, {})["q"]
        {(1.5,)}
        """
        from .errors import FunctorError

        declared = {d.name: d for d in self.ast.functors}
        if name not in declared or declared[name].functor is None:
            known = ", ".join(sorted(declared)) or "none"
            raise FunctorError(f"the program declares no functor '{name}' (.functor declarations: {known})")
        declared[name].functor.binding.bind(function, vectorized)
        return self

    def require_functors(self, spark=None) -> None:
        """Raise a FunctorError, at its ``.functor`` line, for a declared functor bound to no
        function, or (given a Spark session) bound to a Spark SQL function the session does not
        know (the engines call this before they start)."""
        from .errors import FunctorError

        source, filename = self.ast.source or None, self.ast.filename
        for declared in self.ast.functors:
            binding = declared.functor.binding if declared.functor is not None else None
            if binding is None:
                continue
            message = None
            if not binding.is_bound():
                message = binding.unbound_message()
            elif spark is not None and not _is_spark_function(spark, binding.spark_name):
                message = (
                    f"functor {binding.name} is bound to the Spark SQL function {binding.spark_name!r}, "
                    "which this Spark session does not know: register it first (spark.udf.register, "
                    "CREATE FUNCTION) or name a built-in"
                )
            if message:
                raise FunctorError(message, binding.line, binding.column, source, filename)

    def with_input_types(self, input_types: Mapping[str, tuple]) -> "Program":
        """The same program re-checked with column types taken from inputs (relation -> types)."""
        if not input_types:
            return self
        return Program(analyse(self.checked.program, dict(input_types)))

    # -- what the program is --------------------------------------------------------------

    @property
    def ast(self) -> ast.Program:
        return self.checked.program

    @property
    def source(self) -> str:
        """The program text; after ``#include``/``#define``, the preprocessed text (a
        ``syntax.preprocess.Preprocessed`` whose ``origin`` maps its lines to the files)."""
        return self.checked.program.source

    @property
    def relations(self) -> Mapping[str, RelationSchema]:
        """Relation name -> schema (columns with types, ``kind`` 'edb' or 'idb')."""
        return dict(self.checked.relations)

    @property
    def strata(self) -> list:
        """Strata in evaluation order, each a list of (IDB) relation names."""
        return [list(s.relations) for s in self.checked.strata]

    @property
    def queries(self) -> list:
        """The ``?-`` atoms of the program."""
        return [q.atom for q in self.checked.queries]

    @property
    def outputs(self) -> tuple:
        """The ``.output`` relations, or every IDB relation when the program names none."""
        return self.checked.outputs

    @property
    def fingerprint(self) -> str:
        """A sha256 of the program's meaning (its checked rules, facts and schemas), insensitive to
        comments and layout. The warehouse uses it to refuse a foreign program."""
        return self._fingerprint(self.checked.relations.values())

    @property
    def former_fingerprint(self) -> Optional[str]:
        """The fingerprint this program had when every relation without ``.decl`` had columns
        ``c0, c1, ...`` (spark_datalog before they were named after head variables); ``None``
        when no column is named differently now. Lets a warehouse written then be recognised."""
        former = [positional_schema(schema) for schema in self.checked.relations.values()]
        if all(old is new for old, new in zip(former, self.checked.relations.values(), strict=True)):
            return None
        return self._fingerprint(former)

    def _fingerprint(self, schemas) -> str:
        parts = [str(schema) for schema in schemas]
        parts += sorted(str(rule) for rule in self.checked.rules)
        parts += sorted(f"{name}{sorted(map(repr, rows))}" for name, rows in self.checked.facts.items())
        return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()

    # -- planning and evaluation ----------------------------------------------------------

    @property
    def plans(self) -> tuple:
        """The relational-algebra plans of every stratum (``plan.ir.StratumPlan``)."""
        if self._plans is None:
            from .plan.translate import plan_program

            self._plans = plan_program(self.checked)
        return self._plans

    def explain(
        self, query: Optional[str] = None, magic="auto", warehouse=None, maintenance: bool = False
    ) -> str:
        """A readable text of the IR of every rule and semi-naive variant; with
        ``maintenance``, followed by the plans ``update`` runs (DRed's seeds, counting's terms).
        With ``query``: how the query is answered (stored read, magic sets or full evaluation,
        and why), the rules evaluated for it (the rewritten ones under magic sets) and their IR.

        >>> text = Program.parse(".decl q(x: long) p(X) :- q(X).").explain(maintenance=True)
        >>> text.splitlines()[-5:-3]
        ['stratum 0: p: counting', '  % p(X) :- q(X).']
        """
        from .plan.explain import explain, explain_maintenance

        if query is None:
            text = explain(self.plans, self.checked)
            if maintenance:
                text += "\nmaintenance (incremental update):\n" + explain_maintenance(
                    self.plans, self.checked
                )
            return text
        from .query.plan import plan_query

        plan = plan_query(self, query, magic=magic, warehouse=warehouse)
        return plan.describe() + "\n\n" + plan.program.explain()

    def query(
        self,
        spark,
        query: str,
        inputs: Optional[Mapping[str, object]] = None,
        warehouse=None,
        magic="auto",
        max_iterations: Optional[int] = MAX_ITERATIONS,
        decompose: bool = True,
    ) -> "DataFrame":
        """The answers of ``query`` (``"tc(1, X)"`` or ``"?- tc(1, X)."``) as a DataFrame with one
        column per distinct named variable, named after it; a query without named variables
        (``"tc(1, 2)"``) gives one row with a boolean column ``holds``.

        ``inputs`` as for :meth:`materialize`. With a ``warehouse`` and no ``inputs``: the stored
        table is read and filtered when the program's relations there are current, else the
        program is evaluated over the warehouse's input tables. ``magic`` (``"auto"``, ``True``,
        ``False``) chooses the magic-set rewrite; ``explain(query=...)`` shows the decision.

        Example::

            program.query(spark, "tc(1, X)", inputs={"arc": arc_df}).show()
        """
        from .query.run import answer_query

        self.require_functors(spark)
        return answer_query(
            self,
            spark,
            query,
            inputs=self.checked.bound_inputs(inputs),
            warehouse=warehouse,
            magic=magic,
            max_iterations=max_iterations,
            decompose=decompose,
        ).frame

    def materialize(
        self,
        spark,
        inputs: Optional[Mapping[str, object]] = None,
        strategy: str = "seminaive",
        max_iterations: Optional[int] = MAX_ITERATIONS,
        checkpoint_interval: int = 10,
        on_null: str = "error",
        warehouse=None,
        run_id: Optional[str] = None,
        replace: bool = False,
        decompose: bool = True,
    ) -> "Materialization":
        """Evaluate the program on Spark and return every IDB relation as a DataFrame.

        ``inputs`` maps EDB relation names to DataFrames (matched to the relation positionally):
        Spark DataFrames, pandas DataFrames or pyarrow Tables, or locations (``"path"``,
        ``("path", "csv")``); anything else is an ``InputError`` naming the relation.
        ``strategy`` is ``"seminaive"`` (default) or ``"naive"``. ``max_iterations`` bounds each
        recursive stratum (``NonTerminationError`` beyond it). Lineage is cut every
        ``checkpoint_interval`` iterations. Rows with nulls raise ``InputError`` unless
        ``on_null="drop"``. ``decompose`` (default on) evaluates a recursive stratum whose
        recursion keeps some columns in place (``tc(X, Z) :- tc(X, Y), arc(Y, Z).``) as one
        Spark job in which each partition runs its own fixpoint; ``decompose=False`` always
        runs rounds of Spark joins.

        With a ``warehouse``: a ``run_id`` that has committed is not run again, and a run over
        the program and Delta input versions of the last committed run writes nothing; the
        result's ``skipped`` says so (``"already committed"`` / ``"unchanged"``). ``replace=True``
        retires the stored relations the program lacks (``Warehouse.retired``).
        """
        from .eval.materialize import materialize
        from .overflow import overflows_located
        from .spark.session import engine_settings

        self.require_functors(spark)
        with overflows_located(self.checked), engine_settings(spark):
            return materialize(
                self,
                spark,
                inputs=self.checked.bound_inputs({} if inputs is None else inputs),
                strategy=strategy,
                max_iterations=max_iterations,
                checkpoint_interval=checkpoint_interval,
                on_null=on_null,
                warehouse=warehouse,
                run_id=run_id,
                replace=replace,
                decompose=decompose,
            )

    def update(
        self,
        spark,
        warehouse,
        changes: Optional[Mapping[str, object]] = None,
        method: str = "auto",
        on_missing_delete: str = "error",
        run_id: Optional[str] = None,
        max_iterations: Optional[int] = MAX_ITERATIONS,
        checkpoint_interval: int = 10,
        decompose: bool = True,
    ) -> "UpdateReport":
        """Fold EDB changes into the relations this program materialized in ``warehouse``.

        ``changes`` maps EDB relations to signed change sets (columns + an integer ``_count``; Spark
        or pandas DataFrames, pyarrow Tables); without it,
        the changes since the versions the last run consumed. ``method`` is ``"auto"`` (counting
        for non-recursive strata, touched groups for aggregate relations, DRed for recursive
        strata), ``"dred"``, ``"counting"`` or
        ``"recompute"``. ``decompose=False`` runs every recursive stratum's maintenance in
        rounds of Spark joins (see ``materialize``). Returns an ``UpdateReport``.
        See :func:`spark_datalog.incremental.update`.
        """
        from .incremental import update
        from .overflow import overflows_located
        from .spark.session import engine_settings

        self.require_functors(spark)
        with overflows_located(self.checked), engine_settings(spark):
            return update(
                self,
                spark,
                warehouse,
                changes=self.checked.bound_inputs(changes),
                method=method,
                on_missing_delete=on_missing_delete,
                run_id=run_id,
                max_iterations=max_iterations,
                checkpoint_interval=checkpoint_interval,
                decompose=decompose,
            )

    def __repr__(self) -> str:
        return f"Program(relations={list(self.checked.relations)}, strata={self.strata})"


def _is_spark_function(spark, name: Optional[str]) -> bool:
    """Whether the Spark session knows the SQL function ``name`` (a built-in, a registered UDF
    or a catalog function; None, a Python functor: true); a name Spark cannot parse is not one."""
    if name is None:
        return True
    try:
        return bool(spark.catalog.functionExists(name))
    except Exception:  # a ParseException for a name that is no identifier
        return False


class _collector_paused:
    """Pause Python's cyclic garbage collector (when it runs) for the duration: its collections,
    triggered by the many objects a large program allocates, cost as much as parsing itself."""

    def __enter__(self):
        import gc

        self.enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        import gc

        if self.enabled:
            gc.enable()


@dataclass
class Materialization(Mapping):
    """The result of :meth:`Program.materialize`: relation name -> DataFrame, plus statistics."""

    frames: dict
    stats: list = field(default_factory=list)
    program: Optional[Program] = None
    warehouse_versions: dict = field(default_factory=dict)
    # None: evaluated. "already committed": the run id had committed, nothing was done and the
    # frames are the tables at the versions that run produced. "unchanged": same program and
    # input versions as the last committed run: the run was recorded, nothing evaluated or
    # written, the frames are the stored tables.
    skipped: Optional[str] = None
    run_id: Optional[str] = None
    # The answers of the program's `?-` queries, one DataFrame per query in program order
    # (``Program.query``'s shape: a column per named variable, or one boolean row ``holds``).
    answers: list = field(default_factory=list)

    @property
    def relations(self) -> list:
        """Names of the relations available in this result."""
        return list(self.frames)

    def __getitem__(self, name: str):
        try:
            return self.frames[name]
        except KeyError:
            raise KeyError(f"no relation {name!r} in this result; available: {sorted(self.frames)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.frames)

    def __len__(self) -> int:
        return len(self.frames)
