"""Part of stage 2: which of the user's names may refer to one object, and which are stale.

Lowering gives every assignment a new single-assignment name, which is right
as long as no object changes in place. Python's ``y = x; y += 1`` changes the
array `x` refers to as well, and ``v = y[0:2]; y[0] = 5`` changes `v`.
s2sgrad writes such changes functionally (a new version of `y`), so a later
read of `x` or `v` would see the old value where Python sees the new one.
Rather than compute something else silently, lowering refuses to read a name
after an in-place change made through another name for the same object:

    >>> aliasing = Aliasing(scalars=set(), resolve=lambda node: None)
    >>> aliasing.bind("x", 1); aliasing.bind("y", 2)
    >>> aliasing.share("y", aliasing.object_of(gast.Name("x", ...)))     # y = x
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

    def __init__(self, scalars, resolve, vectors=()):
        self.groups: dict[str, object] = {}       # user name -> the object it may share (a group key)
        self.poisoned: dict[str, tuple] = {}      # user name -> (name changed, its location)
        self.scalars: set[str] = set(scalars)     # user names known to hold scalars
        self.vectors: set[str] = set(vectors)     # user names known to hold one-dimensional arrays
        self.resolve = resolve

    # ---------------------------------------------------------------- binding and changing

    def bind(self, name: str, key) -> None:
        """`name` now refers to a new object."""
        self.poisoned.pop(name, None)
        self.groups[name] = key
        self.scalars.discard(name)
        self.vectors.discard(name)

    def object_of(self, node):
        """The group of the object `node` evaluates to, if it is a local (or a view of one); else None.
        (Taken before an assignment rebinds anything: ``x = x`` keeps x's object.)"""
        if self.is_scalar(node):
            return None                           # an element: a number, not a view
        if isinstance(node, gast.IfExp):          # either branch's object: they may be one from now on
            first, second = self.object_of(node.body), self.object_of(node.orelse)
            if first is not None and second is not None and first != second:
                for n, g in list(self.groups.items()):
                    if g == second:
                        self.groups[n] = first
            return first if first is not None else second
        other = viewed_name(node)
        return self.groups.get(other) if other is not None else None

    def share(self, name: str, group) -> None:
        """After ``name = <node>``, `group` being `object_of(node)`: they share an object."""
        if group is not None:
            self.groups[name] = group

    def join(self, name: str, other: str) -> None:
        """`name` and `other` may be one object from now on (so may everything sharing with either)."""
        self.join_group(name, self.groups.get(other))

    def join_group(self, name: str, group) -> None:
        """`name` may be the object of `group` too: the names of either group may be one object."""
        kept = self.groups.get(name)
        if kept is None or group is None or kept == group:
            return
        for n, g in list(self.groups.items()):
            if g == group:
                self.groups[n] = kept

    def join_loop_aliases(self, loop, carried) -> None:
        """Before a loop: a loop variable the body makes another name for (``y = x``, ``y = x[1:]``), or
        that another name is made for, may be that object on a later trip, so they share from the start."""
        for node in gast.walk(loop):
            if isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], gast.Name) \
                    and not self.is_scalar(node.value):
                target = node.targets[0].id
                for source in _branch_names(node.value):
                    if source not in self.scalars and (target in carried or source in carried):
                        self.join(target, source)

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
        if isinstance(node, gast.Subscript):      # an element of a vector
            return isinstance(node.value, gast.Name) and node.value.id in self.vectors \
                and not isinstance(node.slice, (gast.Slice, gast.Tuple)) and self.is_scalar(node.slice) \
                and _is_int_like(node.slice)
        if isinstance(node, gast.BinOp):
            return self.is_scalar(node.left) and self.is_scalar(node.right)
        if isinstance(node, gast.UnaryOp):
            return self.is_scalar(node.operand)
        if isinstance(node, gast.IfExp):
            return self.is_scalar(node.body) and self.is_scalar(node.orelse)
        if isinstance(node, gast.Call):
            callee = self.resolve(node.func)
            if callee is float or getattr(callee, "__module__", None) == "math":
                return True
            if callee in WHOLE_REDUCTIONS and len(node.args) == 1 and not node.keywords:
                return True
            return isinstance(callee, np.ufunc) and not node.keywords and all(self.is_scalar(a) for a in node.args)
        return False

    def loop_variable_kinds(self, loop, carried, assigned) -> tuple[set, set]:
        """The loop variables that hold scalars on every trip, and those that hold one-dimensional arrays:
        so on entry, and assigned only such expressions in the body (assuming the same of the others,
        scalars and vectors together). `assigned`: the names the body assigns."""
        scalars = {n for n in carried if n in self.scalars} | {n for n in assigned if n not in carried}
        vectors = {n for n in carried if n in self.vectors} | {n for n in assigned if n not in carried}
        saved = self.scalars, self.vectors
        while True:
            self.scalars, self.vectors = saved[0] | scalars, saved[1] | vectors
            not_scalars = self._breaking(loop, scalars, lambda value, augmented: self.is_scalar(value), False)
            not_vectors = self._breaking(loop, vectors, lambda value, augmented: self.is_vector(value)
                                         or augmented and self.is_scalar(value), True)
            if not not_scalars and not not_vectors:
                break
            scalars -= not_scalars
            vectors -= not_vectors
        self.scalars, self.vectors = saved
        return scalars & set(carried), vectors & set(carried)

    @staticmethod
    def _breaking(loop, candidates: set, holds, writes_keep: bool) -> set:
        """The candidates some assignment in `loop` gives a value for which `holds` fails (with
        `writes_keep`, ``y[i] = v`` keeps y a candidate)."""
        dropped = set()
        for node in gast.walk(loop):
            if isinstance(node, gast.Assign) and _pairwise(node):      # a, b = x, y
                for target, value in zip(node.targets[0].elts, node.value.elts):
                    if isinstance(target, gast.Name) and target.id in candidates and not holds(value, False):
                        dropped.add(target.id)
            elif isinstance(node, gast.Assign):
                targets = [t.id for t in node.targets if isinstance(t, gast.Name)]
                if any(t in candidates for t in targets) and (len(node.targets) != 1 or not holds(node.value, False)):
                    dropped |= set(targets) & candidates
                for t in node.targets:
                    if isinstance(t, gast.Subscript):         # y[i] = v: y is an array (of its shape still)
                        if not writes_keep:
                            dropped |= {viewed_name(t)} & candidates
                    elif not isinstance(t, gast.Name):
                        dropped |= {n.id for n in gast.walk(t) if isinstance(n, gast.Name)} & candidates
            elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name) \
                    and node.target.id in candidates and not holds(node.value, True):
                dropped.add(node.target.id)
        return dropped

    def is_vector(self, node) -> bool:
        """Does `node` certainly compute a one-dimensional array (arithmetic and ufuncs of vectors and
        numbers, at least one of them a vector)?"""
        if isinstance(node, gast.Name):
            return node.id in self.vectors
        if isinstance(node, gast.BinOp) and not isinstance(node.op, gast.MatMult):
            parts = [node.left, node.right]
        elif isinstance(node, gast.UnaryOp):
            parts = [node.operand]
        elif isinstance(node, gast.Call) and isinstance(self.resolve(node.func), np.ufunc) and not node.keywords:
            parts = node.args
        elif isinstance(node, gast.IfExp):
            parts = [node.body, node.orelse]
        else:
            return False
        return any(self.is_vector(p) for p in parts) and all(self.is_vector(p) or self.is_scalar(p) for p in parts)

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

    def read_on_entry(self, loop, name: str):
        """If a trip of `loop` may read `name` before binding it: the first such read, else None. (A loop
        starting from an object changed through another name reads it stale.)"""
        if _bound_before_read(loop, name):
            return None
        for stmt in [loop.test, *loop.body]:
            for node in gast.walk(stmt):
                if isinstance(node, gast.Name) and node.id == name and isinstance(node.ctx, gast.Load):
                    return node
                if isinstance(node, gast.AugAssign) and getattr(node.target, "id", None) == name:
                    return node.target                     # x += ... reads x
        return None

    # ---------------------------------------------------------------- branches

    def state(self):
        return dict(self.groups), dict(self.poisoned), set(self.scalars), set(self.vectors)

    def restore(self, state) -> None:
        groups, poisoned, scalars, vectors = state
        self.groups, self.poisoned, self.scalars, self.vectors = dict(groups), dict(poisoned), set(scalars), set(vectors)

    def merge(self, first, second) -> None:
        """After a branch: names may share an object if they may in either branch (their groups
        become one), are stale if stale in either, and are scalars only if scalars in both."""
        groups_a, poisoned_a, scalars_a, vectors_a = first
        groups_b, poisoned_b, scalars_b, vectors_b = second
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
        self.vectors = vectors_a & vectors_b


