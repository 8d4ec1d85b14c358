"""plan/ is backend-neutral: importing it must not import pyspark."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import spark_datalog.plan

PLAN_DIR = pathlib.Path(spark_datalog.plan.__file__).parent


def test_plan_sources_do_not_import_pyspark():
    pattern = re.compile(r"^\s*(import|from)\s+pyspark", re.MULTILINE)
    offenders = [p.name for p in PLAN_DIR.glob("*.py") if pattern.search(p.read_text())]
    assert offenders == []


def test_importing_plan_modules_leaves_pyspark_unloaded():
    modules = sorted(f"spark_datalog.plan.{p.stem}" for p in PLAN_DIR.glob("*.py") if p.stem != "__init__")
    code = "import sys\n" + "".join(f"import {m}\n" for m in modules) + "print('pyspark' in sys.modules)"
    root = str(PLAN_DIR.parent.parent)
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=root,
        env={"PYTHONPATH": root},
        check=True,
    )
    assert out.stdout.strip() == "False"
