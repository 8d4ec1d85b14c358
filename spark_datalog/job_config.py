"""The job's YAML config, validated by a pydantic model (read by ``job.load_config``).

Keys are the flags' (``run_id`` or ``run-id``; ``input`` or ``inputs``...); ``key: null`` is the
default. Every problem is one line of the ``UsageError``, naming the file, the key path and what
was expected::

    job.yaml: inputs.arc.format: must be 'delta', 'parquet' or 'csv', not 'json'
    job.yaml: max_iterations: must be an integer >= 1, not True
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Annotated, Any, Optional, TypeVar, Union, get_args

from pydantic import (
    AliasChoices,
    AliasGenerator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    StrictBool,
    StrictInt,
    StringConstraints,
    Tag,
    ValidationError,
)

from .job import (
    IDENTIFIER,
    Format,
    InputSpec,
    Dialect,
    Method,
    Mode,
    OnNull,
    QuerySpec,
    Strategy,
    UsageError,
    merge_queries,
    parse_location,
    relative_to,
    split_outputs,
)

LOCATION = "uri[:format] or {uri: ..., format: ...}"
QUERIES = 'a list of queries: "tc(1, X)" or {query: "tc(1, X)", to: uri[:format]}'

# The tags of the unions below (``TextOr``): they show in a ValidationError's loc (dropped from
# the messages). Not identifiers, so never a relation name or a key.
_TEXT, _FORM = "<text>", "<form>"


def _scalar(value: Any) -> Any:
    """YAML reads ``2024-06-01`` as a date; pydantic's ``str`` takes no date: its text, as
    numbers are taken (``coerce_numbers_to_str``)."""
    return str(value) if isinstance(value, _dt.date) else value


def _lower(value: Any) -> Any:
    """Formats are case-insensitive, as the flags' ``:FORMAT`` suffix (``parse_location``)."""
    return value.lower() if isinstance(value, str) else value


Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1), BeforeValidator(_scalar)]
Identifier = Annotated[str, StringConstraints(pattern=IDENTIFIER)]
FormatName = Annotated[Format, BeforeValidator(_lower)]
_NESTED = ConfigDict(extra="forbid", coerce_numbers_to_str=True)


T = TypeVar("T")
# A text or another form (a mapping, a list); ``_shape`` (in the Annotated) tells them apart.
TextOr = Union[Annotated[Text, Tag(_TEXT)], Annotated[T, Tag(_FORM)]]


def _shape(form: type, expected: str, texts: tuple = (str, int, float, _dt.date)) -> Discriminator:
    """Tells a text (one of ``texts``) from ``form`` (``dict``, ``list``) by the value's type, so
    that a mistake is reported against the form it was meant as (a plain union reports a mistake
    against each form); anything else is an error saying ``expected``."""

    def shape(value: Any) -> Optional[str]:
        if isinstance(value, form):
            return _FORM
        return _TEXT if isinstance(value, texts) and not isinstance(value, bool) else None

    return Discriminator(shape, custom_error_type="shape", custom_error_message=expected)


class Location(BaseModel):
    """``{uri: ..., format: ...}``: an input, a change set or a query's answers."""

    model_config = _NESTED
    uri: Text
    format: Optional[FormatName] = None


LocationValue = Annotated[TextOr[Location], _shape(dict, f"must be {LOCATION}")]


class QueryItem(BaseModel):
    """``{query: ..., to: LOCATION}``: a query whose answers are also written to ``to``."""

    model_config = _NESTED
    query: Text
    to: Optional[LocationValue] = None


QueryValue = Annotated[
    TextOr[QueryItem], _shape(dict, f'must be a query ("tc(1, X)") or {{query: ..., to: {LOCATION}}}', (str,))
]
_NAMES = 'a list of relation names or "a,b"'
Names = Annotated[TextOr[list[Text]], _shape(list, f"must be {_NAMES}")]
FunctorReference = Annotated[Text, StringConstraints(pattern=r"^[\w.]+:[\w.]+$")]
# a macro's value: the text #define gives it (a number is taken as its text; may be empty)
MacroValue = Annotated[str, BeforeValidator(_scalar)]

_SINGULAR = {"inputs": "input", "outputs": "output", "queries": "query"}


def _spellings(name: str) -> AliasChoices:
    """A key as its field (``run_id``), as its flag (``run-id``), singular (``input``)."""
    return AliasChoices(*dict.fromkeys((name, name.replace("_", "-"), _SINGULAR.get(name, name))))


def _one_of(choices: Any) -> str:
    return f"one of {', '.join(get_args(choices))}"


_INPUTS = f"a mapping of relation names to locations (name: {LOCATION})"


