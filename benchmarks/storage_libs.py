"""The embedded path's own storage code against the ``deltalake`` API that could replace it
(issue 22, item 3): applying signed changes (``EmbeddedBackend.apply_changes`` against
``DeltaTable.merge``) and reading a change data feed (``table_changes``, which reads the
feed's files with Spark, against ``DeltaTable.load_cdf``, which reads them in this process).

    python -m benchmarks.storage_libs [--rows 8000000] [--repeat 3] [--out benchmarks/STORAGE_LIBS.md]

Every timed merge starts from a fresh copy of the same table, written as the engine writes a
relation (rows sorted on the columns, files of ``spark.datalog.rowsPerFile`` rows). Each cell is the best of
``--repeat`` runs. Both merges must leave the same rows (checked; the run fails otherwise).
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.report import load_average, machine, now, versions

HERE = Path(__file__).resolve().parent
COLUMNS = [("X", "long"), ("Y", "long")]
CDF = {"delta.enableChangeDataFeed": "true"}


def relation(rows: int, seed: int = 1):
    """``rows`` facts ``(X, Y)`` with ``X`` in ``[0, rows / 10)`` and count 1, as Arrow."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    return pa.table(
        {
            "X": rng.integers(0, rows // 10, rows),
            "Y": rng.integers(0, 1 << 40, rows),
            "_count": np.ones(rows, dtype=np.int64),
        }
    )


