"""Part of stage 3: what can be known about shapes before running.

Generated code is specialized on the shapes of array arguments, so many shapes
are known exactly: ``W @ h`` with W of shape (32, 32) and h of shape (32,) has
shape (32,). Each name gets a *token*: a concrete shape (a tuple), or an
opaque class id shared by names that certainly have one shape (``np.tanh(x)``
and ``x``). Where a token is unknown, nothing is assumed. Every rule here is
exact or gives up (a fresh token): the tokens decide where ``unbroadcast``
can be left out, so a wrong one would be a wrong gradient.

Small integer values derived from shapes (``n = x.shape[0]``, loop counters'
being ints) are tracked too, for ``np.zeros(n)`` and integer indices, and so
are *basic* indices (ints, slices of ints, None, ``...`` and tuples of them),
which select each element at most once: ``dx[i] += g`` is then exact.

    >>> shapes = Shapes({"x": (3, 4)}, {})
    >>> shapes.block(lower(parse_function(f)).body)                    # doctest: +SKIP
    >>> shapes.same(Var("x"), "y")                                      # doctest: +SKIP
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from ..guards import global_kind
from ..ir import primitives
from ..ir.nodes import Assign, Const, Global, If, Op, Var, While
from ..ir.sizes import Size, is_size, is_symbolic, size_sum
from .dataflow import Forward

ELEMENTWISE_UNARY = {operator.neg, operator.pos, np.abs, np.negative}
ELEMENTWISE_BINARY = {operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
                      operator.floordiv, operator.mod}
REDUCTIONS = {np.sum, np.mean, np.max, np.min, np.prod, np.amax, np.amin, np.std, np.var}
ALLOCATIONS = {np.zeros, np.ones, np.empty, np.full}
LIKE = {np.zeros_like, np.ones_like, np.empty_like, np.full_like, np.copy, primitives.astype}
INT_FUNCTIONS = {operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod, operator.neg,
                 builtins.min, builtins.max, builtins.len, builtins.int, builtins.abs}


class Shapes(Forward):
    """Shape tokens (`facts`: name -> a tuple, a concrete shape, or an int, a class id) and known integer values
    of the names of one lowered function, found by a forward walk (`block`)."""

    rounds = 4                                 # then a loop's variables get fresh tokens (`widen`)

    def __init__(self, known: dict, values: dict | None = None, ints=(), item_shapes: dict | None = None):
        super().__init__(known)
        self.item_shapes: dict = dict(item_shapes or {})  # a dict parameter -> key -> its value's shape
        self.value: dict = dict(values or {})  # name -> int or tuple of ints, where known
        self.ints: set = {n for n, v in self.value.items() if is_size(v)} | set(ints)
        self.slices: set = set()               # names holding a slice of ints
        self.items: dict = {}                  # name -> the atoms of the list or tuple it was made of
        self.index_tuples: dict = {}           # name -> the tuple of ints, slices, None and ... it holds,
                                               # unknown ints as 0 and unknown slices as None
        self.count = 0

    # ---------------------------------------------------------------- queries

    def of(self, atom):
        """The token of an atom."""
        if isinstance(atom, Var):
            if atom.name not in self.facts:
                self.facts[atom.name] = self.fresh()
            return self.facts[atom.name]
        if isinstance(atom, Const) and isinstance(atom.value, (int, float, complex)):
            return ()
        if isinstance(atom, Global) and global_kind(atom.value) is not None:
            return _global_shape(atom.value)
        return self.fresh()

    def same(self, atom, name: str) -> bool:
        """Do `atom` and the value named `name` certainly have one shape?"""
        return name in self.facts and self.of(atom) == self.facts[name]

    def concrete(self, atom):
        """The atom's shape as a tuple, or None."""
        token = self.of(atom)
        return token if isinstance(token, tuple) else None

    def is_scalar(self, atom) -> bool:
        return self.of(atom) == ()

    def known_value(self, atom):
        if isinstance(atom, Const) and isinstance(atom.value, (int, tuple)) and not isinstance(atom.value, bool):
            return atom.value
        if isinstance(atom, Var):
            return self.value.get(atom.name)
        return None

    def is_int(self, atom) -> bool:
        if isinstance(atom, Const):
            return isinstance(atom.value, int) and not isinstance(atom.value, bool)
        if isinstance(atom, Global):
            return global_kind(atom.value) == "int"
        return isinstance(atom, Var) and atom.name in self.ints

    def is_basic_index(self, atom) -> bool:
        """Is `atom` an index that selects each element at most once (no integer or boolean arrays)?"""
        if isinstance(atom, Const):
            return _is_basic_value(atom.value)
        if isinstance(atom, Global):
            return global_kind(atom.value) == "int"
        return isinstance(atom, Var) and (atom.name in self.ints or atom.name in self.slices
                                          or atom.name in self.index_tuples)

    def fresh(self) -> int:
        self.count += 1
        return self.count

    # ---------------------------------------------------------------- rules

    def op(self, op: Op):
        fn, args, kwargs = op.fn, op.args, op.kwargs
        ufunc = primitives.is_elementwise_ufunc(fn)
        if (fn in ELEMENTWISE_UNARY or ufunc and fn.nin == 1) and len(args) == 1 and not kwargs:
            return self.of(args[0])
        if (fn in ELEMENTWISE_BINARY or ufunc and fn.nin == 2) and len(args) == 2 and not kwargs:
            return self.broadcast([self.of(a) for a in args])
        if fn is np.where and len(args) == 3 and not kwargs:
            return self.broadcast([self.of(a) for a in args])
        if fn in (operator.matmul, np.matmul, np.dot) and len(args) == 2 and not kwargs:
            return _known(_matmul(self.concrete(args[0]), self.concrete(args[1])), self)
        if fn in REDUCTIONS and len(args) == 1 and set(kwargs) <= {"axis", "keepdims"}:
            return _known(self.reduction(args[0], kwargs), self)
        if fn in ALLOCATIONS and args:
            shape = self.known_value(args[0])
            shape = (shape,) if is_size(shape) else shape
            if isinstance(shape, tuple) and all(is_size(n) for n in shape):
                return shape
            return self.fresh()
        if fn in LIKE and args and set(kwargs) <= {"dtype"}:
            return self.of(args[0])
        if fn in (np.transpose,) and len(args) == 1 and not kwargs:
            shape = self.concrete(args[0])
            return shape[::-1] if shape is not None else self.fresh()
        if fn is primitives.seq_getitem and len(args) == 2 and isinstance(args[0], Var) \
                and args[0].name in self.item_shapes and isinstance(args[1], Const):
            return _known(self.item_shapes[args[0].name].get(args[1].value), self)
        if fn in (operator.getitem, primitives.seq_getitem) and len(args) == 2:
            return _known(self.getitem(args[0], args[1]), self)
        if fn in (primitives.setitem, primitives.seq_setitem) and len(args) == 3:
            return self.of(args[0])            # y[i] = v keeps y's shape (or raises)
        if fn in (np.concatenate, np.stack) and len(args) == 1 and set(kwargs) <= {"axis"}:
            return _known(self.joined(fn, args[0], kwargs.get("axis", Const(0))), self)
        if getattr(fn, "__module__", None) == "math" and fn is not math.prod or fn is builtins.float:
            return ()                          # (math.prod multiplies arrays too)
        return self.fresh()

    def joined(self, fn, parts, axis):
        """The shape of ``np.concatenate(parts, axis)`` or ``np.stack(parts, axis)``, or None."""
        items = self.items.get(parts.name) if isinstance(parts, Var) else None
        shapes = [self.concrete(a) for a in items] if items else None
        if not shapes or any(s is None for s in shapes) or not isinstance(axis, Const) \
                or not isinstance(axis.value, int):
            return None
        if any(is_symbolic(s) for s in shapes):
            return _joined_symbolic(fn, shapes, axis.value)
        try:
            return fn([np.empty(s) for s in shapes], axis=axis.value).shape
        except (ValueError, TypeError, np.exceptions.AxisError):
            return None

    def broadcast(self, tokens):
        concrete = [t for t in tokens if isinstance(t, tuple)]
        if len(concrete) == len(tokens) and any(is_symbolic(t) for t in concrete):
            return _known(_broadcast_symbolic(concrete), self)
        if len(concrete) == len(tokens):
            try:
                return tuple(np.broadcast_shapes(*concrete))
            except ValueError:
                return self.fresh()
        others = {t for t in tokens if t != ()}
        if len(others) == 1:
            return others.pop()               # scalars broadcast to the other operand's shape
        return self.fresh()

    def reduction(self, atom, kwargs):
        shape = self.concrete(atom)
        axis = kwargs.get("axis", Const(None))
        keepdims = kwargs.get("keepdims", Const(False))
        if not (isinstance(axis, Const) and isinstance(keepdims, Const)):
            return None
        if axis.value is None and not keepdims.value:
            return ()
        if shape is None:
            return None
        axes = axis.value if isinstance(axis.value, tuple) else (axis.value,) if axis.value is not None \
            else tuple(range(len(shape)))
        try:
            axes = {a % len(shape) for a in axes}
        except (TypeError, ZeroDivisionError):
            return None
        return tuple(1 if k in axes else n for k, n in enumerate(shape) if keepdims.value or k not in axes)

    def getitem(self, atom, index):
        shape = self.concrete(atom)
        if shape is None:
            return None
        if isinstance(index, Const):
            value = index.value
        else:
            value = self.known_value(index)
            if value is None and isinstance(index, Var):
                value = self.index_tuples.get(index.name)
            if value is None or isinstance(value, tuple) and None in value:
                return shape[1:] if shape and self.is_int(index) else None
        if isinstance(value, (int, slice, type(None), type(Ellipsis))) or isinstance(value, tuple) and all(
                isinstance(v, (int, slice, type(None), type(Ellipsis))) for v in value):
            if is_symbolic(shape):
                return _indexed_symbolic(shape, value)
            try:
                return np.broadcast_to(np.False_, shape)[value].shape
            except (IndexError, TypeError, ValueError):
                return None
        return None

    def values(self, target: str, op: Op) -> None:
        """Track small integer values derived from shapes, and which names hold ints."""
        fn, args = op.fn, op.args
        if fn is np.shape and len(args) == 1 and self.concrete(args[0]) is not None:
            self.value[target] = self.concrete(args[0])
            return
        if fn is builtins.len and len(args) == 1 and self.concrete(args[0]):
            self.value[target] = self.concrete(args[0])[0]
            self.ints.add(target)
            return
        if fn in (operator.getitem, primitives.seq_getitem) and len(args) == 2:
            base, index = self.known_value(args[0]), self.known_value(args[1])
            if isinstance(base, tuple) and type(index) is int and -len(base) <= index < len(base):
                self.value[target] = base[index]
                self.ints.add(target)
            return
        if fn in INT_FUNCTIONS and args and all(self.is_int(a) for a in args) and not op.kwargs:
            self.ints.add(target)
            known = [self.known_value(a) for a in args]
            if fn is operator.add and len(known) == 2 and all(map(is_size, known)) \
                    and not all(type(v) is int for v in known):
                self.value[target] = size_sum(known)          # (a sum of sizes: the length of a concatenation)
            elif all(type(v) is int for v in known):
                try:
                    self.value[target] = fn(*known)
                except (ArithmeticError, TypeError, ValueError):
                    pass
        if fn in (primitives.make_tuple, primitives.make_list):
            self.items[target] = list(args)
        if fn is primitives.make_tuple:
            known = [self.known_value(a) for a in args]
            if all(is_size(v) for v in known):
                self.value[target] = tuple(known)
            if all(_is_basic_value(a.value, nested=True) if isinstance(a, Const)
                   else a.name in self.ints or a.name in self.slices for a in args):
                self.index_tuples[target] = tuple(self.index_part(a) for a in args)
        if fn is builtins.slice and all(self.is_int(a) or a == Const(None) for a in args):
            self.slices.add(target)

    def index_part(self, atom):
        """What an index part selects, as far as a shape goes: an unknown int as 0, an unknown slice as None."""
        if isinstance(atom, Const):
            return atom.value
        if atom.name in self.ints:
            value = self.value.get(atom.name)
            return value if type(value) is int else 0
        return None

    # ---------------------------------------------------------------- the walk

    fact = of

    def join(self, a, b):
        return a if a == b else self.fresh()

    def branch(self, stmt: If) -> None:
        super().branch(stmt)
        for r, a, b in zip(stmt.results, stmt.body_outs, stmt.orelse_outs):
            if self.is_int(a) and self.is_int(b):
                self.ints.add(r)

    def assign(self, stmt: Assign) -> None:
        target, value = stmt.target, stmt.value
        if not target:
            return
        self.ints.discard(target)              # a loop body is walked again: facts may no longer hold
        self.slices.discard(target)
        self.index_tuples.pop(target, None)
        self.items.pop(target, None)
        self.value.pop(target, None)
        if isinstance(value, Op):
            self.facts[target] = self.op(value)
            self.values(target, value)
        else:
            self.facts[target] = self.of(value)
            if self.is_int(value):
                self.ints.add(target)
            known = self.known_value(value)
            if known is not None:
                self.value[target] = known

    def enter(self, loop: While) -> None:
        super().enter(loop)
        for p, init in zip(loop.params, loop.inits):
            if self.is_int(init):
                self.ints.add(p)

    def carry(self, loop: While) -> bool:
        """Loop variables keep a token only if every trip gives them the same one."""
        changed = False
        for p, out in zip(loop.params, loop.body_outs):
            if self.of(out) != self.facts[p]:
                self.facts[p] = self.fresh()
                changed = True
            if p in self.ints and not self.is_int(out):
                self.ints.discard(p)
                changed = True
        return changed

    def widen(self, loop: While) -> None:
        for p in loop.params:
            self.facts[p] = self.fresh()
        while True:                       # loop variables' being ints is kept apart: it only shrinks
            self.block(loop.cond)
            self.block(loop.body)
            not_ints = {p for p, out in zip(loop.params, loop.body_outs) if p in self.ints and not self.is_int(out)}
            if not not_ints:
                break
            self.ints -= not_ints

    def leave(self, loop: While) -> None:
        for r, p in zip(loop.results, loop.params):
            self.facts[r] = self.facts[p]
            if p in self.ints:
                self.ints.add(r)
        for p in loop.params:                 # values change from trip to trip
            self.value.pop(p, None)


