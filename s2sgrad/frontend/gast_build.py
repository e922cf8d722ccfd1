"""Part of stage 2: small constructors of gast syntax, and `contains`, which the rewrites before lowering
share (`desugar`, `comprehensions`, `statements`).

    >>> import ast
    >>> ast.unparse(ast.fix_missing_locations(gast.gast_to_ast(assign("y", call(len, name("x"))))))
    'y = len(x)'
"""
from __future__ import annotations

import gast


def name(id_, ctx=None):
    return gast.Name(id=id_, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


def assign(target: str, value) -> gast.Assign:
    return gast.Assign(targets=[name(target, gast.Store())], value=value, type_comment=None)


def const(value):
    return gast.Constant(value=value, kind=None)


def call(fn, *args):
    """A call of builtin or runtime function `fn`, which lowering takes as that object whatever the user's
    namespace binds to its name (a global ``len`` of the user's is not this ``len``)."""
    func = name(fn.__name__)
    func.resolved = fn
    return gast.Call(func=func, args=list(args), keywords=[])


def negation(expr):
    return gast.UnaryOp(op=gast.Not(), operand=expr)


def located(node, origin):
    """Give `node` and its descendants `origin`'s location where they have none."""
    for child in gast.walk(node):
        if getattr(child, "lineno", None) is None and hasattr(origin, "lineno"):
            child.lineno = origin.lineno
            child.col_offset = getattr(origin, "col_offset", 0)
            child.end_lineno = getattr(origin, "end_lineno", origin.lineno)
            child.end_col_offset = getattr(origin, "end_col_offset", 0)
    return node


class _Contains(gast.NodeVisitor):
    """Does a statement list contain a node of some types, outside nested loops and functions?"""

    def __init__(self, types, into_loops=False):
        self.types = types
        self.into_loops = into_loops
        self.found = False

    def generic_visit(self, node):
        if isinstance(node, self.types):
            self.found = True
            return
        if isinstance(node, (gast.FunctionDef, gast.Lambda, gast.ClassDef)):
            return
        if isinstance(node, (gast.While, gast.For)) and not self.into_loops:
            return
        super().generic_visit(node)


def contains(stmts, types, into_loops=False) -> bool:
    finder = _Contains(types, into_loops)
    for stmt in stmts:
        finder.visit(stmt)
    return finder.found
