"""The materialize job: flags and config, checks before Spark, and runs end to end."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import spark_datalog as sd
from spark_datalog.bounds import MAX_ITERATIONS
from spark_datalog import job
from spark_datalog.job import InputSpec, JobArgs, UsageError

from spark_datalog.spark.jars import delta_settings, submit_arguments
from spark_datalog.storage import uris

from .submit import SMALL_LOCAL_SPARK

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "spark_datalog" / "examples" / "graph.dl"
JOB_SCRIPT = ROOT / "jobs" / "materialize.py"
EXAMPLE_CONFIG = ROOT / "conf" / "example-job.yaml"

TC = """
.decl arc(src: long, dst: long)
.input arc
.output tc
tc(X, Y) :- arc(X, Y).
tc(X, Z) :- tc(X, Y), arc(Y, Z).
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------- locations


@pytest.mark.parametrize(
    "text, expected",
    [
        ("data/arcs.csv", InputSpec("data/arcs.csv")),
        ("data/arcs.csv:csv", InputSpec("data/arcs.csv", "csv")),
        ("s3a://lake/arcs", InputSpec("s3a://lake/arcs")),
        ("s3a://lake/arcs:delta", InputSpec("s3a://lake/arcs", "delta")),
        ("file:///data/arcs:PARQUET", InputSpec("file:///data/arcs", "parquet")),
        ("C:\\data\\arcs.csv", InputSpec("C:\\data\\arcs.csv")),
        ("C:\\data\\arcs:csv", InputSpec("C:\\data\\arcs", "csv")),
        ("hdfs://nn:8020/arcs", InputSpec("hdfs://nn:8020/arcs")),
        ("/data/arcs:json", InputSpec("/data/arcs:json")),  # not a format: part of the path
    ],
)
def test_only_a_trailing_known_format_is_split_off(text, expected):
    assert job.parse_location(text) == expected


def test_input_flags_map_relations_to_locations():
    args = job.parse_args(
        [
            "--program",
            "p.dl",
            "--warehouse",
            "wh",
            "--input",
            "arc=s3a://b/arcs:delta",
            "--input",
            "node = nodes.csv",
        ]
    )
    assert args.inputs == {"arc": InputSpec("s3a://b/arcs", "delta"), "node": InputSpec("nodes.csv")}
    assert args.inputs["arc"].location() == ("s3a://b/arcs", "delta")
    assert args.inputs["node"].location() == "nodes.csv"


@pytest.mark.parametrize("item", ["arc", "=x.csv", "arc=", "arc=a.csv --input arc=b.csv"])
def test_malformed_or_repeated_inputs_are_usage_errors(item):
    argv = ["--program", "p.dl", "--warehouse", "wh"]
    for part in item.split(" --input "):
        argv += ["--input", part]
    with pytest.raises(UsageError):
        job.parse_args(argv)


# ---------------------------------------------------------------------------------- flags


def test_defaults_when_only_program_and_warehouse_are_given():
    args = job.parse_args(["--program", "p.dl", "--warehouse", "wh"])
    assert args == JobArgs(program="p.dl", warehouse="wh")
    assert (args.mode, args.strategy, args.on_null, args.replace) == ("full", "seminaive", "error", False)
    assert args.run_id is None and args.outputs == () and args.checkpoint_interval == 10
    assert args.decompose is True


def test_every_flag_is_parsed():
    args = job.parse_args(
        [
            "--program",
            "p.dl",
            "--warehouse",
            "s3a://lake/wh",
            "--output",
            "tc,sg",
            "--output",
            "path",
            "--run-id",
            "scheduled__2024-06-01T00:00:00+00:00",
            "--mode",
            "full",
            "--replace",
            "--strategy",
            "naive",
            "--max-iterations",
            "50",
            "--checkpoint-interval",
            "3",
            "--on-null",
            "drop",
            "--show",
            "0",
            "--no-decompose",
        ]
    )
    assert args.outputs == ("tc", "sg", "path")
    assert args.decompose is False
    assert args.run_id == "scheduled__2024-06-01T00:00:00+00:00"
    assert (
        args.replace,
        args.strategy,
        args.max_iterations,
        args.checkpoint_interval,
        args.on_null,
        args.show,
    ) == (True, "naive", 50, 3, "drop", 0)


