"""Random queries over random programs (``tests/programs.py``), for the magic-set tests."""

from __future__ import annotations

from hypothesis import strategies as st

import spark_datalog as sd
from programs import DOMAIN

_CONSTANTS = {"long": lambda v: str(v), "int": lambda v: str(v), "double": lambda v: f"{v}.0"}


@st.composite
def query_for(draw, program: sd.Program) -> str:
    """A query over one of ``program``'s derived relations: each argument a constant from the
    data's domain, a variable (perhaps repeated) or ``_``."""
    idb = [s for s in program.relations.values() if s.kind == "idb"]
    schema = draw(st.sampled_from(idb))
    args = []
    for index, type_ in enumerate(schema.types):
        kind = draw(st.sampled_from(("constant", "variable", "variable", "anonymous", "repeat")))
        if kind == "constant" and type_ in _CONSTANTS:
            args.append(_CONSTANTS[type_](draw(st.integers(*DOMAIN))))
        elif kind == "anonymous":
            args.append("_")
        elif kind == "repeat" and index > 0:
            args.append("V0")
        else:
            args.append(f"V{index}")
    return f"{schema.name}({', '.join(args)})" if args else schema.name


@st.composite
def linear_programs(draw):
    """``(text, edb)``: one linear recursive relation ``p`` of arity 2 or 3 whose recursive rules
    carry some arguments unchanged (the shape factoring rewrites), with variations that must not
    be factored: a carried variable used elsewhere, a carried position changed, an atom read
    after the recursive one, a second exit rule, the recursive atom first or last in the text."""
    arity = draw(st.integers(2, 3))
    carried = draw(st.sets(st.integers(0, arity - 1), min_size=1, max_size=arity - 1))
    chained = [i for i in range(arity) if i not in carried]
    columns = ", ".join(f"c{i}: long" for i in range(arity))
    lines = [f".decl e({columns})", ".decl f(a: long, b: long)", ".decl g(a: long)", ".input e, f, g"]
    lines += [
        "p("
        + ", ".join(f"V{i}" for i in range(arity))
        + ") :- e("
        + ", ".join(f"V{i}" for i in range(arity))
        + ")."
    ]
    if draw(st.booleans()):
        lines.append(
            "p("
            + ", ".join(f"V{i}" for i in range(arity))
            + ") :- g(V0), e("
            + ", ".join(f"V{i}" for i in range(arity))
            + ")."
        )
    for _ in range(draw(st.integers(1, 2))):
        head = [f"X{i}" if i in carried else f"Z{i}" for i in range(arity)]
        inner = [f"X{i}" if i in carried else f"Y{i}" for i in range(arity)]
        changed = draw(st.integers(0, 5)) == 0  # a carried position changed: not factorable
        if changed:
            inner[min(carried)] = f"Y{min(carried)}"
        link = "f(" + ", ".join([f"Y{chained[0]}", f"Z{chained[0]}"]) + ")"
        extra = [f"f(Y{i}, Z{i})" for i in chained[1:]]
        body = [link, *extra, "p(" + ", ".join(inner) + ")"] + ([f"g(X{min(carried)})"] if changed else [])
        if draw(st.booleans()):
            body.reverse()
        choice = draw(st.sampled_from(("", "g(X)", "cmp", "g(Z)", "after")))
        if choice == "g(X)":
            body.append(f"g(X{min(carried)})")
        elif choice == "cmp":
            body.append(f"Z{chained[0]} != 3")
        elif choice == "g(Z)":
            body.insert(0, f"g(Z{chained[0]})")
        elif choice == "after":  # read after the recursive atom: absent from the magic rule
            body.append("g(W)")
        lines.append("p(" + ", ".join(head) + ") :- " + ", ".join(body) + ".")
    pairs = st.tuples(st.integers(*DOMAIN), st.integers(*DOMAIN))
    edb = {
        "e": draw(st.sets(st.tuples(*[st.integers(*DOMAIN)] * arity), max_size=6)),
        "f": draw(st.sets(pairs, max_size=10)),
        "g": draw(st.sets(st.tuples(st.integers(*DOMAIN)), max_size=4)),
    }
    return "\n".join(lines) + "\n", edb
