"""Soufflé's ``IO=sqlite``: a relation read from, or written to, an SQLite database file.

- The database: ``filename=``, else ``dbname=`` (Soufflé's older name), else ``<relation>.sqlite``;
  relative to the fact directory (``.input``) or the output directory (``.output``) unless
  absolute. A ``file:`` URI (``file:db.sqlite?mode=ro``) or ``:memory:`` is given to SQLite as it
  is. Only local files: a name in a non-local directory (``s3://...``) is a ``DirectiveError``.
- ``.input r(IO=sqlite)`` reads every row of the table or view ``r``, its first columns in order,
  each converted to its column's type as Soufflé converts its text; a NULL or empty value reads
  as ``n/a`` (a number column then fails). A missing database, table or view, or a value not of
  its column's type, is an ``InputError`` naming the database and the relation.
- ``.output r(IO=sqlite)`` replaces, in one transaction, the table ``_r`` (columns ``0``, ``1``,
  ...; a primary key over all of them, ``WITHOUT ROWID``, up to 22 columns) and the view ``r``
  (the relation's column names, each symbol column joined to ``__SymbolTable(id, symbol)`` for
  its text); a symbol is stored as its id in ``__SymbolTable``, which relations writing to one
  database share and which keeps the ids given before. Numbers are ``INTEGER``s; a float column
  is ``REAL`` (Soufflé stores a float's bits as an integer), a ``bool`` 0 or 1. The database's
  directory is made when missing. A failure is an ``OutputError`` and leaves the database as it
  was (a database the write created is removed).
- A record, ADT or list column, or a relation without columns, is a ``DirectiveError`` at the
  directive (Soufflé stores a record's id in its record table, which has no counterpart here).

Every statement is built with SQLAlchemy Core: names are quoted by it, values bound.
"""

from __future__ import annotations

import math
import os
import sqlite3
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterable, Iterator, Sequence
from urllib.parse import unquote, urlparse
from urllib.request import pathname2url

from .errors import DirectiveError, InputError, OutputError
from .record_types import adt_branches, is_record
from .recursive_records import is_recursive
from .storage import uris

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from .souffle_io import InputFile, OutputTarget

__all__ = ["check_columns", "database_name", "input_frame", "read_rows", "write_frame", "write_rows"]

SYMBOL_TABLE = "__SymbolTable"
_BATCH = 10_000  # rows inserted per statement
_LOOKUP = 500  # symbols looked up per statement (SQLite's bound-parameter limit)


# ---------------------------------------------------------------------------------------------
# Planning


def database_name(directive, directory: str, located) -> str:
    """The database ``directive`` reads or writes: a local path (``located(name, directory)`` for
    a relative name), or a ``file:`` URI / ``:memory:`` as given. ``DirectiveError`` when the
    path is not local."""
    name = directive.param("filename") or directive.param("dbname") or f"{directive.name}.sqlite"
    if name.startswith(("file:", ":memory:")):
        return name
    location = located(name, directory)
    if not uris.is_local(location):
        raise _directive_error(
            directive,
            f"IO=sqlite reads and writes local files only, not {location} "
            f"(.{directive.kind} {directive.name})",
        )
    return unquote(urlparse(location).path) if uris.scheme(location) == "file" else location


def check_columns(directive, columns: tuple) -> None:
    """``DirectiveError`` unless every column of ``columns`` can be stored in SQLite."""
    if not columns:
        raise _directive_error(directive, f"IO=sqlite cannot store {directive.name}: it has no columns")
    for name, type_ in columns:
        if is_record(type_) or is_recursive(type_) or adt_branches(type_):
            raise _directive_error(
                directive,
                f"IO=sqlite cannot store column {name} of {directive.name}: records, ADTs and lists "
                "are not supported in SQLite databases",
            )


def _directive_error(directive, message: str) -> DirectiveError:
    return DirectiveError(message, directive.span.line or None, directive.span.column or None)


# ---------------------------------------------------------------------------------------------
# Connecting


def _is_uri(database: str) -> bool:
    return database.startswith(("file:", ":memory:"))


@contextmanager
def _engine(database: str, read_only: bool) -> Iterator:
    """A SQLAlchemy engine on ``database`` whose transactions hold DDL too: ``BEGIN`` (the one
    statement written as text, a constant) is sent by hand, as Python's sqlite3 module would
    run a ``CREATE`` or ``DROP`` outside the transaction."""
    import sqlalchemy as sa

    if _is_uri(database):
        target, uri = database, True
    elif read_only:
        target, uri = f"file:{pathname2url(os.path.abspath(database))}?mode=ro", True
    else:
        target, uri = database, False
    engine = sa.create_engine(
        "sqlite://",
        creator=lambda: sqlite3.connect(target, uri=uri, isolation_level=None),
        poolclass=sa.pool.NullPool,
    )
    sa.event.listen(engine, "begin", lambda conn: conn.exec_driver_sql("BEGIN"))
    try:
        yield engine
    finally:
        engine.dispose()


