"""The ``spark-datalog`` command: check a program, or run it on local Spark or the reference engine.

Example::

    spark-datalog check spark_datalog/examples/graph.dl
    spark-datalog run spark_datalog/examples/graph.dl --engine reference --show 5
    spark-datalog run prog.dl --input arc=arcs.csv
    spark-datalog run prog.dl -F facts -D out    # Soufflé's files: facts/arc.facts -> out/tc.csv
    spark-datalog materialize --config conf/example-job.yaml
    spark-datalog run prog.dl --query "tc(1, X)"   # only what the query needs (magic sets)
    spark-datalog query --warehouse /data/wh "tc(1, X)"
    spark-datalog unlock /data/wh          # remove the lock a crashed run left behind
    spark-submit "$(spark-datalog job-path)" --config "$(spark-datalog job-path --example-config)" \
        --warehouse ./warehouse            # the packaged job on the packaged example config

Results go to stdout (with ``-F``/``-D``, only what Soufflé prints: ``IO=stdout`` outputs and
``.printsize`` sizes; ``souffle_io``); progress (each stratum started and done, ``--verbose``: each iteration,
``--quiet``: none) and the ``spark_datalog`` logger's messages (``--log-level``) to stderr
(``logsetup``).

Exit status: 0 on success; 1 when the program, its inputs or the warehouse are wrong (a
``DatalogError``) or a file cannot be read or written while running (``OSError``,
``UnicodeError``); 2 on a usage error (bad arguments, a bad or unreadable config file, an
unreadable program file); 141 (128 + SIGPIPE) when the reader of the output went away (``| head``).
A Spark task that fails (e.g. ``match`` given an invalid regular expression from the data) is a
``SparkFailure`` (1), reported by its root cause's message. Every one of them is reported on
stderr as a message, never as a traceback (``report_failures``). ``unlock``
exits 0 when it removed the lock or there was none, 1 when a live process of this host holds it
(without ``--force``) or the warehouse does not exist.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import signal
import sys
import time
from contextlib import contextmanager
from itertools import zip_longest
from typing import TYPE_CHECKING, Iterator, Optional, Sequence

from . import job
from .bounds import MAX_ITERATIONS
from .errors import DatalogError, InputError, spark_failure
from .logsetup import add_logging_arguments, logging_from
from .overflow import fits
from .syntax.ast import DIALECTS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from .program import Program
    from .reference.terms import Value

EXIT_OK = 0
EXIT_PROGRAM_ERROR = 1
EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 128 + getattr(signal, "SIGPIPE", 13)  # what a shell shows for a SIGPIPE death

DEFAULT_SHOW = 10

# A command-line mistake (bad flags, a bad config file): reported on stderr with exit status 2.
# One class for every subcommand and the spark-submit job.
UsageError = job.UsageError


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``) and return the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse exits on --help (0) and on usage errors (2)
        return int(exit_.code or 0)
    with logging_from(args):  # progress and messages on stderr, as --quiet/--verbose/--log-level say
        return report_failures(lambda: args.handler(args), "spark-datalog")


def report_failures(action, prog: str) -> int:
    """Run ``action`` (returning an exit status) and turn every failure a user can cause into a
    message on stderr and the documented exit status (module docstring), never a traceback."""
    try:
        status = action()
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return status
    except BrokenPipeError:
        return silence_broken_pipe()
    except UsageError as err:
        print(f"{prog}: {err}", file=sys.stderr)
        return EXIT_USAGE
    except DatalogError as err:
        print_errors(err)
        return EXIT_PROGRAM_ERROR
    except (OSError, UnicodeError) as err:
        print(f"{prog}: {describe_os_error(err)}", file=sys.stderr)
        return EXIT_PROGRAM_ERROR
    except Exception as err:  # Spark failed in a task (Py4J, PySpark): its root cause, 1
        failure = spark_failure(err)
        if failure is None:
            raise
        print_errors(failure)
        return EXIT_PROGRAM_ERROR


def silence_broken_pipe() -> int:
    """The reader of stdout went away (``... | head``): point stdout at /dev/null so that the
    interpreter's final flush cannot fail again, and exit as a process killed by SIGPIPE does."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, io.UnsupportedOperation):  # stdout is no file (captured by a test)
        pass
    return EXIT_BROKEN_PIPE


