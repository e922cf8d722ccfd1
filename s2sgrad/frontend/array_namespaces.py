"""Part of stage 2: user code written against the array API, ``xp = array_api_compat.array_namespace(x)`` and then
``xp.f(...)``, read as NumPy code: the binding is dropped and each ``xp.f`` read as ``np.f`` (NumPy 2 names the
array API's functions too: ``np.concat`` is ``np.concatenate``, ``np.permute_dims`` is ``np.transpose``), so that
NumPy's derivative rules apply; the gradient generated for other arrays then calls their namespace again
(`backend.namespaces`).

    >>> import gast, array_api_compat
    >>> tree = gast.parse("def f(x):\\n    xp = array_namespace(x)\\n    return xp.sum(xp.exp(x))").body[0]
    >>> read_as_numpy(tree, {"array_namespace": array_api_compat.array_namespace}.get)
    True
    >>> print(gast.unparse(tree).strip())
    def f(x):
        return np.sum(np.exp(x))
"""
from __future__ import annotations

import gast
import numpy as np

from ..errors import UnsupportedSyntax

NAMESPACE_FUNCTIONS = ("array_namespace", "get_namespace")     # array_api_compat's, by name


def _is_namespace_call(node, resolve) -> bool:
    if not isinstance(node, gast.Call):
        return False
    parts, func = [], node.func
    while isinstance(func, gast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, gast.Name):
        return False
    value = resolve(func.id)
    for attr in reversed(parts):
        value = getattr(value, attr, None)
    return getattr(value, "__name__", None) in NAMESPACE_FUNCTIONS and \
        (getattr(value, "__module__", "") or "").startswith("array_api_compat")


def read_as_numpy(tree: gast.FunctionDef, resolve, location=None) -> bool:
    """Drop `tree`'s array-namespace bindings and read their functions as NumPy's (in place); whether it had any.
    `resolve` gives what a free name of the function is; `location` places a refusal."""
    names = set()
    for node in gast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for stmt in list(body):
            if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) \
                    and _is_namespace_call(stmt.value, resolve):
                names.add(stmt.targets[0].id)
                body.remove(stmt)
    if not names:
        return False
    for node in list(gast.walk(tree)):
        if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) and node.value.id in names:
            if not hasattr(np, node.attr):
                raise UnsupportedSyntax(f"the array API's {node.attr} has no NumPy function of that name to "
                                        "differentiate", location(node) if location else None,
                                        hint="write it with the functions NumPy and the array API share")
            node.value = gast.Name("np", gast.Load(), None, None)
    for node in gast.walk(tree):
        if isinstance(node, gast.Name) and node.id in names and isinstance(node.ctx, gast.Load):
            raise UnsupportedSyntax(f"the array namespace '{node.id}' is used as a value", location(node)
                                    if location else None, hint=f"call its functions ({node.id}.f(...)) only")
    return True


__all__ = ["read_as_numpy"]
