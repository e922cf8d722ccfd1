"""Functional writes ``x = setitem(x, i, v)`` of a generated function run in place (``x[i] = v``) where nothing
can see the array as it was: `x` is no parameter, and every other read of it is used up at once — an element
of a vector read by a number index, an operand of arithmetic, an argument of a NumPy function that makes a new
array, or a row pushed (the numba stacks copy their rows). A copy of the whole array on each write would make
a loop of writes quadratic.

    >>> import ast
    >>> fn = ast.parse('''
    ... def f(a, n):
    ...     y = np.zeros(n)
    ...     i = 1
    ...     while i < n:
    ...         item = y[i - 1]
    ...         y = setitem(y, i, np.sin(a * item))
    ...         i = i + 1
    ...     return np.sum(y * y)''').body[0]
    >>> print(ast.unparse(written_in_place(fn, {"a", "n", "i", "item"}, {"y"}).body[2].body[1]))
    y[i] = np.sin(a * item)
"""
from __future__ import annotations

import ast

from .scalars import MATH, is_number

FRESH = set(MATH) | {"sum", "mean", "max", "min", "prod", "dot", "square", "abs", "absolute", "outer", "where",
                     "maximum", "minimum", "power", "exp2", "log2", "log10", "sign", "negative", "copy", "array"}


def _self_write(stmt) -> str | None:
    """`x` of a statement ``x = setitem(x, i, v)``."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
            and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name) \
            and stmt.value.func.id == "setitem" and len(stmt.value.args) == 3 \
            and isinstance(stmt.value.args[0], ast.Name) and stmt.value.args[0].id == stmt.targets[0].id:
        return stmt.targets[0].id
    return None


def _used_up(name: str, fn: ast.FunctionDef, numbers: set, vectors: set) -> bool:
    """Whether every read of `name` but the first argument of its own writes is used up at once."""
    parents = {id(child): node for node in ast.walk(fn) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)):
            continue
        parent = parents.get(id(node))
        if isinstance(parent, ast.Call) and node in parent.args:
            callee = ast.unparse(parent.func)
            if callee == "setitem" and parent.args[0] is node:
                continue                              # a write into it (in place, or into a copy)
            if callee.startswith(("np.", "math.")) and callee.split(".")[1] in FRESH | set(MATH.values()) \
                    or callee.endswith(".push"):
                continue
            return False
        if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare)):
            continue
        if isinstance(parent, ast.Subscript) and parent.value is node and name in vectors \
                and is_number(parent.slice, numbers, set()):
            continue
        if isinstance(parent, ast.Attribute) and parent.attr in ("shape", "size", "ndim"):
            continue
        return False
    return True


class _InPlace(ast.NodeTransformer):
    def __init__(self, names: set):
        self.names = names

    def visit_Assign(self, node):
        name = _self_write(node)
        if name not in self.names:
            return node
        _, index, value = node.value.args
        return ast.copy_location(ast.Assign([ast.Subscript(ast.Name(name, ast.Load()), index, ast.Store())], value),
                                 node)


def written_in_place(fn: ast.FunctionDef, numbers: set, vectors: set) -> ast.FunctionDef:
    """`fn` with its self-writes ``x = setitem(x, i, v)`` in place where nothing sees the old array (`numbers`
    and `vectors` as `scalars.typed_names` finds them)."""
    written = {_self_write(node) for node in ast.walk(fn)} - {None}
    safe = {name for name in written if _used_up(name, fn, numbers, vectors)}
    if not safe:
        return fn
    in_place = _InPlace(safe)
    for node in ast.walk(fn):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                new = [in_place.visit(stmt) if _self_write(stmt) in safe else stmt for stmt in block]
                for old, stmt in zip(block, new):
                    if stmt is not old and hasattr(old, "origin"):
                        stmt.origin = old.origin
                block[:] = new
    return fn
