"""Part of stage 2: which of the user's names certainly hold scalars, and which one-dimensional arrays.

``+=`` on a number rebinds the name, on an array it changes the object; an element of a vector
(``x[i]``) is a number, never a view. `Kinds` knows both from the parameters' kinds, those of the
global numbers and arrays the code reads, and the assignments:

    >>> kinds = Kinds(scalars={"n"}, vectors={"x"}, resolve=lambda node: None)
    >>> expression = lambda text: gast.parse(text).body[0].value
    >>> kinds.is_scalar(expression("2 * n + 1")), kinds.is_scalar(expression("x[n]"))
    (True, True)
    >>> kinds.is_vector(expression("x * n"))
    True
"""
from __future__ import annotations

import gast
import numpy as np

from ..guards import global_kind
from ..ir.primitives import is_elementwise_ufunc
from ..rules.registry import Opaque
from .views import viewed_name

WHOLE_REDUCTIONS = {np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin}   # of a whole array: a number
PICKS_A_NUMBER = {max, min, sum, abs, pow, round}     # of numbers (or a display of numbers): a number


class Kinds:
    """The user's names known to hold scalars (`scalars`) and one-dimensional arrays (`vectors`).

    `resolve(node)` gives the object an expression names in the user's namespace, or None.
    """

    def __init__(self, scalars, vectors, resolve):
        self.scalars: set[str] = set(scalars)
        self.vectors: set[str] = set(vectors)
        self.resolve = resolve
        self.local_names: set[str] = set()        # the function's own names, which name no global

    def note(self, name: str, scalar: bool = False, vector: bool = False) -> None:
        """`name` now holds a scalar (`scalar`) or a one-dimensional array (`vector`)."""
        if scalar:
            self.scalars.add(name)
        if vector:
            self.vectors.add(name)

    def forget(self, name: str, vector: bool = True) -> None:
        """`name` now refers to a new object of unknown kind (with `vector` False: still a vector if it was)."""
        self.scalars.discard(name)
        if vector:
            self.vectors.discard(name)

    def holds_scalar(self, name: str) -> bool:
        return name in self.scalars

    def holds_vector(self, name: str) -> bool:
        return name in self.vectors

    def add(self, scalars: set, vectors: set) -> None:
        """The names of `scalars` hold scalars, those of `vectors` one-dimensional arrays (loop variables)."""
        self.scalars |= scalars
        self.vectors |= vectors

    def is_scalar(self, node) -> bool:
        """Does `node` certainly compute a scalar (so that ``+=`` on it rebinds, never mutates)?"""
        if isinstance(node, gast.Constant):
            return isinstance(node.value, (int, float, complex)) and not isinstance(node.value, bool)
        if isinstance(node, gast.Name):
            return node.id in self.scalars or self.global_kind(node) in ("int", "scalar")
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Call):   # sorted([a, b, c])[1]
            return self.resolve(node.value.func) is sorted and self._numbers(node.value) \
                and not isinstance(node.slice, (gast.Slice, gast.Tuple)) and _is_int_like(node.slice)
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
            if callee in PICKS_A_NUMBER:
                return self._numbers(node)
            return is_elementwise_ufunc(callee) and not node.keywords and all(self.is_scalar(a) for a in node.args)
        return False

    def _numbers(self, call) -> bool:
        """Are the items a call of one of `PICKS_A_NUMBER` (or `sorted`) works on all numbers (its arguments, the
        items of its one list or tuple display or vector, and a ``default=`` or ``start``)?"""
        args = call.args
        if len(args) == 1 and self.resolve(call.func) is not abs:
            if isinstance(args[0], gast.Name) and args[0].id in self.vectors:
                return all(self.is_scalar(k.value) for k in call.keywords if k.arg in ("default", "start"))
            if isinstance(args[0], (gast.List, gast.Tuple)):
                args = args[0].elts
        others = [k.value for k in call.keywords if k.arg in ("default", "start")]
        return bool(args) and all(self.is_scalar(a) for a in [*args, *others])

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
            if node.id in self.vectors:
                return True
            kind = self.global_kind(node)
            return isinstance(kind, tuple) and len(kind) == 1
        if isinstance(node, gast.BinOp) and not isinstance(node.op, gast.MatMult):
            parts = [node.left, node.right]
        elif isinstance(node, gast.UnaryOp):
            parts = [node.operand]
        elif isinstance(node, gast.Call) and is_elementwise_ufunc(self.resolve(node.func)) and not node.keywords:
            parts = node.args
        elif isinstance(node, gast.IfExp):
            parts = [node.body, node.orelse]
        else:
            return False
        return any(self.is_vector(p) for p in parts) and all(self.is_vector(p) or self.is_scalar(p) for p in parts)

    def global_kind(self, name: gast.Name):
        """The kind of the user's number or array `name` names, if it is a global one (its guard covers that
        kind: `guards.describe`), else None."""
        if name.id in self.local_names:
            return None
        value = self.resolve(name)
        return global_kind(value.fn if isinstance(value, Opaque) else value)

    def state(self):
        return set(self.scalars), set(self.vectors)

    def restore(self, state) -> None:
        self.scalars, self.vectors = set(state[0]), set(state[1])

    def merge(self, first, second) -> None:
        """After a branch: scalars (vectors) only if so in both branches."""
        self.scalars, self.vectors = first[0] & second[0], first[1] & second[1]


def _pairwise(node: gast.Assign) -> bool:
    """Is `node` ``a, b = x, y`` (names assigned element by element)?"""
    target, value = node.targets[0], node.value
    return len(node.targets) == 1 and isinstance(target, (gast.Tuple, gast.List)) \
        and isinstance(value, (gast.Tuple, gast.List)) and len(target.elts) == len(value.elts) \
        and all(isinstance(e, gast.Name) for e in target.elts) \
        and not any(isinstance(e, gast.Starred) for e in value.elts)


def _is_int_like(node) -> bool:
    """Could `node` (known to be a number) be an int index? (Not a float literal.)"""
    return not (isinstance(node, gast.Constant) and not isinstance(node.value, int))


