"""Example Airflow DAG: materialize a Datalog program into its warehouse every day.

It spark-submits the job shipped in the package (``spark-datalog job-path``) with
``SparkSubmitOperator`` (apache-airflow-providers-apache-spark). Set-up (Airflow 3):

- ``pip install 'spark-datalog[airflow]'`` in the Airflow environment (the workers start the job,
  and in client deploy mode run its Python driver; ``spark-submit`` must be on their PATH). On a
  cluster, the executors need ``spark-datalog`` installed too (its partition-local fixpoints run
  in Python workers), and in cluster deploy mode the driver's host needs the job file at the
  same path: install the package the same way there (same image or path).
- a Spark connection, ``spark_local`` (or the id in ``SPARK_DATALOG_CONN_ID``), which says where
  Spark runs: its host is the master and its ``deploy-mode`` extra the deploy mode::

      airflow connections add spark_local --conn-type spark --conn-host 'local[2]'
      airflow connections add spark_local --conn-type spark --conn-host spark://spark-master \\
          --conn-port 7077 --conn-extra '{"deploy-mode": "client"}'

  (or ``AIRFLOW_CONN_SPARK_LOCAL='{"conn_type": "spark", "host": "local[2]"}'``);
- copy or link this file into the DAGs folder.

DAG params (the trigger form, or ``--conf`` of ``airflow dags trigger``): ``config`` (the job
config; default ``SPARK_DATALOG_JOB_CONFIG``, else the packaged example), ``warehouse`` (wins over
the config's; default ``SPARK_DATALOG_WAREHOUSE``, else ``~/spark_datalog/warehouse``),
``spark_conf`` (Spark settings, e.g. ``{"spark.executor.memory": "4g"}``; they win over the
DAG's own), ``deploy_mode`` (empty: the connection's) and ``run_id`` (empty: the logical date).

Only for a ``local[...]`` master does the DAG add local settings: driver addresses on 127.0.0.1,
no UI, quiet logging, the properties file ``conf/local-spark-defaults.conf`` of the checkout this
file is in (or ``SPARK_DATALOG_LOCAL_PROPERTIES``), and the Python of this environment for the
driver and the workers (``SPARK_DATALOG_PYTHON`` to change it). Any other master gets only the
connection's settings and ``spark_conf`` (in client deploy mode also ``spark.pyspark.driver.python``,
as the driver then runs here).

Exactly once per date: the job's run id is the run's logical date (``{{ ds }}``), the same for
every try and every re-run of that date. The job resumes an unfinished run id (each Delta commit
carries the run's app transaction, so nothing is written twice) and does nothing for a committed
one. To process a date again on purpose, trigger a run with a new ``run_id`` param (README:
"Airflow"). ``max_active_runs=1`` serialises runs: one writer per warehouse at a time.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path

from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

from spark_datalog.jobs import example_config_path, job_path
from spark_datalog.spark.session import QUIET_LOG4J

try:  # Airflow 3: DAGs are written against the task SDK
    from airflow.sdk import DAG, Param
except ImportError:  # Airflow 2
    from airflow import DAG
    from airflow.models.param import Param

CONN_ID = os.environ.get("SPARK_DATALOG_CONN_ID", "spark_local")
CONFIG = os.environ.get("SPARK_DATALOG_JOB_CONFIG", example_config_path())
WAREHOUSE = os.environ.get("SPARK_DATALOG_WAREHOUSE", str(Path.home() / "spark_datalog" / "warehouse"))
# The Python that runs the job's driver (client mode) and, on a local master, its workers: one
# with spark_datalog installed (by default the one parsing this DAG, Airflow's own environment).
PYTHON = os.environ.get("SPARK_DATALOG_PYTHON", sys.executable)
_CHECKOUT_PROPERTIES = Path(__file__).resolve().parents[2] / "conf" / "local-spark-defaults.conf"
LOCAL_PROPERTIES = os.environ.get(
    "SPARK_DATALOG_LOCAL_PROPERTIES", str(_CHECKOUT_PROPERTIES) if _CHECKOUT_PROPERTIES.is_file() else ""
)
# Added for a local[...] master only: a cluster's driver must be reachable from its executors.
LOCAL_CONF = {
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    "spark.ui.enabled": "false",  # two scheduled jobs on one host would fight over its port
    "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{QUIET_LOG4J}",
}
LOCAL_ENV = {"PYSPARK_PYTHON": PYTHON, "PYSPARK_DRIVER_PYTHON": PYTHON, "SPARK_LOCAL_IP": "127.0.0.1"}


def is_local(master: str) -> bool:
    """``local``, ``local[2]``, ``local[*]``, ``local[4, 2]``: Spark in this process's host."""
    return master == "local" or master.startswith("local[")


class DatalogSparkSubmitOperator(SparkSubmitOperator):
    """``SparkSubmitOperator`` whose Spark settings follow its connection: ``params.spark_conf``
    over the DAG's settings, ``params.deploy_mode`` over the connection's, and the local settings
    above only for a ``local[...]`` master. They are added when the templates are rendered, so the
    rendered view shows what is submitted."""

    def render_template_fields(self, context, jinja_env=None) -> None:
        super().render_template_fields(context, jinja_env)
        self._deploy_mode = context["params"].get("deploy_mode") or self._deploy_mode
        target = SparkSubmitHook(conn_id=self._conn_id, deploy_mode=self._deploy_mode)._connection
        conf = dict(self.conf or {})
        if is_local(target["master"]):
            conf.update(LOCAL_CONF)
            self.env_vars = {**LOCAL_ENV, **(self.env_vars or {})}
            self.properties_file = self.properties_file or LOCAL_PROPERTIES or None
        elif target["deploy_mode"] != "cluster":
            conf["spark.pyspark.driver.python"] = PYTHON  # the driver runs on this worker
        conf.update({str(k): str(v) for k, v in (context["params"].get("spark_conf") or {}).items()})
        self.conf = conf


with DAG(
    dag_id="spark_datalog_materialize",
    description="Materialize a Datalog program into a warehouse of Delta tables",
    schedule="@daily",
    start_date=dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc),
    catchup=False,
    max_active_runs=1,  # one writer per warehouse: runs of this DAG never overlap
    default_args={"retries": 2, "retry_delay": dt.timedelta(minutes=5)},
    params={
        "config": Param(CONFIG, type="string", description="the job config (YAML)"),
        "warehouse": Param(WAREHOUSE, type="string", description="the warehouse; wins over the config's"),
        "spark_conf": Param({}, type="object", description="Spark settings, over the DAG's own"),
        "run_id": Param("", type="string", description="the job's run id; empty: the logical date"),
        "deploy_mode": Param("", type="string", description="client or cluster; empty: the connection's"),
    },
    tags=["spark_datalog"],
) as dag:
    materialize = DatalogSparkSubmitOperator(
        task_id="materialize",
        application=job_path(),
        application_args=[
            "--config",
            "{{ params.config }}",
            "--warehouse",
            "{{ params.warehouse }}",
            "--run-id",
            "{{ params.run_id or ds }}",
        ],
        conn_id=CONN_ID,
        name="spark_datalog_materialize",
    )
