"""The materialize job: a program, its inputs and a warehouse in; Delta tables and a summary out.

Shared by the spark-submit entry point ``jobs/materialize.py`` and ``spark-datalog materialize``::

    spark-submit jobs/materialize.py --config conf/example-job.yaml
    spark-submit jobs/materialize.py --program prog.dl --input arc=data/arcs.csv \\
        --input node=s3a://lake/nodes:delta --warehouse /data/wh --run-id 2024-06-01
    spark-submit jobs/materialize.py --mode incremental --program prog.dl --warehouse /data/wh \\
        --changes arc=data/arc_changes.parquet --method auto

``--mode incremental`` folds changes of the EDB relations into the warehouse's derived tables
(``Program.update``): ``--changes NAME=URI[:FORMAT]`` gives a change set (the relation's
columns plus a signed ``_count``; without ``_count`` every row inserts one copy); ``--input
NAME=URI[:FORMAT]`` gives the relation's new contents, whose difference with the stored table is
the change; without either, each Delta input's changes since the version the warehouse last
consumed are used. When some relations get explicit changes (``--changes`` or ``--input``),
the others are taken as unchanged.

After the run (either mode) the job answers the program's ``?-`` lines and the queries the job
names (``--query QUERY[=URI[:FORMAT]]``, repeatable, or the config's ``queries`` list) from the
warehouse's tables, prints them in the summary, and writes each query given a location there
(Delta, Parquet or CSV with a header; replaced on every run)::

    spark-submit jobs/materialize.py --config conf/example-job.yaml \\
        --query "reach(lis, X)=out/reach_from_lis:delta" --query "hub(fra)"

The location follows the first ``=`` outside parentheses and quotes; without one the answers
are only printed. A query text that does not fit the program exits 1 before any Spark work.

``--facts-dir URI`` / ``--output-dir URI`` (``facts_dir`` / ``output_dir``) are Soufflé's ``-F``
and ``-D``: ``.input`` relations read from their fact files there, ``.output`` relations also
written there as Soufflé writes them (``souffle_io``), on any file system Spark reads.

Settings come from a YAML config (``--config``) and from flags; flags win. The config file has
the flags' keys (``run_id`` or ``run-id``; ``input``/``inputs`` a mapping, ``output``/``outputs``
a list) and relative paths in it are taken relative to the config file's directory, so a job
runs the same from any working directory (a scheduler's, for instance).

The summary goes to stdout; progress goes to stderr as the job runs (``--quiet``, ``--verbose``,
``--log-level``: ``logsetup``).

The program is parsed and checked before Spark starts: a wrong program exits 1 without a JVM.
Exit status: 0 success, 1 a ``DatalogError`` (program, inputs, warehouse) or a file that cannot
be read or written, 2 a usage error (flags, config file), 141 the output's reader went away
(see ``cli.report_failures``).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Mapping, Optional, Sequence, Union, get_args

from . import progress
from .bounds import MAX_ITERATIONS
from .logsetup import add_logging_arguments, logging_from

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from .program import Program
    from .souffle_io import IOPlan
    from .storage import Warehouse

EXIT_OK = 0
EXIT_PROGRAM_ERROR = 1
EXIT_USAGE = 2

# The choices of flags and config keys (the config's model, ``job_config``, takes the Literals).
Mode = Literal["full", "incremental"]
Method = Literal["auto", "dred", "counting", "recompute"]
Strategy = Literal["seminaive", "naive"]
OnNull = Literal["error", "drop"]
Dialect = Literal["datalog", "souffle"]  # ast.DIALECTS
Format = Literal["delta", "parquet", "csv"]
MODES, METHODS, STRATEGIES = get_args(Mode), get_args(Method), get_args(Strategy)
ON_NULL, FORMATS = get_args(OnNull), get_args(Format)
# A catalog database's name (``--database``): a plain identifier, as ``storage.catalog`` wants.
IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_]*$"
DEFAULT_SHOW = 10

# Only a trailing ":delta", ":parquet" or ":csv" names a format: URIs have colons of their own
# (s3a://bucket/x, C:\data\x.csv).
_FORMAT_SUFFIX = re.compile(r"^(?P<uri>.+):(?P<format>delta|parquet|csv)$", re.IGNORECASE)
_HAS_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_WINDOWS_ABSOLUTE = re.compile(r"^[A-Za-z]:[\\/]")


class UsageError(Exception):
    """A mistake in the job's flags or config file: reported with exit status 2."""


@dataclass(frozen=True)
class InputSpec:
    """Where an EDB relation's facts come from: a URI and an optional format (else guessed)."""

    uri: str
    format: Optional[str] = None

    def location(self) -> Union[str, tuple[str, str]]:
        """The ``inputs`` value ``Program.materialize`` takes: ``uri`` or ``(uri, format)``."""
        return self.uri if self.format is None else (self.uri, self.format)

    def __str__(self) -> str:
        return self.uri if self.format is None else f"{self.uri}:{self.format}"