@pytest.mark.parametrize(
    "argv",
    [
        ["--mode", "sideways"],
        ["--method", "magic"],
        ["--strategy", "magic"],
        ["--max-iterations", "0"],
        ["--checkpoint-interval", "-1"],
        ["--show", "-1"],
        ["--on-null", "keep"],
        ["--database", "x; DROP"],
        ["--database", "1abc"],
        ["--frobnicate"],
    ],
)
def test_bad_flags_exit_with_status_2(argv, capsys):
    assert job.main(["--program", "p.dl", "--warehouse", "wh", *argv]) == 2
    assert "usage:" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, missing", [(["--warehouse", "wh"], "program"), (["--program", "p.dl"], "warehouse")]
)
def test_program_and_warehouse_are_required(argv, missing, capsys):
    assert job.main(argv) == 2
    assert f"no {missing} given" in capsys.readouterr().err


def test_a_catalog_database_stands_in_for_the_warehouse_location():
    args = job.parse_args(["--program", "p.dl", "--database", "reasoning"])
    assert (args.warehouse, args.database) == (None, "reasoning")
    args = job.parse_args(["--program", "p.dl", "--database", "reasoning", "--warehouse", "wh"])
    assert (args.warehouse, args.database) == ("wh", "reasoning")


def test_default_run_ids_are_timestamps_that_sort_in_time_order():
    first = job.default_run_id()
    second = job.default_run_id()
    assert first[:4].isdigit() and first.endswith("Z")
    assert first <= second


# ---------------------------------------------------------------------------------- config


def test_config_values_with_paths_relative_to_the_config_file(tmp_path):
    config = write(
        tmp_path / "conf" / "job.yaml",
        """
        program: ../programs/tc.dl
        warehouse: ../wh
        inputs:
          arc: ../data/arcs.csv:csv
          node: {uri: s3a://lake/nodes, format: delta}
          edge: /abs/edges.parquet
        outputs: tc, sg
        run-id: nightly
        replace: true
        strategy: naive
        max_iterations: 20
        checkpoint_interval: 5
        on_null: drop
        show: 3
    """,
    )
    args = job.parse_args(["--config", str(config)])
    assert args.program == str(tmp_path / "programs" / "tc.dl")
    assert args.warehouse == str(tmp_path / "wh")
    assert args.inputs == {
        "arc": InputSpec(str(tmp_path / "data" / "arcs.csv"), "csv"),
        "node": InputSpec("s3a://lake/nodes", "delta"),
        "edge": InputSpec("/abs/edges.parquet"),
    }
    assert args.outputs == ("tc", "sg")
    assert (
        args.run_id,
        args.replace,
        args.strategy,
        args.max_iterations,
        args.checkpoint_interval,
        args.on_null,
        args.show,
    ) == ("nightly", True, "naive", 20, 5, "drop", 3)
    assert args.config == str(config)


def test_flags_override_the_config_and_inputs_merge_per_relation(tmp_path):
    config = write(
        tmp_path / "job.yaml",
        """
        program: tc.dl
        warehouse: wh
        input:
          arc: arcs.csv
          node: nodes.csv
        output: [tc]
        strategy: naive
        decompose: false
        show: 3
    """,
    )
    args = job.parse_args(
        [
            "--config",
            str(config),
            "--warehouse",
            "/elsewhere",
            "--input",
            "arc=/new/arcs:parquet",
            "--output",
            "sg",
            "--show",
            "0",
            "--run-id",
            "r1",
        ]
    )
    assert args.program == str(tmp_path / "tc.dl")
    assert args.warehouse == "/elsewhere"
    assert args.inputs == {
        "arc": InputSpec("/new/arcs", "parquet"),
        "node": InputSpec(str(tmp_path / "nodes.csv")),
    }
    assert args.outputs == ("sg",)
    assert (args.strategy, args.show, args.run_id) == ("naive", 0, "r1")
    assert args.decompose is False


def test_null_config_values_mean_the_default(tmp_path):
    config = write(
        tmp_path / "job.yaml",
        """
        program: p.dl
        warehouse: wh
        run_id: null
        max_iterations: null
        strategy: null
    """,
    )
    args = job.parse_args(["--config", str(config)])
    assert (args.run_id, args.max_iterations, args.strategy) == (None, MAX_ITERATIONS, "seminaive")


