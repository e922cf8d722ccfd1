"""Part of stage 2: NumPy's in-place functions written as functional writes of a new version of the array.

``np.add.at(y, i, v)``, ``np.copyto(y, v)``, ``np.put(y, i, v)``, ``y.fill(0)`` and ``f(..., out=y)``
change the local array y in place; lowering writes each as ``y[i] = v`` is written, a new version of
y (`ir`'s `setitem`, or a runtime function returning the written copy):

    >>> from s2sgrad.frontend.lower import lowered_source
    >>> import numpy as np
    >>> def f(x, i):
    ...     y = np.zeros(3)
    ...     np.add.at(y, i, x)
    ...     np.multiply(y, 2.0, out=y)
    ...     return y
    >>> print(lowered_source(f), end="")
    def f(x, i):
        y = np.zeros(3)
        y_1 = add_at(y, i, x)
        t = np.multiply(y_1, 2.0)
        y_2 = setitem(y_1, ..., t)
        return y_2
"""
from __future__ import annotations

import gast
import numpy as np

from .. import runtime
from ..ir import primitives
from ..ir.nodes import Const, Global, Op, Var

# NumPy functions that write into their first argument. Each is lowered as a functional write of a new
# version of that (local) array, as ``y[i] = v`` is: `np.copyto` as a write of the whole array,
# ``ufunc.at`` as `runtime.add_at` and its kin (with rules for add, subtract, maximum, minimum),
# the rest as `runtime.written_copy`, which has no derivative rule (so it is refused where active).
WRITE_INTO_FIRST = {np.copyto, np.put, np.place, np.putmask, np.fill_diagonal, np.put_along_axis,
                    *[getattr(np.ndarray, m) for m in ("fill", "sort", "partition", "put", "resize", "itemset",
                                                       "setfield", "byteswap") if hasattr(np.ndarray, m)]}
MUTATING_METHODS = {"fill", "sort", "partition", "put", "resize", "itemset", "setfield", "byteswap", "shuffle"}
AT_RULES = {np.add: runtime.add_at, np.subtract: runtime.subtract_at, np.maximum: runtime.maximum_at,
            np.minimum: runtime.minimum_at}
WRITER_NAMES = {"at", "copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis", *MUTATING_METHODS}


def writes_into_first_argument(fn) -> bool:
    """Does calling `fn` change its first argument in place (np.put, np.add.at, rng.shuffle, ...)?"""
    owner = getattr(fn, "__self__", None)
    name = getattr(fn, "__name__", None)
    if name == "at" and isinstance(owner, np.ufunc):
        return True
    if name == "shuffle" and isinstance(owner, (np.random.Generator, np.random.RandomState)):
        return True
    try:
        return fn in WRITE_INTO_FIRST
    except TypeError:                       # unhashable
        return False


def of_numpy(fn) -> bool:
    """A function (or a method of a ufunc, or of a random Generator) of NumPy's own: its ``out=`` writes."""
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, (np.ufunc, np.ndarray, np.random.Generator, np.random.RandomState)):
        return True
    return (getattr(fn, "__module__", None) or "").split(".")[0] == "numpy"


def written_by_call(call) -> list[str]:
    """The names a call may write into, by how it is spelled (``np.add.at(y, ...)``, ``f(..., out=y)``)."""
    names = []
    func = call.func
    spelled = func.attr if isinstance(func, gast.Attribute) else func.id if isinstance(func, gast.Name) else None
    if spelled in WRITER_NAMES and call.args and isinstance(call.args[0], gast.Name):
        names.append(call.args[0].id)
    for keyword in call.keywords:
        if keyword.arg == "out":
            targets = keyword.value.elts if isinstance(keyword.value, gast.Tuple) else [keyword.value]
            names.extend(t.id for t in targets if isinstance(t, gast.Name))
    return names


class NumpyWrites:
    """Lowers the calls of NumPy's in-place functions, and ``out=``, in the function `lowerer` lowers."""

    def __init__(self, lowerer):
        self.lowerer = lowerer

    def call_keywords(self, node):
        """A call's keyword arguments as atoms, less ``out=``: returns them and the local array named by
        `out` (``out=y`` or ``out=(y,)``), or None."""
        lowerer = self.lowerer
        kwargs, out = {}, None
        for keyword in node.keywords:
            if keyword.arg != "out":
                kwargs[keyword.arg] = lowerer.atom(keyword.value)
                continue
            target = keyword.value
            if isinstance(target, gast.Tuple) and len(target.elts) == 1:
                target = target.elts[0]
            if isinstance(target, gast.Constant) and target.value is None:
                continue
            if not (isinstance(target, gast.Name) and isinstance(lowerer.env.get(target.id), str)):
                raise lowerer.error("out= must name a local array (one, for a function of one result)", keyword.value,
                                    "assign the result instead: y = f(...)")
            out = target.id
        return kwargs, out

    def written_to_out(self, op: Op, out: str | None, node):
        """``f(..., out=y)``: the result computed, then written into all of y (``y[...] = f(...)``, which
        casts to y's dtype); the call's value is y. With ``where=m`` too, y keeps its values where m is False."""
        lowerer = self.lowerer
        if out is None:
            return op
        current = lowerer.expressions.name_atom(out, node)
        where = op.kwargs.pop("where", None)
        value = lowerer.bind(op, "t")
        if where is not None:
            value = lowerer.bind(Op(np.where, [where, value, current]), "t")
        lowerer.written_in_place(out, Op(primitives.setitem, [current, Const(Ellipsis), value]), node)
        return Var(lowerer.env[out])

    def in_place_call(self, callee: Global, node):
        """``np.add.at(y, i, v)``, ``np.copyto(y, v)``, ``np.put(y, i, v)``, ...: a new version of the local
        array y, as ``y[i] = v`` makes one. The call's value is None."""
        lowerer = self.lowerer
        fn = callee.value
        target = node.args[0] if node.args else None
        if not (isinstance(target, gast.Name) and isinstance(lowerer.env.get(target.id), str)):
            raise lowerer.error(f"'{callee.name}' writes into its first argument, which must be a local array here",
                                node, "copy the array into a local name first (y = np.copy(...))")
        current = lowerer.expressions.name_atom(target.id, target)
        args = [lowerer.atom(a) for a in node.args[1:]]
        kwargs, out = self.call_keywords(node)
        if out is not None:
            raise lowerer.error(f"out= is not supported with '{callee.name}'", node)
        if fn is np.copyto:
            if len(args) > 2 or any(k not in ("casting", "where") for k in kwargs):
                raise lowerer.error("np.copyto takes (dst, src, casting=..., where=...)", node)
            value = args[0]
            where = kwargs.get("where", args[2] if len(args) > 2 else None)
            if where is not None:
                value = lowerer.bind(Op(np.where, [where, value, current]), "t")
            written = Op(primitives.setitem, [current, Const(Ellipsis), value])
        elif getattr(fn, "__name__", None) == "at" and isinstance(fn.__self__, np.ufunc):
            ufunc = fn.__self__
            if ufunc in AT_RULES and len(args) == 2 and not kwargs:
                written = Op(AT_RULES[ufunc], [current, *args])
            else:
                written = Op(runtime.at_copy, [Global(callee.name[:-len(".at")], ufunc), current, *args], kwargs)
        else:
            written = Op(runtime.written_copy, [callee, current, *args], kwargs)
        lowerer.written_in_place(target.id, written, node)
        return Const(None)