@dataclass(frozen=True)
class JobArgs:
    """The resolved settings of one job run (config file merged with flags, defaults applied)."""

    program: str
    warehouse: Optional[str] = None  # None: the catalog database's location (``database``)
    inputs: Mapping[str, InputSpec] = field(default_factory=dict)
    outputs: tuple = ()  # relations to report and show; () = the program's outputs
    run_id: Optional[str] = None  # None = a timestamp-based id, chosen when the job runs
    mode: str = "full"
    replace: bool = False
    strategy: str = "seminaive"
    decompose: bool = True  # partition-local fixpoints where a stratum decomposes
    max_iterations: Optional[int] = MAX_ITERATIONS
    checkpoint_interval: int = 10
    on_null: str = "error"
    show: int = DEFAULT_SHOW
    config: Optional[str] = None
    changes: Mapping[str, InputSpec] = field(default_factory=dict)  # incremental mode only
    method: str = "auto"  # incremental mode only
    queries: tuple = ()  # QuerySpec: answered after the run, written where they say
    database: Optional[str] = None  # relations also registered as tables of this catalog database
    # Soufflé's -F and -D: .input relations read from <facts_dir>/<rel>.facts (full mode), .output
    # relations also written to <output_dir>/<rel>.csv, as their directives say (``souffle_io``)
    facts_dir: Optional[str] = None
    output_dir: Optional[str] = None
    dialect: str = "datalog"  # souffle: lower-case names in the program's terms are variables
    # user-defined functor -> module:function, or spark:name (a Spark SQL function)
    functors: Mapping[str, str] = field(default_factory=dict)
    # Soufflé's -M: preprocessor macros defined before the program is read (name -> value)
    macros: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class QuerySpec:
    """A query the job answers (``tc(1, X)``) and where its answers go (``None``: printed only).

    Example: ``QuerySpec("tc(1, X)", InputSpec("out/tc1", "parquet"))``.
    """

    text: str
    to: Optional[InputSpec] = None

    def __str__(self) -> str:
        return self.text if self.to is None else f"{self.text}={self.to}"


@dataclass
class RelationSummary:
    name: str
    kind: str  # 'edb' or 'idb'
    facts: int  # present facts in the warehouse after the run
    version: Optional[int]


@dataclass
class StratumSummary:
    index: int
    relations: tuple
    iterations: int
    seconds: float
    partitioned: bool = False  # ran as one job of partition-local fixpoints
    placement: str = ""  # where it ran and why (placement.Placement.explained)


@dataclass
class QuerySummary:
    """A query's answers after the run: their number (a yes/no question: ``True``/``False``),
    the first rows, where they were written (``"uri (format)"``) and how they were read."""

    text: str
    variables: tuple  # () for a yes/no question
    answers: Union[int, bool]
    rows: list = field(default_factory=list)
    written: Optional[str] = None
    strategy: str = ""  # "stored" (a filtered read), "magic" or "full" (see query.plan)

    def lines(self) -> list:
        """``?- tc(1, X). 2 answers, written to out/tc1 (parquet)`` and ``  X = 2`` lines."""
        from .cli import answer_lines

        lines = answer_lines(self.text, self.variables, int(self.answers), self.rows)
        if self.written:
            lines[0] += f", written to {self.written}"
        return lines


# How the summary names a warehouse's commit path (``Warehouse.backend_name``).
DELTA_PATHS = {"native": "Delta: native, delta-spark", "embedded": "Delta: embedded, delta-rs"}


@dataclass
class JobSummary:
    """What a job run did: the relations written (facts, Delta versions) and where time went."""

    run_id: str
    program: str
    warehouse: str
    relations: list = field(default_factory=list)  # RelationSummary, program order
    strata: list = field(default_factory=list)  # StratumSummary, evaluation order
    seconds: float = 0.0  # the whole job, Spark start included
    rows: dict = field(default_factory=dict)  # relation -> first rows shown
    spark: str = ""  # Spark version and master
    update: Optional[object] = None  # incremental mode: the UpdateReport
    skipped: Optional[str] = None  # "already committed" / "unchanged" (Materialization.skipped)
    queries: list = field(default_factory=list)  # QuerySummary: the ?- lines, then the job's queries
    delta_path: str = ""  # the warehouse's commit path: "native" (delta-spark) or "embedded" (delta-rs)
    files: list = field(default_factory=list)  # "relation -> uri": the output_dir files written

    def render(self) -> str:
        """The summary printed at the end of a job."""
        lines = [
            f"run {self.run_id}: {self.program} -> {self.warehouse}"
            + (f" [{DELTA_PATHS.get(self.delta_path, self.delta_path)}]" if self.delta_path else "")
            + (f" (Spark {self.spark})" if self.spark else ""),
        ]
        if self.skipped == "already committed":
            lines.append(f"run {self.run_id} is already committed: nothing done; the versions it produced:")
        elif self.skipped == "unchanged":
            lines.append(
                "the program and its input versions are those of the last committed run: run recorded, "
                "nothing evaluated or written"
            )
        lines.append(f"{'relation':<24} {'kind':<4} {'facts':>10} {'version':>8}")
        for rel in self.relations:
            version = "-" if rel.version is None else str(rel.version)
            lines.append(f"{rel.name:<24} {rel.kind:<4} {rel.facts:>10} {version:>8}")
        if self.strata:
            lines.append("strata:")
            for st in self.strata:
                lines.append(
                    f"  {st.index}: {', '.join(st.relations):<40} "
                    f"{st.iterations:>4} iteration{'s' if st.iterations != 1 else ' '} "
                    f"{'(partition-local)' if st.partitioned else '':<17} "
                    f"{st.seconds:8.2f} s"
                )
                if st.placement:
                    lines.append(f"     {st.placement}")
        if self.update is not None:
            lines.append(str(self.update))
        for name, rows in self.rows.items():
            facts = next((r.facts for r in self.relations if r.name == name), len(rows))
            lines.append(f"{name}: {facts} fact{'s' if facts != 1 else ''}")
            lines += [f"  {name}({', '.join(_format_value(v) for v in row)})" for row in rows]
            if facts > len(rows):
                lines.append(f"  ... {facts - len(rows)} more")
        for query in self.queries:
            lines += query.lines()
        if self.files:
            lines.append("output files (Soufflé's -D):")
            lines += [f"  {line}" for line in self.files]
        lines.append(f"done in {self.seconds:.1f} s")
        return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# arguments and config


