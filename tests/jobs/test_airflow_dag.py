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
from typing import Optional

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
            operator=type(task).__name__, bases=[c.__name__ for c in type(task).__mro__],
            application=task.application, application_args=list(task.application_args),
            conn_id=task._conn_id, retries=task.retries)
        # What a run of 2024-06-01 submits, with the connection of AIRFLOW_CONN_SPARK_LOCAL.
        params = {name: dag.params[name] for name in dag.params}
        params.update(json.loads(sys.argv[2]))
        task.render_template_fields({"params": params, "ds": "2024-06-01",
                                     "run_id": "scheduled__2024-06-01T00:00:00+00:00"})
        report.update(rendered_args=list(task.application_args), conf=task.conf,
                      env_vars=task.env_vars, properties_file=task.properties_file,
                      deploy_mode=task._deploy_mode)
    print("REPORT " + json.dumps(report))
""")

SPARK_CLUSTER = '{"conn_type": "spark", "host": "spark://spark-master.example", "port": 7077}'
SPARK_LOCAL = '{"conn_type": "spark", "host": "local[2]"}'


def airflow_env(home: Path, connection: str) -> dict:
    """The environment of a child running Airflow: its home in ``home``, the DAG folder, the
    ``spark_local`` connection, this checkout's package on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "SPARK_DATALOG_"))}
    return {
        **env,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAG_FOLDER),
        "AIRFLOW_CONN_SPARK_LOCAL": connection,
        "PYTHONPATH": str(ROOT),
    }


def load_dagbag(tmp_path_factory, connection: str, params: Optional[dict] = None) -> dict:
    """The report of ``LOAD_DAGBAG`` run in a child with ``connection`` as ``spark_local``."""
    if importlib.util.find_spec("airflow") is None:
        pytest.skip(
            "Airflow is not installed: install the optional extra "
            "`pip install -e '.[airflow]'` to test the example DAG"
        )
    home = tmp_path_factory.mktemp("airflow_home")
    done = subprocess.run(
        [sys.executable, "-c", LOAD_DAGBAG, str(DAG_FOLDER), json.dumps(params or {})],
        capture_output=True,
        text=True,
        env=airflow_env(home, connection),
        cwd=home,
        timeout=300,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("REPORT ")]
    assert done.returncode == 0 and lines, done.stdout + done.stderr
    return json.loads(lines[-1][len("REPORT ") :])


@pytest.fixture(scope="module")
def dagbag_report(tmp_path_factory):
    """The DAG loaded and rendered with a local[2] connection."""
    return load_dagbag(tmp_path_factory, SPARK_LOCAL)


@pytest.fixture(scope="module")
def cluster_report(tmp_path_factory):
    """The DAG rendered with a spark://host:7077 connection and the ``spark_conf`` and ``run_id``
    params of a run that reprocesses 2024-06-01 on purpose."""
    params = {"spark_conf": {"spark.executor.memory": "4g"}, "run_id": "2024-06-01.reprocess-1"}
    return load_dagbag(tmp_path_factory, SPARK_CLUSTER, params)


@pytest.fixture(scope="module")
def cluster_mode_report(tmp_path_factory):
    """The DAG rendered with a spark://host:7077 connection and ``deploy_mode: cluster``."""
    return load_dagbag(tmp_path_factory, SPARK_CLUSTER, {"deploy_mode": "cluster"})


def test_the_dag_imports_without_errors(dagbag_report):
    assert dagbag_report["import_errors"] == {}
    assert dagbag_report["dag_ids"] == ["spark_datalog_materialize"]


def test_runs_are_serialised_and_not_caught_up(dagbag_report):
    assert dagbag_report["max_active_runs"] == 1
    assert dagbag_report["catchup"] is False


def test_the_task_submits_the_packaged_job_with_the_logical_date_as_run_id(dagbag_report):
    from spark_datalog.jobs import example_config_path, job_path

    assert "SparkSubmitOperator" in dagbag_report["bases"]
    assert dagbag_report["application"] == job_path()
    assert Path(job_path()).is_relative_to(ROOT / "spark_datalog")  # the package's, not jobs/
    args = dagbag_report["application_args"]
    assert args[args.index("--run-id") + 1] == "{{ params.run_id or ds }}"
    rendered = dagbag_report["rendered_args"]
    assert rendered[rendered.index("--run-id") + 1] == "2024-06-01"
    assert rendered[rendered.index("--config") + 1] == example_config_path()
    assert rendered[rendered.index("--warehouse") + 1] == str(Path.home() / "spark_datalog" / "warehouse")
    assert dagbag_report["conn_id"] == "spark_local"
    assert dagbag_report["retries"] == 2


def test_a_local_master_gets_the_local_settings(dagbag_report):
    assert Path(dagbag_report["properties_file"]) == ROOT / "conf" / "local-spark-defaults.conf"
    conf = dagbag_report["conf"]
    assert conf["spark.driver.bindAddress"] == conf["spark.driver.host"] == "127.0.0.1"
    assert "log4j2.properties" in conf["spark.driver.extraJavaOptions"]
    assert dagbag_report["env_vars"]["SPARK_LOCAL_IP"] == "127.0.0.1"
    assert dagbag_report["env_vars"]["PYSPARK_PYTHON"] == sys.executable