@pytest.mark.parametrize(
    "body, message",
    [
        ("colour: blue", "unknown key 'colour' (known keys: program, inputs, warehouse, database,"),
        ("show: many", "show: must be an integer >= 0, not 'many'"),
        ("max_iterations: 0", "max_iterations: must be an integer >= 1, not 0"),
        ("max_iterations: true", "max_iterations: must be an integer >= 1, not True"),
        ("checkpoint-interval: 2.5", "checkpoint-interval: must be an integer >= 1, not 2.5"),
        ("replace: yes please", "replace: must be true or false, not 'yes please'"),
        ("decompose: 1", "decompose: must be true or false, not 1"),
        ("mode: sideways", "mode: must be one of full, incremental, not 'sideways'"),
        ("run_id: [a]", "run_id: must be a non-empty string, not ['a']"),
        ("inputs: [a.csv]", "inputs: must be a mapping of relation names to locations"),
        ("inputs: {arc: [a.csv]}", "inputs.arc: must be uri[:format] or {uri: ..., format: ...}"),
        ("inputs: {arc: {path: a.csv}}", "inputs.arc: unknown key 'path' (known keys: uri, format)"),
        ("inputs: {arc: {format: csv}}", "inputs.arc: missing key 'uri'"),
        (
            "inputs: {arc: {uri: a.csv, format: json}}",
            "inputs.arc.format: must be 'delta', 'parquet' or 'csv'",
        ),
        ("changes: {arc: ''}", "changes.arc: must be a non-empty string, not ''"),
        ("outputs: {tc: 1}", 'outputs: must be a list of relation names or "a,b"'),
        ("database: x; DROP", "database: must be a plain identifier"),
        ("config: other.yaml", "unknown key 'config'"),
        ("- a\n- b", "a job config is a mapping of settings, not a list"),
        ("program: [", "not valid YAML"),
        ("run_id: a\nrun-id: b", "'run-id' is given twice"),
    ],
)
def test_config_mistakes_are_usage_errors_naming_the_file(tmp_path, body, message):
    config = tmp_path / "job.yaml"
    config.write_text(
        "program: p.dl\nwarehouse: wh\n" + body + "\n" if not body.startswith("-") else body + "\n",
        encoding="utf-8",
    )
    with pytest.raises(UsageError) as err:
        job.parse_args(["--config", str(config)])
    assert message in str(err.value)
    assert str(config) in str(err.value)