def add_job_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the job's flags to ``parser`` (shared with ``spark-datalog materialize``).

    Every default is ``None`` so that a flag not given leaves the config file's value alone.
    """
    _add_data_arguments(parser.add_argument)
    _add_run_arguments(parser.add_argument)
    _add_evaluation_arguments(parser.add_argument)
    _add_query_arguments(parser.add_argument)
    add_logging_arguments(parser)
    return parser


def _add_data_arguments(add) -> None:
    """The program, its inputs and where the results go."""
    add("--config", metavar="FILE.yaml", help="YAML job config; flags override its keys")
    add("--program", metavar="PATH.dl", help="the Datalog program")
    add(
        "--input",
        dest="inputs",
        action="append",
        metavar="NAME=URI[:FORMAT]",
        help="facts of EDB relation NAME from a Delta table, Parquet or CSV (with a header) at URI; "
        f"FORMAT one of {', '.join(FORMATS)} (default: guessed); repeatable",
    )
    add(
        "--facts-dir",
        metavar="URI",
        help="Soufflé's -F: read every .input relation from its fact file there (URI/NAME.facts, "
        "tab-separated, or as the directive's filename=, delimiter=, headers= say); --input wins",
    )
    add(
        "--output-dir",
        metavar="URI",
        help="Soufflé's -D: also write every .output relation there as Soufflé does (URI/NAME.csv, "
        "tab-separated, or as its directive says) and print IO=stdout outputs and .printsize "
        "sizes; '-' prints every output",
    )
    add(
        "--dialect",
        choices=("datalog", "souffle"),
        help="how lower-case names in the program's terms read: datalog (default), symbols; "
        "souffle, variables, as in Soufflé",
    )
    add_functor_argument(add)
    add_macro_argument(add)
    add("--warehouse", metavar="URI", help="the warehouse: a directory of Delta tables")
    add(
        "--database",
        type=_identifier,
        metavar="NAME",
        help="also register each relation as an external Delta table of Spark catalog database NAME "
        "(created when missing; native Delta path only); without --warehouse the tables go to the "
        "database's location",
    )
    add(
        "--output",
        dest="outputs",
        action="append",
        metavar="REL[,REL...]",
        help="relations to report and show (default: the program's outputs); repeatable",
    )
    add(
        "--run-id",
        metavar="ID",
        help="the run's id: re-running an unfinished run id resumes it (default: a timestamp)",
    )


def _add_run_arguments(add) -> None:
    """The run: full or incremental, its changes and id."""
    add(
        "--mode",
        choices=MODES,
        help="full (default): evaluate everything from the inputs; "
        "incremental: fold the inputs' changes into the warehouse",
    )
    add(
        "--changes",
        dest="changes",
        action="append",
        metavar="NAME=URI[:FORMAT]",
        help="incremental mode: the change set of EDB relation NAME (its columns and a signed "
        "_count); repeatable",
    )
    add("--method", choices=METHODS, help="incremental mode: maintenance algorithm (default auto)")
    add(
        "--replace",
        action="store_true",
        default=None,
        help="allow replacing a warehouse that holds another program's results",
    )


def _add_evaluation_arguments(add) -> None:
    """How the strata are evaluated."""
    add("--strategy", choices=STRATEGIES, help="fixpoint strategy (default seminaive)")
    add(
        "--no-decompose",
        dest="decompose",
        action="store_false",
        default=None,
        help="run every recursive stratum in rounds of Spark joins, also where it could run as "
        "one job of partition-local fixpoints",
    )
    add(
        "--max-iterations",
        type=_positive,
        metavar="N",
        help=f"bound on the iterations of each recursive stratum (default {MAX_ITERATIONS:,})",
    )
    add(
        "--checkpoint-interval",
        type=_positive,
        metavar="N",
        help="cut the lineage every N iterations (default 10)",
    )
    add("--on-null", choices=ON_NULL, help="input rows with nulls: error (default) or drop")


def _add_query_arguments(add) -> None:
    """Queries answered after the run, and what is printed."""
    add(
        "--query",
        dest="queries",
        action="append",
        metavar="QUERY[=URI[:FORMAT]]",
        help='answer QUERY (like "tc(1, X)") from the warehouse after the run and print the answers; '
        "with =URI also write them there (Delta, Parquet or CSV, as for --input; replaced on each "
        "run); the location follows the first = outside parentheses and quotes; repeatable",
    )
    add(
        "--show",
        type=_non_negative,
        metavar="N",
        help=f"rows to print per reported relation and query (default {DEFAULT_SHOW})",
    )


def build_parser(prog: str = "materialize") -> argparse.ArgumentParser:
    """The argument parser of the job's command line."""
    parser = argparse.ArgumentParser(
        prog=prog, description="Materialize a Datalog program into a warehouse of Delta tables."
    )
    return add_job_arguments(parser)


def parse_args(argv: Optional[Sequence[str]] = None) -> JobArgs:
    """Parse the command line (default ``sys.argv[1:]``), merge the config file, apply defaults.

    Raises ``UsageError`` for anything wrong with the flags or the config file; argparse's own
    errors (unknown flag, bad choice) exit with status 2 as usual.
    """
    namespace = build_parser().parse_args(argv)
    return resolve(namespace)


