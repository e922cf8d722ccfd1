"""The gradient of a dict argument written as the dict display the hand adjoint returns.

The backward sweep gathers a dict's gradient key by key (``seq_scatter`` for the first, ``seq_add_at``
for each other), and `complete` then walks it, copying every array, for the gradient handed back. Where
generated code is specialized on the dict's keys (an `ArrayDict`), and those statements end the function,
the gradient is the display itself, each key's value as it was computed where the backward sweep made it
a new array (arithmetic, a matrix product, a sum), completed alone otherwise, zeros at keys with no
gradient:

    >>> import ast
    >>> code = '''
    ... def df(p, g):
    ...     dp = seq_scatter(np.sum(g, 0), p, 'b')
    ...     dp = seq_add_at(dp, g.T @ g, p, 'W')
    ...     return complete(dp, p)'''
    >>> print(ast.unparse(dict_displays(ast.parse(code).body[0], {"p": (("W", (2, 2)), ("U", (2, 1)), ("b", (2,)))})))
    def df(p, g):
        return {'W': g.T @ g, 'U': zeros_like(p['U']), 'b': np.sum(g, 0)}
"""
from __future__ import annotations

import ast

from ..ir.syntax import call, name, names_read

FRESH_CALLS = {"matmul_grad_a", "matmul_grad_b", "tensordot_grad_a", "tensordot_grad_b"}   # new arrays
FRESH_NUMPY = {"sum", "outer", "dot", "matmul", "einsum"}


def dict_displays(fn: ast.FunctionDef, dicts: dict) -> ast.FunctionDef:
    """`fn` returning the gradient of each dict parameter in `dicts` (parameter -> ((key, shape), ...) of its
    items, in order) as a display, where the statements gathering it end the function."""
    returned = fn.body[-1] if fn.body and isinstance(fn.body[-1], ast.Return) else None
    if returned is None or not dicts:
        return fn
    results = returned.value.elts if isinstance(returned.value, ast.Tuple) else [returned.value]
    for k, result in enumerate(results):
        if not (_is_call(result, "complete") and len(result.args) == 2
                and all(isinstance(a, ast.Name) for a in result.args) and result.args[1].id in dicts):
            continue
        gradient, param = result.args[0].id, result.args[1].id
        gathered = _gathered(fn.body[:-1], gradient, param)
        if gathered is None or sum(_reads(r, gradient) for r in results) != 1:
            continue
        values, statements = gathered
        shapes = dict(dicts[param])
        if set(values) - set(shapes):
            continue
        display = ast.Dict([ast.Constant(key) for key in shapes],
                           [_completed(values[key], param, key, shape) if key in values
                            else call("zeros_like", _item(param, key)) for key, shape in shapes.items()])
        del fn.body[len(fn.body) - 1 - len(statements):len(fn.body) - 1]
        if isinstance(returned.value, ast.Tuple):
            returned.value.elts[k] = display
        else:
            returned.value = display
    return fn


def _gathered(body: list, gradient: str, param: str) -> tuple[dict, list] | None:
    """The values at each key of the statements gathering `gradient` at the end of `body`, and those
    statements; None if they do not end it, or a key comes twice."""
    values, statements = {}, []
    for stmt in reversed(body):
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id == gradient):
            break
        value = stmt.value
        if _is_call(value, "seq_add_at") and len(value.args) == 4 and _is_name(value.args[0], gradient):
            slot, key = value.args[1:3], value.args[3]
        elif _is_call(value, "seq_scatter") and len(value.args) == 3:
            slot, key = value.args[:2], value.args[2]
        else:
            return None
        if not (_is_name(slot[1], param) and isinstance(key, ast.Constant) and type(key.value) in (str, int)) \
                or key.value in values or gradient in names_read(slot[0]):
            return None
        values[key.value] = slot[0]
        statements.insert(0, stmt)
        if _is_call(value, "seq_scatter"):
            return values, statements
    return None


def _completed(value: ast.expr, param: str, key, shape: tuple) -> ast.expr:
    """`value` where it is certainly a new array of the gradient's own (of an array of `shape`, not a number),
    else ``complete(value, p[key])``."""
    fresh = bool(shape) and (isinstance(value, ast.BinOp) or _is_call_of(value, FRESH_CALLS) or (
        isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in FRESH_NUMPY
        and isinstance(value.func.value, ast.Name) and value.func.value.id == "np"))
    return value if fresh else call("complete", value, _item(param, key))


def _item(param: str, key) -> ast.Subscript:
    return ast.Subscript(name(param), ast.Constant(key), ast.Load())


def _is_call(node, function: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == function


def _is_call_of(node, functions: set) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions


def _is_name(node, id_: str) -> bool:
    return isinstance(node, ast.Name) and node.id == id_


def _reads(node, id_: str) -> int:
    return sum(isinstance(n, ast.Name) and n.id == id_ for n in ast.walk(node))