def test_every_config_problem_is_one_line_naming_the_file_and_the_key(tmp_path, capsys):
    config = write(
        tmp_path / "job.yaml",
        """
        program: p.dl
        warehouse: wh
        inputs: {arc: {uri: a.csv, format: json}, node: [n.csv]}
        show: -1
        max-iterations: true
        colour: blue
    """,
    )
    assert job.main(["--config", str(config)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        f"materialize: {config}: inputs.arc.format: must be 'delta', 'parquet' or 'csv', not 'json'",
        f"{config}: inputs.node: must be uri[:format] or {{uri: ..., format: ...}}, not ['n.csv']",
        f"{config}: max-iterations: must be an integer >= 1, not True",
        f"{config}: show: must be an integer >= 0, not -1",
        f"{config}: unknown key 'colour' (known keys: program, inputs, warehouse, database, outputs, run_id, "
        "mode, replace, strategy, decompose, max_iterations, checkpoint_interval, on_null, show, changes, "
        "method, queries, facts_dir, output_dir, dialect, functors, macros)",
    ]


def test_config_keys_in_every_spelling_and_yaml_scalars_as_text(tmp_path):
    config = write(
        tmp_path / "job.yaml",
        """
        program: p.dl
        warehouse: wh
        database: reasoning
        input: {arc: {uri: arcs, format: DELTA}, node: 7}
        output: [tc, "sg,path"]
        run-id: 2024-06-01
        on-null: drop
        max-iterations: 3
        query: ["tc(1, X)"]
    """,
    )
    args = job.parse_args(["--config", str(config)])
    assert args.inputs == {
        "arc": InputSpec(str(tmp_path / "arcs"), "delta"),
        "node": InputSpec(str(tmp_path / "7")),
    }
    assert (args.database, args.outputs, args.run_id) == ("reasoning", ("tc", "sg", "path"), "2024-06-01")
    assert (args.on_null, args.max_iterations, args.queries) == ("drop", 3, (job.QuerySpec("tc(1, X)"),))


def test_a_missing_config_file_exits_2(tmp_path, capsys):
    assert job.main(["--config", str(tmp_path / "nope.yaml")]) == 2
    assert "cannot read the config file" in capsys.readouterr().err


def test_the_example_config_names_the_bundled_example_and_a_local_warehouse():
    args = job.parse_args(["--config", str(EXAMPLE_CONFIG)])
    assert Path(args.program) == EXAMPLE
    assert Path(args.warehouse) == ROOT / "warehouse"
    program, outputs = job.load_program(args)
    assert set(outputs) <= set(program.relations)


# ---------------------------------------------------------------------------------- before Spark


def test_input_and_output_names_are_checked_against_the_program(tmp_path):
    program = write(tmp_path / "tc.dl", TC)
    base = ["--program", str(program), "--warehouse", str(tmp_path / "wh")]
    for argv, message in [
        (["--input", "edge=e.csv"], "no relation 'edge'"),
        (["--input", "tc=t.csv"], "derived by rules"),
        (["--output", "path"], "no relation 'path'"),
    ]:
        with pytest.raises(UsageError, match=message):
            job.load_program(job.parse_args(base + argv))
    loaded, outputs = job.load_program(job.parse_args(base))
    assert outputs == ("tc",)


def test_an_input_relation_with_rules_is_given_by_its_own_name(tmp_path):
    """`.input arc` with rules adding to it: --input and --changes still name arc."""
    program = write(tmp_path / "sym.dl", ".decl arc(x: long, y: long)\n.input arc\narc(Y, X) :- arc(X, Y).\n")
    base = ["--program", str(program), "--warehouse", str(tmp_path / "wh")]
    loaded, _ = job.load_program(job.parse_args(base + ["--input", "arc=a.csv"]))
    assert loaded.checked.input_relation("arc") == "arc__input"
    job.load_program(job.parse_args(base + ["--mode", "incremental", "--changes", "arc=c.csv"]))


def test_a_wrong_program_exits_1_with_a_caret_before_any_jvm_starts(tmp_path):
    bad = write(
        tmp_path / "bad.dl",
        """
        .decl arc(src: long, dst: long)
        tc(X, Y) :- arc(X, Z).
    """,
    )
    warehouse = tmp_path / "wh"
    # A fresh interpreter: no JVM may be launched by the job when the program is wrong.
    code = textwrap.dedent(f"""
        import sys
        from spark_datalog import job
        status = job.main(["--program", {str(bad)!r}, "--warehouse", {str(warehouse)!r}])
        from pyspark import SparkContext
        print("status", status, "gateway", SparkContext._gateway is not None, file=sys.stderr)
    """)
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert "status 1 gateway False" in done.stderr, done.stderr
    assert "safety error" in done.stderr and "^" in done.stderr
    assert f"{bad}:3:" in done.stderr
    assert not warehouse.exists()


def test_the_job_script_reports_a_missing_program_as_a_usage_error(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            str(JOB_SCRIPT),
            "--program",
            str(tmp_path / "none.dl"),
            "--warehouse",
            str(tmp_path / "wh"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 2
    assert "cannot read the program" in done.stderr


def test_cli_materialize_takes_the_same_flags(tmp_path, capsys):
    from spark_datalog import cli

    assert (
        cli.main(["materialize", "--program", str(tmp_path / "none.dl"), "--warehouse", str(tmp_path / "wh")])
        == 2
    )
    assert "cannot read the program" in capsys.readouterr().err
    assert cli.main(["materialize", "--warehouse", "wh", "--mode", "incremental"]) == 2
    bad = write(tmp_path / "bad.dl", "p(X) :- q(Y).\n")
    assert cli.main(["materialize", "--program", str(bad), "--warehouse", str(tmp_path / "wh")]) == 1
    assert "safety error" in capsys.readouterr().err


# ---------------------------------------------------------------------------------- on Spark


def _reference_sizes(program) -> dict:
    return {name: len(facts) for name, facts in sd.reference.evaluate(program).items()}


def test_run_job_in_process_with_a_csv_input(spark, tmp_path):
    program_path = write(tmp_path / "tc.dl", TC)
    write(tmp_path / "arcs.csv", "src,dst\n1,2\n2,3\n3,4\n4,2\n")
    warehouse = tmp_path / "wh"
    argv = [
        "--program",
        str(program_path),
        "--warehouse",
        str(warehouse),
        "--input",
        f"arc={tmp_path / 'arcs.csv'}:csv",
        "--run-id",
        "first",
        "--show",
        "3",
    ]
    out = io.StringIO()
    summary = job.run_job(job.parse_args(argv), spark=spark, out=out)

    expected = sd.reference.evaluate(sd.Program.parse(TC), {"arc": {(1, 2), (2, 3), (3, 4), (4, 2)}})
    by_name = {rel.name: rel for rel in summary.relations}
    assert by_name["tc"].kind == "idb" and by_name["tc"].facts == len(expected["tc"]) == 12
    assert by_name["arc"].kind == "edb" and by_name["arc"].facts == 4
    wh = sd.Warehouse(spark, str(warehouse))
    assert {tuple(r) for r in wh.read("tc").collect()} == expected["tc"]
    assert {n: r.version for n, r in by_name.items()} == {n: wh.version(n) for n in wh.relations()}
    assert [s.relations for s in summary.strata] == [("tc",)]
    assert summary.strata[0].iterations >= 3 and summary.strata[0].seconds > 0
    assert summary.strata[0].partitioned
    assert summary.rows["tc"] == sorted(expected["tc"])[:3]
    assert spark.sparkContext._jsc is not None  # the caller's session is left running

    text = out.getvalue()
    assert text.startswith("run first:") and f"(Spark {spark.version}, local[2])" in text
    assert "(partition-local)" in text and "partition-local: no rule changes column 1 of tc" in text
    assert "... 9 more" in text and "tc(1, 2)" in text
    assert any(
        line.split()[:4] == ["tc", "idb", "12", str(by_name["tc"].version)] for line in text.splitlines()
    )

    # The same run id again: already committed, nothing new is written.
    again = job.run_job(job.parse_args(argv), spark=spark, out=False)
    assert {r.name: r.version for r in again.relations} == {n: r.version for n, r in by_name.items()}

    # Another program into the same warehouse is refused (exit 1) unless --replace.
    other = write(tmp_path / "sym.dl", TC.replace(".output tc", ".output tc\ntc(Y, X) :- arc(X, Y)."))
    other_argv = [
        "--program",
        str(other),
        "--warehouse",
        str(warehouse),
        "--input",
        f"arc={tmp_path / 'arcs.csv'}:csv",
        "--show",
        "0",
    ]
    with pytest.raises(sd.WarehouseError, match="another program"):
        job.run_job(job.parse_args(other_argv), spark=spark, out=False)
    replaced = job.run_job(job.parse_args(other_argv + ["--replace"]), spark=spark, out=False)
    expected_other = sd.reference.evaluate(
        sd.Program.from_file(other), {"arc": {(1, 2), (2, 3), (3, 4), (4, 2)}}
    )
    assert {tuple(r) for r in wh.read("tc").collect()} == expected_other["tc"] != expected["tc"]
    assert {r.name: r.facts for r in replaced.relations}["tc"] == len(expected_other["tc"])
    assert wh.version("tc") > by_name["tc"].version


@pytest.mark.slow
@pytest.mark.spark
def test_spark_submit_runs_the_bundled_example_into_a_warehouse(tmp_path):
    """The real entry point, as a scheduler runs it: a fresh JVM through spark-submit."""
    from deltalake import DeltaTable

    from spark_datalog.storage import APP_ID

    spark_submit = Path(sys.executable).parent / "spark-submit"
    if not spark_submit.exists():
        pytest.skip(f"no spark-submit next to {sys.executable}")
    warehouse = tmp_path / "wh"
    env = {
        **os.environ,
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYTHONPATH": str(ROOT),
    }
    command = [
        str(spark_submit),
        "--properties-file",
        str(ROOT / "conf" / "local-spark-defaults.conf"),
        "--driver-java-options",
        f"-Dlog4j2.configurationFile=file:{ROOT / 'conf' / 'log4j2.properties'}",
        *SMALL_LOCAL_SPARK,
        "--conf",
        f"spark.checkpoint.dir={tmp_path / 'checkpoints'}",
        *submit_arguments(delta_settings()),  # as `make run`: the delta-spark jar, native path
        str(JOB_SCRIPT),
        "--config",
        str(EXAMPLE_CONFIG),
        "--warehouse",
        str(warehouse),
        "--run-id",
        "submit-1",
        "--show",
        "2",
    ]
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=480)
    assert done.returncode == 0, done.stdout + done.stderr

    expected = _reference_sizes(sd.Program.from_file(EXAMPLE))
    program = sd.Program.from_file(EXAMPLE)
    assert "run submit-1:" in done.stdout and "strata:" in done.stdout
    # The session is spark-submit's (its --master), not a local session of the job's own.
    header = next(line for line in done.stdout.splitlines() if line.startswith("run submit-1:"))
    assert header.endswith(", local[1])"), header
    delta_path = "[Delta: native, delta-spark]" if delta_settings() else "[Delta: embedded, delta-rs]"
    assert delta_path in header, header
    printed = {}
    for line in done.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] in program.relations and parts[1] in ("edb", "idb"):
            printed[parts[0]] = (int(parts[2]), int(parts[3]))
    assert set(printed) == set(program.relations)
    # Inputs are the program's facts; derived relations as the reference interpreter says.
    expected.update({name: len(set(program.checked.facts[name])) for name in program.checked.edb})
    assert set(expected) == set(program.relations)
    for name, size in expected.items():
        table = DeltaTable(str(warehouse / name))
        rows = table.to_pyarrow_table().to_pylist()
        present = [row for row in rows if row["_count"] > 0]
        assert len(present) == size == printed[name][0], name
        assert table.version() == printed[name][1]
        assert table.history()[0]["operation"] is not None
        assert table.transaction_version(APP_ID) == 1  # the warehouse's first run
    # Every stratum appears in the summary with its time.
    for stratum in program.strata:
        assert any(
            ", ".join(stratum) in line and line.rstrip().endswith(" s") for line in done.stdout.splitlines()
        ), stratum


@pytest.fixture
def native_spark(spark):
    """``spark`` with warehouses on the native Delta path (the suite's default is embedded, see
    conftest.py); skipped where the delta-spark jar is missing, as tests/storage/helpers.py does."""
    from spark_datalog.storage import delta_jar_available

    if not delta_jar_available(spark):
        message = "the delta-spark jar is not on the classpath (not resolvable from Maven Central here)"
        if os.environ.get("CI"):
            pytest.fail(message + ": CI must test the native path")
        pytest.skip(message)
    setting = "spark.datalog.warehouse.backend"
    before = spark.conf.get(setting)
    spark.conf.set(setting, "native")
    try:
        yield spark
    finally:
        spark.conf.set(setting, before)


def test_run_job_registers_the_relations_in_a_catalog_database(native_spark, tmp_path):
    spark = native_spark
    program_path = write(tmp_path / "tc.dl", TC)
    write(tmp_path / "arcs.csv", "src,dst\n1,2\n2,3\n3,1\n")
    base = ["--program", str(program_path), "--input", f"arc={tmp_path / 'arcs.csv'}", "--show", "0"]
    base += ["--database", "job_catalog_test"]
    summary = job.run_job(job.parse_args(base), spark=spark, out=False)

    expected = sd.reference.evaluate(sd.Program.parse(TC), {"arc": {(1, 2), (2, 3), (3, 1)}})
    tables = {t.name for t in spark.catalog.listTables("job_catalog_test")}
    assert tables == {"arc", "tc"} and summary.delta_path == "native"
    stored = spark.table("job_catalog_test.tc").where("_count > 0").collect()
    assert {(r[0], r[1]) for r in stored} == expected["tc"]
    # No --warehouse: the tables are at the database's location.
    location = spark.catalog.getDatabase("job_catalog_test").locationUri
    assert summary.warehouse == uris.normalise(location) and location.endswith("job_catalog_test.db")
    assert (Path(summary.warehouse) / "tc" / "_delta_log").is_dir()
    # A query's answers may not go into that location, known only once Spark runs.
    inside = ["--query", f"tc(1, X)={summary.warehouse}/answers:parquet"]
    with pytest.raises(UsageError, match="overlaps the warehouse"):
        job.run_job(job.parse_args(base + inside), spark=spark, out=False)


# ---------------------------------------------------------------------------------- incremental


def test_incremental_flags_are_parsed_and_only_for_that_mode():
    args = job.parse_args(
        [
            "--program",
            "p.dl",
            "--warehouse",
            "wh",
            "--mode",
            "incremental",
            "--changes",
            "arc=ch.parquet",
            "--method",
            "dred",
        ]
    )
    assert args.mode == "incremental" and args.method == "dred"
    assert args.changes == {"arc": InputSpec("ch.parquet")}
    with pytest.raises(UsageError, match="--changes is for --mode incremental"):
        job.parse_args(["--program", "p.dl", "--warehouse", "wh", "--changes", "arc=ch.parquet"])


def test_run_job_incremental_from_delta_changes_change_sets_and_snapshots(spark, tmp_path):
    import pyarrow as pa
    from deltalake import write_deltalake

    def arcs(rows):
        return pa.table(
            {
                "src": pa.array([r[0] for r in rows], pa.int64()),
                "dst": pa.array([r[1] for r in rows], pa.int64()),
            }
        )

    def tc_of(rows):
        return sd.reference.evaluate(sd.Program.parse(TC), {"arc": set(rows)})["tc"]

    program_path = write(tmp_path / "tc.dl", TC)
    source, warehouse = str(tmp_path / "arcs"), str(tmp_path / "wh")
    write_deltalake(source, arcs([(1, 2), (2, 3)]))
    base = ["--program", str(program_path), "--warehouse", warehouse, "--show", "0"]
    job.run_job(job.parse_args(base + ["--input", f"arc={source}:delta"]), spark=spark, out=False)
    wh = sd.Warehouse(spark, warehouse)

    # 1. no flags: the Delta input's changes since the version the warehouse consumed
    write_deltalake(source, arcs([(3, 4)]), mode="append")
    out = io.StringIO()
    summary = job.run_job(
        job.parse_args(base + ["--mode", "incremental", "--run-id", "inc-1"]), spark=spark, out=out
    )
    edb = {(1, 2), (2, 3), (3, 4)}
    assert {tuple(r) for r in wh.read("tc").collect()} == tc_of(edb)
    assert summary.update.relations["tc"].inserted == 3 and summary.update.run_id == "inc-1"
    text = out.getvalue()
    assert "update run inc-1" in text and "tc: +3 -0 facts" in text and ": dred," in text
    by_name = {rel.name: rel for rel in summary.relations}
    assert by_name["tc"].facts == 6 and by_name["tc"].version == wh.version("tc")

    # 2. an explicit change set (Parquet, signed counts), with a chosen method
    changes = str(tmp_path / "changes.parquet")
    spark.createDataFrame([(2, 3, -1), (4, 1, 1)], "src long, dst long, _count long").write.parquet(changes)
    summary = job.run_job(
        job.parse_args(
            base + ["--mode", "incremental", "--changes", f"arc={changes}", "--method", "recompute"]
        ),
        spark=spark,
        out=False,
    )
    edb = {(1, 2), (3, 4), (4, 1)}
    assert {tuple(r) for r in wh.read("tc").collect()} == tc_of(edb)
    assert [s.method for s in summary.update.strata] == ["recompute"]

    # 3. a new snapshot of the input (CSV): its difference with the stored table is the change
    write(tmp_path / "arcs.csv", "src,dst\n1,2\n3,4\n")
    summary = job.run_job(
        job.parse_args(base + ["--mode", "incremental", "--input", f"arc={tmp_path / 'arcs.csv'}:csv"]),
        spark=spark,
        out=False,
    )
    assert {tuple(r) for r in wh.read("tc").collect()} == tc_of({(1, 2), (3, 4)})
    assert summary.update.relations["arc"].deleted == 1
    assert {tuple(r) for r in wh.read("arc", with_counts=True).collect()} == {(1, 2, 1), (3, 4, 1)}


def test_csv_change_sets_are_read_typed_and_checked(spark, tmp_path, capsys):
    """A CSV change set is read as every CSV input is: its _count a long, a bad one an input error."""
    program_path = write(tmp_path / "tc.dl", TC)
    write(tmp_path / "arcs.csv", "src,dst\n1,2\n2,3\n")
    base = ["--program", str(program_path), "--warehouse", str(tmp_path / "wh"), "--show", "0"]
    job.run_job(job.parse_args(base + ["--input", f"arc={tmp_path / 'arcs.csv'}"]), spark=spark, out=False)
    write(tmp_path / "changes.csv", "src,dst,_count\n2,3,-1\n3,1,1\n")
    job.run_job(
        job.parse_args(base + ["--mode", "incremental", "--changes", f"arc={tmp_path / 'changes.csv'}"]),
        spark=spark,
        out=False,
    )
    wh = sd.Warehouse(spark, str(tmp_path / "wh"))
    expected = sd.reference.evaluate(sd.Program.parse(TC), {"arc": {(1, 2), (3, 1)}})["tc"]
    assert {tuple(r) for r in wh.read("tc").collect()} == expected
    write(tmp_path / "bad.csv", "src,dst,_count\n5,6,one\n")
    argv = base + ["--mode", "incremental", "--changes", f"arc={tmp_path / 'bad.csv'}"]
    assert job.main(argv) == 1
    err = capsys.readouterr().err
    assert "'one', which is not a long" in err and "Traceback" not in err


def test_an_output_flag_for_a_relation_the_program_does_not_compute_is_a_usage_error(tmp_path):
    program = write(tmp_path / "tc.dl", TC + "\nloop(X) :- loop(X), arc(X, X).\n")
    base = ["--program", str(program), "--warehouse", str(tmp_path / "wh")]
    with pytest.raises(UsageError, match="'loop' is not computed"):
        job.load_program(job.parse_args(base + ["--output", "loop"]))
    _, outputs = job.load_program(job.parse_args(base + ["--output", "arc"]))
    assert outputs == ("arc",)


def test_macros_from_the_config_and_the_flags_define_names_before_the_program_is_read(tmp_path):
    (tmp_path / "p.dl").write_text("#ifdef FLAG\np(N).\n#endif\nq(MODE).\nr(X) :- p(X).\ns(X) :- q(X).\n")
    config = tmp_path / "job.yaml"
    config.write_text('program: p.dl\nwarehouse: wh\nmacros:\n  N: 10\n  MODE: fast\n  FLAG: ""\n')
    args = job.parse_args(["--config", str(config)])
    assert args.macros == {"N": "10", "MODE": "fast", "FLAG": ""}
    program, _ = job.load_program(args)
    assert sd.reference.evaluate(program, {})["r"] == {(10,)}
    args = job.parse_args(["--config", str(config), "--macro", "N=3 OTHER", "--macro", "MODE=slow"])
    assert args.macros == {"N": "3", "MODE": "slow", "FLAG": "", "OTHER": "1"}
    result = sd.reference.evaluate(job.load_program(args)[0], {})
    assert (result["r"], result["s"]) == ({(3,)}, {("slow",)})
    with pytest.raises(UsageError, match="--macro: macro name '1N' is not a name"):
        job.parse_args(["--config", str(config), "--macro", "1N=2"])
    config.write_text("program: p.dl\nwarehouse: wh\nmacros:\n  1N: 2\n")
    with pytest.raises(UsageError, match="macros.1N"):
        job.parse_args(["--config", str(config)])


def test_functors_from_the_config_and_the_flags_are_bound_before_spark(tmp_path):
    (tmp_path / "p.dl").write_text(
        ".functor root(x: float): float\n.decl q(x: float)\nq(4.0).\nr(Y) :- q(X), Y = @root(X)."
    )
    config = tmp_path / "job.yaml"
    config.write_text("program: p.dl\nwarehouse: wh\nfunctors:\n  root: math:sqrt\n")
    args = job.parse_args(["--config", str(config)])
    assert args.functors == {"root": "math:sqrt"}
    program, _ = job.load_program(args)
    assert sd.reference.evaluate(program, {})["r"] == {(2.0,)}
    args = job.parse_args(["--config", str(config), "--functor", "root=math:nope"])
    with pytest.raises(UsageError, match="root: cannot load 'math:nope'"):
        job.load_program(args)
    config.write_text("program: p.dl\nwarehouse: wh\nfunctors:\n  root: sqrt\n")
    with pytest.raises(UsageError, match="functors.root"):
        job.parse_args(["--config", str(config)])
    config.write_text("program: p.dl\nwarehouse: wh\n")
    with pytest.raises(sd.FunctorError, match="functor @root is declared but bound to no function"):
        job.load_program(job.parse_args(["--config", str(config)]))