def _reason(err: BaseException) -> str:
    """The database's own words for ``err`` (a SQLAlchemy or sqlite3 error)."""
    cause = getattr(err, "orig", None) or err
    return str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__


def _db_errors() -> tuple:
    from sqlalchemy.exc import SQLAlchemyError

    return (SQLAlchemyError, sqlite3.Error)


# ---------------------------------------------------------------------------------------------
# Reading


def read_rows(source: "InputFile") -> set:
    """The facts of the table or view ``source.relation`` in ``source.uri``, typed."""
    database, relation = source.uri, source.relation
    if not _is_uri(database) and not os.path.isfile(database):
        raise InputError(f"cannot open database {database} (.input {relation}): no such file")
    try:
        with _engine(database, read_only=True) as engine, engine.connect() as conn:
            return _typed_rows(source, _raw_rows(conn, source))
    except _db_errors() as err:
        raise InputError(f"cannot read {relation} from database {database}: {_reason(err)}") from None


def _raw_rows(conn, source: "InputFile") -> Iterator[tuple]:
    """The rows of the table or view ``source.relation`` (its first columns, one per column)."""
    import sqlalchemy as sa

    relation, arity = source.relation, len(source.columns)
    if not sa.inspect(conn).has_table(relation):
        raise InputError(f"no table or view {relation} in database {source.uri} (.input {relation})")
    table = sa.Table(relation, sa.MetaData(), autoload_with=conn)
    if len(table.columns) < arity:
        raise InputError(
            f"cannot read {relation} from database {source.uri}: its table or view has "
            f"{len(table.columns)} column(s), {relation} has {arity}"
        )
    picked = list(table.columns)[:arity]
    for row in conn.execute(sa.select(*picked)):
        yield tuple(row)


def _typed_rows(source: "InputFile", rows: Iterable[tuple]) -> set:
    """``rows`` converted to the columns' types; ``InputError`` at a value that is not one."""
    facts = set()
    for number, row in enumerate(rows, start=1):
        values = []
        for index, (raw, (name, type_)) in enumerate(zip(row, source.columns, strict=True)):
            value = _value(raw, type_)
            if value is None:
                raise InputError(
                    f"cannot read {source.relation} from database {source.uri}: row {number}, "
                    f"column {index + 1} ({name}: {type_}): {_text(raw)!r} is not a {_word(type_)}"
                )
            values.append(value)
        facts.add(tuple(values))
    return facts


def _value(raw, type_: str):
    """A database value as a value of ``type_`` (``None`` when it is not one): converted from
    its text as Soufflé converts it, a REAL into a float column as it is."""
    from .souffle_io import parse_field

    if type_ == "double" and isinstance(raw, float):
        return raw + 0.0
    if type_ == "bool" and isinstance(raw, int) and raw in (0, 1):
        return bool(raw)
    return parse_field(_text(raw), type_)


def _text(raw) -> str:
    """A database value's text; NULL and empty values are ``n/a``, as Soufflé reads them."""
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", errors="replace")
    text = "" if raw is None else raw if isinstance(raw, str) else repr(raw)
    return text or "n/a"


def _word(type_: str) -> str:
    return {"double": "float", "bool": "bool", "string": "symbol"}.get(type_, "number")


def input_frame(spark, source: "InputFile") -> "DataFrame":
    """``source``'s facts as a DataFrame: read in the driver (the database is a local file) and
    handed to Spark as an Arrow table."""
    from .souffle_io import driver_frame

    return driver_frame(spark, source, read_rows(source))


# ---------------------------------------------------------------------------------------------
# Writing


def write_frame(frame, target: "OutputTarget") -> None:
    """Write the relation ``frame`` to ``target``'s database, its rows collected to the driver
    a partition at a time."""
    write_rows(target, (tuple(row) for row in frame.toLocalIterator()))


def write_rows(target: "OutputTarget", rows: Iterable[Sequence]) -> None:
    """Replace ``target.relation``'s table and view in ``target.uri`` by ``rows``, in one
    transaction; ``OutputError`` when it fails (the database left as it was)."""
    database = target.uri
    assert database is not None
    created = not _is_uri(database) and not os.path.exists(database)
    if created and os.path.dirname(database):
        os.makedirs(os.path.dirname(database), exist_ok=True)
    try:
        with _engine(database, read_only=False) as engine, engine.begin() as conn:
            _Writer(conn, target).write(rows)
    except (OutputError, *_db_errors()) as err:
        if created and os.path.exists(database):
            os.remove(database)
        if isinstance(err, OutputError):
            raise
        raise OutputError(f"cannot write {target.relation} to database {database}: {_reason(err)}") from None


