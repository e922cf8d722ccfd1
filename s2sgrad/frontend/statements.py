"""Part of stage 2, before lowering: statements that are sugar for others.

- ``with`` a context manager that changes no value (``np.errstate`` without ``"raise"``, ``np.printoptions``,
  ``warnings.catch_warnings()``, ``contextlib.nullcontext()``) is its body; any other is refused;
- ``try``/``except``: which path runs is decided first, by running the ``try`` block's own code on copies of
  what it reads (`runtime.exception_of`); then the path taken is an ordinary branch, differentiated as
  such. ``try``/``finally`` is the block, then the ``finally`` block;
- ``global``/``nonlocal`` of names the function only reads say nothing more; an ``import`` inside the
  function binds its name to the module (or the object ``from m import x`` names);
- ``a, *rest, b = xs`` unpacks with `runtime.unpack_starred` (``rest`` a list, as in Python).

    >>> from s2sgrad.frontend.lower import lowered_source
    >>> def f(x):
    ...     with np.errstate(divide="ignore"):
    ...         first, *rest = x
    ...     return first
    >>> print(lowered_source(f), end="")
    def f(x):
        unpack_starred_1 = unpack_starred(x, 1, 0, 'list')
        first_value = unpack_starred_1[0]
        rest_value = unpack_starred_1[1]
        first = first_value
        rest = rest_value
        return first
"""
from __future__ import annotations

import ast
import contextlib
import copy
import importlib
import warnings
from collections import Counter

import gast
import numpy as np

from .. import runtime
from .closures import assigned_names
from .gast_build import assign, call, const, contains, located, name
from .parse import MISSING

NO_EFFECT_CONTEXTS = (np.errstate, np.printoptions, warnings.catch_warnings, contextlib.nullcontext)
SUGARED = (gast.With, gast.Try, gast.Global, gast.Nonlocal, gast.Import, gast.ImportFrom)


def rewritten(desugar, stmt) -> list:
    """The statements `stmt` (one of `SUGARED`) stands for."""
    if isinstance(stmt, gast.With):
        return _with(desugar, stmt)
    if isinstance(stmt, gast.Try):
        return _try(desugar, stmt)
    if isinstance(stmt, (gast.Global, gast.Nonlocal)):
        written = [n for n in stmt.names if n in desugar.stored]
        if written:
            kind = "global" if isinstance(stmt, gast.Global) else "nonlocal"
            raise desugar.error(f"'{written[0]}' is declared {kind} and assigned: s2sgrad does not change names "
                                "outside the differentiated function", stmt,
                                f"return the new value of '{written[0]}' instead")
        return []
    return _import(desugar, stmt)


def unstarred(desugar, stmt: gast.Assign) -> gast.Assign:
    """``a, *rest, b = xs`` as ``a, rest, b = unpack_starred(xs, 1, 1, "list")``; other assignments as they are."""
    target = stmt.targets[0] if len(stmt.targets) == 1 else None
    if not isinstance(target, (gast.Tuple, gast.List)):
        return stmt
    stars = [k for k, e in enumerate(target.elts) if isinstance(e, gast.Starred)]
    if not stars:
        return stmt
    k = stars[0]
    elts = list(target.elts)
    elts[k] = elts[k].value
    after = len(elts) - k - 1
    items = stmt.value.elts if isinstance(stmt.value, (gast.Tuple, gast.List)) else None
    if items is not None and not any(isinstance(e, gast.Starred) for e in items) and len(items) >= k + after:
        middle = gast.List(elts=items[k:len(items) - after], ctx=gast.Load())     # a display: split as written
        value = gast.Tuple(elts=items[:k] + [middle] + items[len(items) - after:], ctx=gast.Load())
    else:
        value = call(runtime.unpack_starred, stmt.value, const(k), const(after), const("list"))
    return located(gast.Assign(targets=[gast.Tuple(elts=elts, ctx=gast.Store())], value=value,
                               type_comment=None), stmt)


def _callee(desugar, expr):
    return desugar.callee(expr) if isinstance(expr, gast.Call) else None


