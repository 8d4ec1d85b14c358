"""Deterministic, seeded input generators, sized by parameters.

Every generator returns plain Python data (lists of tuples of ints or strings) so that every
system of a benchmark receives exactly the same facts. The same parameters and seed always give
the same list, in the same order.
"""

from __future__ import annotations

import random
from typing import Iterable

Edge = tuple


# -- graphs --------------------------------------------------------------------------------------


def chain(n: int) -> list:
    """A path of ``n`` edges: 0 -> 1 -> ... -> n."""
    return [(i, i + 1) for i in range(n)]


def tree(k: int, depth: int) -> list:
    """A complete ``k``-ary tree of the given depth (root 0, breadth-first ids; the children of
    node i are k*i+1 .. k*i+k). It has (k^(depth+1) - 1) / (k - 1) nodes and one edge fewer."""
    nodes = sum(k**level for level in range(depth + 1))
    return [((child - 1) // k, child) for child in range(1, nodes)]


def gnm(n: int, m: int, seed: int = 1) -> list:
    """A uniform random directed graph on nodes 0..n-1 with ``m`` distinct edges and no self-loops."""
    if m > n * (n - 1):
        raise ValueError(f"G({n}, {m}): at most {n * (n - 1)} edges fit on {n} nodes")
    rng = random.Random(seed)
    edges: dict = {}
    while len(edges) < m:
        u, v = rng.randrange(n), rng.randrange(n)
        if u != v:
            edges.setdefault((u, v), None)
    return list(edges)


def rmat(scale: int, m: int, seed: int = 1, a: float = 0.57, b: float = 0.19, c: float = 0.19) -> list:
    """An R-MAT power-law directed graph on 2^scale nodes with ``m`` distinct edges and no
    self-loops (Chakrabarti et al.; the Graph500 probabilities by default)."""
    n = 1 << scale
    if m > n * (n - 1) // 4:
        raise ValueError(f"R-MAT scale {scale} cannot hold {m} distinct edges comfortably")
    rng = random.Random(seed)
    edges: dict = {}
    ab, abc = a + b, a + b + c
    while len(edges) < m:
        u = v = 0
        for _ in range(scale):
            r = rng.random()
            u, v = u << 1, v << 1
            if r >= abc:
                u, v = u | 1, v | 1
            elif r >= ab:
                u |= 1
            elif r >= a:
                v |= 1
        if u != v:
            edges.setdefault((u, v), None)
    return list(edges)


def weighted(edges: Iterable[Edge], seed: int = 1, max_weight: int = 10) -> list:
    """The edges with an integer weight in 1..max_weight appended: (src, dst, w)."""
    rng = random.Random(seed)
    return [(u, v, rng.randint(1, max_weight)) for u, v in edges]


def undirected(edges: Iterable[Edge]) -> list:
    """Both directions of every edge (duplicates removed, first-seen order kept)."""
    both: dict = {}
    for u, v in edges:
        both.setdefault((u, v), None)
        both.setdefault((v, u), None)
    return list(both)


def nodes_of(edges: Iterable[Edge]) -> list:
    """The nodes touched by the edges, sorted."""
    seen = set()
    for edge in edges:
        seen.update(edge[:2])
    return sorted(seen)


# -- program analysis: Andersen-style points-to facts -------------------------------------------


def points_to(variables: int, seed: int = 1) -> dict:
    """Random assignment facts for an Andersen-style points-to analysis.

    Variables are 0..variables-1 and heap objects variables..variables+objects-1 (objects can hold
    pointers, so they share the id space). ``alloc(v, o)``: v = new o; ``assign(to, from)``:
    to = from; ``load(to, p)``: to = *p; ``store(p, from)``: *p = from. The counts per variable
    (1/2 alloc, 1 assign, 1/4 load, 1/4 store) follow the proportions of small Java programs.
    """
    rng = random.Random(seed)
    objects = max(1, variables // 4)
    heap = list(range(variables, variables + objects))

    def pairs(count: int, left: list, right: list) -> list:
        chosen: dict = {}
        while len(chosen) < count:
            x, y = rng.choice(left), rng.choice(right)
            if x != y:
                chosen.setdefault((x, y), None)
        return list(chosen)

    names = list(range(variables))
    return {
        "alloc": pairs(variables // 2, names, heap),
        "assign": pairs(variables, names, names),
        "load": pairs(variables // 4, names, names),
        "store": pairs(variables // 4, names, names),
    }


# -- semantic web: a generated university ontology (LUBM-like) ----------------------------------

RDF_TYPE = "rdf:type"
SUBCLASS = "rdfs:subClassOf"
SUBPROPERTY = "rdfs:subPropertyOf"
DOMAIN = "rdfs:domain"
RANGE = "rdfs:range"
TRANSITIVE = "owl:TransitiveProperty"

# (class, superclass)
_CLASSES = [
    ("Employee", "Person"),
    ("Student", "Person"),
    ("Faculty", "Employee"),
    ("AdministrativeStaff", "Employee"),
    ("Professor", "Faculty"),
    ("Lecturer", "Faculty"),
    ("FullProfessor", "Professor"),
    ("AssociateProfessor", "Professor"),
    ("AssistantProfessor", "Professor"),
    ("Chair", "Professor"),
    ("UndergraduateStudent", "Student"),
    ("GraduateStudent", "Student"),
    ("TeachingAssistant", "GraduateStudent"),
    ("ResearchAssistant", "GraduateStudent"),
    ("University", "Organization"),
    ("Department", "Organization"),
    ("ResearchGroup", "Organization"),
    ("GraduateCourse", "Course"),
    ("Article", "Publication"),
    ("JournalArticle", "Article"),
    ("ConferencePaper", "Article"),
]
# (property, superproperty)
_SUBPROPERTIES = [
    ("worksFor", "memberOf"),
    ("headOf", "worksFor"),
    ("undergraduateDegreeFrom", "degreeFrom"),
    ("mastersDegreeFrom", "degreeFrom"),
    ("doctoralDegreeFrom", "degreeFrom"),
]
# property -> (domain, range)
_SIGNATURES = {
    "memberOf": ("Person", "Organization"),
    "worksFor": ("Employee", "Organization"),
    "headOf": ("Chair", "Department"),
    "degreeFrom": ("Person", "University"),
    "subOrganizationOf": ("Organization", "Organization"),
    "takesCourse": ("Student", "Course"),
    "teacherOf": ("Faculty", "Course"),
    "advisor": ("Student", "Professor"),
    "publicationAuthor": ("Publication", "Person"),
}
_RANKS = ["FullProfessor", "AssociateProfessor", "AssistantProfessor", "Lecturer"]
_DEGREES = ["undergraduateDegreeFrom", "mastersDegreeFrom", "doctoralDegreeFrom"]


def university_ontology(universities: int, seed: int = 1, departments: int = 5) -> list:
    """Triples (subject, property, object) of a generated university ontology: the schema
    (subclass and subproperty hierarchies, domains and ranges, one transitive property) and
    ``universities`` x ``departments`` departments of instances. Instance triples state only the
    most specific facts, so an RDFS reasoner has types, superclasses and superproperties to infer.
    """
    rng = random.Random(seed)
    triples = [(c, SUBCLASS, sup) for c, sup in _CLASSES]
    triples += [(p, SUBPROPERTY, sup) for p, sup in _SUBPROPERTIES]
    for prop, (dom, rng_cls) in _SIGNATURES.items():
        triples += [(prop, DOMAIN, dom), (prop, RANGE, rng_cls)]
    triples.append(("subOrganizationOf", RDF_TYPE, TRANSITIVE))

    for u in range(universities):
        univ = f"univ{u}"
        triples.append((univ, RDF_TYPE, "University"))
        for d in range(departments):
            dept = f"{univ}.dept{d}"
            triples.append((dept, "subOrganizationOf", univ))
            for g in range(3):
                triples.append((f"{dept}.group{g}", "subOrganizationOf", dept))
            courses = [f"{dept}.course{c}" for c in range(8)]
            triples += [
                (c, RDF_TYPE, "GraduateCourse" if i % 4 == 0 else "Course") for i, c in enumerate(courses)
            ]
            faculty = []
            for f in range(7):
                person = f"{dept}.faculty{f}"
                faculty.append(person)
                rank = "Chair" if f == 0 else _RANKS[f % len(_RANKS)]
                triples += [
                    (person, RDF_TYPE, rank),
                    (person, "worksFor", dept),
                    (person, "teacherOf", courses[f]),
                ]
                if f == 0:
                    triples.append((person, "headOf", dept))
                degree_univ = f"univ{rng.randrange(universities)}"
                triples.append((person, rng.choice(_DEGREES), degree_univ))
                for p in range(2):
                    paper = f"{person}.paper{p}"
                    triples += [
                        (paper, RDF_TYPE, rng.choice(["JournalArticle", "ConferencePaper"])),
                        (paper, "publicationAuthor", person),
                    ]
            for s in range(20):
                student = f"{dept}.student{s}"
                graduate = s % 4 == 0
                triples += [
                    (student, RDF_TYPE, "GraduateStudent" if graduate else "UndergraduateStudent"),
                    (student, "memberOf", dept),
                    (student, "takesCourse", rng.choice(courses)),
                ]
                if graduate:
                    triples.append((student, "advisor", rng.choice(faculty[:4])))
                    triples.append((student, "undergraduateDegreeFrom", f"univ{rng.randrange(universities)}"))
    return list(dict.fromkeys(triples))