def resolve(namespace: argparse.Namespace) -> JobArgs:
    """``JobArgs`` from parsed flags: config file values first, flags over them, then defaults."""
    settings: dict = {}
    if namespace.config:
        settings = load_config(namespace.config)
    flags = {key: getattr(namespace, key, None) for key in _KEYS}
    flags.pop("config", None)
    if flags["inputs"] is not None:
        # Per relation: a flag replaces that relation's config entry, the others stay.
        flags["inputs"] = {**settings.get("inputs", {}), **parse_inputs(flags["inputs"])}
    if flags["changes"] is not None:
        flags["changes"] = {**settings.get("changes", {}), **parse_inputs(flags["changes"], "--changes")}
    if flags["functors"] is not None:  # per functor: a flag replaces the config's entry
        flags["functors"] = {**settings.get("functors", {}), **parse_functors(flags["functors"])}
    if flags["macros"] is not None:  # per name: a flag replaces the config's definition
        flags["macros"] = {**settings.get("macros", {}), **parse_macros(flags["macros"])}
    if flags["outputs"] is not None:
        flags["outputs"] = split_outputs(flags["outputs"])
    if flags["queries"] is not None:
        # Per query text: a flag replaces the config's entry for the same text, the others stay.
        flags["queries"] = merge_queries(settings.get("queries", ()), parse_queries(flags["queries"]))
    settings.update({key: value for key, value in flags.items() if value is not None})
    if not settings.get("program"):
        raise UsageError("no program given: pass --program or set 'program' in the config file")
    if not settings.get("warehouse") and not settings.get("database"):
        raise UsageError(
            "no warehouse given: pass --warehouse (or --database) or set 'warehouse' (or 'database') "
            "in the config file"
        )
    _check_mode_keys(settings)
    if settings.get("warehouse"):  # else checked once the database's location is known
        check_query_locations(settings.get("queries", ()), settings["warehouse"])
    return JobArgs(config=namespace.config, **settings)


def _check_mode_keys(settings: dict) -> None:
    """``UsageError`` for a setting the run's mode does not take."""
    if settings.get("mode", "full") != "incremental":
        for key in ("changes", "method"):
            if settings.get(key):
                raise UsageError(f"--{key} is for --mode incremental")
    elif settings.get("facts_dir"):
        raise UsageError("--facts-dir is for --mode full (an incremental run reads --changes or --input)")


_KEYS = (
    "program",
    "inputs",
    "warehouse",
    "outputs",
    "run_id",
    "mode",
    "replace",
    "strategy",
    "decompose",
    "max_iterations",
    "checkpoint_interval",
    "on_null",
    "show",
    "config",
    "changes",
    "method",
    "queries",
    "database",
    "facts_dir",
    "output_dir",
    "dialect",
    "functors",
    "macros",
)


def load_config(path: str) -> dict:
    """The settings of a YAML job config, checked (``job_config.JobConfig``), with relative paths
    made relative to its directory. Keys are those of the flags (``run_id`` or ``run-id``)."""
    import yaml

    from .errors import ParseError
    from .job_config import config_settings
    from .textfiles import read_utf8

    try:
        text = read_utf8(path, ParseError)
    except OSError as err:
        raise UsageError(f"cannot read the config file {path}: {err.strerror or err}") from None
    except ParseError as err:  # not UTF-8: with the line and column of the first bad byte
        raise UsageError(err.render()) from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise UsageError(f"{path} is not valid YAML: {err}") from None
    return config_settings(path, {} if raw is None else raw)


def parse_inputs(items: Sequence[str], flag: str = "--input") -> dict:
    """``["arc=data/arcs.csv", "node=s3a://lake/n:delta"]`` -> relation -> ``InputSpec``."""
    inputs: dict = {}
    for item in items:
        name, sep, location = item.partition("=")
        name, location = name.strip(), location.strip()
        if not sep or not name or not location:
            raise UsageError(f"{flag} expects NAME=URI[:FORMAT], got {item!r}")
        if name in inputs:
            raise UsageError(f"{flag} {name} given twice")
        inputs[name] = parse_location(location)
    return inputs


def add_functor_argument(add) -> None:
    """``--functor NAME=module:function`` (``add``: a parser's ``add_argument``)."""
    add(
        "--functor",
        dest="functors",
        action="append",
        metavar="NAME=MODULE:FUNCTION",
        help="bind the program's user-defined functor NAME (.functor NAME(...): ..., called @NAME(...)) "
        "to the Python function FUNCTION of MODULE (imported; mark it with spark_datalog.vectorized "
        "to have it called on pandas Series), or with NAME=spark:SQL_FUNCTION to the Spark SQL "
        "function SQL_FUNCTION (a built-in or one registered in the session); repeatable",
    )


def add_macro_argument(add, *short: str) -> None:
    """``--macro MACROS`` (Soufflé's ``-M``; ``add``: a parser's ``add_argument``)."""
    add(
        *short,
        "--macro",
        dest="macros",
        action="append",
        metavar="MACROS",
        help="Soufflé's -M: define preprocessor macros before the program is read, as #define "
        "does: 'N=10 DEBUG' (names separated by blanks, NAME=VALUE or NAME, which is 1); "
        "repeatable",
    )


def parse_macros(items: Sequence[str]) -> dict:
    """``["N=10 DEBUG", "MODE=fast"]`` -> ``{"N": "10", "DEBUG": "1", "MODE": "fast"}``: each
    item split at blanks, as Soufflé splits ``-M``; a later definition of a name wins, as in cpp.
    """
    from .syntax.preprocess import check_macros

    macros: dict = {}
    for item in items:
        for word in item.split():
            name, sep, value = word.partition("=")
            macros[name] = value if sep else "1"
    try:
        return dict(check_macros(macros))
    except ValueError as err:
        raise UsageError(f"--macro: {err}") from None


def parse_functors(items: Sequence[str]) -> dict:
    """``["inc=mylib.udfs:inc"]`` -> ``{"inc": "mylib.udfs:inc"}``."""
    functors: dict = {}
    for item in items:
        name, sep, reference = item.partition("=")
        name, reference = name.strip(), reference.strip()
        if not sep or not name or ":" not in reference:
            raise UsageError(f"--functor expects NAME=MODULE:FUNCTION, got {item!r}")
        if name in functors:
            raise UsageError(f"--functor {name} given twice")
        functors[name] = reference
    return functors


