"""spark-submit entry point: materialize a Datalog program into a warehouse of Delta tables.

Shipped in the package, so an installed ``spark-datalog`` is all a cluster's driver needs::

    spark-submit "$(spark-datalog job-path)" --config job.yaml
    python -m spark_datalog.jobs.materialize --config job.yaml   # local Spark, no spark-submit

It takes the flags of ``spark-datalog materialize`` (``--help``); the job itself is
``spark_datalog.job.main``.
"""

from __future__ import annotations

import sys
from typing import Optional, Sequence

from spark_datalog.job import main as _job_main


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the job on ``argv`` (default: ``sys.argv[1:]``) and return its exit status.

    Example: ``main(["--config", "job.yaml", "--run-id", "2024-06-01"])``.
    """
    return _job_main(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
