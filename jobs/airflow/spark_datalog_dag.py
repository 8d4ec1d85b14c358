"""Example Airflow DAG: materialize a Datalog program into its warehouse every day.

It runs ``jobs/materialize.py`` with ``SparkSubmitOperator`` (apache-airflow-providers-apache-spark)
and the job config ``conf/example-job.yaml``. Set-up (Airflow 3):

- ``pip install 'spark-datalog[airflow]'`` in the Airflow environment (the workers run the job's
  Python driver, so they need spark_datalog and pyspark; ``spark-submit`` must be on their PATH);
- a Spark connection whose host is the master, for a single machine::

      airflow connections add spark_local --conn-type spark --conn-host 'local[2]'

  (or ``AIRFLOW_CONN_SPARK_LOCAL='{"conn_type": "spark", "host": "local[2]"}'``);
- copy or link this file into the DAGs folder. ``SPARK_DATALOG_HOME`` (default: the checkout this
  file is in) locates ``jobs/`` and ``conf/``; ``SPARK_DATALOG_JOB_CONFIG`` picks another config.

Retries are safe: ``{{ run_id }}`` is the same for every try of a DAG run, and the job resumes an
unfinished run id (each Delta commit carries the run's app transaction, so nothing is written
twice). ``max_active_runs=1`` serialises runs: one writer per warehouse at a time.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

try:  # Airflow 3: DAGs are written against the task SDK
    from airflow.sdk import DAG
except ImportError:  # Airflow 2
    from airflow import DAG

HOME = Path(os.environ.get("SPARK_DATALOG_HOME", Path(__file__).resolve().parents[2]))
JOB = HOME / "jobs" / "materialize.py"
CONFIG = Path(os.environ.get("SPARK_DATALOG_JOB_CONFIG", HOME / "conf" / "example-job.yaml"))
# The Python that runs the job's driver: one with spark_datalog installed (by default the one
# parsing this DAG, i.e. Airflow's own environment).
PYTHON = os.environ.get("SPARK_DATALOG_PYTHON", sys.executable)

with DAG(
    dag_id="spark_datalog_materialize",
    description="Materialize a Datalog program into a warehouse of Delta tables",
    schedule="@daily",
    start_date=dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc),
    catchup=False,
    max_active_runs=1,  # one writer per warehouse: runs of this DAG never overlap
    default_args={"retries": 2, "retry_delay": dt.timedelta(minutes=5)},
    tags=["spark_datalog"],
) as dag:
    materialize = SparkSubmitOperator(
        task_id="materialize",
        application=str(JOB),
        application_args=["--config", str(CONFIG), "--run-id", "{{ run_id }}"],
        conn_id="spark_local",
        name="spark_datalog_materialize",
        properties_file=str(HOME / "conf" / "local-spark-defaults.conf"),
        conf={
            # A scheduled job needs no UI (and two jobs on one host would fight over its port).
            "spark.ui.enabled": "false",
            "spark.driver.extraJavaOptions": (
                f"-Dlog4j2.configurationFile=file:{HOME / 'conf' / 'log4j2.properties'}"
            ),
        },
        driver_memory="8g",
        env_vars={"PYSPARK_PYTHON": PYTHON, "PYSPARK_DRIVER_PYTHON": PYTHON, "SPARK_LOCAL_IP": "127.0.0.1"},
    )
