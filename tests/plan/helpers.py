"""Shared helpers of the plan tests: text -> checked program -> plans -> explain text."""

from __future__ import annotations

import textwrap

from spark_datalog.analysis import analyse
from spark_datalog.plan import explain, plan_program
from spark_datalog.syntax.parser import parse


def checked(text: str):
    return analyse(parse(textwrap.dedent(text)))


def plans(text: str):
    return plan_program(checked(text))


def explained(text: str) -> str:
    return explain(plans(text))


def golden(text: str) -> str:
    """An expected explain() text written indented in a test."""
    return textwrap.dedent(text).lstrip("\n")
