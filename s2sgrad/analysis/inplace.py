"""Part of stage 4: which functional writes may run in place.

Lowering makes ``y[i] = v`` the functional ``y_1 = setitem(y, i, v)`` and
``hs.append(h)`` ``hs_1 = list_append(hs, h)``. Copying on every write would
cost O(n) per write; writing in place is what the user's code does. It is safe
when the object written belongs to the function (no argument or global shares
it), and the backward sweep reads no version of it from before a write:

    >>> safe = in_place_writes(lowered, params=["x"], backward_reads={"hs_3"})   # doctest: +SKIP
"""
from __future__ import annotations

import ast
import copy

from ..frontend.views import is_mutable, view_of
from ..ir import primitives
from ..ir.nodes import Assign, Global, If, Op, Var, While
from ..ir.syntax import is_plumbing
from ..ir.trees import walk

MUTATIONS = {primitives.setitem, primitives.list_append}
CONTAINERS = {primitives.seq_getitem, primitives.make_tuple, primitives.make_list}


class _Aliases:
    """Which names may be one object. With `deep`, a container and what it holds count as one."""

    def __init__(self, deep: bool):
        self.deep = deep
        self.parent: dict[str, str] = {}
        self.upstream: dict[str, set] = {}     # name -> names that are the same object, earlier
        self.foreign: set[str] = set()         # names that may share an object with an argument or global
        self.sources: set[str] = set()         # names written in place (if allowed)

    def find(self, name):
        while self.parent.get(name, name) != name:
            name = self.parent[name]
        return name

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[ra] = rb

    def flows(self, later, earlier, both_ways=False):
        self.union(later, earlier)
        self.upstream.setdefault(later, set()).add(earlier)
        if both_ways:
            self.upstream.setdefault(earlier, set()).add(later)

    def block(self, block):
        for stmt in block:
            if isinstance(stmt, Assign):
                if stmt.target is None:
                    continue
                value = stmt.value
                if isinstance(value, Var):
                    self.flows(stmt.target, value.name)
                elif isinstance(value, Global):
                    self.foreign.add(stmt.target)
                elif isinstance(value, Op):
                    args = [a for a in [*value.args, *value.kwargs.values()] if isinstance(a, Var)]
                    if value.fn in MUTATIONS:
                        self.flows(stmt.target, value.args[0].name)
                        self.sources.add(value.args[0].name)
                        if self.deep and value.fn is primitives.list_append:   # the list holds the item itself
                            for item in args[1:]:
                                self.flows(stmt.target, item.name, both_ways=True)
                    elif value.fn in CONTAINERS:
                        if self.deep:
                            for a in args:
                                self.flows(stmt.target, a.name, both_ways=True)
                    else:                       # may the result be a view of an argument? (one table)
                        kind = view_of(value.fn, value.kwargs)
                        viewed = {"first": value.args[:1], "any": [*value.args, *value.kwargs.values()],
                                  "out": [value.kwargs.get("out")], None: []}[kind]
                        for a in viewed:
                            if isinstance(a, Var):
                                self.flows(stmt.target, a.name, both_ways=True)
                        if any(isinstance(a, Global) for a in viewed) or kind == "any" \
                                and is_mutable(getattr(value.fn, "__self__", None)):
                            self.foreign.add(stmt.target)
            elif isinstance(stmt, If):
                self.block(stmt.body)
                self.block(stmt.orelse)
                for r, a, b in zip(stmt.results, stmt.body_outs, stmt.orelse_outs):
                    for out in (a, b):
                        if isinstance(out, Var):
                            self.flows(r, out.name)
                        elif isinstance(out, Global):
                            self.foreign.add(r)
            elif isinstance(stmt, While):
                for p, init, out in zip(stmt.params, stmt.inits, stmt.body_outs):
                    for earlier in (init, out):
                        if isinstance(earlier, Var):
                            self.flows(p, earlier.name)
                        elif isinstance(earlier, Global):
                            self.foreign.add(p)
                self.block(stmt.cond)
                self.block(stmt.body)
                for r, p in zip(stmt.results, stmt.params):
                    self.flows(r, p)


# Runtime helpers that read an argument only for its shape (which writing into an array keeps).
SHAPE_ONLY = {"unbroadcast": 1, "scatter": 1, "unreduce": 1, "zeros_like": 0, "grad_or_zeros": 1}


def _without_plumbing(code: list) -> list:
    """The statements, less those marked as passing the current state around (checkpointing)."""
    kept = []
    for stmt in code:
        if is_plumbing(stmt):
            continue
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and any(is_plumbing(s) for s in walk(stmt)):
                stmt = _copy_without(stmt)
                break
        kept.append(stmt)
    return kept


def _copy_without(stmt):
    clone = copy.copy(stmt)
    for field in ("body", "orelse"):
        inner = getattr(stmt, field, None)
        if isinstance(inner, list):
            setattr(clone, field, _without_plumbing(inner))
    return clone


def value_reads(code: list) -> set[str]:
    """Names the code reads for their values, not only for their shapes."""
    code = _without_plumbing(code)
    shape_only = set()
    for stmt in code:
        for node in walk(stmt):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in SHAPE_ONLY:
                k = SHAPE_ONLY[node.func.id]
                if len(node.args) > k and isinstance(node.args[k], ast.Name):
                    shape_only.add(id(node.args[k]))
    return {n.id for stmt in code for n in walk(stmt)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in shape_only}


def in_place_writes(fn, backward: list) -> set[str]:
    """The names of the written objects (sources of setitem/list_append) that may be written in place."""
    all_reads = {n.id for stmt in _without_plumbing(backward) for n in walk(stmt)
                 if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    lists = _safe(fn, all_reads, _Aliases(deep=False), primitives.list_append)
    arrays = _safe(fn, value_reads(backward), _Aliases(deep=True), primitives.setitem)
    return lists | arrays


def _safe(fn, backward_reads, aliases, mutation) -> set[str]:
    aliases.block(fn.body)
    for p in fn.params:
        aliases.foreign.add(p)
    classes: dict[str, set] = {}
    for name in set(aliases.parent) | set(aliases.upstream) | aliases.sources | aliases.foreign:
        classes.setdefault(aliases.find(name), set()).add(name)
    safe = set()
    for source in aliases.sources & _sources_of(fn.body, mutation):
        members = classes.get(aliases.find(source), {source})
        if members & aliases.foreign:
            continue
        before = _upstream_closure(aliases, {s for s in aliases.sources if s in members})
        if before & backward_reads:
            continue
        safe.add(source)
    return safe


def _upstream_closure(aliases: _Aliases, start: set) -> set:
    seen = set(start)
    todo = list(start)
    while todo:
        name = todo.pop()
        for earlier in aliases.upstream.get(name, ()):
            if earlier not in seen:
                seen.add(earlier)
                todo.append(earlier)
    return seen


def _sources_of(block, mutation) -> set[str]:
    found = set()
    for stmt in block:
        if isinstance(stmt, Assign) and isinstance(stmt.value, Op) and stmt.value.fn is mutation:
            found.add(stmt.value.args[0].name)
        elif isinstance(stmt, If):
            found |= _sources_of(stmt.body, mutation) | _sources_of(stmt.orelse, mutation)
        elif isinstance(stmt, While):
            found |= _sources_of(stmt.body, mutation)
    return found
