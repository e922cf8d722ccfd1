"""Small pieces of syntax the two sweeps share.

    >>> ast.unparse(pop("y_stack"))
    'y_stack.pop()'
"""
from __future__ import annotations

import ast

from ...ir.syntax import name as _name


def pop(stack: str) -> ast.Call:
    return ast.Call(ast.Attribute(_name(stack), "pop", ast.Load()), [], [])
