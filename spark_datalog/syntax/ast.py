"""The abstract syntax tree: immutable records, each with the source position it came from.

A ``Program`` is what the parser returns; analysis reads it and returns new values, never
mutating it. Anonymous variables (``_``) are given unique names ``_#1``, ``_#2``, ... per rule by the
parser and flagged ``anonymous=True``; named variables keep their spelling (``X``, ``_X``, ``?x``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union


@dataclass(frozen=True, order=True, slots=True)
class Span:
    """A 1-based source position (start line and column)."""

    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        return f"{self.line}:{self.column}"


NO_SPAN = Span(0, 0)

# How a lower-case name in a term reads: a symbol (datalog) or a variable (souffle)
DIALECTS = ("datalog", "souffle")

# Value types of the language. Aliases are resolved by the parser.
TYPES = ("int", "long", "double", "string", "bool")
TYPE_ALIASES = {"number": "long", "symbol": "string", "float": "double", "unsigned": "long"}


# ---------------------------------------------------------------------------------------------
# Terms


@dataclass(frozen=True, slots=True)
class Variable:
    name: str
    span: Span = field(default=NO_SPAN, compare=False)
    anonymous: bool = False

    def __str__(self) -> str:
        return "_" if self.anonymous else self.name


@dataclass(frozen=True, slots=True)
class Constant:
    """A literal. ``type`` is ``long`` for integers, ``double`` for decimals, ``string`` for
    quoted strings and lower-case symbols, ``bool`` for true/false."""

    value: Union[int, float, str, bool]  # in a fact, also a record (record_types.Record)
    type: str
    span: Span = field(default=NO_SPAN, compare=False)

    def __str__(self) -> str:
        if self.type == "string":
            return '"' + str(self.value).replace("\\", "\\\\").replace('"', '\\"') + '"'
        if self.type == "bool":
            return "true" if self.value else "false"
        if self.type == "nil" or self.type.startswith("@"):  # a recursive record's encoding
            from ..recursive_records import text_of

            return str(self.value) if self.type == "nil" else text_of(str(self.value), self.type)
        if self.type.startswith("["):  # a record's value (a fact's, nil)
            return str(self.value)
        return repr(self.value)


ARITHMETIC_OPERATORS = ("+", "-", "*", "/", "mod")


@dataclass(frozen=True, slots=True)
class BinaryOp:
    """Arithmetic ``left op right``; ``op`` is one of ``+ - * / mod``. ``type`` is the type of
    its value (``int``, ``long`` or ``double``), set by analysis (``None`` before it)."""

    op: str
    left: "Term"
    right: "Term"
    span: Span = field(default=NO_SPAN, compare=False)
    type: Optional[str] = field(default=None, compare=False)

    def __str__(self) -> str:
        return term_text(self)


@dataclass(frozen=True, slots=True)
class Call:
    """A functor applied to terms: ``cat(X, "a")``, ``strlen(S)``, ``band(X, 3)``, ``X ^ 2``
    (``pow``), ``bnot X``. ``name`` is the functor's name in :mod:`spark_datalog.functors`
    (Soufflé's spelling; operators by their word: ``pow``, ``band``, ``bshl``, ``land``, ...).
    ``type`` is the type of its value, set by analysis (``None`` before it). A user-defined
    functor (``@f(X)``, declared with ``.functor``) is named ``@f``; ``functor`` is its entry
    (a :class:`spark_datalog.functors.Functor`), set by lowering (None for intrinsic ones)."""

    name: str
    args: tuple  # tuple[Term, ...]
    span: Span = field(default=NO_SPAN, compare=False)
    type: Optional[str] = field(default=None, compare=False)
    functor: Optional[object] = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return term_text(self)


@dataclass(frozen=True, slots=True)
class RecordTerm:
    """Soufflé's record term ``[X, 1, [Y, "a"]]``. It exists only between parsing and lowering:
    :mod:`spark_datalog.syntax.records` turns it into record construction (``record`` calls)
    and field reads, so analysis and the engines never see it. With a ``branch`` it is an
    algebraic data type's term ``$Circle(R)`` (``$Dot`` has no ``args``), lowered the same way."""

    args: tuple  # tuple[Term, ...]
    span: Span = field(default=NO_SPAN, compare=False)
    branch: str = ""

    def __str__(self) -> str:
        return term_text(self)


Term = Union[Variable, Constant, BinaryOp, Call]
# Soufflé's ``as(expr, Type)``: a Call named CAST whose second argument is the type's name as a
# string Constant. It exists only between parsing and lowering, which checks and removes it.
CAST = "as"
# The terms that compute a value from others
OPERATIONS = (BinaryOp, Call)

AGGREGATE_FUNCTIONS = ("min", "max", "sum", "avg", "count")
PREMAPPABLE_FUNCTIONS = ("min", "max")


@dataclass(frozen=True, slots=True)
class Aggregate:
    """A head aggregate ``func<variable>``."""

    func: str
    variable: Variable
    span: Span = field(default=NO_SPAN, compare=False)

    def __str__(self) -> str:
        return f"{self.func}<{self.variable}>"


HeadTerm = Union[Variable, Constant, BinaryOp, Call, Aggregate]

BODY_AGGREGATE_FUNCTIONS = {"count": "sum", "sum": "sum", "min": "min", "max": "max", "mean": "avg"}


@dataclass(frozen=True, slots=True)
class BodyAggregate:
    """Soufflé's aggregate over a body, a term: ``count : { p(X, _) }``, ``sum V : q(V)``,
    ``min D : { e(X, Y, D), D > 0 }``. It exists only between parsing and lowering:
    :mod:`spark_datalog.syntax.lowering` turns it into an auxiliary relation with a head
    aggregate, so analysis and the engines never see it."""

    func: str
    target: Optional["Term"]
    body: tuple  # tuple[Literal, ...]
    span: Span = field(default=NO_SPAN, compare=False)

    def __str__(self) -> str:
        target = f" {self.target}" if self.target is not None else ""
        return f"{self.func}{target} : {{ {', '.join(str(literal) for literal in self.body)} }}"


# ---------------------------------------------------------------------------------------------
# Literals


@dataclass(frozen=True, slots=True)
class Atom:
    predicate: str
    args: tuple  # tuple[HeadTerm, ...] in a head, tuple[Term, ...] in a body
    span: Span = field(default=NO_SPAN, compare=False)

    @property
    def arity(self) -> int:
        return len(self.args)

    def __str__(self) -> str:
        if not self.args:
            return self.predicate
        return f"{self.predicate}({', '.join(str(a) for a in self.args)})"


@dataclass(frozen=True, slots=True)
class Negation:
    """``not atom`` (also written ``!atom`` or ``~atom``)."""

    atom: Atom
    span: Span = field(default=NO_SPAN, compare=False)

    def __str__(self) -> str:
        return f"not {self.atom}"


COMPARISON_OPERATORS = ("=", "!=", "<", "<=", ">", ">=")


@dataclass(frozen=True, slots=True)
class Comparison:
    """``left op right`` in a rule body. The parser produces every ``=`` as a Comparison;
    analysis turns ``V = expr`` into an :class:`Assignment` where it binds ``V``."""

    op: str
    left: Term
    right: Term
    span: Span = field(default=NO_SPAN, compare=False)

    def __str__(self) -> str:
        return f"{self.left} {self.op} {self.right}"


@dataclass(frozen=True, slots=True)
class Assignment:
    """``variable = expr`` where ``variable`` is bound by this literal (produced by analysis)."""

    variable: Variable
    expr: Term
    span: Span = field(default=NO_SPAN, compare=False)

    def __str__(self) -> str:
        return f"{self.variable} = {self.expr}"


Literal = Union[Atom, Negation, Comparison, Assignment]


# ---------------------------------------------------------------------------------------------
# Clauses and directives


@dataclass(frozen=True, slots=True)
class Rule:
    """``head :- body.`` ``text`` is the rule's source text (shown in explain() and job names)."""

    head: Atom
    body: tuple  # tuple[Literal, ...]
    span: Span = field(default=NO_SPAN, compare=False)
    text: str = field(default="", compare=False)

    @property
    def aggregate(self) -> Optional[tuple[int, Aggregate]]:
        """(position, aggregate) of the head aggregate, or None."""
        for i, arg in enumerate(self.head.args):
            if isinstance(arg, Aggregate):
                return i, arg
        return None

    def __str__(self) -> str:
        if not self.body:
            return f"{self.head}."
        return f"{self.head} :- {', '.join(str(literal) for literal in self.body)}."


@dataclass(frozen=True, slots=True)
class Subsumption:
    """Soufflé's subsumptive clause ``r(X, D1) <= r(X, D2) :- D2 < D1.``: a tuple of ``r``
    matching ``dominated`` is removed when another tuple matching ``dominating`` exists for
    which the body holds. It exists only between parsing and lowering
    (:mod:`spark_datalog.syntax.subsumption`)."""

    dominated: Atom
    dominating: Atom
    body: tuple  # tuple[Literal, ...]
    span: Span = field(default=NO_SPAN, compare=False)
    text: str = field(default="", compare=False)

    def __str__(self) -> str:
        body = ", ".join(str(literal) for literal in self.body)
        return f"{self.dominated} <= {self.dominating} :- {body}."


@dataclass(frozen=True, slots=True)
class Fact:
    """A ground atom stated in the program. Its arguments are all constants."""

    atom: Atom
    span: Span = field(default=NO_SPAN, compare=False)

    @property
    def values(self) -> tuple:
        return tuple(a.value for a in self.atom.args)

    def __str__(self) -> str:
        return f"{self.atom}."


@dataclass(frozen=True, slots=True)
class ColumnDecl:
    """A column of a ``.decl``. ``type`` is its value type once lowering has resolved declared
    types; ``declared`` is then the type name as written (``Node`` for ``.type Node <: symbol``),
    which :mod:`spark_datalog.syntax.subtypes` checks (None: a column lowering made, unchecked)."""

    name: str
    type: str
    span: Span = field(default=NO_SPAN, compare=False)
    declared: Optional[str] = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class FunctorDecl:
    """``.functor f(x: number, s: symbol): number``: a user-defined functor, called ``@f(X, S)``.
    ``params``: its arguments (``ColumnDecl``, types resolved to value types by lowering).
    ``stateful``: declared ``stateful`` (Soufflé's interface with the symbol and record tables;
    here bound and called like any other functor, on values).
    ``functor``: its entry in the program's functor registry (set by lowering)."""

    name: str
    params: tuple  # tuple[ColumnDecl, ...]
    result: str
    span: Span = field(default=NO_SPAN, compare=False)
    functor: Optional[object] = field(default=None, compare=False, repr=False)
    stateful: bool = False

    def __str__(self) -> str:
        params = ", ".join(f"{p.name}: {p.type}" for p in self.params)
        return f".functor {self.name}({params}): {self.result}" + (" stateful" if self.stateful else "")


@dataclass(frozen=True, slots=True)
class Declaration:
    """``.decl name(col: type, ...)``, with Soufflé's qualifiers (``btree``, ``eqrel``, ...)."""

    name: str
    columns: tuple  # tuple[ColumnDecl, ...]
    span: Span = field(default=NO_SPAN, compare=False)
    qualifiers: tuple = field(default=(), compare=False)  # tuple[str, ...]
    # Soufflé's ``choice-domain a, (b, c)``: each key a tuple of column names
    choice_domains: tuple = field(default=(), compare=False)

    def __str__(self) -> str:
        cols = ", ".join(f"{c.name}: {c.type}" for c in self.columns)
        return f".decl {self.name}({cols})"


@dataclass(frozen=True, slots=True)
class Directive:
    """``.input name``, ``.output name``, ``.printsize name`` or ``.limitsize name(n=N)``;
    ``kind`` is ``input``, ``output``, ``printsize`` or ``limitsize``. ``params`` are Soufflé's
    I/O parameters (a limit's ``n``), in source order:
    ``.input arc(IO=file, filename="arc.tsv")`` has ``(("IO", "file"), ("filename", "arc.tsv"))``
    (values are strings; ``true``/``false`` and numbers as written)."""

    kind: str
    name: str
    span: Span = field(default=NO_SPAN, compare=False)
    params: tuple = ()  # tuple[tuple[str, str], ...]

    def __str__(self) -> str:
        if not self.params:
            return f".{self.kind} {self.name}"
        given = ", ".join(f"{key}={value!r}" for key, value in self.params)
        return f".{self.kind} {self.name}({given})"

    def param(self, key: str, default: Optional[str] = None) -> Optional[str]:
        """The value of parameter ``key`` (the last one given), or ``default``."""
        found = default
        for given, value in self.params:
            if given == key:
                found = value
        return found


@dataclass(frozen=True, slots=True)
class TypeDecl:
    """Soufflé's ``.type name <: base`` (``kind`` ``subtype``), ``.type name = other``
    (``equivalent``) or ``.type name = a | b`` (``union``). ``bases`` are the names on the right;
    :mod:`spark_datalog.syntax.lowering` resolves every declared type to a value type."""

    name: str
    kind: str
    bases: tuple  # tuple[str, ...]
    span: Span = field(default=NO_SPAN, compare=False)
    fields: tuple = ()  # a record type's (``kind`` ``record``) field names; ``bases``: their types
    # an ADT's (``kind`` ``adt``) branches: (name, field names, field types), ...; no ``bases``
    branches: tuple = ()

    def __str__(self) -> str:
        if self.kind == "record":
            pairs = ", ".join(f"{n}: {t}" for n, t in zip(self.fields, self.bases, strict=True))
            return f".type {self.name} = [{pairs}]"
        if self.kind == "adt":
            shown = (
                f"{b} {{{', '.join(f'{n}: {t}' for n, t in zip(names, types, strict=True))}}}"
                for b, names, types in self.branches
            )
            return f".type {self.name} = {' | '.join(shown)}"
        if self.kind == "subtype":
            return f".type {self.name} <: {self.bases[0]}"
        return f".type {self.name} = {' | '.join(self.bases)}"


@dataclass(frozen=True, slots=True)
class ComponentType:
    """``Name`` or ``Name<A, B>``: a component with its type arguments (or parameters)."""

    name: str
    args: tuple = ()  # tuple[str, ...]
    span: Span = field(default=NO_SPAN, compare=False)


@dataclass(frozen=True, slots=True)
class Component:
    """Soufflé's ``.comp Name<T> : Base<T> { ... }``: a template of statements. It exists only
    between parsing and lowering (:mod:`spark_datalog.syntax.components` expands every
    ``.init`` of it)."""

    signature: ComponentType
    bases: tuple  # tuple[ComponentType, ...]
    items: tuple  # its statements: declarations, rules, facts, directives, types, components, ...
    span: Span = field(default=NO_SPAN, compare=False)


@dataclass(frozen=True, slots=True)
class Init:
    """``.init name = Component<args>``: an instance of a component."""

    name: str
    component: ComponentType
    span: Span = field(default=NO_SPAN, compare=False)


@dataclass(frozen=True, slots=True)
class Override:
    """``.override relation`` inside a component: its bases' rules and facts for it are dropped."""

    name: str
    span: Span = field(default=NO_SPAN, compare=False)


@dataclass(frozen=True, slots=True)
class Query:
    """``?- atom.``"""

    atom: Atom
    span: Span = field(default=NO_SPAN, compare=False)

    def __str__(self) -> str:
        return f"?- {self.atom}."


@dataclass(frozen=True, slots=True)
class Program:
    """A parsed program: its statements grouped by kind, each group in source order."""

    declarations: tuple = ()  # tuple[Declaration, ...]
    directives: tuple = ()  # tuple[Directive, ...]
    facts: tuple = ()  # tuple[Fact, ...]
    rules: tuple = ()  # tuple[Rule, ...]
    queries: tuple = ()  # tuple[Query, ...]
    types: tuple = ()  # tuple[TypeDecl, ...]
    components: tuple = ()  # tuple[Component | Init, ...]: gone after lowering
    # (relation, its EDB relation) for each `.input` relation with rules: see syntax.input_rules
    input_aliases: tuple = ()
    subsumptions: tuple = ()  # tuple[Subsumption, ...]: gone after lowering
    # (relation, its pseudo relation of all tuples, its dominated relation) for each recursive
    # relation whose subsumption each round applies: see syntax.subsumption
    subsumed: tuple = ()
    functors: tuple = ()  # tuple[FunctorDecl, ...]
    source: str = field(default="", compare=False, repr=False)
    filename: Optional[str] = field(default=None, compare=False)

    @property
    def inputs(self) -> tuple:
        return tuple(d.name for d in self.directives if d.kind == "input")

    @property
    def outputs(self) -> tuple:
        """The relations of the ``.output`` and ``.printsize`` directives: a ``.printsize``
        relation is computed and returned as an output is (only how it is shown differs)."""
        return tuple(d.name for d in self.directives if d.kind in ("output", "printsize"))

    @property
    def limits(self) -> dict:
        """Relation -> the N of its ``.limitsize r(n=N)`` (the parser checked it)."""
        return {d.name: int(d.param("n", "0")) for d in self.directives if d.kind == "limitsize"}


# ---------------------------------------------------------------------------------------------
# Helpers shared by analysis, the reference interpreter and the translator


def term_variables(term) -> list[Variable]:
    """Variables of a term or head argument, left to right (with repetitions). Iterative: terms
    may be nested deeply (a 500-term sum)."""
    out: list[Variable] = []
    stack = [term]
    while stack:
        node = stack.pop()
        if isinstance(node, BinaryOp):
            stack.append(node.right)
            stack.append(node.left)
        elif isinstance(node, (Call, RecordTerm)):
            stack.extend(reversed(node.args))
        elif isinstance(node, Variable):
            out.append(node)
        elif isinstance(node, Aggregate):
            out.append(node.variable)
    return out


def term_text(term) -> str:
    """``str(term)``, with every operation parenthesised: ``((X + 1) * Y)``. Iterative."""
    parts: list[str] = []
    stack: list = [term]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            parts.append(node)
        elif isinstance(node, BinaryOp):
            stack.extend((")", node.right, f" {node.op} ", node.left, "("))
        elif isinstance(node, Call):
            stack.extend(reversed(_call_pieces(node)))
        elif isinstance(node, RecordTerm) and node.branch and not node.args:
            parts.append("$" + node.branch)
        elif isinstance(node, RecordTerm):
            opening, closing = (f"${node.branch}(", ")") if node.branch else ("[", "]")
            stack.extend(reversed(_pieces(opening, node.args, closing)))
        else:
            parts.append(str(node))
    return "".join(parts)


# Functors written as operators: infix (``X ^ 2`` is ``pow``) and prefix (``bnot X``)
INFIX_FUNCTORS = {
    "pow": "^",
    **{w: w for w in ("band", "bor", "bxor", "bshl", "bshr", "bshru", "land", "lor", "lxor")},
}
PREFIX_FUNCTORS = ("bnot", "lnot")


def _call_pieces(call: "Call") -> list:
    """The text of ``call`` as it is written: ``(X ^ 2)``, ``(bnot X)``, ``cat(A, B)``."""
    if call.name in INFIX_FUNCTORS and len(call.args) == 2:
        return ["(", call.args[0], f" {INFIX_FUNCTORS[call.name]} ", call.args[1], ")"]
    if call.name in PREFIX_FUNCTORS and len(call.args) == 1:
        return [f"({call.name} ", call.args[0], ")"]
    if call.name == CAST and len(call.args) == 2:
        return [f"{CAST}(", call.args[0], f", {call.args[1].value})"]
    if call.name == "record":
        return _record_pieces(call)
    if call.name.startswith("text@:") or call.name == "pattern@classes":  # added by lowering, typing
        return [call.args[0]]
    if call.name == "to_string@float":  # to_string of a double (analysis.types)
        return _pieces("to_string(", call.args, ")")
    if call.name.startswith(("field:", "field@:")):
        return ["(", call.args[0], f").{call.name.rpartition(':')[2]}"]
    return _pieces(f"{call.name}(", call.args, ")")


def _record_pieces(call: "Call") -> list:
    """``[X, 1]``; a recursive ADT's ``$Add(L, R)``, its branch read from its index."""
    from ..recursive_records import recursive_branches

    branches = recursive_branches(call.type)
    tag = call.args[0] if branches and call.args else None
    if isinstance(tag, Constant) and isinstance(tag.value, int) and 0 <= tag.value < len(branches or ()):
        branch = "$" + branches[tag.value][0]  # type: ignore[index]
        return _pieces(f"{branch}(", call.args[1:], ")") if len(call.args) > 1 else [branch]
    return _pieces("[", call.args, "]")


def _pieces(opening: str, args: tuple, closing: str) -> list:
    pieces: list = [opening]
    for i, arg in enumerate(args):
        pieces.extend((", ", arg) if i else (arg,))
    return pieces + [closing]


def term_depth(term) -> int:
    """The nesting depth of a term: 1 for a variable or constant. Iterative."""
    deepest = 0
    stack = [(term, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(node, BinaryOp):
            stack.append((node.left, depth + 1))
            stack.append((node.right, depth + 1))
        elif isinstance(node, (Call, RecordTerm)):
            stack.extend((arg, depth + 1) for arg in node.args)
    return deepest


def literal_variables(literal) -> list[Variable]:
    """Variables mentioned by a body literal, left to right."""
    if isinstance(literal, Atom):
        return [v for a in literal.args for v in term_variables(a)]
    if isinstance(literal, Negation):
        return literal_variables(literal.atom)
    if isinstance(literal, Comparison):
        return term_variables(literal.left) + term_variables(literal.right)
    if isinstance(literal, Assignment):
        return [literal.variable] + term_variables(literal.expr)
    raise TypeError(f"not a literal: {literal!r}")
