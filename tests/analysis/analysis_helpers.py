"""Shared helpers for the analysis tests: parse text, analyse it, collect the errors."""

from __future__ import annotations

import pytest

from spark_datalog.analysis import analyse
from spark_datalog.syntax.parser import parse


def check(text: str, input_types=None):
    """The CheckedProgram of ``text``."""
    return analyse(parse(text), input_types)


def errors(text: str, error_class, input_types=None) -> list:
    """All errors raised analysing ``text``; the raised one must be an ``error_class``."""
    with pytest.raises(error_class) as caught:
        check(text, input_types)
    return caught.value.errors
