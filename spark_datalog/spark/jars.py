"""The delta-spark jar a session needs for the native Delta path, resolved by Spark itself.

Spark's own resolver (``spark.jars.packages``, Ivy over Maven Central, cached in ``~/.ivy2.5.2``)
fetches the jar and its dependencies when the JVM starts; this module only says which
coordinate fits the installed PySpark and which settings turn Delta on. It does what
``delta.configure_spark_with_delta_pip`` does, except that it does not take the jar's version
from the delta-spark *Python* package: PyPI carries Python-only patch releases (delta-spark
4.4.1) that Maven Central does not (its newest jar is 4.4.0), so the jar is chosen by Spark's
version from the pairs Delta publishes.

``SPARK_DATALOG_DELTA_PACKAGE`` overrides the choice: a Maven coordinate, or ``none`` to start
sessions without Delta (the embedded delta-rs path is used then).

Example::

    settings = delta_settings()          # {} when no jar fits this Spark
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)

Run as ``python -m spark_datalog.spark.jars`` it prints the same settings as spark-submit
arguments (``--packages ... --conf ...``), which is how ``make run`` passes them.
"""

from __future__ import annotations

import os
import sys
from typing import Optional

# delta-spark releases by the Spark minor version they are built against (each jar's POM names
# its spark-sql version): 4.0.1 -> Spark 4.0.1, 4.3.1 -> Spark 4.1.0, 4.4.0 -> Spark 4.2.0.
DELTA_FOR_SPARK = {"4.0": "4.0.1", "4.1": "4.3.1", "4.2": "4.4.0"}
SCALA_BINARY = "2.13"
PACKAGE_VARIABLE = "SPARK_DATALOG_DELTA_PACKAGE"
DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"


def installed_spark_version() -> str:
    """The installed PySpark's version, e.g. ``"4.2.0"``."""
    import pyspark

    return str(pyspark.__version__)


def delta_package(spark_version: Optional[str] = None) -> Optional[str]:
    """The delta-spark Maven coordinate for ``spark_version`` (default: the installed PySpark),
    or None when no published jar fits it or ``SPARK_DATALOG_DELTA_PACKAGE=none``.

    Example::

        delta_package("4.2.0")   # 'io.delta:delta-spark_2.13:4.4.0'
    """
    override = os.environ.get(PACKAGE_VARIABLE, "").strip()
    if override:
        return None if override.lower() == "none" else override
    minor = ".".join((spark_version or installed_spark_version()).split(".")[:2])
    version = DELTA_FOR_SPARK.get(minor)
    return None if version is None else f"io.delta:delta-spark_{SCALA_BINARY}:{version}"


def delta_settings(spark_version: Optional[str] = None) -> dict[str, str]:
    """Spark settings that load delta-spark at session start: the package, Delta's SQL extension
    and its catalog; empty when ``delta_package`` gives none."""
    package = delta_package(spark_version)
    if package is None:
        return {}
    return {
        "spark.jars.packages": package,
        "spark.sql.extensions": DELTA_EXTENSION,
        "spark.sql.catalog.spark_catalog": DELTA_CATALOG,
    }


def submit_arguments(settings: dict[str, str]) -> list[str]:
    """``settings`` as spark-submit arguments: ``--packages`` for the jars, ``--conf`` for the rest."""
    arguments: list[str] = []
    for key, value in settings.items():
        arguments += ["--packages", value] if key == "spark.jars.packages" else ["--conf", f"{key}={value}"]
    return arguments


def main() -> int:
    """Print the spark-submit arguments that load delta-spark (nothing when none fits)."""
    print(" ".join(submit_arguments(delta_settings())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