class _Writer:
    """One relation written into an open transaction: its table, its view, its symbols' ids."""

    def __init__(self, conn, target: "OutputTarget"):
        import sqlalchemy as sa

        self.conn, self.target = conn, target
        self.metadata = sa.MetaData()
        self.symbols = sa.Table(
            SYMBOL_TABLE,
            self.metadata,
            sa.Column("id", sa.Integer, primary_key=True),
            sa.Column("symbol", sa.Text, unique=True),
        )
        self.table = self._relation_table()
        self.ids: dict = {}

    def _relation_table(self):
        """The table ``_r``: a column ``0``, ``1``, ... per column, all of them its key when
        they are few (as Soufflé decides: 9 bytes a value at most, under 200 bytes a row)."""
        import sqlalchemy as sa

        keyed = len(self.target.columns) * 9 + 1 < 200
        columns = [
            sa.Column(
                str(i), sa.REAL if type_ == "double" else sa.Integer, primary_key=keyed, autoincrement=False
            )
            for i, (_, type_) in enumerate(self.target.columns)
        ]
        options = {"sqlite_with_rowid": False} if keyed else {}
        return sa.Table(f"_{self.target.relation}", self.metadata, *columns, **options)

    def write(self, rows: Iterable[Sequence]) -> None:
        """Replace the view and the table, then insert ``rows`` in batches."""
        from sqlalchemy.dialects.sqlite import insert
        from sqlalchemy.schema import DropTable
        from sqlalchemy.sql.ddl import CreateView, DropView

        view = CreateView(self._view_select(), self.target.relation, metadata=self.metadata)
        self._check_view_name()
        self.conn.execute(DropView(view.table, if_exists=True))
        self.conn.execute(DropTable(self.table, if_exists=True))
        self.table.create(self.conn)
        self.symbols.create(self.conn, checkfirst=True)
        self.conn.execute(view)
        statement = insert(self.table).on_conflict_do_nothing()
        batch: list = []
        for row in rows:
            batch.append(row)
            if len(batch) >= _BATCH:
                self.conn.execute(statement, self._stored(batch))
                batch = []
        if batch:
            self.conn.execute(statement, self._stored(batch))

    def _check_view_name(self) -> None:
        """``OutputError`` when the database holds a table (not a view) named as the relation."""
        import sqlalchemy as sa

        relation = self.target.relation
        if relation in sa.inspect(self.conn).get_table_names():
            raise OutputError(
                f"cannot write {relation} to database {self.target.uri}: it has a table {relation} "
                "(IO=sqlite writes a view of that name)"
            )

    def _view_select(self):
        """The view's select: the relation's column names, a symbol's text from the symbol table."""
        import sqlalchemy as sa

        picked, joins = [], []
        for i, (name, type_) in enumerate(self.target.columns):
            column = self.table.c[str(i)]
            if type_ == "string":
                symbols = self.symbols.alias(f"_symtab_{i}")
                joins.append(column == symbols.c.id)
                column = symbols.c.symbol
            picked.append(column.label(name))
        return sa.select(*picked).where(*joins) if joins else sa.select(*picked)

    def _stored(self, batch: list) -> list:
        """``batch``'s rows as the table stores them (parameter dicts)."""
        self._add_symbols(batch)
        stored = []
        for row in batch:
            values = {}
            for i, (value, (name, type_)) in enumerate(zip(row, self.target.columns, strict=True)):
                values[str(i)] = self._stored_value(value, name, type_)
            stored.append(values)
        return stored

    def _stored_value(self, value, name: str, type_: str):
        if type_ == "string":
            return self.ids[value]
        if type_ == "double":
            if math.isnan(value):
                raise OutputError(
                    f"cannot write {self.target.relation} to database {self.target.uri}: column {name} "
                    "holds NaN, which SQLite cannot store"
                )
            return float(value)
        return int(value)

    def _add_symbols(self, batch: list) -> None:
        """Give every symbol of ``batch`` its id in the symbol table (new ones inserted)."""
        import sqlalchemy as sa
        from sqlalchemy.dialects.sqlite import insert

        positions = [i for i, (_, type_) in enumerate(self.target.columns) if type_ == "string"]
        new = sorted({row[i] for row in batch for i in positions} - self.ids.keys())
        if not new:
            return
        self.conn.execute(insert(self.symbols).on_conflict_do_nothing(), [{"symbol": s} for s in new])
        for start in range(0, len(new), _LOOKUP):
            chunk = new[start : start + _LOOKUP]
            found = self.conn.execute(
                sa.select(self.symbols.c.symbol, self.symbols.c.id).where(self.symbols.c.symbol.in_(chunk))
            )
            self.ids.update({symbol: id_ for symbol, id_ in found})
