"""spark-submit entry point: materialize a Datalog program into a warehouse of Delta tables.

    spark-submit --properties-file conf/local-spark-defaults.conf \\
        jobs/materialize.py --config conf/example-job.yaml
    python jobs/materialize.py --program prog.dl --warehouse ./warehouse   # local Spark

Every flag and config key is described by ``--help`` and in ``spark_datalog/job.py``.
"""

from __future__ import annotations

import os
import sys

try:
    import spark_datalog  # noqa: F401  (installed, or on PYTHONPATH)
except ImportError:
    # Run from a source checkout without installing: the package sits next to jobs/.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from spark_datalog.job import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
