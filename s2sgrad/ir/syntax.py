"""Small constructors of Python syntax for generated code, shared by the stages that emit it.

    >>> import ast
    >>> ast.unparse(np_call("sum", call("zeros_like", name("x"))))
    'np.sum(zeros_like(x))'
"""
from __future__ import annotations

import ast


def name(id_: str) -> ast.Name:
    return ast.Name(id_, ast.Load())


def store(id_: str) -> ast.Name:
    return ast.Name(id_, ast.Store())


def call(fn: str, *args) -> ast.Call:
    return ast.Call(name(fn), list(args), [])


def is_call(node: ast.AST, fn: str) -> bool:
    """Is `node` a call of the plain name `fn`?"""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == fn


def is_slice(node: ast.AST) -> bool:
    """Is `node` ``g[a:b]`` (or ``g[:, a:b]``): a part of an array, never a missing gradient?"""
    index = getattr(node, "slice", None)
    return isinstance(node, ast.Subscript) and all(isinstance(p, ast.Slice) for p in getattr(index, "elts", [index]))


def attr(obj: str, attribute: str) -> ast.Attribute:
    return ast.Attribute(name(obj), attribute, ast.Load())


def np_call(fn: str, *args) -> ast.Call:
    """``np.fn(*args)``."""
    return ast.Call(ast.Attribute(name("np"), fn, ast.Load()), list(args), [])


def origin(node, location):
    """Remember which user line a generated statement comes from (printed as a comment)."""
    if location is not None:
        node.origin = location
    return node


def assign(target, value: ast.expr, location=None) -> ast.Assign:
    """``target = value``; `target` is a name or a target expression."""
    target = store(target) if isinstance(target, str) else target
    return origin(ast.Assign([target], value), location)


def function(fn_name: str, params: list[str], body: list, defaults=()) -> ast.FunctionDef:
    """``def fn_name(params): body`` (the last parameters taking `defaults`)."""
    args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=list(defaults))
    node = ast.FunctionDef(name=fn_name, args=args, body=body, decorator_list=[], returns=None, type_comment=None)
    if hasattr(ast, "TypeAlias"):          # Python 3.12+
        node.type_params = []
    return node