def describe_os_error(err: BaseException) -> str:
    """``OSError`` / ``UnicodeError`` as one line naming the file and the reason."""
    if isinstance(err, OSError):
        target = f"{err.filename}: " if err.filename else ""
        return f"{target}{err.strerror or err}"
    return f"not valid text: {err}"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spark-datalog",
        description="Check Datalog programs and evaluate them on Spark or the reference interpreter.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    check = commands.add_parser(
        "check",
        help="parse and check a program; print its relations and strata",
        description="Parse and check PROGRAM; print the relations with their schemas and the strata, "
        "or every error found (exit status 1).",
    )
    check.add_argument("program", metavar="PROGRAM.dl")
    add_dialect_argument(check)
    add_preprocessor_arguments(check)
    check.set_defaults(handler=run_check)
    add_run_command(commands)
    materialize = commands.add_parser(
        "materialize",
        help="materialize a program into a warehouse of Delta tables",
        description="Check the program, read its inputs, evaluate it on Spark and commit every relation "
        "into the warehouse; print relations, facts, Delta versions and time per "
        'stratum. The same job as `spark-submit "$(spark-datalog job-path)"`.',
    )
    job.add_job_arguments(materialize)
    materialize.set_defaults(handler=run_materialize)
    add_query_command(commands)
    add_unlock_command(commands)
    add_job_path_command(commands)
    return parser


def add_run_command(commands) -> None:
    """``spark-datalog run``: evaluate a program from CSV files and print what it derives."""
    run = commands.add_parser(
        "run",
        help="evaluate a program and print the derived relations",
        description="Check and evaluate PROGRAM, then print each output relation's size and first rows.",
    )
    run.add_argument("program", metavar="PROGRAM.dl")
    add_preprocessor_arguments(run)
    run.add_argument(
        "--input",
        dest="inputs",
        action="append",
        default=[],
        metavar="NAME=PATH.csv",
        help="facts of EDB relation NAME from a CSV file with a header row (columns by position); repeatable",
    )
    run.add_argument(
        "-F",
        "--fact-dir",
        metavar="DIR",
        help="Soufflé's -F: read every .input relation from its file in DIR (DIR/NAME.facts, tab-separated, "
        "or as its directive's filename=, delimiter=, headers= say) and write the outputs as "
        "Soufflé does (into the current directory unless -D)",
    )
    run.add_argument(
        "-D",
        "--output-dir",
        metavar="DIR",
        help="Soufflé's -D: write every .output relation to DIR/NAME.csv (tab-separated, or as its "
        "directive says), print IO=stdout outputs and .printsize sizes; '-' prints every output. "
        "Without -F and -D the output relations are summarised instead",
    )
    run.add_argument(
        "--engine",
        choices=("spark", "reference"),
        default="spark",
        help="spark: local Spark (default); reference: the pure-Python interpreter",
    )
    run.add_argument(
        "--show",
        type=_non_negative,
        default=DEFAULT_SHOW,
        metavar="N",
        help=f"rows to print per relation (default {DEFAULT_SHOW})",
    )
    run.add_argument(
        "--max-iterations",
        type=_positive,
        default=MAX_ITERATIONS,
        metavar="N",
        help=f"bound on the iterations of each recursive stratum (default {MAX_ITERATIONS:,})",
    )
    run.add_argument(
        "--query",
        dest="queries",
        action="append",
        default=[],
        metavar="QUERY",
        help='answer QUERY (like "tc(1, X)") instead of printing the output relations: only what it '
        "needs is evaluated (magic sets); repeatable",
    )
    run.add_argument(
        "-j",
        "--jobs",
        type=_cores,
        metavar="N",
        help="Soufflé's -j: the cores local Spark runs on (N, or auto: all of them; default 2); the "
        "reference engine runs on one",
    )
    run.add_argument(
        "-w",
        "--no-warn",
        action="store_true",
        help="Soufflé's -w: no warnings, and a missing fact file is read as an empty one",
    )
    add_dialect_argument(run)
    add_logging_arguments(run)
    run.set_defaults(handler=run_run)


