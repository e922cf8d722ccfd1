"""Part of stage 2: rewrite a function's control flow into plain ``while``, ``if`` and one final ``return``.

Before lowering into the functional form, on the gast tree:

- ``for`` over ``range(...)``, an array or list, ``enumerate``, ``zip``, ``reversed``, ``np.ndindex``,
  a dict's ``keys()``, ``values()`` or ``items()`` (or a dict argument itself) becomes a ``while``
  over a hidden counter (incremented first, so that ``continue`` needs nothing special);
- list comprehensions and generator expressions become such loops appending to a list; so do the builtins
  that call a function the user gives (``map``, ``functools.reduce``, a key), `builtin_calls`' job;
- ``break`` and ``continue`` become flags that guard the rest of the body and the condition;
- ``return`` inside a loop becomes a flag and a value; every other early ``return`` moves the
  statements after its ``if`` into the branch that falls through, so the function ends in
  returns only.

    for i in range(n):              i_count = 0
        if c(i):                    i_stop = n
            break            ->     broke = False
        s = s + i                   while not broke and i_count < i_stop:
                                        i = i_count
                                        i_count = i_count + 1
                                        if c(i):
                                            broke = True
                                        if not broke:
                                            s = s + i
"""
from __future__ import annotations

import builtins
from collections import Counter

import gast
import numpy as np

from .. import runtime
from ..errors import UnsupportedSyntax
from ..ir.trees import Transformer, copy_tree, walk
from ..markers import checkpointed
from .builtin_calls import BuiltinCalls
from .comprehensions import hoisted
from .gast_build import assign as _assign
from .gast_build import call as _call
from .gast_build import const as _const
from .gast_build import contains
from .gast_build import located as _located
from .gast_build import name as _name
from .gast_build import negation as _not
from .statements import SUGARED, rewritten, unstarred


class _Substitute(Transformer):
    def __init__(self, name: str, expr):
        self.name, self.expr = name, expr

    def visit_Name(self, node):
        return copy_tree(self.expr) if node.id == self.name else node


def _names_dict(value) -> bool:
    return isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and value.func.id == "dict"


def always_returns(stmts) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, gast.Return):
        return True
    if isinstance(last, gast.If):
        return always_returns(last.body) and always_returns(last.orelse)
    return False