def signed_change(base, size: int, narrow: bool, seed: int = 2):
    """Half deletions of stored facts, half new facts; ``narrow``: all with ``X < 1000``."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    x = base.column("X").to_numpy()
    pool = np.where(x < 1000)[0] if narrow else np.arange(len(x))
    gone = rng.choice(pool, size // 2, replace=False)
    high = 1000 if narrow else len(x) // 10
    return pa.concat_tables(
        [
            pa.table(
                {
                    "X": x[gone],
                    "Y": base.column("Y").to_numpy()[gone],
                    "_count": -np.ones(size // 2, dtype=np.int64),
                }
            ),
            pa.table(
                {
                    "X": rng.integers(0, high, size // 2),
                    "Y": rng.integers(1 << 41, 1 << 42, size // 2),
                    "_count": np.ones(size // 2, dtype=np.int64),
                }
            ),
        ]
    )


def engine_merge(spark, root: str, change) -> dict:
    from spark_datalog.storage.embedded import EmbeddedBackend

    result = EmbeddedBackend(spark, root).apply_changes("r", COLUMNS, change, ("bench", 2), {})
    return {"files_added": result.files_added, "files_removed": result.files_removed}


def engine_driver_merge(spark, root: str, change) -> dict:
    """``apply_changes`` with its driver merge whatever the size of the touched files."""
    setting = "spark.datalog.driverMergeRows"
    limit = spark.conf.get(setting, None)
    spark.conf.set(setting, str(1 << 62))
    try:
        return engine_merge(spark, root, change)
    finally:
        if limit is None:
            spark.conf.unset(setting)
        else:
            spark.conf.set(setting, limit)


def deltalake_merge(spark, root: str, change) -> dict:
    """The merge ``apply_changes`` does, as one ``DeltaTable.merge`` (fixed column names here;
    the engine would have to quote a program's names into this SQL text)."""
    from deltalake import DeltaTable

    metrics = (
        DeltaTable(f"{root}/r")
        .merge(
            change,
            predicate='t."X" = s."X" AND t."Y" = s."Y"',
            source_alias="s",
            target_alias="t",
        )
        .when_matched_delete(predicate='t."_count" + s."_count" = 0')
        .when_matched_update(updates={'"_count"': 't."_count" + s."_count"'})
        .when_not_matched_insert_all()
        .execute()
    )
    return {
        "files_added": metrics["num_target_files_added"],
        "files_removed": metrics["num_target_files_removed"],
    }


def layout(root: str) -> dict:
    """Files of the table and the rows of its largest file, and a checksum of its rows."""
    from deltalake import DeltaTable

    table = DeltaTable(f"{root}/r")
    counts = [a.as_py() for a in table.get_add_actions(flatten=True).column("num_records")]
    rows = table.to_pyarrow_table().sort_by([("X", "ascending"), ("Y", "ascending")])
    return {"files": len(counts), "largest_file_rows": max(counts), "rows": rows}


def time_merges(spark, base, change, repeat: int, after=None) -> dict:
    """Best-of-``repeat`` seconds of each merge of ``change``, each from a fresh copy of the
    table; ``after``: a change merged first, untimed, by the same method."""
    from spark_datalog.storage.embedded import EmbeddedBackend

    template = tempfile.mkdtemp(prefix="bench_merge_")
    EmbeddedBackend(spark, template).replace("r", COLUMNS, base, ("bench", 1), {})
    out, contents = {}, {}
    systems = (("engine", engine_merge), ("driver", engine_driver_merge), ("deltalake", deltalake_merge))
    for name, merge in systems:
        best, info = float("inf"), {}
        for _ in range(repeat):
            root = tempfile.mkdtemp(prefix="bench_merge_run_")
            shutil.copytree(template, root, dirs_exist_ok=True)
            if after is not None:
                merge(spark, root, after)
            started = time.perf_counter()
            info = merge(spark, root, change)
            best = min(best, time.perf_counter() - started)
            shape = layout(root)
            contents[name] = shape.pop("rows")
            info.update(shape)
            shutil.rmtree(root)
        out[name] = {"seconds": best, **info}
    shutil.rmtree(template)
    if not all(contents["engine"].equals(rows) for rows in contents.values()):
        raise SystemExit("the merges left different rows")
    return out


def cdf_table(base, change_rows: int) -> tuple:
    """A table with the change data feed: ``base``, then an append of ``change_rows`` new facts
    and a delete of about as many (delta-rs writes change data files for it)."""
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    root = tempfile.mkdtemp(prefix="bench_cdf_")
    uri = f"{root}/r"
    write_deltalake(uri, base, configuration=CDF)
    added = relation(change_rows, seed=3)
    write_deltalake(uri, pa.table({**{c: added.column(c) for c in ("X", "Y", "_count")}}), mode="append")
    DeltaTable(uri).delete(f'"X" < {max(change_rows // 20, 1)}')  # ~10 facts per X in each
    return root, uri


def time_change_feeds(spark, base, change_rows: int, repeat: int) -> dict:
    import pyarrow as pa
    from deltalake import DeltaTable

    from pyspark.sql import functions as F

    from spark_datalog.storage.embedded import signed_change_feed, table_changes

    root, uri = cdf_table(base, change_rows)
    out = {}

    def total(df) -> tuple:  # reads every column of every changed row (a count might not)
        return tuple(df.agg(F.sum("_count"), F.sum(F.col("X") * F.col("_count"))).first())

    def engine() -> tuple:
        return total(table_changes(spark, uri, 0, None).df)

    def deltalake() -> tuple:
        # no columns=[...]: delta-rs folds unquoted names to lower case ("X" is not found)
        table = pa.RecordBatchReader.from_stream(DeltaTable(uri).load_cdf(starting_version=1)).read_all()
        table = table.select(["X", "Y", "_count", "_change_type"])
        table = table.set_column(3, "_change_type", table.column(3).cast(pa.string()))  # string_view
        return total(signed_change_feed(spark.createDataFrame(table), ["X", "Y"], True))

    for name, read in (("engine", engine), ("deltalake", deltalake)):
        best, sums = float("inf"), ()
        for i in range(repeat + 1):  # the first is a warm-up (class loading, code generation)
            started = time.perf_counter()
            sums = read()
            if i:
                best = min(best, time.perf_counter() - started)
        out[name] = {"seconds": best, "sums": sums}
    shutil.rmtree(root)
    if out["engine"]["sums"] != out["deltalake"]["sums"]:
        raise SystemExit(f"the two change feeds differ: {out}")
    return out


def markdown(args, merges: list, feeds: list, meta: dict) -> str:
    lines = [
        "# Storage: the engine's own code against the deltalake API (measured)",
        "",
        f"Measured by `{meta['command']}` on {meta['date']}; load average {meta['load_start']} at start, "
        f"{meta['load_end']} at end. Versions: {meta['versions']}.",
        "",
        "## Applying signed changes to a relation",
        "",
        f"A relation of {args.rows:,} facts `(X, Y)` in the engine's layout (sorted, files of "
        "1,048,576 rows); half of each change deletes stored facts, half adds new ones. *narrow*: "
        "every fact of the change has "
        "`X < 1000` (one file holds them); *spread*: facts anywhere. Best of "
        f"{args.repeat}; all left the same rows. The engine merges on the driver (pyarrow) when the "
        "files a change touches hold at most `spark.datalog.driverMergeRows` rows (then 2,000,000; "
        "now `spark.driver.memory` / 512 bytes), with Spark otherwise: a spread change touches "
        "every file, so it took Spark here. *driver merge forced*: the same with that limit lifted.",
        "",
        "| change | engine `apply_changes` s | files +/- | same, driver merge forced s "
        "| `DeltaTable.merge` s | files +/- | files after (engine / deltalake) "
        "| largest file rows (engine / deltalake) |",
        "|---|---:|---|---:|---:|---|---|---|",
    ]
    for label, r in merges:
        e, v, d = r["engine"], r["driver"], r["deltalake"]
        lines.append(
            f"| {label} | {e['seconds']:.2f} | +{e['files_added']} -{e['files_removed']} | "
            f"{v['seconds']:.2f} | {d['seconds']:.2f} | "
            f"+{d['files_added']} -{d['files_removed']} | {e['files']} / {d['files']} | "
            f"{e['largest_file_rows']:,} / {d['largest_file_rows']:,} |"
        )
    lines += [
        "",
        "## Reading a change data feed",
        "",
        f"A table of {args.rows:,} facts with `delta.enableChangeDataFeed`, then an append and a delete "
        "(delta-rs writes change data files for the delete). Time to have the signed rows as a Spark "
        "DataFrame and sum two of its columns (both sums checked equal). "
        f"Best of {args.repeat}, after one warm-up read each.",
        "",
        "| rows appended (as many deleted) | engine `table_changes` (Spark reads the files) s "
        "| `load_cdf` + `createDataFrame` s |",
        "|---:|---:|---:|",
    ]
    for rows, r in feeds:
        lines.append(f"| {rows:,} | {r['engine']['seconds']:.2f} | {r['deltalake']['seconds']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=8_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=str(HERE / "STORAGE_LIBS.md"))
    args = parser.parse_args(argv)
    from benchmarks.session import bench_session

    meta = {
        "command": "python -m benchmarks.storage_libs "
        + shlex.join(argv if argv is not None else sys.argv[1:]),
        "date": now(),
        "load_start": load_average(),
        "machine": machine(),
    }
    spark = bench_session()
    base = relation(args.rows)
    merges = []
    spread = signed_change(base, 2000, False, seed=4)
    for label, size, narrow, after in (
        ("2,000 facts, narrow", 2000, True, None),
        ("2,000 facts, spread", 2000, False, None),
        ("200,000 facts, spread", 200_000, False, None),
        ("2,000 facts, narrow, after a 2,000-fact spread change", 2000, True, spread),
    ):
        change = signed_change(base, size, narrow)
        merges.append((label, time_merges(spark, base, change, args.repeat, after)))
        print(label, merges[-1][1], flush=True)
    feeds = []
    for rows in (100_000, 2_000_000):
        feeds.append((rows, time_change_feeds(spark, base, rows, args.repeat)))
        print(rows, feeds[-1][1], flush=True)
    from importlib import metadata

    found = {**versions(), "deltalake": metadata.version("deltalake")}
    meta.update(load_end=load_average(), versions=", ".join(f"{k} {x}" for k, x in found.items() if x))
    Path(args.out).write_text(markdown(args, merges, feeds, meta))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
