"""The spark-submit jobs shipped in the package, and where their files are.

``pip install spark-datalog`` is enough to submit the materialize job: its file is part of the
package (``spark-datalog job-path`` prints it), and so is an annotated example config for the
bundled example program (``spark-datalog job-path --example-config``)::

    spark-submit "$(spark-datalog job-path)" \\
        --config "$(spark-datalog job-path --example-config)" --warehouse ./warehouse
    python -m spark_datalog.jobs.materialize --config job.yaml   # the same job, local Spark
"""

from __future__ import annotations

import os

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def job_path() -> str:
    """The absolute path of the materialize job's file, to give to ``spark-submit``.

    Example::

        >>> job_path().endswith(os.path.join("spark_datalog", "jobs", "materialize.py"))
        True
    """
    return os.path.join(_PACKAGE, "jobs", "materialize.py")


def example_config_path() -> str:
    """The absolute path of the bundled example job config (``examples/example-job.yaml``): the
    example program ``examples/graph.dl`` and its queries, every key annotated. It names no
    warehouse: give one with ``--warehouse``.

    Example::

        >>> os.path.basename(example_config_path())
        'example-job.yaml'
    """
    return os.path.join(_PACKAGE, "examples", "example-job.yaml")