class JobConfig(BaseModel):
    """The keys of a job config; a field's description says what it takes (used in messages)."""

    model_config = ConfigDict(
        extra="forbid",
        coerce_numbers_to_str=True,
        alias_generator=AliasGenerator(validation_alias=_spellings),
    )
    program: Optional[Text] = Field(None, description="a path (a non-empty string)")
    inputs: Optional[dict[str, LocationValue]] = Field(None, description=_INPUTS)
    warehouse: Optional[Text] = Field(None, description="a URI or path (a non-empty string)")
    database: Optional[Identifier] = Field(
        None, description="a plain identifier (letters, digits and _, not starting with a digit)"
    )
    outputs: Optional[Names] = Field(None, description=_NAMES)
    run_id: Optional[Text] = Field(None, description="a non-empty string")
    mode: Optional[Mode] = Field(None, description=_one_of(Mode))
    replace: Optional[StrictBool] = Field(None, description="true or false")
    strategy: Optional[Strategy] = Field(None, description=_one_of(Strategy))
    decompose: Optional[StrictBool] = Field(None, description="true or false")
    max_iterations: Optional[StrictInt] = Field(None, ge=1, description="an integer >= 1")
    checkpoint_interval: Optional[StrictInt] = Field(None, ge=1, description="an integer >= 1")
    on_null: Optional[OnNull] = Field(None, description=_one_of(OnNull))
    show: Optional[StrictInt] = Field(None, ge=0, description="an integer >= 0")
    changes: Optional[dict[str, LocationValue]] = Field(None, description=_INPUTS)
    method: Optional[Method] = Field(None, description=_one_of(Method))
    queries: Optional[list[QueryValue]] = Field(None, description=QUERIES)
    facts_dir: Optional[Text] = Field(None, description="a URI or path (a non-empty string)")
    output_dir: Optional[Text] = Field(None, description="a URI or path (a non-empty string), or '-'")
    dialect: Optional[Dialect] = Field(None, description=_one_of(Dialect))
    functors: Optional[dict[Identifier, FunctorReference]] = Field(
        None,
        description='a mapping of functor names to Python functions (name: "module:function") '
        'or Spark SQL functions (name: "spark:function")',
    )
    macros: Optional[dict[Identifier, MacroValue]] = Field(
        None,
        description="Soufflé's -M: preprocessor macros defined before the program is read, a "
        'mapping of names to values (N: 10, MODE: "fast"), as #define N 10 defines them',
    )

    def settings(self, path: str) -> dict:
        """The values ``JobArgs`` takes (null keys left out), relative paths made relative to
        the directory of the config file at ``path``. Checked here, beyond pydantic's reach (no
        constraint across list items or on a split text): a query given twice (``merge_queries``),
        outputs naming no relation (``split_outputs``)."""
        base = Path(path).resolve().parent
        values = {name: getattr(self, name) for name in type(self).model_fields}
        values = {name: value for name, value in values.items() if value is not None}
        for name in ("program", "warehouse", "facts_dir", "output_dir"):
            if name in values and values[name] != "-":  # output_dir '-': stdout
                values[name] = relative_to(values[name], base)
        for name in ("inputs", "changes"):
            if name in values:
                values[name] = {rel: _spec(loc, base) for rel, loc in values[name].items()}
        if "outputs" in values:
            outputs = values["outputs"]
            values["outputs"] = split_outputs(outputs if isinstance(outputs, list) else [outputs])
        if "queries" in values:
            specs = [_query(item, base) for item in values["queries"]]
            values["queries"] = merge_queries((), specs, f"{path}: queries")
        return values


def _spec(location: Union[str, Location], base: Path) -> InputSpec:
    """``uri[:format]`` or ``{uri, format}`` as an ``InputSpec``, a relative path made relative
    to ``base``."""
    spec = parse_location(location) if isinstance(location, str) else InputSpec(location.uri, location.format)
    return InputSpec(relative_to(spec.uri, base), spec.format)


def _query(item: Union[str, QueryItem], base: Path) -> QuerySpec:
    if isinstance(item, str):
        return QuerySpec(item)
    return QuerySpec(item.query, None if item.to is None else _spec(item.to, base))


def config_settings(path: str, raw: Any) -> dict:
    """The settings of the config file ``path`` whose YAML is ``raw``; a ``UsageError`` with a
    line per problem when it does not fit ``JobConfig``."""
    try:
        return JobConfig.model_validate(raw).settings(path)
    except ValidationError as err:
        problems = dict.fromkeys(f"{path}: {_problem(error)}" for error in err.errors(include_url=False))
        raise UsageError("\n".join(problems)) from None


# Every spelling of a key -> its field (a ValidationError's loc has the key as written).
_FIELDS = {key: name for name in JobConfig.model_fields for key in _spellings(name).choices}


def _problem(error: Any) -> str:
    """One problem of a ``ValidationError``: ``inputs.arc: missing key 'uri'``."""
    raw = tuple(error["loc"])
    loc = [part for part in raw if part not in (_TEXT, _FORM)]
    kind, value = error["type"], error.get("input")
    if not loc:  # the whole document
        return f"a job config is a mapping of settings, not a {type(value).__name__}"
    if kind in ("extra_forbidden", "invalid_key"):
        key = loc.pop()
        if not loc and key in _FIELDS:
            return f"{key!r} is given twice (also under another spelling of the same key)"
        known = ", ".join(_owner(raw).model_fields)
        return f"{_path(loc) + ': ' if loc else ''}unknown key {key!r} (known keys: {known})"
    if kind == "missing":
        return f"{_path(loc[:-1])}: missing key {loc[-1]!r}"
    if len(loc) == 1:
        expected = f"must be {JobConfig.model_fields[_FIELDS[str(loc[0])]].description}"
    elif kind == "string_too_short":
        expected = "must be a non-empty string"
    else:
        expected = error["msg"].replace("Input should be", "must be")
    return f"{_path(loc)}: {expected}, not {value!r}"


def _owner(raw: tuple) -> type[BaseModel]:
    """The model a key at ``raw`` (a loc ending in a key) belongs to."""
    if len(raw) < 3:
        return JobConfig
    return QueryItem if _FIELDS.get(str(raw[0])) == "queries" and isinstance(raw[-3], int) else Location


def _path(loc: list) -> str:
    """``["queries", 0, "to"]`` -> ``queries[0].to``."""
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".")