def _with(desugar, stmt) -> list:
    for item in stmt.items:
        manager = _callee(desugar, item.context_expr)
        if not any(manager is known for known in NO_EFFECT_CONTEXTS):
            raise desugar.error("a 'with' block is supported only for context managers that change no value "
                                "(np.errstate, np.printoptions, warnings.catch_warnings, contextlib.nullcontext): "
                                "another may change what the block computes or raises", item.context_expr,
                                "move the with block out of the differentiated function")
        if manager is np.errstate:
            for keyword in item.context_expr.keywords:
                setting = keyword.value
                if not (isinstance(setting, gast.Constant) and setting.value in ("ignore", "warn", "print", "log")):
                    raise desugar.error("np.errstate is supported with 'ignore', 'warn', 'print' or 'log': with "
                                        "'raise' or 'call' it changes what the block does", keyword.value,
                                        "check the values explicitly, or move the with block out")
        if item.optional_vars is not None:
            raise desugar.error("'with ... as' is not supported in a differentiated function", item.optional_vars,
                                "leave out the 'as' name")
    if any(_callee(desugar, item.context_expr) is warnings.catch_warnings for item in stmt.items):
        return [s for s in stmt.body if not _sets_warnings(desugar, s)]    # its filters end with the block
    return list(stmt.body)


def _sets_warnings(desugar, stmt) -> bool:
    """``warnings.simplefilter(...)`` or ``warnings.filterwarnings(...)`` as a statement."""
    return isinstance(stmt, gast.Expr) and any(_callee(desugar, stmt.value) is f
                                               for f in (warnings.simplefilter, warnings.filterwarnings))


def _try(desugar, stmt) -> list:
    exits = (gast.Return, gast.Break, gast.Continue)
    if not stmt.handlers:
        if stmt.finalbody and contains(stmt.body, exits):
            raise desugar.error("'return', 'break' or 'continue' inside 'try ... finally' is not supported",
                                _first(stmt.body, exits), "move them after the finally block")
        return list(stmt.body) + list(stmt.orelse) + list(stmt.finalbody)
    if contains(stmt.body, exits):
        raise desugar.error("'return', 'break' or 'continue' inside a 'try' block with 'except' is not supported",
                            _first(stmt.body, exits), "assign the result in the try block and return after it")
    _refuse_partial_state(desugar, stmt)
    caught = desugar.names.reserve("caught")
    types = []
    for handler in stmt.handlers:
        if handler.type is None:
            types.append(name("BaseException"))
        elif isinstance(handler.type, gast.Tuple):
            types.extend(handler.type.elts)
        else:
            types.append(handler.type)
    probe = _probe(desugar, stmt)
    probe_name = desugar.names.reserve("try_block")
    desugar.parsed.closure[probe_name] = probe          # (a name of the function's namespace from here on)
    outcome = call(runtime.exception_of, name(probe_name), gast.Tuple(elts=copy.deepcopy(types), ctx=gast.Load()),
                   *[name(n) for n in probe.reads])
    branches = []
    for handler in reversed(stmt.handlers):
        body = _reraising(copy.deepcopy(handler.body), caught)
        if handler.name is not None:
            body.insert(0, located(assign(handler.name.id, name(caught)), handler))
        if not branches:
            branches = body
            continue
        kind = name("BaseException") if handler.type is None else copy.deepcopy(handler.type)
        test = call(isinstance, name(caught), kind)
        branches = [located(gast.If(test=test, body=body, orelse=branches), handler)]
    ran = gast.Compare(left=name(caught), ops=[gast.Is()], comparators=[const(None)])
    branch = located(gast.If(test=ran, body=list(stmt.body) + list(stmt.orelse), orelse=branches), stmt)
    return [located(assign(caught, outcome), stmt), branch] + list(stmt.finalbody)


