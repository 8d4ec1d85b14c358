"""Factoring: an adorned relation whose free arguments only ride along its recursion keeps only
them, and its recursive rules go.

Magic sets restrict a relation to the bindings asked for, but a recursion that does not pass
the bound arguments through still derives one fact per (free values, binding) pair: for
``tc(X, Z) :- tc(X, Y), arc(Y, Z).`` and the query ``tc(X, 7)`` the magic relation holds every
node that reaches 7, and ``tc_fb`` every pair (X, Y) with Y among them, almost the whole closure.
When the free arguments are passed unchanged from the head to the one recursive atom and
appear nowhere else in the rule (and the magic relation is fed only by the query and by these
recursive rules, each reading its recursive atom last), the answers are exactly the exit rules
applied to the magic relation (Naughton et al., "Argument reduction by factoring"):
``tc_fb(X) :- magic_tc_fb(Y), arc(X, Y).`` with ``magic_tc_fb`` the nodes reaching 7.

Proof sketch: every magic fact w is reached from the query's binding v by a chain of the
recursive rules' bodies (without the recursive atom), and a fact ``p(X, v)`` is derived exactly
when some exit rule gives ``p(X, w)`` for a w of such a chain, the chain then carrying X
unchanged back to v.
"""

from __future__ import annotations

from dataclasses import replace

from ..syntax import ast


def factor(state, answer: str) -> None:
    """Factor every adorned relation the query reads that qualifies (see the module docstring):
    its rules, its declaration and the query's atom over it are rewritten in ``state``."""
    rules_of: dict = {}
    for rule in state.rules:
        rules_of.setdefault(rule.head.predicate, []).append(rule)
    for name, (magic, pattern) in list(state.magic_of.items()):
        if _qualifies(state, name, magic, pattern, rules_of, answer):
            _factor(state, name, pattern, rules_of)


def _qualifies(state, name: str, magic: str, pattern: str, rules_of: dict, answer: str) -> bool:
    if "f" not in pattern or state.magic_sources.get(magic) != {"", name}:
        return False
    readers = [rule for rule in state.rules if name in _read_relations(rule)]
    if any(r.head.predicate not in (name, answer) for r in readers):
        return False
    if any(r.head.predicate == answer and len(r.body) != 1 for r in readers):
        return False
    sups = {rule.head.predicate: rule for rule in state.rules if rule.head.predicate.startswith("sup_")}
    return all(_is_exit(r, name) or _passes_free(r, name, magic, pattern, sups) for r in rules_of[name])


def _read_relations(rule: ast.Rule) -> list:
    return [
        lit.atom.predicate if isinstance(lit, ast.Negation) else lit.predicate
        for lit in rule.body
        if isinstance(lit, (ast.Atom, ast.Negation))
    ]


def _is_exit(rule: ast.Rule, name: str) -> bool:
    return name not in _read_relations(rule)


def _passes_free(rule: ast.Rule, name: str, magic: str, pattern: str, sups: dict) -> bool:
    """True for ``p(X, Z) :- magic_p(Z), L, p(X, Y).``: one recursive atom, last; the guard
    first (or first in the supplementary relation that opens the body); the free arguments
    plain variables passed to the same positions and used nowhere else."""
    *before, last = rule.body
    if _read_relations(rule).count(name) != 1 or not isinstance(last, ast.Atom) or last.predicate != name:
        return False
    if not before or not _is_guard(before[0], magic, sups):
        return False
    free = [i for i, mark in enumerate(pattern) if mark == "f"]
    head_free = [rule.head.args[i] for i in free]
    if any(not isinstance(a, ast.Variable) or a.anonymous for a in head_free):
        return False
    names = [a.name for a in head_free]
    if len(set(names)) != len(names) or [last.args[i] for i in free] != head_free:
        return False
    elsewhere = [lit for lit in before] + [rule.head.args[i] for i, m in enumerate(pattern) if m == "b"]
    used = {v.name for item in elsewhere for v in _variables(item)}
    used |= {v.name for i, arg in enumerate(last.args) if pattern[i] == "b" for v in ast.term_variables(arg)}
    return not used & set(names)


def _is_guard(literal, magic: str, sups: dict) -> bool:
    if not isinstance(literal, ast.Atom):
        return False
    if literal.predicate == magic:
        return True
    sup = sups.get(literal.predicate)
    return sup is not None and bool(sup.body) and _is_guard(sup.body[0], magic, sups)


def _variables(item) -> list:
    if isinstance(item, (ast.Atom, ast.Negation, ast.Comparison, ast.Assignment)):
        return ast.literal_variables(item)
    return ast.term_variables(item)


def _factor(state, name: str, pattern: str, rules_of: dict) -> None:
    """Keep ``name``'s free columns: exit rules project their heads, recursive rules go, the
    query's atom keeps its free arguments."""
    free = [i for i, mark in enumerate(pattern) if mark == "f"]
    own = rules_of[name]
    kept = []
    for rule in state.rules:
        if rule in own:
            if _is_exit(rule, name):
                kept.append(_projected(rule, free))
            continue
        kept.append(_reading_free(rule, name, free))
    state.rules[:] = kept
    columns = state.declarations[name].columns
    state.declarations[name] = ast.Declaration(name, tuple(columns[i] for i in free))


def _projected(rule: ast.Rule, free: list) -> ast.Rule:
    head = replace(rule.head, args=tuple(rule.head.args[i] for i in free))
    projected = replace(rule, head=head)
    return replace(projected, text=str(projected))


def _reading_free(rule: ast.Rule, name: str, free: list) -> ast.Rule:
    body = tuple(
        replace(lit, args=tuple(lit.args[i] for i in free))
        if isinstance(lit, ast.Atom) and lit.predicate == name
        else lit
        for lit in rule.body
    )
    if body == rule.body:
        return rule
    rewritten = replace(rule, body=body)
    return replace(rewritten, text=str(rewritten))
