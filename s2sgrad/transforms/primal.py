"""The plain computation of the lowered form, as Python: what reverse mode's forward sweep and forward
mode both write beside their own code (pushes; tangents), so that each writes only what is its own.

    >>> from s2sgrad.ir import Assign, Const, Op, Var
    >>> import operator
    >>> ast.unparse(ast.fix_missing_locations(plain(Assign("y", Op(operator.mul, [Var("x"), Const(2.0)])))))
    'y = x * 2.0'
    >>> write = Assign("y_1", Op(primitives.setitem, [Var("y"), Const(0), Var("v")]))
    >>> [ast.unparse(ast.fix_missing_locations(s)) for s in written_in_place(write)]
    ['y[0] = v', 'y_1 = y']
"""
from __future__ import annotations

import ast

from ..ir import primitives
from ..ir.nodes import Assign, If, Op, While, atom_expr, value_expr
from ..ir.syntax import assign, name, origin, store


def plain(stmt: Assign) -> ast.stmt:
    """``target = value``, or the value as an expression statement where nothing is bound."""
    if stmt.target is None:
        return origin(ast.Expr(value_expr(stmt.value)), stmt.loc)
    return assign(stmt.target, value_expr(stmt.value), stmt.loc)


def in_place_write(obj: ast.expr, op: Op, item: ast.expr) -> ast.stmt:
    """The in-place form of the functional write `op` (``setitem`` or ``list_append``) into `obj`:
    ``obj[index] = item`` or ``obj.append(item)``."""
    if op.fn is primitives.setitem:
        index = primitives.index_expression(atom_expr(op.args[1]))
        return ast.Assign([ast.Subscript(obj, index, ast.Store())], item)
    return ast.Expr(ast.Call(ast.Attribute(obj, "append", ast.Load()), [item], []))


def written_in_place(stmt: Assign) -> list:
    """``y_1 = setitem(y, i, v)`` as ``y[i] = v; y_1 = y`` (and ``list_append`` as ``.append``)."""
    op = stmt.value
    return [origin(in_place_write(atom_expr(op.args[0]), op, atom_expr(op.args[-1])), stmt.loc),
            assign(stmt.target, atom_expr(op.args[0]), stmt.loc)]


def branch_outputs(branch: If, outs: list) -> list:
    """The branch's results bound to one arm's outputs."""
    return [assign(r, atom_expr(o), branch.loc) for r, o in zip(branch.results, outs)]


def loop_entry(loop: While) -> list:
    """The loop variables bound to their initial values."""
    return [assign(p, atom_expr(i), loop.loc) for p, i in zip(loop.params, loop.inits)]


def loop_exit(loop: While) -> ast.stmt:
    """``if not test: break``, after the loop's condition block."""
    return origin(ast.If(ast.UnaryOp(ast.Not(), atom_expr(loop.test)), [ast.Break()], []), loop.loc)


def next_trip(loop: While, params: list, outs: list) -> list:
    """``params = outs`` at the end of a trip (nothing for a loop without variables)."""
    if not params:
        return []
    return [origin(ast.Assign([ast.Tuple([store(p) for p in params], ast.Store())], ast.Tuple(outs, ast.Load())),
                   loop.loc)]


def endless(loop: While, body: list) -> ast.While:
    """``while True: body`` (the body breaks out through `loop_exit`)."""
    return origin(ast.While(ast.Constant(True), body, []), loop.loc)


def loop_results(loop: While) -> list:
    """The loop's results bound to the loop variables' final values."""
    return [assign(r, name(p), loop.loc) for r, p in zip(loop.results, loop.params)]
