"""The ``spark-datalog`` command: check a program, or run it on local Spark or the reference engine.

Example::

    spark-datalog check spark_datalog/examples/graph.dl
    spark-datalog run spark_datalog/examples/graph.dl --engine reference --show 5
    spark-datalog run prog.dl --input arc=arcs.csv
    spark-datalog materialize --config conf/example-job.yaml

Exit status: 0 on success, 1 when the program or its inputs are wrong (a ``DatalogError``), 2 on a
usage error (bad arguments, unreadable program file).
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from typing import Optional, Sequence

from . import job
from .errors import DatalogError, InputError
from .overflow import fits

EXIT_OK = 0
EXIT_PROGRAM_ERROR = 1
EXIT_USAGE = 2

DEFAULT_SHOW = 10


class UsageError(Exception):
    """A command-line mistake: reported on stderr with exit status 2."""


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``) and return the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse exits on --help (0) and on usage errors (2)
        return int(exit_.code or 0)
    try:
        return args.handler(args)
    except UsageError as err:
        print(f"spark-datalog: {err}", file=sys.stderr)
        return EXIT_USAGE
    except DatalogError as err:
        print_errors(err)
        return EXIT_PROGRAM_ERROR


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
    check.set_defaults(handler=run_check)

    run = commands.add_parser(
        "run",
        help="evaluate a program and print the derived relations",
        description="Check and evaluate PROGRAM, then print each output relation's size and first rows.",
    )
    run.add_argument("program", metavar="PROGRAM.dl")
    run.add_argument(
        "--input",
        dest="inputs",
        action="append",
        default=[],
        metavar="NAME=PATH.csv",
        help="facts of EDB relation NAME from a CSV file with a header row (columns by position); repeatable",
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
    run.set_defaults(handler=run_run)

    materialize = commands.add_parser(
        "materialize",
        help="materialize a program into a warehouse of Delta tables",
        description="Check the program, read its inputs, evaluate it on Spark and commit every relation "
        "into the warehouse; print relations, facts, Delta versions and time per "
        "stratum. The same job as `spark-submit jobs/materialize.py`.",
    )
    job.add_job_arguments(materialize)
    materialize.set_defaults(handler=run_materialize)
    return parser


# ---------------------------------------------------------------------------------------------
# check


def run_check(args: argparse.Namespace) -> int:
    program = load_program(args.program)
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
    program = load_program(args.program)
    checked = program.checked
    input_paths = parse_input_args(args.inputs, checked)
    print(
        f"{args.program}: {len(checked.relations)} relations in {len(checked.strata)} strata; "
        f"engine {args.engine}"
    )
    started = time.perf_counter()
    if args.engine == "reference":
        run_reference(program, checked, input_paths, args.show)
    else:
        run_spark(program, checked, input_paths, args.show)
    print(f"done in {time.perf_counter() - started:.1f} s")
    return EXIT_OK


def run_reference(program, checked, input_paths: dict, show: int) -> None:
    from . import reference

    edb = {name: read_csv_facts(path, checked.relations[name]) for name, path in input_paths.items()}
    result = reference.evaluate(program, edb)
    for name in checked.outputs:
        facts = result.get(name, set())
        print_relation(name, len(facts), sorted_rows(facts)[:show])


def run_spark(program, checked, input_paths: dict, show: int) -> None:
    from pyspark.sql import SparkSession

    from .spark.session import local_session

    already_running = SparkSession.getActiveSession() is not None
    spark = local_session("spark-datalog run")
    try:
        # read as located inputs: each field is parsed as its column's type, and one that does
        # not parse or is out of the type's range is an InputError naming it
        inputs = {name: (path, "csv") for name, path in input_paths.items()}
        result = program.materialize(spark, inputs=inputs)
        for name in result.relations:
            frame = result[name]
            rows = [tuple(row) for row in frame.orderBy(*frame.columns).limit(show).collect()]
            print_relation(name, frame.count(), rows)
    finally:
        if not already_running:  # never stop a session the caller (or a test) owns
            spark.stop()


# ---------------------------------------------------------------------------------------------
# materialize


def run_materialize(args: argparse.Namespace) -> int:
    try:
        settings = job.resolve(args)
    except job.UsageError as err:
        raise UsageError(str(err)) from None
    return job.execute(settings, prog="spark-datalog materialize")


def load_program(path: str):
    """The checked program in ``path``; a missing or unreadable file is a usage error."""
    import spark_datalog as sd

    try:
        return sd.Program.from_file(path)
    except OSError as err:
        raise UsageError(f"cannot read {path}: {err.strerror or err}") from err


def parse_input_args(items: Sequence[str], checked) -> dict:
    """``["arc=arcs.csv", ...]`` -> ``{"arc": "arcs.csv"}``, each naming an EDB relation."""
    paths: dict = {}
    for item in items:
        name, sep, path = item.partition("=")
        name, path = name.strip(), path.strip()
        if not sep or not name or not path:
            raise UsageError(f"--input expects NAME=PATH.csv, got {item!r}")
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
    """Facts of ``schema``'s relation from a CSV file with a header row, converted to its column types."""
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
    except OSError as err:
        raise InputError(f"cannot read input {schema.name!r} from {path}: {err.strerror or err}") from err
    facts = set()
    for number, row in enumerate(rows[1:], start=2):  # row 1 is the header
        if not row:
            continue
        if len(row) != schema.arity:
            raise InputError(
                f"{path}:{number}: {schema.name} has {schema.arity} columns, the row has {len(row)}"
            )
        facts.add(
            tuple(convert_value(text, column, path, number) for text, column in zip(row, schema.columns, strict=True))
        )
    return facts


def convert_value(text: str, column, path: str, line: int):
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


def print_relation(name: str, size: int, rows: Sequence[tuple]) -> None:
    print(f"{name}: {size} fact{'s' if size != 1 else ''}")
    for row in rows:
        print(f"  {name}({', '.join(format_value(v) for v in row)})")
    if size > len(rows):
        print(f"  ... {size - len(rows)} more")


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
