"""Union-find over integer nodes, each class with its type evidence (used by :mod:`.types`).

Nodes are ``0, 1, 2, ...`` in the order they are made. Only roots carry a size, evidence and a
summary, and only once there is something to carry: most classes never hold evidence.
"""

from __future__ import annotations

from collections import deque
from typing import NamedTuple, Optional

from ..syntax import ast

# Numeric evidence, weakest first: "number" (used in arithmetic), an integer literal, then the
# three numeric types. Only their maximum matters.
RANK = {"number": 0, "intlit": 1, "int": 2, "long": 3, "double": 4}

EMPTY: tuple = (frozenset(), None)  # the summary of a class without evidence


class Evidence(NamedTuple):
    type: str
    origin: tuple  # (template, *args): see :func:`text`
    span: ast.Span


def kind(t: str) -> str:
    """``number`` for a numeric evidence, else the evidence itself."""
    return "number" if t in RANK else t


def wider(a: Optional[str], b: Optional[str]) -> Optional[str]:
    """The wider of two numeric evidences (either may be None)."""
    if a is None or b is None:
        return b if a is None else a
    return b if RANK[b] > RANK[a] else a


class Classes:
    """Classes of nodes that must hold the same values, with the evidence given to each."""

    def __init__(self) -> None:
        self.parent: list[int] = []
        # node -> (rank of its kind, template, *args), for messages; None: made on demand (a column)
        self.labels: list[Optional[tuple]] = []
        self.size: dict = {}  # root -> number of nodes in its class, when more than one
        self.evidence: dict = {}  # root -> deque[Evidence], in the order it was given
        self.summary: dict = {}  # root -> (kinds of its evidence, widest numeric evidence)

    def node(self, label: Optional[tuple]) -> int:
        """A new node in a class of its own. ``label`` is ``(rank, template, *args)``: the rank
        (0 column, 1 variable, 2 value) picks the member naming a class in a message."""
        node = len(self.parent)
        self.parent.append(node)
        self.labels.append(label)
        return node

    def find(self, node: int) -> int:
        """The root of ``node``'s class."""
        parent = self.parent
        root = parent[node]
        if parent[root] == root:
            return root
        while parent[root] != root:
            root = parent[root]
        while parent[node] != root:
            parent[node], node = root, parent[node]
        return root

    def unify(self, a: int, b: int) -> None:
        """Merge the classes of ``a`` and ``b``: the smaller joins the larger (so a class that
        keeps growing, such as a column read by every rule, costs O(1) per merge), and the
        evidence stays in the order ``a``'s class then ``b``'s."""
        parent = self.parent
        ra, rb = parent[a], parent[b]
        if parent[ra] != ra:
            ra = self.find(ra)
        if parent[rb] != rb:
            rb = self.find(rb)
        if ra == rb:
            return
        size_a, size_b = self.size.pop(ra, 1), self.size.pop(rb, 1)
        evidence_a, evidence_b = self.evidence.pop(ra, None), self.evidence.pop(rb, None)
        if size_a < size_b:
            ra, rb = rb, ra
            if evidence_a is not None and evidence_b is not None:
                evidence_b.extendleft(reversed(evidence_a))
                evidence_a = None
        elif evidence_a is not None and evidence_b is not None:
            evidence_a.extend(evidence_b)
            evidence_b = None
        parent[rb] = ra
        self.size[ra] = size_a + size_b
        merged = evidence_a if evidence_b is None else evidence_b
        if merged is not None:
            self.evidence[ra] = merged
        self._merge_summaries(ra, rb)

    def _merge_summaries(self, root: int, other: int) -> None:
        """The summary of ``root``'s class after ``other``'s class joined it."""
        summary_b = self.summary.pop(other, None)
        if summary_b is None:
            return
        (kinds_a, widest_a), (kinds_b, widest_b) = self.summary.get(root, EMPTY), summary_b
        kinds = kinds_a if kinds_b <= kinds_a else kinds_a | kinds_b
        self.summary[root] = (kinds, wider(widest_a, widest_b))

    def add(self, node: int, type_: str, origin: tuple, span: ast.Span, first: bool = False) -> None:
        """Evidence ``type_`` (from ``origin``, read only for messages) for the class of ``node``
        (before its other evidence when ``first``)."""
        root = self.find(node)
        evidence = self.evidence.get(root)
        if evidence is None:
            evidence = self.evidence[root] = deque()
        if first:
            evidence.appendleft(Evidence(type_, origin, span))
        else:
            evidence.append(Evidence(type_, origin, span))
        kinds, widest = self.summary.get(root, EMPTY)
        if type_ in RANK:
            widest = wider(widest, type_)
        evidence_kind = kind(type_)
        self.summary[root] = (kinds if evidence_kind in kinds else kinds | {evidence_kind}, widest)

    def resolve_root(self, root: int) -> Optional[str]:
        """The type of the class ``root``; ``"conflict"`` when its evidence disagrees."""
        kinds, widest = self.summary.get(root, EMPTY)
        if not kinds:
            return None
        if len(kinds) > 1:
            return "conflict"
        return widest if kinds == {"number"} else next(iter(kinds))

    def conflicting(self) -> list:
        """``(root, members)`` of each class whose evidence disagrees, in the order of the
        classes' first nodes (members are only gathered when there is one)."""
        if all(len(kinds) < 2 for kinds, _ in self.summary.values()):
            return []
        members: dict = {}
        for node in range(len(self.parent)):
            members.setdefault(self.find(node), []).append(node)
        return [(root, nodes) for root, nodes in members.items() if self.resolve_root(root) == "conflict"]
