"""Small pieces of syntax the two sweeps share.

    >>> ast.unparse(pop("y_stack")), sorted(reads([ast.parse("a = b + c")]))
    ('y_stack.pop()', ['b', 'c'])
"""
from __future__ import annotations

import ast

from ...ir.syntax import name as _name


def pop(stack: str) -> ast.Call:
    return ast.Call(ast.Attribute(_name(stack), "pop", ast.Load()), [], [])


def reads(stmts: list) -> set[str]:
    """Every name `stmts` read."""
    names = set()
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                names.add(node.id)
    return names

