"""Check a derivative rule template as it is registered, so that a mistake is reported at the template's line.

    >>> import numpy as np
    >>> from s2sgrad.rules import adjoint, d
    >>> def double(x):
    ...     return 2.0 * x
    >>> @adjoint(double)
    ... def double_adjoint(y, x):
    ...     d[z] = 2.0 * d[y]
    Traceback (most recent call last):
    ...
    s2sgrad.rules.registry.RuleTemplateError: <doctest ...>:3:5: d[z] assigns the adjoint of 'z', which is not ...
    ...

A template is straight-line code: assignments to one name (a temporary) or to
one ``d[...]``. An adjoint template assigns ``d[x]`` for parameters `x` and reads
only ``d[y]``, `y` its result; a tangent template reads ``d[x]`` and assigns
``d[y]``. Every other name it reads is a parameter, a temporary or a name the
template's module defines, or NumPy, `math` or a runtime helper. Where the primitive's signature is known, the
parameters the template requires must be among its parameters.
"""
from __future__ import annotations

import ast
import builtins
import inspect

from .. import runtime
from ..ir.trees import walk

# What generated code can always call: NumPy, `math` and the runtime.
GENERATED_CODE_SEES = {"np", "math"} | set(runtime.__all__)


def _key(node: ast.Subscript) -> str | None:
    """`v` for ``d[v]``, else None."""
    return node.slice.id if isinstance(node.slice, ast.Name) else None


def _is_d(node) -> bool:
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "d"


def _described(rule) -> str:
    name = getattr(rule.template, "__name__", "?")
    params = ", ".join([rule.output] + [str(p) for p in rule.signature.parameters.values()])
    return f"{'a lambda' if name == '<lambda>' else name}({params})"


def check_template(rule, primitives: tuple, mode: str) -> None:
    """Raise `rule.error(...)` (a `RuleTemplateError` at the template's line) for what the engine cannot inline.
    `mode` is ``"adjoint"`` or ``"tangent"``."""
    params = set(rule.signature.parameters)
    star = {p.name for p in rule.signature.parameters.values() if p.kind == p.VAR_POSITIONAL}
    if len(primitives) == 1:
        _check_parameters(rule, primitives[0])
    local = params | {rule.output, "d"} | {n.id for stmt in rule.body for n in walk(stmt)
                                            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} \
        | {a.arg for stmt in rule.body for n in walk(stmt) if isinstance(n, ast.Lambda)
           for a in n.args.args + n.args.kwonlyargs}
    visible = set(getattr(rule.template, "__globals__", {})) | GENERATED_CODE_SEES
    free = set(getattr(getattr(rule.template, "__code__", None), "co_freevars", ()))
    sets_result = False
    for stmt in rule.body:
        target = _target(rule, stmt, mode)
        if _is_d(target):
            sets_result = True
            key = _key(target) if isinstance(target.slice, ast.Name) else None
            if mode == "tangent" and key != rule.output:
                raise rule.error(f"{ast.unparse(target)}: a tangent template sets only the tangent of its result, "
                                 f"d[{rule.output}]", stmt)
            if mode == "adjoint" and not (key in params or isinstance(target.slice, ast.Subscript)
                                          and isinstance(target.slice.value, ast.Name)
                                          and target.slice.value.id in star):
                raise rule.error(f"{ast.unparse(target)} assigns the adjoint of {ast.unparse(target.slice)!r}, "
                                 f"which is not a parameter of the template {_described(rule)}", stmt)
        for node in walk(stmt.value):
            if _is_d(node):
                _check_read(rule, node, mode, params, stmt)
            elif isinstance(node, ast.Name) and node.id not in local and node.id not in visible \
                    and node.id not in free and not hasattr(builtins, node.id):
                raise rule.error(f"{node.id!r} is neither a parameter of the template {_described(rule)}, nor one "
                                 f"of its temporaries, nor a name its module defines, nor np, math or a runtime "
                                 f"helper", node)
    if mode == "tangent" and not sets_result:
        raise rule.error(f"the tangent template {_described(rule)} sets no d[{rule.output}]")


def _target(rule, stmt: ast.stmt, mode: str):
    """The one target of `stmt`, an assignment the engine can inline."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        raise rule.error(f"a rule template is straight-line assignments (to one name or one d[...]); it cannot "
                         f"inline {type(stmt).__name__.lower()} statements", stmt)
    target = stmt.targets[0]
    names = target.elts if isinstance(target, ast.Tuple) and mode == "adjoint" else [target]
    if not (_is_d(target) or all(isinstance(n, ast.Name) for n in names)):
        raise rule.error(f"cannot inline an assignment to {ast.unparse(target)}: a template assigns one name "
                         f"or one d[...]", stmt)
    return target


def _check_read(rule, node: ast.Subscript, mode: str, params: set, stmt) -> None:
    key = _key(node)
    if mode == "adjoint" and key != rule.output:
        raise rule.error(f"{ast.unparse(node)}: an adjoint template reads only the adjoint of its result, "
                         f"d[{rule.output}]", node)
    if mode == "tangent" and key not in params:
        raise rule.error(f"{ast.unparse(node)} reads the tangent of {ast.unparse(node.slice)!r}, which is not "
                         f"a parameter of the template {_described(rule)}", node)


def _check_parameters(rule, primitive) -> None:
    """Each parameter the template requires must be one the primitive takes (where its signature is known; a
    parameter with a default may be one another NumPy version takes)."""
    try:
        own = list(inspect.signature(getattr(primitive, "fn", primitive)).parameters.values())
    except (TypeError, ValueError):
        return
    if any(p.kind == p.VAR_KEYWORD for p in own):
        return
    named = {p.name for p in own if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    positional = [p for p in own if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    varargs = any(p.kind == p.VAR_POSITIONAL for p in own)
    for k, param in enumerate(rule.signature.parameters.values()):
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or param.name in named \
                or param.default is not param.empty:
            continue
        if param.kind != param.KEYWORD_ONLY and (k < len(positional) and positional[k].kind == param.POSITIONAL_ONLY
                                                 or k >= len(positional) and varargs):
            continue
        wanted = ", ".join(str(p) for p in own)
        name = getattr(primitive, "__name__", repr(primitive))
        raise rule.error(f"the template {_described(rule)} has a parameter {param.name!r}, which {name}({wanted}) "
                         f"does not take")
