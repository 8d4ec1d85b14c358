"""The quickstart notebook runs top to bottom (its code cells, in order, in one namespace), and
is committed executed, with its outputs.

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


def test_the_notebook_is_committed_executed_with_its_outputs():
    notebook = nbformat.read(str(NOTEBOOK), as_version=4)
    nbformat.validate(notebook)
    cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert cells, "the notebook has no code cells"
    # Executed top to bottom in one go (`jupyter nbconvert --execute --inplace`), without errors.
    assert [cell.execution_count for cell in cells] == list(range(1, len(cells) + 1))
    outputs = [output for cell in cells for output in cell.outputs]
    assert not [output for output in outputs if output.output_type == "error"]
    assert any("image/png" in output.get("data", {}) for output in outputs), "the plot is not saved"
    shown = "".join(output.get("text", "") + output.get("data", {}).get("text/plain", "")
                    for output in outputs)
    assert "reach(X: long, count_Y: long)" in shown  # outputs of today's column names
    assert "update run quickstart-2" in shown  # ... and of the incremental update
    # Nothing a plain Python interpreter cannot run.
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
        # the warehouse after the update: the arcs with the change applied
        changed = set(arcs) | {r[:3] for r in namespace["change_rows"] if r[3] > 0}
        changed -= {r[:3] for r in namespace["change_rows"] if r[3] < 0}
        assert len(changed) == len(arcs)  # one arc added, one removed
        expected = sd.reference.evaluate(program, {"arc": changed})
        n = namespace["N"]
        assert len(expected["tc"]) == n * (n - 1) // 2  # a line: every stop reaches every later one
        for name in ("tc", "shortest", "reach"):
            assert {tuple(r) for r in wh.read(name).collect()} == expected[name], name
        assert wh.read("reach").columns == ["X", "count_Y"]
        assert set(wh.relations()) == {"arc", "tc", "shortest", "reach"}
        first, second = wh.runs()
        assert (first["run_id"], second["run_id"], second["mode"]) == ("quickstart-1", "quickstart-2",
                                                                     "incremental")
        assert first["produced"] == namespace["result"].warehouse_versions
        assert {**first["produced"], **second["produced"]} == {name: wh.version(name)
                                                                for name in wh.relations()}
        assert "shortest" in namespace["report"].changed

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
