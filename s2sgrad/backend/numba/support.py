"""What the numba backend compiles, checked before numba sees the code: every call, name and construct of a
generated function in numba form, so that what it cannot compile is refused at the user's own line, naming
the construct (`NotCompilable`).

    >>> import ast
    >>> fn = ast.parse("def f(x):\\n    return np.sin(x) + sum([x])").body[0]
    >>> check_compilable(fn, {})
    Traceback (most recent call last):
    ...
    s2sgrad.errors.NotCompilable: the numba backend cannot compile the derivative rule of this line (it calls sum)
    hint: ...
"""
from __future__ import annotations

import ast
import types

import numpy as np

from ...errors import Location, NotCompilable
from ...ir.syntax import origin_of

HINT = 'compute it without numba (leave out backend="numba"), or write this part with numbers and NumPy arrays'

BUILTINS = {"range", "len", "zip", "min", "max", "abs", "float", "int", "enumerate", "reversed",
            "Stack"}                  # (a stack the numba form makes a typed array)
HELPERS = {"check_scalar", "complete", "like", "matmul", "output_seed", "setitem", "stack_grown", "stack_new",
           "stack_rows", "unbroadcast", "unreduce", "written", "zeros_like"}
NUMPY = {"sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh", "exp", "expm1",
         "log", "log1p", "log2", "log10", "sqrt", "square", "abs", "absolute", "negative", "sign", "maximum",
         "minimum", "where", "sum", "prod", "mean", "max", "min", "dot", "outer", "zeros", "ones", "empty",
         "zeros_like", "ones_like", "empty_like", "full", "full_like", "broadcast_to", "shape", "reshape",
         "transpose", "copy", "array", "asarray", "ascontiguousarray", "subtract", "add", "multiply", "divide",
         "true_divide", "power", "arange", "cumsum", "floor", "ceil", "hypot", "exp2", "reciprocal", "float64"}
CHECKPOINTING = {"Checkpoints", "RowBatches", "Work", "copy_state", "Online", "Periodic", "Revolve"}
METHODS = {"sum", "copy", "reshape", "ravel", "transpose", "dot", "max", "min", "mean",
           "push", "pop", "pop_rows", "append"}        # (of stacks and lists of rows, which become typed arrays)
ATTRIBUTES = {"T", "shape", "size", "ndim"}
CONSTRUCTS = {ast.List: "a list display", ast.Dict: "a dict display", ast.Set: "a set display",
              ast.ListComp: "a list comprehension", ast.DictComp: "a dict comprehension",
              ast.SetComp: "a set comprehension", ast.GeneratorExp: "a generator expression",
              ast.Lambda: "a lambda", ast.Try: "a try statement", ast.With: "a with statement",
              ast.JoinedStr: "an f-string", ast.Starred: "an unpacking with *",
              ast.Yield: "a yield", ast.Global: "a global statement", ast.Nonlocal: "a nonlocal statement"}


def _user_value(value) -> bool:
    """Whether numba can read a global of the user's holding `value` (as a constant)."""
    return isinstance(value, (int, float, np.number, np.bool_)) or \
        (isinstance(value, np.ndarray) and value.dtype.kind in "biuf")


def _callee(func: ast.expr) -> str:
    return ast.unparse(func)


def _refusal(node: ast.AST, user_globals: dict, functions: set) -> str | None:
    """What about `node` (itself, not its children) numba cannot compile, or None."""
    for kind, what in CONSTRUCTS.items():
        if isinstance(node, kind):
            return what
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name):
            if func.id in functions:
                return f"a call of another function of the user's (its derivative is {func.id})"
            if func.id in CHECKPOINTING:
                return "a checkpointed loop (sg.checkpointed, checkpoint=)"
            if func.id not in BUILTINS | HELPERS:
                return f"the derivative rule of this line (it calls {func.id})"
        elif ast.unparse(func).startswith(("np.", "math.")):
            if ast.unparse(func).startswith("np.") and not (isinstance(func.value, ast.Name) and func.attr in NUMPY):
                return ast.unparse(func)
        elif isinstance(func, ast.Attribute):
            if func.attr not in METHODS:
                return f"the method .{func.attr}()"
        else:
            return f"a call of {_callee(func)}"
        if any(k.arg is None for k in node.keywords):
            return "keyword arguments passed with **"
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "np":
        return None
    if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Store) and node.attr not in ATTRIBUTES \
            | METHODS and not (isinstance(node.value, ast.Name) and node.value.id == "math"):
        return f"the attribute .{node.attr}"
    if isinstance(node, ast.Raise) and not (isinstance(node.exc, ast.Name) and node.exc.id == "NoRows"):
        return "a raise statement"
    if isinstance(node, ast.Name) and node.id in user_globals:
        value = user_globals[node.id]
        if not (_user_value(value) or isinstance(value, types.ModuleType) and value in (np,)):
            return f"the global {node.id} (a {type(value).__name__})"
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes, complex)):
        return f"the constant {node.value!r}"
    return None


def check_compilable(fn: ast.FunctionDef, user_globals: dict, functions: frozenset = frozenset(),
                     where: Location | None = None, calls_only: bool = False) -> None:
    """Refuse the first statement of `fn` holding what numba cannot compile, at its user line (or `where`):
    with `calls_only`, only calls of `functions` (the module's other functions)."""
    def visit(stmts, where):
        for stmt in stmts:
            where = origin_of(stmt) or where
            for node in _own_nodes(stmt):
                what = _refusal(node, user_globals, functions)
                if calls_only and not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                                       and node.func.id in functions):
                    continue
                if what is not None and not _is_check_label(node, stmt):
                    raise NotCompilable(f"the numba backend cannot compile {what}", where, HINT)
            for field in ("body", "orelse", "handlers", "finalbody"):
                visit(getattr(stmt, field, []), where)
    visit(fn.body, where)


def _own_nodes(stmt: ast.stmt):
    """The nodes of `stmt` that are not inside its nested statements."""
    yield stmt
    for field, value in ast.iter_fields(stmt):
        if field in ("body", "orelse", "handlers", "finalbody"):
            continue
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, ast.AST):
                yield from ast.walk(child)


def _is_check_label(node: ast.AST, stmt: ast.stmt) -> bool:
    """The function's name that ``check_scalar(y, 'f')`` and ``output_seed(y, dy, 'f')`` report (a string numba
    passes as a constant)."""
    calls = [n for n in ast.walk(stmt) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
             and n.func.id in ("check_scalar", "output_seed")]
    return isinstance(node, ast.Constant) and any(node is call.args[-1] for call in calls)
