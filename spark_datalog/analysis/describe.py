"""The text ``spark-datalog check`` prints for a checked program."""

from __future__ import annotations

from .checked import CheckedProgram


def describe(checked: CheckedProgram) -> str:
    """Every relation with its kind, columns, types and aggregate, then the strata in evaluation
    order, then the outputs. Deterministic: relations in order of first mention."""
    lines = ["relations:"]
    lines += [f"  {schema}" for schema in checked.relations.values()]
    lines.append("strata:")
    lines += [f"  {stratum}" for stratum in checked.strata] or ["  (none)"]
    lines.append(f"outputs: {', '.join(checked.outputs) or '(none)'}")
    return "\n".join(lines)
