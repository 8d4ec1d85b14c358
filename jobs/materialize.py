"""spark-submit entry point of a source checkout: the job shipped in the package.

    spark-submit --properties-file conf/local-spark-defaults.conf \\
        jobs/materialize.py --config conf/example-job.yaml
    python jobs/materialize.py --program prog.dl --warehouse ./warehouse   # local Spark

The job is ``spark_datalog/jobs/materialize.py`` (an installed package has it too:
``spark-submit "$(spark-datalog job-path)" ...``); every flag and config key is described by
``--help`` and in ``spark_datalog/job.py``.
"""

from __future__ import annotations

import os
import sys

try:
    import spark_datalog  # noqa: F401  (installed, or on PYTHONPATH)
except ImportError:
    # Run from a source checkout without installing: the package sits next to jobs/.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from spark_datalog.jobs.materialize import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