def _global_shape(value) -> tuple:
    """The shape of a number or array the code reads from the user's namespace (its guard covers that kind,
    `guards.describe`), as of an argument of that kind."""
    kind = global_kind(value)
    return kind if isinstance(kind, tuple) else ()


def _is_basic_value(value, nested=False) -> bool:
    if isinstance(value, tuple):
        return not nested and all(_is_basic_value(v, nested=True) for v in value)
    if isinstance(value, slice):
        return all(v is None or isinstance(v, int) and not isinstance(v, bool)
                   for v in (value.start, value.stop, value.step))
    return value is None or value is Ellipsis or isinstance(value, int) and not isinstance(value, bool)


def _known(shape, shapes: Shapes):
    """`shape`, or a fresh token where it is unknown (None; the empty shape () is a known one)."""
    return shapes.fresh() if shape is None else shape


def _matmul(a, b):
    """The shape of ``a @ b`` for vectors and matrices, or None."""
    if a is None or b is None or len(a) > 2 or len(b) > 2 or not a or not b:
        return None
    if not _may_equal(a[-1], b[0] if len(b) == 1 else b[-2]):
        return None
    return a[:-1] + b[1:] if len(b) == 2 else a[:-1]


def _may_equal(m, n) -> bool:
    """Can axes of sizes `m` and `n` (ints or `Size`s) be equal? (Two classes never are, and a `Size` is never 1.)"""
    if m == n:
        return True
    if isinstance(m, Size) and isinstance(n, Size):
        return False
    return (n if isinstance(m, Size) else m) != 1 and not (type(m) is int and type(n) is int)