def _refuse_partial_state(desugar, stmt) -> None:
    """The except path starts from the state before the ``try``; Python's starts from the state where the
    exception came: refuse where the two can differ in a name read after (one the block binds or changes
    before its last statement, or in its last one if that is compound), unless every handler binds it."""
    last = stmt.body[-1]
    earlier = stmt.body[:-1] + ([last] if isinstance(last, (gast.For, gast.While, gast.If, gast.With, gast.Try))
                                else [])
    inside = Counter(n.id for s in stmt.body for n in gast.walk(s) if isinstance(n, gast.Name)
                     and isinstance(n.ctx, gast.Load))
    for changed in assigned_names(earlier):
        rebound = all(changed in assigned_names(h.body) for h in stmt.handlers)
        if desugar.loads[changed] > inside[changed] and not rebound:
            raise desugar.error(f"'{changed}' is bound or changed inside the try block before its last statement "
                                "and read after it: where an exception comes later, Python keeps that change, "
                                "while s2sgrad runs the except path from the state before the try block", stmt,
                                f"assign '{changed}' in every except block too, or move the statement out of the "
                                "try block")


def _first(stmts, types):
    return next(n for s in stmts for n in gast.walk(s) if isinstance(n, types))


def _reraising(stmts, caught: str) -> list:
    """A handler's bare ``raise`` raises the exception it caught."""
    for node in (n for s in stmts for n in gast.walk(s)):
        if isinstance(node, gast.Raise) and node.exc is None:
            node.exc = name(caught)
    return stmts


def _probe(desugar, stmt):
    """The ``try`` block's own code as a function of the names it reads before it binds them (its `reads`)."""
    parsed = desugar.parsed
    bound, reads = set(), []
    for node in (n for s in stmt.body for n in gast.walk(s)):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            bound.add(node.id)
        elif isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and node.id not in bound \
                and node.id not in reads and (node.id in desugar.assigned or node.id in parsed.closure):
            reads.append(node.id)
    for node in (n for s in stmt.body for n in gast.walk(s)):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and node.id not in reads \
                and node.id not in bound and parsed.resolve(node.id) is MISSING:
            raise desugar.error(f"the try block reads '{node.id}', which its own code, run first to find the path "
                                "the try takes, cannot see (a function defined inside the differentiated one?)",
                                node, f"define '{node.id}' at module level, or move the try block into a function")
    body = [gast.gast_to_ast(copy.deepcopy(s)) for s in stmt.body]
    function = ast.FunctionDef(name=f"try_block_{stmt.lineno}", args=ast.arguments(
        posonlyargs=[], args=[ast.arg(n) for n in reads], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
        defaults=[]), body=body + [ast.Return(ast.Constant(None))], decorator_list=[], returns=None, type_params=[])
    module = ast.fix_missing_locations(ast.Module(body=[function], type_ignores=[]))
    ast.increment_lineno(module, parsed.line_offset)
    made: dict = {}
    exec(compile(module, parsed.filename, "exec"), parsed.globals, made)    # its globals are the function's
    probe = made[function.name]
    probe.reads = reads
    return probe


def _import(desugar, stmt) -> list:
    """``import m``, ``import m.n as k``, ``from m import x``: the name bound to what it names, from here on;
    where the import fails, the function raises its error there."""
    bindings = []
    try:
        if isinstance(stmt, gast.Import):
            for alias in stmt.names:
                module = importlib.import_module(alias.name)
                top = alias.asname or alias.name.split(".")[0]
                bindings.append((top, module if alias.asname else importlib.import_module(top)))
        else:
            if stmt.level:
                raise desugar.error("a relative import inside a differentiated function is not supported", stmt,
                                    "import at module level")
            module = importlib.import_module(stmt.module)
            for alias in stmt.names:
                if alias.name == "*":
                    raise desugar.error("'from ... import *' is not supported in a function", stmt,
                                        "import the names you use")
                if not hasattr(module, alias.name):
                    raise ImportError(f"cannot import name '{alias.name}' from '{stmt.module}'")
                bindings.append((alias.asname or alias.name, getattr(module, alias.name)))
    except ImportError as error:
        failure = gast.Call(func=name("ImportError"), args=[const(str(error))], keywords=[])
        failure.func.resolved = ImportError
        return [located(gast.Expr(value=call(runtime.raise_error, failure)), stmt)]
    for bound_name, value in bindings:
        if bound_name in desugar.stored:
            raise desugar.error(f"'{bound_name}' is imported and also assigned in the function", stmt,
                                "give one of them another name")
        desugar.parsed.closure[bound_name] = value
    return []