def add_preprocessor_arguments(command) -> None:
    """``-I DIR``: where ``#include`` looks after the including file's directory (Soufflé's -I);
    ``-M MACROS``: macros defined before the program is read (Soufflé's -M)."""
    command.add_argument(
        "-I",
        "--include-dir",
        dest="include_dirs",
        action="append",
        default=[],
        metavar="DIR",
        help="a directory #include searches after the including file's own; repeatable",
    )
    job.add_macro_argument(command.add_argument, "-M")


# ---------------------------------------------------------------------------------------------
# check


def add_dialect_argument(command) -> None:
    """``--dialect``: how the program's lower-case names in terms read (README, The language)."""
    command.add_argument(
        "--dialect",
        choices=DIALECTS,
        default="datalog",
        help="datalog (default): a lower-case name in a term is a symbol, p(lis); souffle: it is a "
        "variable, as in Soufflé, path(x, y) :- edge(x, y)",
    )
    job.add_functor_argument(command.add_argument)


def run_check(args: argparse.Namespace) -> int:
    program = load_program(args.program, args.dialect, args.include_dirs, args.functors, args.macros)
    print(describe_checked(program.checked))
    return EXIT_OK


def describe_checked(checked) -> str:
    """Relations (with schemas) and strata of a checked program, as printed by ``check``."""
    from . import analysis

    describe = getattr(analysis, "describe", None)
    if describe is not None:
        return describe(checked)
    lines = ["relations:"]
    lines += [f"  {schema}" for schema in checked.relations.values()]
    lines.append("strata (evaluation order):")
    lines += [f"  {stratum}" for stratum in checked.strata]
    if checked.outputs:
        lines.append(f"outputs: {', '.join(checked.outputs)}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# run


def run_run(args: argparse.Namespace) -> int:
    program = load_program(args.program, args.dialect, args.include_dirs, args.functors, args.macros)
    program.require_functors()
    checked = program.checked
    input_paths = parse_input_args(args.inputs, checked)
    from .query import checked_query

    for text in args.queries:  # a query that does not fit the program fails before any work
        checked_query(checked, text)
    plan = None
    if args.fact_dir is not None or args.output_dir is not None:  # Soufflé's files, checked first
        from .souffle_io import plan_io

        plan = plan_io(checked, args.fact_dir, args.output_dir, missing_ok=args.no_warn)
    # With Soufflé's files, stdout holds only what Soufflé prints: these lines go to stderr.
    say = (lambda text: print(text, file=sys.stderr)) if plan is not None else print
    say(
        f"{args.program}: {len(checked.relations)} relations in {len(checked.strata)} strata; "
        f"engine {args.engine}"
    )
    started = time.perf_counter()
    if args.engine == "reference":
        run_reference(program, checked, input_paths, args.show, args.max_iterations, args.queries, plan)
    else:
        limits = (args.show, args.max_iterations)
        run_spark(program, checked, input_paths, *limits, args.queries, plan, args.jobs)
    say(f"done in {time.perf_counter() - started:.1f} s")
    return EXIT_OK


def run_reference(
    program, checked, input_paths: dict, show: int, max_iterations: int, queries=(), plan=None
) -> None:
    """Evaluate on the reference interpreter; with ``plan`` (``souffle_io.IOPlan``) read the
    ``.input`` files and write the outputs as Soufflé does (``--input`` wins over a file)."""
    from . import reference
    from .query import checked_query

    edb = {name: read_csv_facts(path, checked.relations[name]) for name, path in input_paths.items()}
    if plan is not None:
        from .souffle_io import read_fact_file

        for source in plan.inputs:
            if source.relation not in input_paths:
                edb.setdefault(source.relation, set()).update(read_fact_file(source))
    if queries:
        for text in queries:
            answers = reference.answer(program, text, edb, magic="auto", max_iterations=max_iterations)
            print_reference_answers(checked_query(checked, text), answers, show)
        return
    result = reference.evaluate(program, edb, max_iterations=max_iterations)
    if plan is not None:
        from .souffle_io import write_output

        for target in plan.outputs:
            facts = result.get(target.relation, set())
            write_output(target, sorted_rows(facts), len(facts), print)
    else:
        for name in checked.outputs:
            facts = result.get(name, set())
            print_relation(name, len(facts), sorted_rows(facts)[:show], program.relations[name].types)
    for query in checked.queries:  # the program's own ?- lines, from the relations computed
        answers = reference.answer(program, query, edb, max_iterations=max_iterations)
        print_reference_answers(checked_query(checked, query), answers, show)


def print_reference_answers(query, answers: set, show: int) -> None:
    """Print the reference's answer rows (``{(True,)}``/``{(False,)}`` for a yes/no question)."""
    if query.is_ground:
        print_answers(query.text, (), int(next(iter(answers))[0]), [])
    else:
        rows = sorted_rows(answers)[:show]
        print_answers(query.text, query.variables, len(answers), rows, query.types)


@contextmanager
def cli_session(name: str, delta: bool = True, cores: Optional[int] = None) -> Iterator["SparkSession"]:
    """A local Spark session for one command, stopped at the end unless it was running before
    (a caller's or a test's session is never stopped, nor reconfigured). ``delta``: load the
    delta-spark jar (a command that reads or writes a warehouse); Spark's resolver prints its
    report on start. ``cores``: the local cores (``-j``; 0: all of them; default 2)."""
    from pyspark.sql import SparkSession

    from .spark.session import local_session

    already_running = SparkSession.getActiveSession() is not None
    if cores is None:
        spark = local_session(name, delta=delta)
    else:
        master = f"local[{'*' if cores == 0 else cores}]"
        spark = local_session(name, cores or os.cpu_count() or 2, master, delta=delta)
    try:
        yield spark
    finally:
        if not already_running:
            spark.stop()


def run_spark(
    program,
    checked,
    input_paths: dict,
    show: int,
    max_iterations: int,
    queries=(),
    plan=None,
    cores: Optional[int] = None,
) -> None:
    """Evaluate on local Spark (``cores`` as :func:`cli_session` takes them); ``plan`` as for
    :func:`run_reference`."""
    from .query import checked_query

    with cli_session("spark-datalog run", delta=False, cores=cores) as spark:  # no warehouse: no Delta
        # Read like every CSV input of the engine (storage.locations): typed, checked, multi-line.
        inputs: dict = {name: (path, "csv") for name, path in input_paths.items()}
        if plan is not None:
            from .souffle_io import spark_input_frames

            inputs.update(spark_input_frames(spark, checked, plan, skip=set(input_paths)))
        if queries:
            for text in queries:
                frame = program.query(spark, text, inputs=inputs, max_iterations=max_iterations)
                print_answer_frame(text, frame, show, checked_query(checked, text).types)
            return
        from .spark.labels import group_id, labelled

        result = program.materialize(spark, inputs=inputs, max_iterations=max_iterations)
        if plan is not None:
            write_souffle_outputs(spark, result, plan)
            for query, frame in zip(checked.queries, result.answers, strict=True):
                print_answer_frame(str(query.atom), frame, show, checked_query(checked, query).types)
            return
        for name in result.relations:
            frame = result[name]
            with labelled(spark, f"results · {name}", group_id("results")):
                rows = [tuple(row) for row in frame.orderBy(*frame.columns).limit(show).collect()]
                size = frame.count()
            print_relation(name, size, rows, program.relations[name].types)
        for query, frame in zip(checked.queries, result.answers, strict=True):
            print_answer_frame(str(query.atom), frame, show, checked_query(checked, query).types)


def write_souffle_outputs(spark, result, plan) -> None:
    """Write or print every output of ``plan`` from ``result`` (a ``Materialization``), in the
    driver: the rows of a file or stdout output are collected (sorted, as the reference writes
    them), a ``.printsize`` relation is counted."""
    from .souffle_io import write_output

    for target in plan.outputs:
        frame = result[target.relation]
        if target.kind == "printsize":
            write_output(target, (), frame.count(), print)
            continue
        rows = sorted_rows([tuple(row) for row in frame.toLocalIterator()])
        write_output(target, rows, len(rows), print)


def print_answer_frame(text: str, frame, show: int, types: Sequence[str] = ()) -> None:
    """Print a query's answer DataFrame (``Program.query``'s shape) like ``print_answers``;
    ``types``: its columns' types (``CheckedQuery.types``), when known."""
    if frame.columns == ["holds"]:
        print_answers(text, (), int(frame.first()[0]), [])
        return
    rows = [tuple(row) for row in frame.orderBy(*frame.columns).limit(show).collect()]
    print_answers(text, tuple(frame.columns), frame.count(), rows, types)


# ---------------------------------------------------------------------------------------------
# query


def add_query_command(commands) -> None:
    query = commands.add_parser(
        "query",
        help="answer a query from a materialized warehouse",
        description='Answer QUERY (like "tc(1, X)") from the warehouse. Without --program: a filtered '
        "read of the relation's stored table. With --program: the stored table when the warehouse "
        "holds that program's relations as its last run left them, else the program evaluated over "
        "the warehouse's input tables (magic sets where they apply).",
    )
    query.add_argument("query", metavar="QUERY")
    query.add_argument("--warehouse", required=True, metavar="WAREHOUSE")
    query.add_argument(
        "--program", metavar="PROGRAM.dl", help="the program the warehouse was materialized with"
    )
    query.add_argument(
        "--magic",
        choices=("auto", "on", "off"),
        default="auto",
        help="use the magic-set rewrite (default auto)",
    )
    query.add_argument(
        "--show",
        type=_non_negative,
        default=DEFAULT_SHOW,
        metavar="N",
        help=f"answers to print (default {DEFAULT_SHOW})",
    )
    add_dialect_argument(query)
    add_preprocessor_arguments(query)
    add_logging_arguments(query)
    query.set_defaults(handler=run_query)


def run_query(args: argparse.Namespace) -> int:
    from .query import checked_query
    from .storage import Warehouse

    program, types = None, ()
    if args.program:
        program = load_program(args.program, args.dialect, args.include_dirs, args.functors, args.macros)
        program.require_functors()
        # a query that does not fit fails before Spark starts
        types = checked_query(program.checked, args.query).types
    with cli_session("spark-datalog query") as spark:
        warehouse = Warehouse(spark, args.warehouse)
        magic = {"auto": "auto", "on": True, "off": False}[args.magic]
        if program is None:
            frame = stored_relation_query(spark, warehouse, args.query)
        else:
            frame = program.query(spark, args.query, warehouse=warehouse, magic=magic)
        print_answer_frame(args.query.strip(), frame, args.show, types)
    return EXIT_OK


def stored_relation_query(spark, warehouse, text: str) -> "DataFrame":
    """``text`` answered by a filtered read of the warehouse's table of its relation (checked
    against the table's schema; an unknown relation is a ``SchemaError`` at the query)."""
    import spark_datalog as sd

    from .analysis import analyse
    from .query.text import parse_query
    from .syntax import ast

    name = parse_query(text).predicate
    declarations: tuple = ()
    inputs = {}
    if warehouse.exists(name):
        columns = tuple(ast.ColumnDecl(c, t) for c, t in warehouse.schema(name))
        declarations = (ast.Declaration(name, columns),)
        inputs = {name: warehouse.read(name)}
    program = sd.Program(analyse(ast.Program(declarations=declarations)))
    return program.query(spark, text, inputs=inputs)


# ---------------------------------------------------------------------------------------------
# materialize


def run_materialize(args: argparse.Namespace) -> int:
    job.run_job(job.resolve(args))
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# job-path


def add_job_path_command(commands) -> None:
    """``spark-datalog job-path [--example-config]``: where the packaged job's files are."""
    paths = commands.add_parser(
        "job-path",
        help="print the path of the packaged spark-submit job file",
        description="Print the absolute path of the materialize job's file inside the installed package, "
        'for spark-submit: spark-submit "$(spark-datalog job-path)" --config job.yaml. With '
        "--example-config, print the path of the bundled example job config instead.",
    )
    paths.add_argument(
        "--example-config",
        action="store_true",
        help="print the path of the bundled example job config (examples/example-job.yaml)",
    )
    paths.set_defaults(handler=run_job_path)


def run_job_path(args: argparse.Namespace) -> int:
    """Print the job file's (or the example config's) path on stdout."""
    from . import jobs

    print(jobs.example_config_path() if args.example_config else jobs.job_path())
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# unlock


def add_unlock_command(commands) -> None:
    unlock = commands.add_parser(
        "unlock",
        help="remove a warehouse's writer lock left by a crashed run",
        description="Print who holds the writer lock of the local warehouse WAREHOUSE (run id, pid, host, "
        "since when) and remove it: for a lock left by another host or by a dead process. Refused "
        "(exit status 1) while a live process of this host holds it, unless --force.",
    )
    unlock.add_argument("warehouse", metavar="WAREHOUSE")
    unlock.add_argument(
        "--force", action="store_true", help="remove the lock even while a live process of this host holds it"
    )
    unlock.set_defaults(handler=run_unlock)


def run_unlock(args: argparse.Namespace) -> int:
    """Remove the warehouse lock; exit 0 also when there was none (see the module docstring)."""
    import os

    from .errors import WarehouseError
    from .storage import uris
    from .storage.runs import WarehouseLock

    root = uris.normalise(args.warehouse)
    if not uris.is_local(root):
        print(f"{root}: warehouses on object stores have no lock")
        return EXIT_OK
    if not os.path.isdir(root):
        raise WarehouseError(f"no warehouse at {root}")
    holder = WarehouseLock(root).unlock(force=args.force)
    if holder is None:
        print(f"{root}: not locked")
    else:
        print(f"{root}: removed the lock of {holder.describe()}")
    return EXIT_OK


def load_program(
    path: str,
    dialect: str = "datalog",
    include_dirs: Sequence[str] = (),
    functors: Optional[Sequence[str]] = None,
    macros: Optional[Sequence[str]] = None,
) -> "Program":
    """The checked program in ``path`` read in ``dialect`` (``#include`` searching
    ``include_dirs`` after the including file's directory, ``macros`` (``-M "N=10 DEBUG"``)
    defined first), its user-defined functors bound as ``functors`` (``--functor
    NAME=module:function``) say; a missing or unreadable file, a bad ``--functor`` or ``-M``
    are usage errors."""
    import spark_datalog as sd

    defined = job.parse_macros(macros or ())
    try:
        program = sd.Program.from_file(path, dialect, include_dirs, macros=defined)
    except OSError as err:
        raise UsageError(f"cannot read {path}: {err.strerror or err}") from err
    job.bind_functors(program, job.parse_functors(functors or ()))
    return program


def parse_input_args(items: Sequence[str], checked) -> dict:
    """``["arc=arcs.csv", ...]`` -> ``{"arc": "arcs.csv"}``, each naming an EDB relation."""
    paths: dict = {}
    for item in items:
        name, sep, path = item.partition("=")
        name, path = name.strip(), path.strip()
        if not sep or not name or not path:
            raise UsageError(f"--input expects NAME=PATH.csv, got {item!r}")
        name = checked.input_relation(name)  # `.input r` with rules: its input relation
        schema = checked.relations.get(name)
        if schema is None:
            known = ", ".join(checked.edb) or "none"
            raise UsageError(f"--input {name}: the program has no relation {name!r} (EDB relations: {known})")
        if schema.kind != "edb":
            raise UsageError(f"--input {name}: {name!r} is derived by rules, not an input relation")
        if name in paths:
            raise UsageError(f"--input {name} given twice")
        paths[name] = path
    return paths


# ---------------------------------------------------------------------------------------------
# CSV inputs


def read_csv_facts(path: str, schema) -> set:
    """Facts of ``schema``'s relation from a UTF-8 CSV file with a header row, converted to its
    column types. Columns are matched as for every CSV input (``storage.locations``): by name
    when the header has every declared column, else by position. Quoted fields may span lines.

    The one CSV reader besides Spark's (``storage.locations.read_csv``, used by the engine, the
    job and ``run --engine spark``): ``run --engine reference`` checks a program against the
    reference interpreter without starting a JVM, so it cannot use Spark's reader; it shares
    its column matching and its value rules (numbers trimmed and range-checked, ``true``/``false``
    for bools, an empty field a null)."""
    from .storage.locations import match_columns
    from .textfiles import read_utf8

    try:
        text = read_utf8(path, InputError)
    except OSError as err:
        raise InputError(f"cannot read input {schema.name!r} from {path}: {err.strerror or err}") from err
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if not header:
        raise InputError(f"input {schema.name}: {path} has no header row with column names")
    chosen = match_columns(
        header, list(zip(schema.column_names, schema.types, strict=True)), schema.name, path
    )
    positions = list(range(len(header))) if chosen == header else [header.index(name) for name in chosen]
    facts, number = set(), reader.line_num + 1
    for row in reader:
        if row:
            if len(row) != len(header):
                raise InputError(f"{path}:{number}: the header has {len(header)} columns, the row {len(row)}")
            values = [row[i] for i in positions]
            facts.add(
                tuple(
                    convert_value(value, column, path, number)
                    for value, column in zip(values, schema.columns, strict=True)
                )
            )
        number = reader.line_num + 1  # a quoted field may span lines: the next record starts here
    return facts


def convert_value(text: str, column, path: str, line: int) -> "Value":
    """One CSV field as a value of ``column.type``; empty fields are nulls, which inputs may not hold."""
    where = f"{path}:{line}: column {column.name} ({column.type})"
    if text == "":
        raise InputError(f"{where}: empty value (null); inputs may not contain nulls")
    try:
        if column.type in ("int", "long"):
            value = int(text.strip())
            if not fits(value, column.type):
                raise InputError(f"{where}: {text!r} is out of the range of {column.type}")
            return value
        if column.type == "double":
            return float(text.strip())
        if column.type == "bool":
            lowered = text.strip().lower()
            if lowered in ("true", "false"):
                return lowered == "true"
            raise ValueError(text)
    except ValueError:
        raise InputError(f"{where}: {text!r} is not a {column.type}") from None
    return text


# ---------------------------------------------------------------------------------------------
# output


def print_answers(
    query: str, variables: Sequence[str], size: int, rows: Sequence[tuple], types: Sequence[str] = ()
) -> None:
    """``?- tc(1, X).`` with its number of answers and one ``X = 2, Y = 3`` line per answer;
    a question without variables prints ``true`` or ``false``."""
    print("\n".join(answer_lines(query, variables, size, rows, types)))


def answer_lines(
    query: str, variables: Sequence[str], size: int, rows: Sequence[tuple], types: Sequence[str] = ()
) -> list:
    """The lines ``print_answers`` prints, e.g. ``["?- tc(1, X). 1 answer", "  X = 2"]``; a
    recursive record (by ``types``) as ``[1, nil]``."""
    text = query if query.startswith("?-") else f"?- {query.rstrip('.')}."
    if not variables:
        return [f"{text} {'true' if size else 'false'}"]
    lines = [f"{text} {size} answer{'s' if size != 1 else ''}"]
    for row in rows:
        shown = zip(variables, typed_values(row, types), strict=True)
        lines.append("  " + ", ".join(f"{v} = {x}" for v, x in shown))
    if size > len(rows):
        lines.append(f"  ... {size - len(rows)} more")
    return lines


def print_relation(name: str, size: int, rows: Sequence[tuple], types: Sequence[str] = ()) -> None:
    """``name: 2 facts`` and a line per row; a recursive record (by ``types``) as ``[1, nil]``."""
    print(f"{name}: {size} fact{'s' if size != 1 else ''}")
    for row in rows:
        print(f"  {name}({', '.join(typed_values(row, types))})")
    if size > len(rows):
        print(f"  ... {size - len(rows)} more")


def typed_values(row: tuple, types: Sequence[str] = ()) -> list:
    """The printed values of ``row``: a recursive record (by ``types``, when given) in
    Soufflé's text, others by ``format_value``: ``typed_values(("nil",), ("@L[...]",))``."""
    from .recursive_records import is_recursive, text_of

    return [text_of(v, t) if t and is_recursive(t) else format_value(v) for v, t in zip_longest(row, types)]


def sorted_rows(facts) -> list:
    try:
        return sorted(facts)
    except TypeError:  # mixed value types in a column (only possible for untyped inputs)
        return sorted(facts, key=repr)


def format_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(value) if isinstance(value, float) else str(value)


def print_errors(err: DatalogError) -> None:
    errors = err.errors or [err]
    for error in errors:
        print(error.render(), file=sys.stderr)
    if len(errors) > 1:
        print(f"{len(errors)} errors", file=sys.stderr)


def _cores(text: str) -> int:
    """``-j``'s value: a positive number of cores, or ``auto`` (0: all of them)."""
    return 0 if text == "auto" else _positive(text)


def _positive(text: str) -> int:
    value = _non_negative(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be >= 0")
    return value


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("spark-datalog")
    except Exception:  # not installed (running from a source tree)
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
