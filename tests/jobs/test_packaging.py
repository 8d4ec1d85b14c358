"""What ``pip install spark-datalog`` gives: the job file, the example config and the package data,
found through the package (not a source checkout), and the dependency ranges."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import replace
from pathlib import Path

import pytest

import spark_datalog as sd
from spark_datalog import cli, job, jobs
from spark_datalog.job import QuerySpec

from .submit import SMALL_LOCAL_SPARK

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "spark_datalog"
EXAMPLE = PACKAGE / "examples" / "graph.dl"


def run_cli(capsys, *argv: str) -> tuple:
    status = cli.main(list(argv))
    out = capsys.readouterr()
    return status, out.out, out.err


# ------------------------------------------------------------------------- files of the package


def test_the_job_file_and_the_example_config_are_inside_the_package():
    assert Path(jobs.job_path()) == PACKAGE / "jobs" / "materialize.py"
    assert Path(jobs.example_config_path()) == PACKAGE / "examples" / "example-job.yaml"
    assert Path(jobs.job_path()).is_file() and Path(jobs.example_config_path()).is_file()


def test_job_path_prints_the_job_file_and_with_a_flag_the_example_config(capsys):
    assert run_cli(capsys, "job-path") == (0, f"{jobs.job_path()}\n", "")
    assert run_cli(capsys, "job-path", "--example-config") == (0, f"{jobs.example_config_path()}\n", "")


def test_version_prints_the_installed_distribution_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.build_parser().parse_args(["--version"])
    assert exit_.value.code == 0
    expected = importlib.metadata.version("spark-datalog")
    assert capsys.readouterr().out == f"spark-datalog {expected}\n"


def test_the_packaged_example_config_runs_the_bundled_program_and_needs_a_warehouse():
    with pytest.raises(job.UsageError, match="no warehouse given"):
        job.parse_args(["--config", jobs.example_config_path()])
    args = job.parse_args(["--config", jobs.example_config_path(), "--warehouse", "/data/wh"])
    assert Path(args.program) == EXAMPLE
    assert all(query.to is None for query in args.queries)  # nothing written inside the package
    program = sd.Program.from_file(args.program)
    for query in args.queries:
        program.explain(query=query.text)  # every query fits the program (else a DatalogError)


def test_the_checkout_config_is_the_packaged_job_writing_into_the_checkout():
    """conf/example-job.yaml (``make run``) adds only locations to the packaged example config."""
    checkout = job.parse_args(["--config", str(ROOT / "conf" / "example-job.yaml")])
    packaged = job.parse_args(
        ["--config", jobs.example_config_path(), "--warehouse", str(ROOT / "warehouse")]
    )
    assert checkout.warehouse == str(ROOT / "warehouse")
    assert {q.text: q.to and q.to.uri for q in checkout.queries if q.to} == {
        "reach(lis, X)": str(ROOT / "answers" / "reach_from_lis"),
        "shortest(ams, X, D)": str(ROOT / "answers" / "shortest_from_ams.csv"),
    }
    assert tuple(QuerySpec(q.text) for q in checkout.queries) == packaged.queries
    assert replace(checkout, config=None, queries=()) == replace(packaged, config=None, queries=())


def test_the_package_module_runs_the_job(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "spark_datalog.jobs.materialize", "--program", str(tmp_path / "none.dl")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 2
    assert "no warehouse given" in done.stderr and "Traceback" not in done.stderr


def test_dependencies_are_ranges_with_pyspark_client_following_pyspark():
    tomllib = pytest.importorskip("tomllib")
    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    listed = project["dependencies"] + project["optional-dependencies"]["airflow"]
    ranges = {req.name: req.specifier for req in map(Requirement, listed)}
    for name in ("pyspark", "delta-spark", "deltalake"):
        operators = {spec.operator for spec in ranges[name]}
        assert operators == {">=", "<"}, (name, str(ranges[name]))
    assert ranges["pyspark-client"] == ranges["pyspark"]
    assert (
        "4.2.0" in ranges["pyspark"] and "4.4.1" in ranges["delta-spark"] and "1.6.6" in ranges["deltalake"]
    )


# ------------------------------------------------------------------ the wheel in a fresh venv


def build_wheel(tmp_path: Path) -> Path:
    """The wheel of a copy of the package's sources (no stale build/ of the checkout in it)."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "setup.cfg", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(PACKAGE, source / "spark_datalog", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    wheels = tmp_path / "wheels"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    done = subprocess.run(
        [*pip, "wheel", "--no-deps", "-q", "-w", str(wheels), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = wheels.glob("spark_datalog-*.whl")
    return wheel


def fresh_venv(tmp_path: Path, wheel: Path) -> Path:
    """A new venv holding only the wheel; the running interpreter's site-packages (pyspark, delta,
    lark, ...) are appended to its path by a .pth file, so nothing is downloaded. Returns its python."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            "-q",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=clean_env(),  # a PYTHONPATH naming the checkout would make pip find it "installed"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(site, "_dependencies.pth").write_text(
        "".join(f"{path}\n" for path in sorted(ours)), encoding="utf-8"
    )
    return python


def clean_env(**extra: str) -> dict:
    """This environment without anything pointing at the checkout."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    return {**env, **extra}


@pytest.mark.slow
@pytest.mark.spark
def test_the_built_wheel_runs_the_packaged_job_from_a_fresh_venv(tmp_path):
    """Build the wheel, install it alone into a new venv and spark-submit the job file it holds on
    the example config it holds: everything the job needs must be in the wheel."""
    spark_submit = Path(sys.executable).parent / "spark-submit"
    if not spark_submit.exists():
        pytest.skip(f"no spark-submit next to {sys.executable}")
    python = fresh_venv(tmp_path, build_wheel(tmp_path))
    work = tmp_path / "cwd"
    work.mkdir()
    env = clean_env(PYSPARK_PYTHON=str(python), PYSPARK_DRIVER_PYTHON=str(python), SPARK_LOCAL_IP="127.0.0.1")

    def output(*argv: str) -> str:
        done = subprocess.run(argv, capture_output=True, text=True, cwd=work, env=env, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout.strip()

    installed = Path(output(str(python), "-c", "import spark_datalog; print(spark_datalog.__file__)")).parent
    assert installed.is_relative_to(tmp_path / "venv") and not installed.is_relative_to(ROOT)
    job_file = output(str(python.parent / "spark-datalog"), "job-path")
    config = output(str(python.parent / "spark-datalog"), "job-path", "--example-config")
    assert Path(job_file) == installed / "jobs" / "materialize.py"
    assert Path(config) == installed / "examples" / "example-job.yaml"
    log4j = installed / "spark" / "log4j2.properties"
    assert log4j.is_file()

    warehouse = tmp_path / "wh"
    command = [
        str(spark_submit),
        *SMALL_LOCAL_SPARK,
        "--conf",
        "spark.driver.bindAddress=127.0.0.1",
        "--driver-java-options",
        f"-Dlog4j2.configurationFile=file:{log4j}",
        job_file,
        "--config",
        config,
        "--warehouse",
        str(warehouse),
        "--run-id",
        "wheel-1",
        "--show",
        "0",
    ]
    done = subprocess.run(command, capture_output=True, text=True, cwd=work, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"run wheel-1: {installed / 'examples' / 'graph.dl'} -> {warehouse}" in done.stdout
    # the workers of the new venv ran the recursive strata on the kernel (its dependencies,
    # polars included, came with the wheel): no fallback to rounds
    assert "cannot import" not in done.stdout + done.stderr
    assert any(
        line.split()[:2] == ["0:", "reach"] and "(partition-local)" in line
        for line in done.stdout.splitlines()
    )

    program = sd.Program.from_file(EXAMPLE)
    expected = sd.reference.evaluate(program, {})
    for name, rows in expected.items():
        assert any(line.split()[:3] == [name, "idb", str(len(rows))] for line in done.stdout.splitlines()), (
            name
        )
    assert "?- hub(fra). true" in done.stdout
    assert (warehouse / "reach" / "_delta_log").is_dir()