def _pairwise(node: gast.Assign) -> bool:
    """Is `node` ``a, b = x, y`` (names assigned element by element)?"""
    target, value = node.targets[0], node.value
    return len(node.targets) == 1 and isinstance(target, (gast.Tuple, gast.List)) \
        and isinstance(value, (gast.Tuple, gast.List)) and len(target.elts) == len(value.elts) \
        and all(isinstance(e, gast.Name) for e in target.elts) \
        and not any(isinstance(e, gast.Starred) for e in value.elts)


def _bound_before_read(loop, name: str) -> bool:
    """Does every trip of `loop` that reads `name` bind it afresh (``name = ...``) first? Then a read sees
    that trip's object, never one an earlier trip changed."""
    if any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(loop.test)):
        return False
    return _first_use(loop.body, name) != "read"


def _first_use(block: list, name: str) -> str | None:
    """"read" if some path through `block` may read `name` before binding it, else "bind" if every path
    binds it, else None."""
    for stmt in block:
        if isinstance(stmt, gast.If):
            if any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(stmt.test)):
                return "read"
            uses = {_first_use(stmt.body, name), _first_use(stmt.orelse, name)}
            if "read" in uses:
                return "read"
            if uses == {"bind"}:
                return "bind"
            continue
        if isinstance(stmt, gast.While):                   # its body may run or not
            if any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(stmt.test)) \
                    or _first_use(stmt.body, name) == "read":
                return "read"
            continue
        if any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load) for n in gast.walk(stmt)) \
                or isinstance(stmt, gast.AugAssign) and getattr(stmt.target, "id", None) == name:
            return "read"
        if isinstance(stmt, gast.Assign) and any(isinstance(t, gast.Name) and t.id == name for t in stmt.targets):
            return "bind"
    return None


def viewed_name(node) -> str | None:
    """The local `node` names, directly or through a view (``x``, ``x[1:]``, ``x.T``, ``x.reshape(...)``)."""
    while isinstance(node, gast.Subscript) or (
            isinstance(node, gast.Attribute) and node.attr in VIEW_METHODS) or (
            isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and node.func.attr in VIEW_METHODS):
        node = node.value if not isinstance(node, gast.Call) else node.func.value
    return node.id if isinstance(node, gast.Name) else None


def _branch_names(node) -> list[str]:
    """The locals `node` may evaluate to (or to a view of): both branches of ``a if c else b``."""
    if isinstance(node, gast.IfExp):
        return _branch_names(node.body) + _branch_names(node.orelse)
    name = viewed_name(node)
    return [name] if name is not None else []


def _is_int_like(node) -> bool:
    """Could `node` (known to be a number) be an int index? (Not a float literal.)"""
    return not (isinstance(node, gast.Constant) and not isinstance(node.value, int))
