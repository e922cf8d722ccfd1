"""Part of stage 2: Python's builtins that call a function the user gives, written as loops calling it.

On the gast tree, during `desugar` (the loops it adds are desugared in turn), so that the function can be
anything lowering can call (a module-level function, a NumPy ufunc, a nested def, a lambda bound to a name):

- ``map(f, a, b)`` is ``[f(u, v) for u, v in zip(a, b)]``;
- ``functools.reduce(f, xs, init)`` is a loop ``acc = f(acc, xs[k])`` over ``range(len(xs))`` from
  ``acc = init`` (without ``init``, from ``acc = first_item(xs)`` over the rest);
- ``max(xs, key=k)``, ``min`` and ``sorted(xs, key=k, reverse=r)``, where ``k`` is not a module-level
  function (which the rules call themselves), compute ``keys = [k(v) for v in xs]`` with a loop, then
  ``keyed_extremum(max, xs, keys)`` or ``sorted_by_keys(xs, keys, r)``;
- ``zip(a, b)`` and ``enumerate(xs)`` as values (not loop headers) are the lists of tuples they yield.

A map, zip or enumerate object thus becomes the list it yields: the same items, in a list that can be
iterated more than once. (``key=None`` is no key.)

    >>> from s2sgrad.frontend.lower import lowered_source
    >>> def total(x):
    ...     def square(v):
    ...         return v * v
    ...     return sum(map(square, x))
    >>> "square(item)" in lowered_source(total)
    True
"""
from __future__ import annotations

import builtins
import functools

import gast

from .. import runtime
from .comprehensions import comprehension

HEADERS = (builtins.range, builtins.enumerate, builtins.zip, builtins.reversed)


def _name(id_, ctx=None, resolved=None):
    node = gast.Name(id=id_, ctx=ctx or gast.Load(), annotation=None, type_comment=None)
    if resolved is not None:
        node.resolved = resolved
    return node


def _call(fn, args):
    """A call of builtin or runtime function `fn`, which lowering takes as that object whatever the user's
    namespace binds to its name."""
    return gast.Call(func=_name(fn.__name__, resolved=fn), args=list(args), keywords=[])


def _assign(target: str, value) -> gast.Assign:
    return gast.Assign(targets=[_name(target, gast.Store())], value=value, type_comment=None)


def _tuple(elts, ctx=None):
    return gast.Tuple(elts=list(elts), ctx=ctx or gast.Load())


def _list_comp(elt, target, iterable):
    generator = gast.comprehension(target=target, iter=iterable, ifs=[], is_async=0)
    return gast.ListComp(elt=elt, generators=[generator])