class Desugar:
    """Rewrites one function body; `names` hands out fresh identifiers."""

    def __init__(self, parsed, names, dicts=()):
        self.parsed = parsed
        self.names = names
        nodes = parsed.nodes
        self.assigned = {n.id for n in nodes if isinstance(n, gast.Name)
                         and isinstance(n.ctx, (gast.Store, gast.Param))}
        self.stored = {n.id for n in nodes
                       if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        made = [n.targets[0].id for n in nodes if isinstance(n, gast.Assign)
                and len(n.targets) == 1 and isinstance(n.targets[0], gast.Name)
                and (isinstance(n.value, (gast.Dict, gast.DictComp)) or _names_dict(n.value))]
        stores = Counter(n.id for n in nodes if isinstance(n, gast.Name)
                         and isinstance(n.ctx, gast.Store))
        # dict parameters never rebound, and locals only ever bound to a dict display or dict(...)
        self.dicts = set(dicts) - self.stored | {n for n in made if stores[n] == made.count(n)}
        self.loads = Counter(n.id for n in nodes if isinstance(n, gast.Name)
                             and isinstance(n.ctx, gast.Load))
        self.builtin_calls = BuiltinCalls(self)

    located = staticmethod(_located)

    def error(self, message, node, hint=None):
        return UnsupportedSyntax(message, self.parsed.location(node), hint)

    # ---------------------------------------------------------------- entry

    def function(self, body: list) -> list:
        """The desugared copy of a function body, ending in returns only."""
        body = self.returns_last(self.block(body))
        if not always_returns(body):
            body.append(_located(gast.Return(value=_const(None)), self.parsed.tree))
        return body

    def block(self, stmts) -> list:
        out = []
        for stmt in stmts:
            out.extend(self.statement(stmt))
        return out

    def statement(self, stmt) -> list:
        if isinstance(stmt, SUGARED):
            return self.block(rewritten(self, stmt))
        if isinstance(stmt, gast.Assign):
            stmt = unstarred(self, stmt)
        before = []
        if isinstance(stmt, gast.While) and contains([stmt.test], gast.NamedExpr):    # evaluated before every trip
            test, stmt.test = stmt.test, _const(True)
            stmt.body = [_located(gast.If(test=_not(test), body=[gast.Break()], orelse=[]), test)] + stmt.body
        stmt = self.hoist_comprehensions(stmt, before)
        if isinstance(stmt, gast.For):
            return before + self.for_loop(stmt)
        if isinstance(stmt, gast.While):
            stmt.test, stmt.checkpoint = self.checkpoint_marker(stmt.test)
            orelse, stmt.orelse = stmt.orelse, []
            stmt.read_after = self.read_after(stmt)
            stmt.body = self.block(stmt.body)
            loop = self.loop_exits(stmt)
            stmt.body += _copy(before)           # what the condition needs, computed again for each test
            return before + self.with_else(loop, stmt, orelse)
        if isinstance(stmt, gast.If):
            stmt.body = self.block(stmt.body)
            stmt.orelse = self.block(stmt.orelse)
        return before + [stmt]

    def hoist_comprehensions(self, stmt, before: list):
        """Replace each comprehension and assignment expression in `stmt` by a name computed in `before`."""
        return hoisted(self, stmt, before)

    # ---------------------------------------------------------------- for loops

    def read_after(self, loop) -> set:
        """Names `loop` binds that the function may read elsewhere (after it): Python keeps a loop's last
        binding, or has none where no trip ran."""
        parts = [loop.body, [loop.target, loop.iter] if isinstance(loop, gast.For) else [loop.test]]
        nodes = [n for part in parts for node in part for n in walk(node)]     # (not its else block)
        inside = Counter(n.id for n in nodes if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))
        bound = {n.id for n in nodes if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        return {n for n in bound if self.loads[n] > inside[n]}

    def with_else(self, lowered: list, loop, orelse: list) -> list:
        """A loop's ``else`` clause after it: run where the loop ended without ``break``."""
        if not orelse:
            return lowered
        orelse = self.block(orelse)
        broke = getattr(loop, "broke", None)
        if broke is None:
            return lowered + orelse
        return lowered + [_located(gast.If(test=_not(_name(broke)), body=orelse, orelse=[]), orelse[0])]

    def for_loop(self, loop: gast.For) -> list:
        orelse = loop.orelse
        hint = loop.target.id if isinstance(loop.target, gast.Name) else "item"
        count = self.names.reserve(f"{hint}_count")
        loop.iter, schedule = self.checkpoint_marker(loop.iter)
        self.rebound = {n.id for s in loop.body for n in walk(s)
                        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        setup, stop, element = self.iteration(loop.iter, count, hint)
        test = gast.Compare(left=_name(count), ops=[gast.Lt()], comparators=[stop])
        step = _assign(count, gast.BinOp(left=_name(count), op=gast.Add(), right=_const(1)))
        bind = unstarred(self, gast.Assign(targets=[loop.target], value=element, type_comment=None))
        body = [_located(bind, loop.target), _located(step, loop)] + self.block(loop.body)
        whole = gast.While(test=test, body=body, orelse=[])
        _located(whole, loop)
        whole.read_after = self.read_after(loop)
        whole.checkpoint = schedule
        if not contains(loop.body, (gast.Break, gast.Return)):
            whole.trips = stop                     # the trip count is known on entry
        setup = [_located(s, loop) for s in setup]
        start = [_located(_assign(count, _const(0)), loop)]
        return setup + start + self.with_else(self.loop_exits(whole), whole, orelse)

    def checkpoint_marker(self, node):
        """``s2sgrad.checkpointed(x, schedule)`` in a loop header: (x, the schedule expression)."""
        arguments = list(node.args) + [k.value for k in node.keywords if k.arg == "schedule"] \
            if isinstance(node, gast.Call) else []
        if isinstance(node, gast.Call) and len(arguments) == 2 and len(node.args) + len(node.keywords) == 2:
            func = node.func
            path = []
            while isinstance(func, gast.Attribute):
                path.append(func.attr)
                func = func.value
            if isinstance(func, gast.Name):
                value, dotted = self.parsed.resolve(func.id), func.id
                for attr in reversed(path):
                    value = self.parsed.attribute(dotted, value, attr)
                    dotted += "." + attr
                if value is checkpointed:
                    return arguments[0], arguments[1]
        return node, None

    def iteration(self, iterable, count: str, hint: str):
        """Set-up statements, the trip count, and the element for counter `count`."""
        def held(expr, what):
            # Python evaluates the iterable once: a name the body rebinds must be held apart
            if isinstance(expr, gast.Constant) or isinstance(expr, gast.Name) and expr.id not in self.rebound:
                return [], expr
            name = self.names.reserve(f"{hint}_{what}")
            return [_assign(name, expr)], _name(name)

        if isinstance(iterable, gast.Call) and isinstance(iterable.func, gast.Name) \
                and self.parsed.resolve(iterable.func.id) in (range, enumerate, zip) \
                and all(k.arg == "start" for k in iterable.keywords) \
                and (not iterable.keywords or self.parsed.resolve(iterable.func.id) is enumerate):
            kind = self.parsed.resolve(iterable.func.id)
            args = iterable.args
            if kind is range:
                if len(args) == 1:
                    setup, stop = held(args[0], "stop")
                    return setup, stop, _name(count)
                setup, stop = [], None
                parts = []
                for arg, what in zip(args, ("start", "stop", "step")):
                    s, held_arg = held(arg, what)
                    setup += s
                    parts.append(held_arg)
                trips = self.names.reserve(f"{hint}_trips")
                setup.append(_assign(trips, _call(builtins.len, _call(builtins.range, *parts))))
                start = parts[0]
                offset = _name(count) if len(parts) == 2 else \
                    gast.BinOp(left=_name(count), op=gast.Mult(), right=parts[2])
                element = gast.BinOp(left=start, op=gast.Add(), right=offset)
                return setup, _name(trips), element
            if kind is enumerate:
                starts = args[1:] + [k.value for k in iterable.keywords]
                if len(starts) > 1 or not args:
                    raise self.error("enumerate takes an iterable and a start", iterable,
                                     "enumerate(xs) or enumerate(xs, 1)")
                setup, stop, element = self.iteration(args[0], count, hint)
                index = _name(count)
                if starts:
                    held_setup, start = held(starts[0], "start")
                    setup = held_setup + setup
                    index = gast.BinOp(left=start, op=gast.Add(), right=index)
                return setup, stop, gast.Tuple(elts=[index, element], ctx=gast.Load())
            setup, stops, elements = [], [], []
            for arg in args:
                s, stop, element = self.iteration(arg, count, hint)
                setup += s
                stops.append(stop)
                elements.append(element)
            trips = self.names.reserve(f"{hint}_trips")
            setup.append(_assign(trips, _call(builtins.min, *stops)))
            return setup, _name(trips), gast.Tuple(elts=elements, ctx=gast.Load())
        callee = self.callee(iterable)
        if callee in (list, tuple) and len(iterable.args) == 1 and not iterable.keywords \
                and self.callee(iterable.args[0]) in (range, enumerate, zip, reversed):
            return self.iteration(iterable.args[0], count, hint)       # the same items, listed first
        if callee is reversed and len(iterable.args) == 1:
            inner = iterable.args[0]
            if self.callee(inner) in (enumerate, zip):
                raise self.error("reversed() of enumerate or zip is not reversible (Python raises TypeError)",
                                 iterable, "list them first: reversed(list(enumerate(x)))")
            setup, stop, element = self.iteration(inner, count, hint)
            back = gast.BinOp(left=gast.BinOp(left=copy_tree(stop), op=gast.Sub(), right=_const(1)),
                              op=gast.Sub(), right=_name(count))
            return setup, stop, _Substitute(count, back).visit(element)
        if callee is np.ndindex:                   # the index tuples, listed once
            iterable = _call(builtins.list, iterable)
        elif isinstance(iterable, gast.Call) and isinstance(iterable.func, gast.Attribute) \
                and iterable.func.attr in ("keys", "values", "items") and not iterable.args \
                and not iterable.keywords:         # a dict's keys, values or items: by its keys, listed once
            setup, mapping = held(iterable.func.value, "dict")
            keys = self.names.reserve(f"{hint}_keys")
            setup.append(_assign(keys, _call(runtime.dict_keys, mapping)))
            trips = self.names.reserve(f"{hint}_trips")
            setup.append(_assign(trips, _call(builtins.len, _name(keys))))
            key = gast.Subscript(value=_name(keys), slice=_name(count), ctx=gast.Load())
            value = gast.Subscript(value=copy_tree(mapping), slice=copy_tree(key), ctx=gast.Load())
            element = {"keys": key, "values": value,
                       "items": gast.Tuple(elts=[key, value], ctx=gast.Load())}[iterable.func.attr]
            return setup, _name(trips), element
        elif isinstance(iterable, gast.Name) and iterable.id in self.dicts:
            iterable = _call(runtime.dict_keys, iterable)          # a dict argument: its keys
        setup, seq = held(iterable, "items")
        trips = self.names.reserve(f"{hint}_trips")
        setup.append(_assign(trips, _call(builtins.len, seq)))
        element = gast.Subscript(value=seq, slice=_name(count), ctx=gast.Load())
        return setup, _name(trips), element

    def callee(self, node):
        """The object a call's function names in the user's namespace (None if unknown or not a call)."""
        if not isinstance(node, gast.Call):
            return None
        func, path = node.func, []
        while isinstance(func, gast.Attribute):
            path.append(func.attr)
            func = func.value
        if not isinstance(func, gast.Name) or func.id in self.assigned:
            return None
        value = self.parsed.resolve(func.id)
        for attr in reversed(path):
            value = getattr(value, attr, None)
        return value

    # ---------------------------------------------------------------- break, continue, return

    def loop_exits(self, loop: gast.While) -> list:
        """Rewrite break, continue and return inside `loop` (not in nested loops) into flags."""
        has_break = contains(loop.body, (gast.Break, gast.Return))
        has_continue = contains(loop.body, gast.Continue)
        has_return = contains(loop.body, gast.Return)
        endless = isinstance(loop.test, gast.Constant) and loop.test.value is True \
            and not contains(loop.body, gast.Break)        # it can end only by returning
        if not (has_break or has_continue):
            return [loop]
        broke = self.names.reserve("broke") if has_break else None
        skip = self.names.reserve("skip") if has_continue else None
        returned = self.names.reserve("returned") if has_return else None
        value = self.names.reserve("returned_value") if has_return else None
        exits = (broke, skip, returned, value)
        body = self.guard(loop.body, exits)
        setup = []
        if has_continue:
            body.insert(0, _located(_assign(skip, _const(False)), loop))
        if has_return:
            setup += [_located(_assign(returned, _const(False)), loop),
                      _located(_assign(value, _const(None)), loop)]
        if has_break:
            setup.append(_located(_assign(broke, _const(False)), loop))
            loop.test = gast.BoolOp(op=gast.And(), values=[_not(_name(broke)), loop.test])
            _located(loop.test, loop)
        loop.body = body
        loop.broke = broke
        after = []
        if has_return and endless:
            after.append(_located(gast.Return(value=_name(value)), loop))     # it can end only by returning
        elif has_return:
            after.append(_located(gast.If(test=_name(returned), body=[gast.Return(value=_name(value))],
                                          orelse=[]), loop))
        return setup + [loop] + after

    def guard(self, stmts, exits) -> list:
        broke, skip, returned, value = exits
        out = []
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, gast.Break):
                out.append(_located(_assign(broke, _const(True)), stmt))
                return out
            if isinstance(stmt, gast.Continue):
                out.append(_located(_assign(skip, _const(True)), stmt))
                return out
            if isinstance(stmt, gast.Return):
                out += [_located(_assign(value, stmt.value or _const(None)), stmt),
                        _located(_assign(returned, _const(True)), stmt),
                        _located(_assign(broke, _const(True)), stmt)]
                return out
            if isinstance(stmt, gast.If) and contains([stmt], (gast.Break, gast.Continue, gast.Return)):
                stmt.body = self.guard(stmt.body, exits)
                stmt.orelse = self.guard(stmt.orelse, exits)
                out.append(stmt)
                rest = stmts[i + 1:]
                if rest:
                    flags = [_name(f) for f in (broke, skip) if f]
                    test = _not(flags[0]) if len(flags) == 1 else \
                        _not(gast.BoolOp(op=gast.Or(), values=flags))
                    out.append(_located(gast.If(test=test, body=self.guard(rest, exits), orelse=[]),
                                        rest[0]))
                return out
            out.append(stmt)
        return out

    def returns_last(self, stmts) -> list:
        """Move statements after an ``if`` that returns into the branches that fall through."""
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, gast.Return):
                return stmts[:i + 1]
            if isinstance(stmt, gast.If) and contains([stmt], gast.Return):
                rest = stmts[i + 1:]
                stmt.body = self.returns_last(stmt.body if always_returns(stmt.body)
                                              else stmt.body + _copy(rest))
                stmt.orelse = self.returns_last(stmt.orelse if always_returns(stmt.orelse)
                                                else stmt.orelse + _copy(rest))
                return stmts[:i + 1]
            if isinstance(stmt, gast.While) and contains(stmt.body, gast.Return, into_loops=True):
                raise self.error("'return' inside this loop could not be rewritten", stmt)
        return stmts


def _copy(stmts):
    return [copy_tree(s) for s in stmts]