def bind_functors(program: "Program", references: Mapping[str, str], where: str = "--functor") -> None:
    """Bind ``program``'s user-defined functors to the functions ``references`` name
    (``module:function``, imported; ``spark:name``, a Spark SQL function); a reference that
    cannot be loaded, or a name the program does not declare, is a ``UsageError``."""
    from .errors import FunctorError
    from .user_functors import load_binding

    for name, reference in references.items():
        try:
            program.functor(name, load_binding(reference, ship=True))
        except ValueError as err:
            raise UsageError(f"{where} {name}: {err}") from None
        except FunctorError as err:
            raise UsageError(f"{where} {name}: {err.message}") from None


def parse_location(text: str) -> InputSpec:
    """``uri[:format]``: only a trailing ``:delta``, ``:parquet`` or ``:csv`` is a format."""
    match = _FORMAT_SUFFIX.match(text.strip())
    if match:
        return InputSpec(match["uri"], match["format"].lower())
    return InputSpec(text.strip())


# A query's tokens, enough to find the first "=" outside parentheses and quoted strings.
_QUERY_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[()=]|[^"()=]+')


def split_query(item: str) -> tuple:
    """``"tc(1, X)=out/tc1:parquet"`` -> ``("tc(1, X)", "out/tc1:parquet")``: the location
    follows the first ``=`` outside parentheses and quotes (``None`` without one)."""
    depth = 0
    for token in _QUERY_TOKEN.finditer(item):
        text = token.group()
        if text in "()":
            depth += 1 if text == "(" else -1
        elif text == "=" and depth <= 0:
            return item[: token.start()].strip(), item[token.end() :].strip()
    return item.strip(), None


def parse_queries(items: Sequence[str]) -> list:
    """``["tc(1, X)=out/tc1:delta", "tc(2, 3)"]`` -> ``QuerySpec``s (``--query`` flags)."""
    specs = []
    for item in items:
        text, location = split_query(item)
        if not text or location == "":
            raise UsageError(f"--query expects QUERY or QUERY=URI[:FORMAT], got {item!r}")
        specs.append(QuerySpec(text, None if location is None else parse_location(location)))
    return specs


def merge_queries(first: Sequence[QuerySpec], then: Sequence[QuerySpec], where: str = "--query") -> tuple:
    """``first`` with ``then`` over it: an entry of ``then`` replaces the one of ``first`` with the
    same text, the others are added in order. A text twice in ``then`` is a ``UsageError``."""
    merged = {spec.text: spec for spec in first}
    seen: set = set()
    for spec in then:
        if spec.text in seen:
            raise UsageError(f"{where}: the query {spec.text!r} is given twice")
        seen.add(spec.text)
        merged[spec.text] = spec
    return tuple(merged.values())


def check_query_locations(queries: Sequence[QuerySpec], warehouse: str) -> None:
    """Every query writes to its own location, outside the warehouse (a directory the job owns:
    a table there would pass for a relation, and replacing a directory holding it would delete it)."""
    from .storage import uris

    where = uris.location_key(warehouse).rstrip("/")
    taken: dict = {}
    for spec in queries:
        if spec.to is None:
            continue
        key = uris.location_key(spec.to.uri).rstrip("/")
        if key in taken:
            raise UsageError(f"the queries {taken[key]!r} and {spec.text!r} both write to {spec.to.uri}")
        taken[key] = spec.text
        if key == where or key.startswith(where + "/") or where.startswith(key + "/"):
            raise UsageError(
                f"query {spec.text!r}: {spec.to.uri} overlaps the warehouse {warehouse}; "
                "write answers outside it"
            )


def split_outputs(items: Sequence[str]) -> tuple:
    """``["tc,sg", "path"]`` -> ``("tc", "sg", "path")`` (order kept, duplicates dropped)."""
    names: list = []
    for item in items:
        for name in str(item).split(","):
            name = name.strip()
            if name and name not in names:
                names.append(name)
    if not names:
        raise UsageError("--output names no relation")
    return tuple(names)


def relative_to(location: str, base: Path) -> str:
    """``location`` made relative to ``base`` when it is a relative local path."""
    if (
        _HAS_SCHEME.match(location)
        or location.startswith("file:")
        or _WINDOWS_ABSOLUTE.match(location)
        or os.path.isabs(location)
    ):
        return location
    return os.path.normpath(base / location)


def default_run_id() -> str:
    """A timestamp-based run id, e.g. ``20240601T120000.123456Z``."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")


# ---------------------------------------------------------------------------------------------
# running


def load_program(args: JobArgs) -> "tuple[Program, tuple]":
    """The checked program and the relations to report, all checked before Spark starts.

    Raises ``DatalogError`` for a wrong program and ``UsageError`` for an unreadable file or
    inputs/outputs naming relations the program cannot take or produce.
    """
    import spark_datalog as sd

    try:
        program = sd.Program.from_file(args.program, args.dialect, macros=args.macros)
    except OSError as err:
        raise UsageError(f"cannot read the program {args.program}: {err.strerror or err}") from None
    bind_functors(program, args.functors, "functors:" if args.config else "--functor")
    program.require_functors()
    relations = program.checked.relations
    for flag, names in (("--input", args.inputs), ("--changes", args.changes)):
        for name in names:
            schema = relations.get(program.checked.input_relation(name))
            if schema is None:
                edb = ", ".join(n for n, s in relations.items() if s.kind == "edb") or "none"
                raise UsageError(
                    f"{flag} {name}: the program has no relation {name!r} (EDB relations: {edb})"
                )
            if schema.kind != "edb":
                raise UsageError(f"{flag} {name}: {name!r} is derived by rules, not an input relation")
    both = sorted(set(args.inputs) & set(args.changes))
    if both:
        raise UsageError(f"{', '.join(both)}: give either --input (new contents) or --changes, not both")
    outputs = args.outputs or tuple(program.outputs)
    unknown = [name for name in outputs if name not in relations]
    if unknown:
        raise UsageError(
            f"--output: the program has no relation {', '.join(map(repr, unknown))} "
            f"(relations: {', '.join(relations)})"
        )
    checked = program.checked
    skipped = [name for name in outputs if name not in checked.demanded and name not in checked.edb]
    if skipped:  # .output decides what is computed: these are not
        raise UsageError(
            f"--output: {', '.join(map(repr, skipped))} is not computed: the program's .output "
            f"({', '.join(checked.outputs)}) does not depend on it"
        )
    check_queries(program, args.queries)
    return program, outputs


def souffle_plan(program, args: JobArgs) -> "Optional[IOPlan]":
    """The ``souffle_io.IOPlan`` of ``args.facts_dir`` / ``args.output_dir`` (``None`` without
    either): a ``DirectiveError`` for an unsupported directive, before Spark starts."""
    if args.facts_dir is None and args.output_dir is None:
        return None
    from .souffle_io import plan_io

    plan = plan_io(program.checked, args.facts_dir, args.output_dir, stdin=False)
    if args.facts_dir is None:  # inputs as before: only the outputs are Soufflé's
        plan = type(plan)((), plan.outputs)
    if args.output_dir is None:  # the warehouse only: no file written, nothing printed
        plan = type(plan)(plan.inputs, ())
    return plan


def check_queries(program, queries: Sequence[QuerySpec]) -> None:
    """Raise the ``DatalogError`` (with its caret) of the first query that does not fit ``program``
    (syntax, unknown relation, arity, types), before anything is evaluated."""
    from .query import checked_query

    for spec in queries:
        checked_query(program.checked, spec.text)


def run_job(args, spark=None, out=None) -> JobSummary:
    """Run the job described by ``args`` (``JobArgs``, or a command line to parse).

    The program is checked first (``DatalogError``/``UsageError`` before any Spark work). With
    ``spark`` the given session is used and left running; otherwise the active session, a
    spark-submit session, or a new local one (stopped at the end when this job started it).
    The summary is printed to ``out`` (default stdout; ``False`` for silence) and returned.
    """
    if not isinstance(args, JobArgs):
        args = parse_args(args)
    started = time.perf_counter()
    program, outputs = load_program(args)
    plan = souffle_plan(program, args)
    run_id = args.run_id or default_run_id()

    progress.step("run %s: %s -> %s (%s)", run_id, args.program, args.warehouse, args.mode)
    own_session = spark is None and _active_session() is None
    if spark is None:
        spark = get_session()
    progress.step("Spark %s, master %s", spark.version, spark.sparkContext.master)
    try:
        run = _update if args.mode == "incremental" else _materialize
        summary = run(spark, program, outputs, args, run_id, plan)
    finally:
        if own_session:
            spark.stop()
    summary.seconds = time.perf_counter() - started
    if out is not False:
        print(summary.render(), file=out or sys.stdout, flush=True)
    return summary


def _materialize(spark, program, outputs, args: JobArgs, run_id: str, plan=None) -> JobSummary:
    warehouse = open_warehouse(spark, args)
    inputs: dict = {name: spec.location() for name, spec in args.inputs.items()}
    if plan is not None and plan.inputs:
        from .souffle_io import spark_input_frames

        given = {program.checked.input_relation(name) for name in args.inputs}
        inputs.update(spark_input_frames(spark, program.checked, plan, skip=given))
    result = program.materialize(
        spark,
        inputs=inputs,
        strategy=args.strategy,
        max_iterations=args.max_iterations,
        checkpoint_interval=args.checkpoint_interval,
        on_null=args.on_null,
        warehouse=warehouse,
        run_id=run_id,
        replace=args.replace,
        decompose=args.decompose,
    )
    summary = JobSummary(
        run_id=run_id,
        program=args.program,
        warehouse=warehouse.root,
        delta_path=warehouse.backend_name,
        spark=f"{spark.version}, {spark.sparkContext.master}",
    )
    kinds = {name: schema.kind for name, schema in program.checked.relations.items()}
    written = [n for n in program.checked.relations if n in result.warehouse_versions]
    written += sorted(set(result.warehouse_versions) - set(written))
    for name in written:
        version = result.warehouse_versions[name]
        with _labelled(spark, f"summary · {name}", "summary"):
            facts = warehouse.read(name, version=version).count()
        summary.relations.append(RelationSummary(name, kinds.get(name, "?"), facts, version))
    summary.strata = [stratum_summary(stats) for stats in result.stats]
    summary.skipped = result.skipped
    if plan is not None:
        summary.files = write_souffle_outputs(spark, plan, lambda name: result[name])
    _show(summary, warehouse, outputs, args.show, result.warehouse_versions)
    summary.queries = answer_queries(spark, program, warehouse, args)
    return summary


def open_warehouse(spark, args: JobArgs) -> "Warehouse":
    """The job's warehouse: at ``args.warehouse`` (else the location of ``args.database``), its
    relations registered in the catalog database ``args.database`` when one is given."""
    from .storage import Warehouse

    warehouse = Warehouse(spark, args.warehouse, database=args.database)
    if args.warehouse is None:  # the location is known only now
        check_query_locations(args.queries, warehouse.root)
    return warehouse


def write_souffle_outputs(spark, plan, frame_of) -> list:
    """Write (or print) every output of ``plan``, the relation's rows from ``frame_of(name)``;
    the files written, as ``"relation -> uri"`` lines of the summary."""
    from .souffle_io import write_output_frame

    written = []
    for target in plan.outputs:
        with _labelled(spark, f"output · {target.relation}", "output"):
            write_output_frame(spark, frame_of(target.relation), target, out=print)
        if target.kind in ("file", "sqlite"):
            progress.step("wrote %s to %s", target.relation, target.uri)
            written.append(f"{target.relation} -> {target.uri}")
    return written


def _update(spark, program, outputs, args: JobArgs, run_id: str, plan=None) -> JobSummary:
    """``--mode incremental``: ``Program.update`` with the changes the flags name."""
    from .incremental import update

    warehouse = open_warehouse(spark, args)
    changes = {}
    if warehouse.committed_run(run_id) is None:  # a committed run id reads nothing (update says so)
        changes = {
            name: read_changes(spark, program, name, spec, warehouse) for name, spec in args.changes.items()
        }
        for name, spec in args.inputs.items():
            changes[name] = snapshot_change(spark, program, warehouse, name, spec)
    report = update(
        program,
        spark,
        warehouse,
        changes=changes or None,
        method=args.method,
        run_id=run_id,
        max_iterations=args.max_iterations,
        checkpoint_interval=args.checkpoint_interval,
        decompose=args.decompose,
    )
    summary = JobSummary(
        run_id=report.run_id,
        program=args.program,
        warehouse=warehouse.root,
        delta_path=warehouse.backend_name,
        spark=f"{spark.version}, {spark.sparkContext.master}",
        update=report,
    )
    kinds = {name: schema.kind for name, schema in program.checked.relations.items()}
    for name, entry in report.relations.items():
        with _labelled(spark, f"summary · {name}", "summary"):
            facts = warehouse.read(name, version=entry.version_after).count()
        summary.relations.append(RelationSummary(name, kinds.get(name, "?"), facts, entry.version_after))
    if plan is not None:
        summary.files = write_souffle_outputs(spark, plan, lambda name: warehouse.read(name))
    _show(summary, warehouse, outputs, args.show)
    summary.queries = answer_queries(spark, program, warehouse, args)
    return summary


# ---------------------------------------------------------------------------------------------
# queries


def answer_queries(spark, program, warehouse, args: JobArgs) -> list:
    """``QuerySummary`` of the program's ``?-`` lines (printed only), then of ``args.queries``
    (written where they say), answered from ``warehouse`` right after the run: the stored tables
    are current, so each is a filtered read of the queried relation's table."""
    own = [QuerySpec(str(query.atom)) for query in program.checked.queries]
    return [answer_query(spark, program, warehouse, spec, args) for spec in own + list(args.queries)]


def answer_query(spark, program, warehouse, spec: QuerySpec, args: JobArgs) -> QuerySummary:
    """One query's answers, written to ``spec.to`` when it has one, counted and the first
    ``args.show`` rows kept."""
    from .query.run import answer_query as answer

    found = answer(
        program,
        spark,
        spec.text,
        warehouse=warehouse,
        max_iterations=args.max_iterations,
        decompose=args.decompose,
    )
    variables = tuple(found.plan.query.variables)
    progress.step("answering %s (%s)", spec.text, found.plan.strategy)
    frame = found.frame.persist()  # written, counted and shown: computed once
    with _labelled(spark, f"query · {spec.text}", "query"):
        return _query_summary(spark, frame, spec, variables, found.plan.strategy, args.show)


def _query_summary(spark, frame, spec: QuerySpec, variables: tuple, strategy: str, show: int) -> QuerySummary:
    """The answers of ``frame`` written where ``spec`` says, counted and the first ``show`` kept."""
    try:
        written = None if spec.to is None else write_answers(spark, frame, spec)
        if not variables:  # one row: holds
            row = frame.first()
            return QuerySummary(spec.text, (), bool(row and row[0]), [], written, strategy)
        shown = frame.orderBy(*frame.columns).limit(show).collect() if show else []
        rows = [tuple(row) for row in shown]
        return QuerySummary(spec.text, variables, frame.count(), rows, written, strategy)
    finally:
        frame.unpersist()


def write_answers(spark, frame, spec: QuerySpec) -> str:
    """Write ``frame`` to ``spec.to``, replacing what is there; ``"uri (format)"``. The format is
    ``spec.to``'s or guessed as for inputs (a Delta table, else ``.csv``, else Parquet). Delta is
    written by delta-spark when the session has it, else by delta-rs."""
    from .storage import uris
    from .storage.locations import _guess_format

    assert spec.to is not None
    location = uris.normalise(spec.to.uri)
    fmt = spec.to.format or _guess_format(location, None)
    try:
        if fmt == "delta":
            _write_delta(spark, frame, location)
        elif fmt == "csv":
            frame.write.mode("overwrite").option("header", True).csv(uris.for_spark(location))
        else:
            frame.write.mode("overwrite").parquet(uris.for_spark(location))
    except Exception as exc:  # AnalysisException, a delta-rs error: no such bucket, not writable
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise OSError(f"cannot write the answers of {spec.text} to {spec.to.uri} as {fmt}: {first}") from None
    return f"{spec.to.uri} ({fmt})"


def _write_delta(spark, frame, location: str) -> None:
    from .storage import uris
    from .storage.detect import choose_backend

    if choose_backend(spark) == "native":
        writer = frame.write.format("delta").mode("overwrite").option("overwriteSchema", "true")
        writer.save(uris.for_spark(location))
        return
    from deltalake import write_deltalake

    from .storage.datafiles import collect_arrow

    write_deltalake(location, collect_arrow(frame), mode="overwrite", schema_mode="overwrite")


def read_changes(spark, program, name: str, spec: InputSpec, warehouse=None) -> "DataFrame":
    """The change set of ``name`` at ``spec``: the relation's columns (by position) and an
    optional signed ``_count``, from a Delta table, Parquet or a CSV with a header (read as
    every CSV input is, ``storage.locations``, its columns typed: ``_count`` a long)."""
    from .errors import InputError
    from .storage import uris
    from .storage.embedded import open_table, read_table

    location = uris.normalise(spec.uri)
    fmt = spec.format or ("csv" if location.lower().endswith(".csv") else None)
    if fmt is None:
        from .storage.embedded import is_delta_table

        fmt = "delta" if is_delta_table(location, None) else "parquet"
    try:
        if fmt == "delta":
            table = open_table(location, None, None, error=InputError)
            if table is None:
                raise InputError(f"--changes {name}: no Delta table at {spec.uri}")
            return read_table(spark, table, location, error=InputError)
        if fmt == "parquet":
            return spark.read.parquet(uris.for_spark(location))
        return _read_csv_changes(spark, location, relation_columns(program, warehouse, name), name)
    except InputError:
        raise
    except Exception as exc:  # AnalysisException: no such files, not that format
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"--changes {name}: cannot read {spec.uri} as {fmt}: {first}") from None


