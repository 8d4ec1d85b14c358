"""The delta-spark jar a session loads: chosen by Spark's version, overridable, and a session
that cannot resolve it still starts (on the embedded Delta path)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from spark_datalog.spark.jars import (
    DELTA_CATALOG,
    DELTA_EXTENSION,
    PACKAGE_VARIABLE,
    delta_package,
    delta_settings,
    submit_arguments,
)


def test_the_jar_follows_the_spark_version(monkeypatch):
    monkeypatch.delenv(PACKAGE_VARIABLE, raising=False)
    assert delta_package("4.2.0") == "io.delta:delta-spark_2.13:4.4.0"
    assert delta_package("4.1.1") == "io.delta:delta-spark_2.13:4.3.1"
    assert delta_package("4.0.1") == "io.delta:delta-spark_2.13:4.0.1"
    assert delta_package("3.5.1") is None and delta_settings("3.5.1") == {}
    settings = delta_settings("4.2.0")
    assert settings["spark.sql.extensions"] == DELTA_EXTENSION
    assert settings["spark.sql.catalog.spark_catalog"] == DELTA_CATALOG


def test_the_variable_overrides_or_turns_it_off(monkeypatch):
    monkeypatch.setenv(PACKAGE_VARIABLE, "io.delta:delta-spark_2.13:4.3.0")
    assert delta_package("4.2.0") == "io.delta:delta-spark_2.13:4.3.0"
    monkeypatch.setenv(PACKAGE_VARIABLE, "none")
    assert delta_settings("4.2.0") == {}


def test_spark_submit_arguments():
    arguments = submit_arguments(delta_settings("4.2.0"))
    assert arguments[:2] == ["--packages", "io.delta:delta-spark_2.13:4.4.0"]
    assert f"spark.sql.extensions={DELTA_EXTENSION}" in arguments
    assert arguments.count("--conf") == 2


@pytest.mark.slow
def test_a_session_whose_jar_cannot_be_resolved_starts_without_it(tmp_path):
    """A fresh JVM asked for a delta-spark version Maven Central does not have: the session
    starts without it, warns, and warehouses take the embedded path."""
    script = textwrap.dedent(
        """
        from spark_datalog.spark.session import local_session
        from spark_datalog.storage import Warehouse
        spark = local_session("jar-fallback")
        print("backend", Warehouse(spark, "wh").backend_name)
        print("rows", spark.range(3).count())
        """
    )
    env = {
        **os.environ,
        PACKAGE_VARIABLE: "io.delta:delta-spark_2.13:0.0.0-not-published",
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "backend embedded" in done.stdout and "rows 3" in done.stdout
    assert "could not start Spark with io.delta:delta-spark_2.13:0.0.0-not-published" in done.stderr
