"""The quickstart notebook runs top to bottom (its code cells, in order, in one namespace).

No Jupyter server: the cells are exec()'d with matplotlib's Agg backend. The notebook's
``local_session()`` is a getOrCreate, so it picks up the test session; the notebook never stops it.
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import nbformat
import pytest

import spark_datalog as sd

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "quickstart.ipynb"


def code_cells(path: Path) -> list:
    notebook = nbformat.read(str(path), as_version=4)
    nbformat.validate(notebook)
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def test_the_notebook_is_valid_and_clean():
    notebook = nbformat.read(str(NOTEBOOK), as_version=4)
    nbformat.validate(notebook)
    cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert cells, "the notebook has no code cells"
    # Committed without outputs, and with nothing a plain Python interpreter cannot run.
    assert all(not cell.outputs and cell.execution_count is None for cell in cells)
    assert not any(line.lstrip().startswith(("%", "!")) for cell in cells
                   for line in cell.source.splitlines())


def test_the_notebook_runs_and_materializes_the_expected_facts(spark):
    matplotlib = pytest.importorskip("matplotlib", reason="the notebook draws with matplotlib")
    matplotlib.use("Agg")
    context = spark.sparkContext
    checkpoint_dir = context.getCheckpointDir()
    namespace: dict = {"__name__": "__quickstart__"}
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*non-interactive.*")  # plt.show() on Agg
            for number, source in enumerate(code_cells(NOTEBOOK), start=1):
                try:
                    exec(compile(source, f"{NOTEBOOK.name}[code cell {number}]", "exec"), namespace)
                except Exception as exc:
                    raise AssertionError(f"code cell {number} failed: {exc!r}\n{source}") from exc

        assert namespace["spark"] is spark  # the notebook reused the running session
        assert context._jsc is not None     # ... and left it running

        program, arcs, wh = namespace["program"], namespace["arcs"], namespace["wh"]
        expected = sd.reference.evaluate(program, {"arc": set(arcs)})
        n = namespace["N"]
        assert len(expected["tc"]) == n * (n - 1) // 2  # a line: every stop reaches every later one
        assert {tuple(r) for r in wh.read("tc").collect()} == expected["tc"]
        assert {tuple(r) for r in wh.read("shortest").collect()} == expected["shortest"]
        assert set(wh.relations()) == {"arc", "tc", "shortest"}
        assert namespace["result"].warehouse_versions == {name: wh.version(name)
                                                         for name in wh.relations()}

        # The stats the picture is drawn from: semi-naive deltas of tc are disjoint and add up.
        recursive = namespace["recursive"]
        tc_stratum = next(s for s in recursive if "tc" in s.relations)
        assert sum(it.new_rows.get("tc", 0) for it in tc_stratum.rounds) == len(expected["tc"])
        assert tc_stratum.iterations >= 4
        figure = Path(namespace["figure_path"])
        assert figure.stat().st_size > 5_000 and figure.read_bytes()[:4] == b"\x89PNG"
    finally:
        import matplotlib.pyplot as plt

        plt.close("all")
        if "work_dir" in namespace:
            shutil.rmtree(namespace["work_dir"], ignore_errors=True)
        # local_session() set its own log level and checkpoint dir on the shared session.
        context.setLogLevel("ERROR")
        if checkpoint_dir:
            context.setCheckpointDir(checkpoint_dir)
