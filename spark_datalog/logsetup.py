"""Logging of the command line and the job: progress and messages on stderr, results on stdout.

``spark-datalog run|query|materialize`` and the spark-submit job show the engine's progress
(``spark_datalog.progress``: a line when each stratum starts and is done, each job step) on
stderr as they go, and the ``spark_datalog`` logger's other messages from ``--log-level`` up
(default WARNING). ``--verbose`` adds a line per iteration of each recursive stratum,
``--quiet`` drops the progress lines (warnings and errors stay). The summary and answers stay
on stdout. A program calling the library gets log records only, never prints.

Example::

    with cli_logging(level="INFO", verbose=True):
        job.run_job(args)
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from contextlib import AbstractContextManager, contextmanager
from typing import Iterator, TextIO

from .progress import LOGGER as PROGRESS

ROOT = "spark_datalog"
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def add_logging_arguments(parser: argparse.ArgumentParser) -> None:
    """``--quiet`` / ``--verbose`` (exclusive) and ``--log-level`` on ``parser``."""
    group = parser.add_argument_group("progress and logging (on stderr)")
    chatter = group.add_mutually_exclusive_group()
    chatter.add_argument(
        "-q", "--quiet", action="store_true", help="no progress lines (warnings and errors are still shown)"
    )
    chatter.add_argument(
        "-v", "--verbose", action="store_true", help="also a line per iteration of each recursive stratum"
    )
    group.add_argument(
        "--log-level",
        type=str.upper,
        choices=LEVELS,
        default="WARNING",
        metavar="LEVEL",
        help=f"level of the spark_datalog logger: {', '.join(LEVELS)} (default WARNING); "
        "DEBUG also shows the iterations",
    )


def progress_level(level: str = "WARNING", quiet: bool = False, verbose: bool = False) -> int:
    """The level of the progress logger for the flags.

    Example::

        >>> progress_level(), progress_level(verbose=True), progress_level("DEBUG", quiet=True)
        (20, 10, 30)
    """
    if quiet:
        return logging.WARNING
    return min(logging.DEBUG if verbose else logging.INFO, logging.getLevelName(level))


@contextmanager
def cli_logging(level: str = "WARNING", quiet: bool = False, verbose: bool = False) -> Iterator[None]:
    """Show the ``spark_datalog`` loggers on stderr for the block, as the flags say, then restore
    them as they were (a test or a caller running the command in-process keeps its set-up)."""
    root, chatter = logging.getLogger(ROOT), logging.getLogger(PROGRESS)
    before = (root.level, root.propagate, chatter.level)
    handler = StderrHandler()
    root.addHandler(handler)
    root.setLevel(logging.getLevelName(level))
    root.propagate = False  # not twice when the root logger has a handler too (pyspark, a test)
    chatter.setLevel(progress_level(level, quiet, verbose))
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(before[0])
        root.propagate = before[1]
        chatter.setLevel(before[2])


def logging_from(args: argparse.Namespace) -> AbstractContextManager[None]:
    """``cli_logging`` for parsed arguments (a command without the flags gets the defaults;
    ``-w``, Soufflé's no-warnings flag, raises the default level to ``ERROR``)."""
    level = getattr(args, "log_level", "WARNING")
    if getattr(args, "no_warn", False) and level == "WARNING":
        level = "ERROR"
    return cli_logging(level, getattr(args, "quiet", False), getattr(args, "verbose", False))


class StderrHandler(logging.StreamHandler):
    """Writes to the current ``sys.stderr``: progress lines with the seconds since the command
    started (``[  2.8s] stratum 0 · tc · done: ...``), other records with their level
    (``spark_datalog: warning: ...``)."""

    def __init__(self) -> None:
        super().__init__()
        self.started = time.perf_counter()

    @property  # type: ignore[override]
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:  # set by StreamHandler.__init__: always sys.stderr instead
        pass

    def format(self, record: logging.LogRecord) -> str:
        if record.name.startswith(PROGRESS) and record.levelno < logging.WARNING:
            return f"[{time.perf_counter() - self.started:6.1f}s] {record.getMessage()}"
        return f"{ROOT}: {record.levelname.lower()}: {record.getMessage()}"
