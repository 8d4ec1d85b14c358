"""A warehouse's relations as tables of a Spark catalog database.

``Warehouse(spark, database="reasoning")`` keeps its Delta tables under the database's location
and registers each relation it writes as an external Delta table ``reasoning.<relation>``, so
users read them with ``spark.table("reasoning.tc")`` or SQL. Registration goes through Spark's
catalog API (``Catalog.createTable``); a missing database is created by name, which must be a
plain identifier (checked first), never with SQL text built from program text. Needs the
delta-spark jar (Delta's catalog and data source).

Example::

    wh = Warehouse(spark, database="reasoning")
    program.materialize(spark, inputs=..., warehouse=wh)
    spark.table("reasoning.tc").where("_count > 0").show()
"""

from __future__ import annotations

import re

from ..errors import WarehouseError
from . import uris

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_database_name(database: str) -> None:
    """Refuse a database name that is not a plain identifier (letters, digits, ``_``)."""
    if not isinstance(database, str) or not _IDENTIFIER.fullmatch(database):
        raise WarehouseError(
            f"catalog database {database!r} is not a plain identifier (letters, digits and _, "
            f"not starting with a digit)"
        )


def database_location(spark, database: str) -> str:
    """The location of ``database`` in the session's catalog, created (where the catalog puts
    databases, ``spark.sql.warehouse.dir``) when missing. Tables registered by a warehouse with
    its own root are external: they stay at the root whatever the database's location."""
    check_database_name(database)
    if not spark.catalog.databaseExists(database):
        # Spark 4.2 takes no parameter marker here; the name is a checked plain identifier.
        spark.sql(f"CREATE DATABASE IF NOT EXISTS `{database}`")
    return uris.normalise(spark.catalog.getDatabase(database).locationUri)


def table_name(relation: str) -> str:
    """The catalog table of ``relation``: its name, with a component instance's ``inst.rel``
    written ``inst__rel`` (a catalog table name is a plain identifier).

    >>> table_name("tc"), table_name("g.reach")
    ('tc', 'g__reach')
    """
    return relation.replace(".", "__")


def register_table(spark, database: str, relation: str, location: str) -> None:
    """Register ``relation``'s Delta table at ``location`` as ``database.relation`` (an external
    table) unless the catalog has it already."""
    name = f"{database}.{table_name(relation)}"
    if not spark.catalog.tableExists(name):
        spark.catalog.createTable(name, path=uris.for_spark(location), source="delta")