def _broadcast_symbolic(shapes):
    """The broadcast shape of `shapes` (entries ints or `Size`s), or None where it depends on the sizes' values."""
    rank = max(map(len, shapes))
    out = []
    for k in range(rank):
        sizes = {s[len(s) - rank + k] for s in shapes if len(s) - rank + k >= 0} - {1}
        ints = {n for n in sizes if type(n) is int}
        if len(sizes - ints) > 1 or len(ints) > 1:
            return None                        # (two Sizes are never equal: an error at run time)
        # a Size and an int: equal, or an error. The first operand's is kept (a SizeSum, which may be 1, only
        # alone), so that a loop variable keeps its shape across trips: `x + dt * f` keeps x's symbolic size
        # against a global's concrete one, `np.sin(y) * x` keeps y's concrete size against x's symbolic one
        entries = [s[len(s) - rank + k] for s in shapes if len(s) - rank + k >= 0]
        first = next((n for n in entries if n != 1 and (type(n) is int or isinstance(n, Size))), None)
        out.append(first if first is not None else sizes.pop() if sizes else 1)
    return tuple(out)


def _indexed_symbolic(shape, index):
    """The shape of ``x[index]`` (a basic index) for `shape` with `Size` entries, or None where it depends on the
    sizes' values (a slice with bounds of a symbolic axis)."""
    parts = index if isinstance(index, tuple) else (index,)
    if sum(p is Ellipsis for p in parts) > 1 or any(isinstance(p, bool) for p in parts):
        return None
    used = sum(1 for p in parts if p is not None and p is not Ellipsis)
    if used > len(shape):
        return None
    if Ellipsis not in parts:
        parts = (*parts, Ellipsis)
    out, axis = [], 0
    for part in parts:
        if part is None:
            out.append(1)
        elif part is Ellipsis:
            out += shape[axis:axis + len(shape) - used]
            axis += len(shape) - used
        else:
            n = shape[axis]
            axis += 1
            if isinstance(part, int):
                if type(n) is int and not -n <= part < n:
                    return None
            elif type(n) is int:
                try:
                    out.append(len(range(*part.indices(n))))
                except (TypeError, ValueError):
                    return None
            elif part.start is None and part.stop is None and part.step in (None, 1, -1):
                out.append(n)
            else:
                return None
    return tuple(out)


def _joined_symbolic(fn, shapes, axis):
    """``np.stack`` or ``np.concatenate`` of arrays of `shapes` (some with `Size` entries), or None."""
    rank = len(shapes[0])
    if any(len(s) != rank for s in shapes):
        return None
    if fn is np.stack:
        if any(s != shapes[0] for s in shapes) or not -rank - 1 <= axis <= rank:
            return None
        axis %= rank + 1
        return (*shapes[0][:axis], len(shapes), *shapes[0][axis:])
    if not -rank <= axis < rank:
        return None
    axis %= rank
    rest = {s[:axis] + s[axis + 1:] for s in shapes}
    if len(rest) != 1:
        return None
    return (*shapes[0][:axis], size_sum(s[axis] for s in shapes), *shapes[0][axis + 1:])


__all__ = ["Shapes", "math"]