def _read_csv_changes(spark, location: str, columns: list, name: str) -> "DataFrame":
    from .spark.counted import COUNT
    from .storage import uris
    from .storage.locations import read_csv

    header = spark.read.option("header", True).csv(uris.for_spark(location)).columns
    if COUNT in header:
        columns = [*columns, (COUNT, "long")]
    return read_csv(spark, location, columns, name)


def relation_columns(program, warehouse, name: str) -> list:
    """``(column, type)`` of ``name``: declared, else as stored in ``warehouse``, else as the
    program infers them."""
    schema = program.checked.relations[name]
    columns = list(schema.column_names)
    if schema.declared or warehouse is None or not warehouse.exists(name):
        return list(zip(columns, schema.types, strict=True))
    return warehouse.schema(name)


def snapshot_change(spark, program, warehouse, name: str, spec: InputSpec) -> "DataFrame":
    """The change turning the stored table of ``name`` into the input at ``spec`` (multiplicities
    as a full run would store them)."""
    from pyspark.sql import functions as F

    from .incremental.changes import diff
    from .storage.locations import load_input

    schema = program.checked.relations[name]
    columns = list(schema.column_names)
    types = relation_columns(program, warehouse, name)
    df = load_input(spark, spec.uri, spec.format, types, name).df.toDF(*columns)
    facts = program.checked.facts.get(name)
    if facts:  # a full run adds the program's facts to the input
        from .spark.inputs import facts_frame

        df = df.unionByName(facts_frame(spark, schema, facts).toDF(*columns))
    new = df.groupBy(*columns).agg(F.count(F.lit(1)).alias("_count"))
    old = warehouse.read(name, with_counts=True).toDF(*columns, "_count").where(F.col("_count") > 0)
    return diff(old, new, columns)


