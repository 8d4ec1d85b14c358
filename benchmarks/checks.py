"""The cross-system correctness check of one benchmark size.

Every system that finished must report the same number of facts; on small sizes (those the
reference interpreter runs on) the facts themselves must be equal too. A mismatch is a failed
run: the report shows it at the top and the command exits non-zero.
"""

from __future__ import annotations

SAMPLE = 5


def _normalise(rows: set) -> set:
    """Facts as comparable tuples: integral floats as ints (a distance may come back as 3.0)."""

    def value(v):
        if isinstance(v, float) and v.is_integer():
            return int(v)
        return v

    return {tuple(value(v) for v in row) for row in rows}


def check_size(benchmark: str, size: str, records: list, compared_rows: bool) -> dict:
    """Compare the ``ok`` records of one size. Returns ``{"benchmark", "size", "verdict",
    "detail", "facts"}`` with verdict ``"ok"``, ``"mismatch"`` or ``"nothing to compare"``."""
    ok = [r for r in records if r["status"] == "ok"]
    counts = {r["system"]: r["facts"] for r in ok}
    result = {
        "benchmark": benchmark,
        "size": size,
        "facts": counts,
        "verdict": "ok",
        "detail": "",
        "rows_compared": [],
    }
    if len(ok) < 2:
        result["verdict"] = "nothing to compare"
        result["detail"] = f"only {len(ok)} system(s) finished"
        return result
    problems = []
    if len(set(counts.values())) > 1:
        problems.append("fact counts differ: " + ", ".join(f"{s}={n}" for s, n in counts.items()))
    if compared_rows:
        with_rows = [(r["system"], _normalise(r["rows"])) for r in ok if r.get("rows") is not None]
        # Compare against the reference interpreter when it ran, else against the first system.
        with_rows.sort(key=lambda item: item[0] != "reference")
        if with_rows:
            base_name, base = with_rows[0]
            result["rows_compared"] = [name for name, _ in with_rows]
            for name, rows in with_rows[1:]:
                if rows != base:
                    missing = sorted(base - rows, key=repr)[:SAMPLE]
                    extra = sorted(rows - base, key=repr)[:SAMPLE]
                    problems.append(f"{name} facts differ from {base_name}: missing {missing}, extra {extra}")
    if problems:
        result["verdict"] = "mismatch"
        result["detail"] = "; ".join(problems)
    return result
