"""Part of stage 2: which of the user's names may refer to one object, and which are stale.

Lowering gives every assignment a new single-assignment name, which is right
as long as no object changes in place. Python's ``y = x; y += 1`` changes the
array `x` refers to as well, and ``v = y[0:2]; y[0] = 5`` changes `v`.
s2sgrad writes such changes functionally (a new version of `y`), so a later
read of `x` or `v` would see the old value where Python sees the new one.
Rather than compute something else silently, lowering refuses to read a name
after an in-place change made through another name for the same object:

    >>> aliasing = Aliasing(scalars=set(), resolve=lambda node: None)
    >>> aliasing.bind("x", 1); aliasing.bind("y", 2); aliasing.share("y", gast.Name("x", ...))
    >>> aliasing.mutated("y", where); aliasing.stale("x")               # doctest: +SKIP
    ('y', where)

Names known to hold scalars are exempt: ``+=`` on a number rebinds it.
"""
from __future__ import annotations

import gast
import numpy as np

from . import runtime

VIEW_METHODS = {"reshape", "transpose", "ravel", "squeeze", "swapaxes", "view", "T", "real", "imag"}
WHOLE_REDUCTIONS = {np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin}   # of a whole array: a number


class Aliasing:
    """Alias groups, stale names and scalar names of the function being lowered.

    `resolve(node)` gives the object an expression names in the user's namespace, or None.
    """

    def __init__(self, scalars, resolve):
        self.groups: dict[str, object] = {}       # user name -> the object it may share (a group key)
        self.poisoned: dict[str, tuple] = {}      # user name -> (name changed, its location)
        self.scalars: set[str] = set(scalars)     # user names known to hold scalars
        self.resolve = resolve

    # ---------------------------------------------------------------- binding and changing

    def bind(self, name: str, key) -> None:
        """`name` now refers to a new object."""
        self.poisoned.pop(name, None)
        self.groups[name] = key
        self.scalars.discard(name)

    def share(self, name: str, node) -> None:
        """After ``name = <node>``: if node is another local (or a view of one), they share an object."""
        while isinstance(node, gast.Subscript) or (
                isinstance(node, gast.Attribute) and node.attr in VIEW_METHODS) or (
                isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
                and node.func.attr in VIEW_METHODS):
            node = node.value if not isinstance(node, gast.Call) else node.func.value
        if isinstance(node, gast.Name) and node.id in self.groups and node.id != name:
            self.groups[name] = self.groups[node.id]

    def mutated(self, name: str, where) -> None:
        """`name`'s object is changed in place: the other names for it must not be read again."""
        if name in self.scalars:
            return
        group = self.groups.get(name)
        for other, g in self.groups.items():
            if g == group and other != name and other not in self.scalars:    # a number never changes
                self.poisoned[other] = (name, where)

    def stale(self, name: str):
        """(the name changed, where) if `name` may have been changed in place through another name."""
        return self.poisoned.get(name)

    # ---------------------------------------------------------------- scalars

    def is_scalar(self, node) -> bool:
        """Does `node` certainly compute a scalar (so that ``+=`` on it rebinds, never mutates)?"""
        if isinstance(node, gast.Constant):
            return isinstance(node.value, (int, float, complex)) and not isinstance(node.value, bool)
        if isinstance(node, gast.Name):
            return node.id in self.scalars
        if isinstance(node, gast.BinOp):
            return self.is_scalar(node.left) and self.is_scalar(node.right)
        if isinstance(node, gast.UnaryOp):
            return self.is_scalar(node.operand)
        if isinstance(node, gast.Call):
            callee = self.resolve(node.func)
            if callee is float or getattr(callee, "__module__", None) == "math":
                return True
            if callee in WHOLE_REDUCTIONS and len(node.args) == 1 and not node.keywords:
                return True
            return isinstance(callee, np.ufunc) and not node.keywords and all(self.is_scalar(a) for a in node.args)
        return False

    def scalar_loop_variables(self, loop, carried, assigned) -> set:
        """The loop variables that hold scalars on every trip: scalars on entry, and assigned only
        scalar expressions in the body (assuming the same of the others). `assigned`: the names
        the body assigns."""
        candidates = {n for n in carried if n in self.scalars} | {n for n in assigned if n not in carried}
        saved = self.scalars
        while candidates:
            self.scalars = saved | candidates
            dropped = set()
            for node in gast.walk(loop):
                if isinstance(node, gast.Assign) and _pairwise(node):      # a, b = x, y
                    for target, value in zip(node.targets[0].elts, node.value.elts):
                        if isinstance(target, gast.Name) and target.id in candidates and not self.is_scalar(value):
                            dropped.add(target.id)
                elif isinstance(node, gast.Assign):
                    targets = [t.id for t in node.targets if isinstance(t, gast.Name)]
                    if any(t in candidates for t in targets) and (
                            len(node.targets) != 1 or not self.is_scalar(node.value)):
                        dropped |= set(targets) & candidates
                    for t in node.targets:
                        if not isinstance(t, gast.Name):
                            dropped |= {n.id for n in gast.walk(t) if isinstance(n, gast.Name)} & candidates
                elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name) \
                        and node.target.id in candidates and not self.is_scalar(node.value):
                    dropped.add(node.target.id)
            if not dropped:
                break
            candidates -= dropped
        self.scalars = saved
        return candidates & set(carried)

    def stale_in_loop(self, loop, names: set):
        """A read, anywhere in `loop`, of a name made stale by its body (stale on the next trip): the
        read node and what made it stale, or None."""
        shape_only = {id(arg) for node in gast.walk(loop) if isinstance(node, gast.Call)
                      and self.resolve(node.func) is runtime.like for arg in node.args}
        names = {n for n in names if not _bound_before_read(loop, n)}
        for node in gast.walk(loop):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and node.id in names \
                    and id(node) not in shape_only:
                return node, self.poisoned[node.id]
        return None

    # ---------------------------------------------------------------- branches

    def state(self):
        return dict(self.groups), dict(self.poisoned), set(self.scalars)

    def restore(self, state) -> None:
        groups, poisoned, scalars = state
        self.groups, self.poisoned, self.scalars = dict(groups), dict(poisoned), set(scalars)

    def merge(self, first, second) -> None:
        """After a branch: names may share an object if they may in either branch (their groups
        become one), are stale if stale in either, and are scalars only if scalars in both."""
        groups_a, poisoned_a, scalars_a = first
        groups_b, poisoned_b, scalars_b = second
        groups = dict(groups_a)
        for name, group in groups_b.items():
            if name not in groups:
                groups[name] = group
            elif groups[name] != group:
                for table in (groups, groups_b):
                    for other, g in list(table.items()):
                        if g == group:
                            groups[other] = groups[name]
        self.groups = groups
        self.poisoned = {**poisoned_b, **poisoned_a}
        self.scalars = scalars_a & scalars_b


def _pairwise(node: gast.Assign) -> bool:
    """Is `node` ``a, b = x, y`` (names assigned element by element)?"""
    target, value = node.targets[0], node.value
    return len(node.targets) == 1 and isinstance(target, (gast.Tuple, gast.List)) \
        and isinstance(value, (gast.Tuple, gast.List)) and len(target.elts) == len(value.elts) \
        and all(isinstance(e, gast.Name) for e in target.elts) \
        and not any(isinstance(e, gast.Starred) for e in value.elts)


def _bound_before_read(loop, name: str) -> bool:
    """Does every trip of `loop` bind `name` afresh (``name = ...`` at the top of its body) before it reads
    it? Then a read sees that trip's object, never one an earlier trip changed."""
    if any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(loop.test)):
        return False
    for stmt in loop.body:
        reads = any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
                    for n in gast.walk(stmt))
        if reads:
            return False
        if isinstance(stmt, gast.Assign) and any(isinstance(t, gast.Name) and t.id == name for t in stmt.targets):
            return True
    return False
