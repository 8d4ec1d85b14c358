"""The example Airflow DAG imports cleanly and schedules the job as documented.

Airflow is an optional extra (``spark-datalog[airflow]``): without it this test is skipped. The
DagBag is loaded in a child interpreter with ``AIRFLOW_HOME`` in a temporary directory, because
importing Airflow reads (and creates) its configuration and sets up logging process-wide.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DAG_FOLDER = ROOT / "jobs" / "airflow"

LOAD_DAGBAG = textwrap.dedent("""
    import json, sys
    try:
        from airflow.dag_processing.dagbag import DagBag   # Airflow >= 3.2
    except ImportError:
        from airflow.models.dagbag import DagBag           # Airflow 2.x - 3.1
    bag = DagBag(dag_folder=sys.argv[1])
    dag = bag.dags.get("spark_datalog_materialize")
    report = {"import_errors": {str(k): str(v) for k, v in bag.import_errors.items()},
              "dag_ids": sorted(bag.dag_ids)}
    if dag is not None:
        task = dag.get_task("materialize")
        report.update(
            max_active_runs=dag.max_active_runs, catchup=dag.catchup,
            operator=type(task).__name__, application=task.application,
            application_args=list(task.application_args), conn_id=task._conn_id,
            rendered_args=task.render_template(task.application_args,
                                               {"run_id": "scheduled__2024-06-01T00:00:00+00:00"}),
            properties_file=task.properties_file, retries=task.retries)
    print("REPORT " + json.dumps(report))
""")


@pytest.fixture(scope="module")
def dagbag_report(tmp_path_factory):
    if importlib.util.find_spec("airflow") is None:
        pytest.skip(
            "Airflow is not installed: install the optional extra "
            "`pip install -e '.[airflow]'` to test the example DAG"
        )
    home = tmp_path_factory.mktemp("airflow_home")
    env = {
        **os.environ,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAG_FOLDER),
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [sys.executable, "-c", LOAD_DAGBAG, str(DAG_FOLDER)],
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
        timeout=300,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("REPORT ")]
    assert done.returncode == 0 and lines, done.stdout + done.stderr
    return json.loads(lines[-1][len("REPORT ") :])


def test_the_dag_imports_without_errors(dagbag_report):
    assert dagbag_report["import_errors"] == {}
    assert dagbag_report["dag_ids"] == ["spark_datalog_materialize"]


def test_runs_are_serialised_and_not_caught_up(dagbag_report):
    assert dagbag_report["max_active_runs"] == 1
    assert dagbag_report["catchup"] is False


def test_the_task_submits_the_job_with_the_airflow_run_id(dagbag_report):
    assert dagbag_report["operator"] == "SparkSubmitOperator"
    assert Path(dagbag_report["application"]) == ROOT / "jobs" / "materialize.py"
    args = dagbag_report["application_args"]
    assert "{{ run_id }}" in args
    assert args[args.index("--run-id") + 1] == "{{ run_id }}"
    assert Path(args[args.index("--config") + 1]) == ROOT / "conf" / "example-job.yaml"
    rendered = dagbag_report["rendered_args"]
    assert rendered[rendered.index("--run-id") + 1] == "scheduled__2024-06-01T00:00:00+00:00"
    assert dagbag_report["conn_id"] == "spark_local"
    assert Path(dagbag_report["properties_file"]) == ROOT / "conf" / "local-spark-defaults.conf"
    assert dagbag_report["retries"] == 2


def test_the_job_arguments_of_the_dag_parse(dagbag_report):
    """What the DAG passes is a valid job command line (checked by the job's own parser)."""
    from spark_datalog import job

    args = job.parse_args(dagbag_report["rendered_args"])
    assert args.run_id == "scheduled__2024-06-01T00:00:00+00:00"
    assert Path(args.program).resolve() == ROOT / "spark_datalog" / "examples" / "graph.dl"
