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
