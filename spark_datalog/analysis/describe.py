"""The text ``spark-datalog check`` prints for a checked program."""

from __future__ import annotations

from .checked import CheckedProgram


def describe(checked: CheckedProgram) -> str:
    """Every relation with its kind, columns, types and aggregate, then the strata in evaluation
    order (with the subsumptions their rounds apply), then the outputs. Deterministic:
    relations in order of first mention.

    >>> from spark_datalog.analysis import analyse
    >>> from spark_datalog.syntax.parser import parse
    >>> text = "r(1, 2). r(X, Y) :- r(Y, X). r(A, B) <= r(C, D) :- C < A, D < B. .output r"
    >>> print(describe(analyse(parse(text))).split("strata:")[1].split("outputs")[0].strip())
    stratum 0: r (recursive)
        each round removes the tuples of r that r__dominated derives over r__all
      stratum 1: r__all
      stratum 2: r__dominated
    """
    lines = ["relations:"]
    lines += [f"  {schema}" for schema in checked.relations.values()]
    lines.append("strata:")
    for stratum in checked.strata:
        lines.append(f"  {stratum}")
        lines += [_subsumption(checked, name) for name in stratum.relations if name in checked.subsumed]
    if not checked.strata:
        lines.append("  (none)")
    lines.append(f"outputs: {', '.join(checked.outputs) or '(none)'}")
    return "\n".join(lines)


def _subsumption(checked: CheckedProgram, name: str) -> str:
    pseudo, rules = checked.subsumed[name]
    dominated = rules[0].head.predicate if rules else "nothing"
    return f"    each round removes the tuples of {name} that {dominated} derives over {pseudo}"
