"""Rules for Python lists and tuples used as values (``hs.append(h)``, ``hs[-1]``, ``np.stack(hs)``).

The adjoint of a list is a list of adjoints in which None stands for zero.
``make_tuple`` and ``make_list`` take any number of items; `reverse` handles them itself.
"""
import builtins

import numpy as np

from .. import runtime
from ..ir import primitives
from ..runtime import (
    add_at,
    cast_tangent,
    densify,
    extremum_ties,
    float_dtype,
    grad_or_zeros,
    list_append,
    seq_concat,
    seq_repeat,
    seq_scatter,
    seq_setitem,
    seq_unrepeat,
    seq_unwritten,
    seq_written,
    setitem,
    unbroadcast,
    uncast,
    unreduce,
    unstack,
    written,
)
from .registry import adjoint, d, same_for_complex, tangent


@adjoint(primitives.seq_getitem)
def seq_getitem(y, xs, index):
    d[xs] = seq_scatter(d[y], xs, index)


@tangent(primitives.seq_getitem)
def seq_getitem(y, xs, index):
    d[y] = d[xs][index]


@adjoint(primitives.seq_setitem)
def seq_setitem(ys, xs, index, value):
    d[xs] = seq_unwritten(d[ys], xs, index, value)
    d[value] = grad_or_zeros(seq_written(d[ys], index, value), value)


@tangent(primitives.seq_setitem)
def seq_setitem(ys, xs, index, value):
    d[ys] = seq_setitem(d[xs], index, d[value])


@adjoint(primitives.seq_concat)
def seq_concat(y, a, b):
    d[a] = d[y][:len(a)]
    d[b] = d[y][len(a):]


@tangent(primitives.seq_concat)
def seq_concat(y, a, b):
    d[y] = seq_concat(d[a], d[b])


@adjoint(primitives.seq_repeat)
def seq_repeat(y, xs, n):
    d[xs] = seq_unrepeat(d[y], xs)


@tangent(primitives.seq_repeat)
def seq_repeat(y, xs, n):
    d[y] = seq_repeat(d[xs], n)


@adjoint(primitives.list_append)
def list_append(ys, xs, x):
    d[xs] = d[ys][:-1]
    d[x] = grad_or_zeros(d[ys][-1], x)


@tangent(primitives.list_append)
def list_append(ys, xs, x):
    d[ys] = list_append(d[xs], d[x])


@adjoint(np.stack)
def stack(y, arrays, axis=0):
    d[arrays] = unstack(d[y], arrays, axis)


@tangent(np.stack)
def stack(y, arrays, axis=0):
    d[y] = np.stack(d[arrays], axis)


@adjoint(np.array, np.asarray)
def array(y, object, dtype=None):
    """Zero through an integer or boolean dtype (see `uncast`)."""
    d[object] = (unstack(uncast(d[y], y, dtype), object) if isinstance(object, list)
                 else uncast(unbroadcast(d[y], object), object, dtype))


@tangent(np.array, np.asarray)
def array(y, object, dtype=None):
    d[y] = cast_tangent(np.array(d[object]), dtype)


@adjoint(builtins.sum)
def sum(y, iterable, start=0):
    d[iterable] = [unbroadcast(d[y], x) for x in iterable] if isinstance(iterable, (list, tuple)) \
        else unreduce(d[y], iterable, 0)
    d[start] = unbroadcast(d[y], start)


@tangent(builtins.sum)
def sum(y, iterable, start=0):
    d[y] = sum(d[iterable]) + d[start]


@adjoint(primitives.setitem)
def write(y, x, index, value):
    d[x] = setitem(densify(d[y]), index, 0.0)
    d[value] = unbroadcast(written(d[y], index), value)


@tangent(primitives.setitem)
def write(y, x, index, value):
    d[y] = setitem(d[x], index, d[value])


# --- NumPy's in-place functions, lowered as functional writes (``np.add.at(y, i, v)`` is ``y_1 = add_at(y, i, v)``)

@adjoint(runtime.add_at)
def scatter_add(y, a, indices, b):
    """A scatter-add: each b gets the gradient of where it was added (repeats read it again)."""
    d[a] = d[y]
    d[b] = unbroadcast(densify(d[y])[indices], b)


@tangent(runtime.add_at)
def scatter_add(y, a, indices, b):
    d[y] = d[a] + add_at(np.zeros(np.shape(y), dtype=float_dtype(y)), indices, d[b])


@adjoint(runtime.subtract_at)
def scatter_subtract(y, a, indices, b):
    d[a] = d[y]
    d[b] = -unbroadcast(densify(d[y])[indices], b)


@tangent(runtime.subtract_at)
def scatter_subtract(y, a, indices, b):
    d[y] = d[a] - add_at(np.zeros(np.shape(y), dtype=float_dtype(y)), indices, d[b])


@adjoint(runtime.maximum_at, runtime.minimum_at)
def scatter_extremum(y, a, indices, b):
    """Each element's gradient goes to the candidates equal to its result (old value, values sent to it),
    shared evenly among ties, as `np.maximum` shares it."""
    share = densify(d[y]) / extremum_ties(y, a, indices, b)
    d[a] = share * (a == y)
    d[b] = unbroadcast(share[indices] * (b == y[indices]), b)


@tangent(runtime.maximum_at, runtime.minimum_at)
def scatter_extremum(y, a, indices, b):
    d[y] = (d[a] * (a == y) + add_at(np.zeros(np.shape(y), dtype=float_dtype(y)), indices, d[b] * (b == y[indices]))) \
        / extremum_ties(y, a, indices, b)


same_for_complex(np.stack, np.array, np.asarray)        # (moves elements: linear)
