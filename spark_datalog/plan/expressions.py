"""Terms of the AST as IR expressions, with the literal typing backends rely on.

An integer literal that meets a ``double`` (a double column, or the other side of a comparison
or arithmetic) becomes a ``double`` literal, so a backend never has to guess a literal's type.
"""

from __future__ import annotations

from typing import Optional

from .. import functors
from ..syntax import ast
from . import ir

INTEGER_TYPES = ("int", "long")


def expr_type(expr, var_types: dict) -> Optional[str]:
    """The value type of an IR expression (None when a column's type is unknown)."""
    if isinstance(expr, ir.ColumnRef):
        return var_types.get(expr.name)
    if isinstance(expr, (ir.Literal, ir.Call)):
        return expr.type
    left, right = expr_type(expr.left, var_types), expr_type(expr.right, var_types)
    return "double" if "double" in (left, right) else expr.type


def coerce(expr, target: Optional[str]) -> ir.Expr:
    """``expr`` with an integer literal widened to double when ``target`` is double."""
    if target == "double" and isinstance(expr, ir.Literal) and expr.type in INTEGER_TYPES:
        return ir.Literal(float(expr.value), "double")
    return expr


def to_expr(term, var_types: dict) -> ir.Expr:
    """An AST term (Variable, Constant, BinaryOp, Call) as an IR expression."""
    if isinstance(term, ast.Variable):
        return ir.ColumnRef(term.name)
    if isinstance(term, ast.Constant):
        return ir.Literal(term.value, term.type)
    if isinstance(term, ast.BinaryOp):
        left, right = _balanced(to_expr(term.left, var_types), to_expr(term.right, var_types), var_types)
        return ir.Arithmetic(term.op, left, right, _integer_type(term, left, right, var_types), term.span)
    if isinstance(term, ast.Call):
        args = tuple(to_expr(a, var_types) for a in term.args)
        call_type = term.type or _call_type(term, args, var_types)
        return ir.Call(term.name, args, call_type, term.span, functor=term.functor)
    raise TypeError(f"not a term: {term!r}")


def _call_type(term: ast.Call, args: tuple, var_types: dict) -> str:
    """The type of a call analysis did not type: its functor's, or its widest argument's."""
    result = functors.spec(term).result
    if result != "operands":
        return result
    types = [expr_type(a, var_types) for a in args]
    return "string" if "string" in types else ("double" if "double" in types else "long")


def _integer_type(term: ast.BinaryOp, left, right, var_types: dict) -> str:
    """The type of ``term``'s value: analysis's (``ast.BinaryOp.type``), else ``double`` with a
    double operand and ``long`` otherwise."""
    if term.type is not None:
        return term.type
    return "double" if "double" in (expr_type(left, var_types), expr_type(right, var_types)) else "long"


def to_compare(op: str, left, right, var_types: dict) -> ir.Compare:
    """An AST comparison ``left op right`` as an IR condition."""
    left, right = _balanced(to_expr(left, var_types), to_expr(right, var_types), var_types)
    return ir.Compare(op, left, right)


def _balanced(left, right, var_types):
    return coerce(left, expr_type(right, var_types)), coerce(right, expr_type(left, var_types))


def variable_types(body, relations: dict) -> dict:
    """Variable name -> type, from the columns that bind it and from assignments."""
    types: dict = {}
    for literal in body:
        if isinstance(literal, ast.Atom):
            column_types = relations[literal.predicate].types
            for arg, column_type in zip(literal.args, column_types, strict=True):
                if isinstance(arg, ast.Variable) and not arg.anonymous:
                    types.setdefault(arg.name, column_type)
    assignments = [lit for lit in body if isinstance(lit, ast.Assignment)]
    changed = True
    while changed:  # assignments may use variables bound by later assignments
        changed = False
        for assignment in assignments:
            name = assignment.variable.name
            needed = {v.name for v in ast.term_variables(assignment.expr)}
            if name not in types and needed <= types.keys():
                types[name] = expr_type(to_expr(assignment.expr, types), types)
                changed = True
    return types
