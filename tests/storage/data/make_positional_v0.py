"""How tests/storage/data/positional_v0 was made: run with PYTHONPATH at commit 81f1bee (before
issue 22 item 7), `python make_positional_v0.py positional_v0 positional_v0.dl`. It is a warehouse
as that version left it: tc with columns c0, c1 and a run log of JSON strings, a row per event."""

import sys
import pyarrow as pa
import spark_datalog as sd
from spark_datalog.storage.warehouse import Warehouse

root = sys.argv[1]
program = sd.Program.from_file(sys.argv[2])
wh = Warehouse(None, root, backend="embedded")
arc = pa.table({"src": [1, 2], "dst": [2, 3], "_count": [1, 1]})
tc = pa.table({"c0": [1, 2, 1], "c1": [2, 3, 3], "_count": [1, 1, 1]})
with wh.run(program.fingerprint, run_id="v0-run", mode="full") as run:
    wh.replace("arc", [("src", "long"), ("dst", "long")], arc, run)
    wh.replace("tc", [("c0", "long"), ("c1", "long")], tc, run)
    run.consume("arc", run.produced["arc"])
print(wh.runs())
