"""Part of stage 2: nested ``def``s lifted out of the function being lowered, their free variables made
parameters (a closure's cells become explicit arguments), and the names a block assigns.

    >>> from s2sgrad.frontend.lower import lowered_source
    >>> def f(x, k):
    ...     def scaled(v):
    ...         return v * k
    ...     return scaled(x) + 1.0
    >>> print(lowered_source(f), end="")
    def scaled(v, k):
        prod = v * k
        return prod
    <BLANKLINE>
    def f(x, k):
        scaled_1 = scaled(x, k)
        sum_1 = scaled_1 + 1.0
        return sum_1
"""
from __future__ import annotations

import gast

from ..ir.nodes import Global
from ..ir.trees import walk
from ..markers import recompute
from .callable_values import free_names, is_callable_value, named_by_generated_code
from .functions import LiftedFunction
from .numpy_writes import written_by_call
from .parse import ParsedFunction
from .signatures import flatten


def lift(lowerer, tree) -> LiftedFunction:
    """The nested def `tree`, met while `lowerer` lowers its function, as a LiftedFunction: the enclosing
    function's names it reads become its free variables (with those of the nested defs it calls)."""
    parameters = flatten(tree)
    inner_params = set(parameters.names)
    assigned = set(assigned_names(tree.body)) | inner_params
    recursive = tree.name not in assigned and any(isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
                                                  and n.id == tree.name for n in gast.walk(tree))
    read = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
            and n.id not in assigned and n.id in lowerer.env and not (recursive and n.id == tree.name)}
    functions = {n: lowerer.env[n] for n in read if is_callable_value(lowerer.env[n])}
    free = {n for n in read if isinstance(lowerer.env[n], str)}
    for function in functions.values():
        free |= set(free_names(function))
    statics = {n: Global(n, functions.pop(n).value) for n in list(functions)
               if named_by_generated_code(functions[n])}
    free |= set(statics)
    free = sorted(free)
    parameters.defaults = {p: lowerer.atom(d) for p, d in parameters.defaults.items()}   # evaluated at the def
    parsed = ParsedFunction(None, tree, lowerer.parsed.filename, lowerer.parsed.line_offset,
                            lowerer.parsed.col_offset, lowerer.parsed.globals, lowerer.parsed.closure,
                            cells=lowerer.parsed.cells)
    marked = False
    for decorator in tree.decorator_list:
        target = lowerer.expressions.value_kind(decorator)
        if isinstance(target, Global) and target.value is recompute:
            marked = True
        else:
            raise lowerer.error("only @sg.recompute can decorate a function defined inside a differentiated one",
                                     decorator, "apply other decorators outside")
    lifted = LiftedFunction(parsed, free, marked, functions, parameters, statics=statics)
    if recursive:
        functions[tree.name] = lifted       # it calls itself
    return lifted


def assigned_names(stmts) -> list[str]:
    """Names assigned anywhere in `stmts` (nested blocks included), in order of appearance."""
    seen: dict[str, None] = {}           # (a dict: the names in order, each found at once)
    for stmt in stmts:
        for node in walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) and node.id not in seen:
                seen.setdefault(node.id)
            elif isinstance(node, gast.FunctionDef) and node.name not in seen:
                seen.setdefault(node.name)
            elif isinstance(node, (gast.Expr,)) and isinstance(node.value, gast.Call) \
                    and isinstance(node.value.func, gast.Attribute) \
                    and isinstance(node.value.func.value, gast.Name) and node.value.func.attr == "append" \
                    and node.value.func.value.id not in seen:
                seen.setdefault(node.value.func.value.id)
            elif isinstance(node, (gast.Subscript,)) and isinstance(node.ctx, gast.Store) \
                    and isinstance(node.value, gast.Name) and node.value.id not in seen:
                seen.setdefault(node.value.id)
            elif isinstance(node, gast.AugAssign):
                target = node.target.value if isinstance(node.target, gast.Subscript) else node.target
                if isinstance(target, gast.Name) and target.id not in seen:
                    seen.setdefault(target.id)
            elif isinstance(node, gast.Call):
                seen.update(dict.fromkeys(name for name in written_by_call(node) if name not in seen))
    return list(seen)