def test_a_spark_cluster_master_gets_no_local_address_or_properties(cluster_report):
    assert cluster_report["import_errors"] == {}
    assert "127.0.0.1" not in json.dumps(cluster_report)
    assert cluster_report["properties_file"] is None
    assert not cluster_report["env_vars"]  # spark-submit refuses env vars in standalone cluster mode
    conf = cluster_report["conf"]
    assert not any(key.startswith("spark.driver.") or key == "spark.ui.enabled" for key in conf), conf
    assert conf["spark.executor.memory"] == "4g"  # the spark_conf param
    assert conf["spark.pyspark.driver.python"] == sys.executable  # client mode: the driver runs here


def test_in_cluster_deploy_mode_the_driver_gets_no_python_of_this_worker(cluster_mode_report):
    assert "127.0.0.1" not in json.dumps(cluster_mode_report)
    assert cluster_mode_report["properties_file"] is None and not cluster_mode_report["env_vars"]
    assert cluster_mode_report["conf"] == {}
    assert cluster_mode_report["deploy_mode"] == "cluster"


def test_a_run_id_param_replaces_the_logical_date_to_reprocess_a_date(cluster_report):
    rendered = cluster_report["rendered_args"]
    assert rendered[rendered.index("--run-id") + 1] == "2024-06-01.reprocess-1"


def test_the_job_arguments_of_the_dag_parse(dagbag_report):
    """What the DAG passes is a valid job command line (checked by the job's own parser)."""
    from spark_datalog import job

    args = job.parse_args(dagbag_report["rendered_args"])
    assert args.run_id == "2024-06-01"
    assert Path(args.program).resolve() == ROOT / "spark_datalog" / "examples" / "graph.dl"


DAG_TEST = textwrap.dedent("""
    import datetime as dt, json, sys
    try:
        from airflow.dag_processing.dagbag import DagBag   # Airflow >= 3.2
    except ImportError:
        from airflow.models.dagbag import DagBag           # Airflow 2.x - 3.1
    dag = DagBag(dag_folder=sys.argv[1]).dags["spark_datalog_materialize"]
    run = dag.test(logical_date=dt.datetime(2024, 6, 1, tzinfo=dt.timezone.utc),
                   run_conf=json.loads(sys.argv[2]))
    print("STATE " + str(run.state))
""")


def delta_versions(warehouse: Path) -> dict:
    """Each table of ``warehouse`` and its Delta version (read by deltalake, no Spark)."""
    from deltalake import DeltaTable

    return {
        path.name: DeltaTable(str(path)).version()
        for path in warehouse.iterdir()
        if (path / "_delta_log").is_dir()
    }


@pytest.mark.slow
@pytest.mark.spark
def test_dag_test_runs_the_job_on_local_spark_with_the_date_as_run_id(tmp_path):
    """``dag.test()`` of 2024-06-01 on a local[1] connection commits the date's run into the
    warehouse. Once only (a spark-submit JVM and Airflow's start-up: ~40 s): that a rerun of the
    date writes nothing follows from the rendered ``--run-id`` being the date
    (``test_the_task_submits_the_packaged_job_with_the_logical_date_as_run_id``) and from the
    job's rerun of a committed run id (``tests/jobs/test_job.py``, "The same run id again";
    its message in ``tests/storage/test_warehouse_runs.py``)."""
    if importlib.util.find_spec("airflow") is None:
        pytest.skip("Airflow is not installed (the `airflow` extra)")
    spark_submit = Path(sys.executable).parent / "spark-submit"
    if not spark_submit.exists():
        pytest.skip(f"no spark-submit next to {sys.executable}")
    env = airflow_env(tmp_path, '{"conn_type": "spark", "host": "local[1]"}')
    env["PATH"] = f"{spark_submit.parent}{os.pathsep}{env.get('PATH', '')}"
    migrated = subprocess.run(
        [sys.executable, "-m", "airflow", "db", "migrate"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    warehouse = tmp_path / "wh"
    run_conf = {
        "warehouse": str(warehouse),
        "spark_conf": {
            "spark.driver.memory": "1g",
            "spark.sql.shuffle.partitions": "2",
            "spark.checkpoint.dir": str(tmp_path / "checkpoints"),
        },
    }

    done = subprocess.run(
        [sys.executable, "-c", DAG_TEST, str(DAG_FOLDER), json.dumps(run_conf)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert done.returncode == 0 and "STATE success" in done.stdout, done.stdout[-5000:] + done.stderr[-5000:]
    versions = delta_versions(warehouse)
    assert {"flight", "reach", "shortest", "hub"} <= set(versions), versions
    assert "run 2024-06-01:" in done.stdout + done.stderr
