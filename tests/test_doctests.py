"""The examples in the package's docstrings hold (every module's doctests, without Spark)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import spark_datalog

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(spark_datalog.__path__, "spark_datalog.")
    if not info.name.startswith("spark_datalog.jobs")
)


def test_every_module_is_looked_at():
    assert "spark_datalog.seminaive" in MODULES and "spark_datalog.kernel.relation" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name):
    module = importlib.import_module(name)
    failed, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert failed == 0, f"{failed} docstring example(s) of {name} failed (printed above)"