class BuiltinCalls:
    """Rewrites the calls of one function body `desugar` (a `desugar.Desugar`) desugars."""

    def __init__(self, desugar):
        self.desugar = desugar
        self.nested = {n.name for n in desugar.parsed.nodes if isinstance(n, gast.FunctionDef)}

    def mark_header(self, node) -> None:
        """`node` is a loop's iterable: its ``zip``/``enumerate``/``reversed`` (and those in them) stay calls."""
        if self.desugar.callee(node) in HEADERS:
            node.loop_header = True
            for arg in node.args:
                self.mark_header(arg)

    def rewrite(self, node, before: list):
        """`node` (a call whose arguments are rewritten already), or what replaces it; statements it needs
        computed first are appended to `before`."""
        if getattr(node, "loop_header", False):
            return node
        callee = self.desugar.callee(node)
        if callee is builtins.map and len(node.args) >= 2 and not node.keywords:
            return self.map(node, before)
        if callee is functools.reduce and len(node.args) in (2, 3) and not node.keywords:
            return self.reduce(node, before)
        if callee in (builtins.zip, builtins.enumerate) and not any(isinstance(a, gast.Starred) for a in node.args):
            return self.listed(node, callee, before)
        if callee in (builtins.max, builtins.min, builtins.sorted):
            return self.keyed(node, callee, before)
        return node

    # ---------------------------------------------------------------- helpers

    def fresh(self, hint: str) -> str:
        return self.desugar.names.reserve(hint)

    def held(self, expr, hint: str, before: list, constants: bool = False):
        """A new name assigned `expr` in `before` (evaluated once, where Python evaluates it); with `constants`,
        a constant as it is."""
        if constants and isinstance(expr, gast.Constant):
            return expr
        name = self.fresh(hint)
        before.append(self.desugar.located(_assign(name, expr), expr))
        return _name(name)

    def function(self, expr, before: list):
        """A function expression to call in a loop: a name or attribute as it is, else held in a name."""
        if isinstance(expr, (gast.Name, gast.Attribute)):
            return expr
        return self.held(expr, "function", before)

    def is_module_level(self, expr) -> bool:
        """Does `expr` name a module-level object (not a local name, nor a nested def)?"""
        while isinstance(expr, gast.Attribute):
            expr = expr.value
        return isinstance(expr, gast.Name) and expr.id not in self.desugar.assigned and expr.id not in self.nested \
            and callable(self.desugar.parsed.resolve(expr.id))

    def comprehension(self, elt, target, iterable, origin, before: list):
        listed = self.desugar.located(_list_comp(elt, target, iterable), origin)
        return comprehension(self.desugar, listed, before)

    # ---------------------------------------------------------------- the builtins

    def map(self, node, before: list):
        fn = self.function(node.args[0], before)
        names = [self.fresh("item") for _ in node.args[1:]]
        if len(names) == 1:
            target, iterable = _name(names[0], gast.Store()), node.args[1]
        else:
            target = _tuple([_name(n, gast.Store()) for n in names], gast.Store())
            iterable = _call(builtins.zip, node.args[1:])
        call = gast.Call(func=fn, args=[_name(n) for n in names], keywords=[])
        return self.comprehension(call, target, iterable, node, before)

    def listed(self, node, callee, before: list):
        if callee is builtins.zip:
            if node.keywords:
                return node
            names = [self.fresh("item") for _ in node.args]
            target = _tuple([_name(n, gast.Store()) for n in names], gast.Store())
            return self.comprehension(_tuple([_name(n) for n in names]), target, node, node, before)
        start = node.args[1:] + [k.value for k in node.keywords if k.arg == "start"]
        if len(node.args) + len(node.keywords) != 1 + len(start) or len(start) > 1:
            return node
        start = [self.held(s, "start", before, constants=True) for s in start]
        index, item = self.fresh("index"), self.fresh("item")
        counted = gast.BinOp(left=_name(index), op=gast.Add(), right=start[0]) if start else _name(index)
        enumerated = _call(builtins.enumerate, node.args[:1])
        target = _tuple([_name(index, gast.Store()), _name(item, gast.Store())], gast.Store())
        return self.comprehension(_tuple([counted, _name(item)]), target, enumerated, node, before)

    def reduce(self, node, before: list):
        desugar = self.desugar
        fn = self.function(node.args[0], before)
        items = self.held(node.args[1], "reduce_items", before)
        result, index = self.fresh("reduced"), self.fresh("reduce_index")
        if len(node.args) == 3:
            start, first = node.args[2], 0
        else:
            start, first = _call(runtime.first_item, [items]), 1
        before.append(desugar.located(_assign(result, start), node))
        step = _assign(result, gast.Call(func=fn, args=[
            _name(result), gast.Subscript(value=_name(items.id), slice=_name(index), ctx=gast.Load())], keywords=[]))
        bounds = [gast.Constant(value=first, kind=None)] if first else []
        trips = _call(builtins.range, bounds + [_call(builtins.len, [_name(items.id)])])
        loop = gast.For(target=_name(index, gast.Store()), iter=trips, body=[step], orelse=[], type_comment=None)
        before.extend(desugar.statement(desugar.located(loop, node)))
        return desugar.located(_name(result), node)

    def keyed(self, node, callee, before: list):
        keywords = {k.arg: k.value for k in node.keywords}
        key = keywords.get("key")
        if isinstance(key, gast.Constant) and key.value is None:
            node.keywords = [k for k in node.keywords if k.arg != "key"]
            return node
        if key is None or self.is_module_level(key) or set(keywords) - {"key", "default", "reverse"} \
                or any(isinstance(a, gast.Starred) for a in node.args) or not node.args:
            return node
        if callee is builtins.sorted:
            if len(node.args) != 1 or "default" in keywords:
                return node
        elif "reverse" in keywords or "default" in keywords and len(node.args) > 1:
            return node                          # (Python's error, raised by the call itself)
        fn = self.function(key, before)
        whole = node.args[0] if len(node.args) == 1 else _tuple(node.args)
        items = self.held(whole, "candidates", before)
        item = self.fresh("item")
        keys = self.comprehension(gast.Call(func=fn, args=[_name(item)], keywords=[]), _name(item, gast.Store()),
                                  _name(items.id), node, before)
        if callee is builtins.sorted:
            args = [_name(items.id), keys] + ([keywords["reverse"]] if "reverse" in keywords else [])
            return self.desugar.located(_call(runtime.sorted_by_keys, args), node)
        args = [_name(callee.__name__, resolved=callee), _name(items.id), keys]
        if "default" in keywords:
            args += [gast.Constant(value=True, kind=None), keywords["default"]]
        return self.desugar.located(_call(runtime.keyed_extremum, args), node)