def _show(summary: JobSummary, warehouse, outputs, show: int, versions: Optional[dict] = None) -> None:
    """The first ``show`` rows of each output, at its version in ``versions`` (default latest)."""
    if show:
        for name in outputs:
            if warehouse.exists(name):
                frame = warehouse.read(name, version=(versions or {}).get(name))
                with _labelled(warehouse.spark, f"summary · {name}", "summary"):
                    rows = frame.orderBy(*frame.columns).limit(show).collect()
                summary.rows[name] = [tuple(row) for row in rows]


def stratum_summary(stats) -> StratumSummary:
    """The part of a stratum's stats record (``eval.stats``) the summary prints."""
    return StratumSummary(
        index=stats.index,
        relations=tuple(stats.relations),
        iterations=stats.iterations,
        seconds=stats.seconds,
        partitioned=getattr(stats, "partitioned", False),
        placement=stats.placement.explained() if getattr(stats, "placement", None) else "",
    )


def _labelled(spark, description: str, group: str):
    """``spark.labels.labelled`` (imported when Spark runs: checking a program needs no pyspark)."""
    from .spark.labels import group_id, labelled

    return labelled(spark, description, group_id(group))


def _active_session():
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


def under_spark_submit() -> bool:
    """True in a Python driver started by spark-submit (its JVM gateway is already running)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def get_session() -> "SparkSession":
    """The active session; under spark-submit the session its configuration describes; else a
    new local session (``spark.session.local_session``)."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if under_spark_submit():
        # Master, memory, checkpoint dir and the rest come from spark-submit's flags and
        # properties file (without spark.checkpoint.dir the driver uses local checkpoints).
        return SparkSession.builder.appName("spark_datalog materialize").getOrCreate()
    from .spark.session import local_session

    return local_session("spark_datalog materialize")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the job's command line; return the exit status (that of ``cli.report_failures``: 0, 1
    DatalogError or a file error, 2 usage)."""
    from .cli import report_failures

    try:
        namespace = build_parser().parse_args(argv)
    except SystemExit as exit_:  # argparse: --help (0) or a usage error (2)
        return int(exit_.code or 0)
    with logging_from(namespace):  # progress on stderr, the summary on stdout
        return report_failures(lambda: execute(resolve(namespace)), "materialize")


def execute(args: JobArgs) -> int:
    """``run_job``; the exit status of a run that did not raise."""
    run_job(args)
    return EXIT_OK


def _identifier(text: str) -> str:
    if not re.fullmatch(IDENTIFIER, text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a plain identifier (letters, digits and _, not starting with a digit)"
        )
    return text


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be >= 1")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be >= 0")
    return value


def _format_value(value) -> str:
    from .cli import format_value

    return format_value(value)
