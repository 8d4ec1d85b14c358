"""Surface syntax: the AST records and the parser that builds them from program text."""

from spark_datalog.syntax import ast
from spark_datalog.syntax.parser import parse

__all__ = ["ast", "parse"]
