"""Rules for Python lists and tuples used as values (``hs.append(h)``, ``hs[-1]``, ``np.stack(hs)``).

The adjoint of a list is a list of adjoints in which None stands for zero.
``make_tuple`` and ``make_list`` take any number of items; `reverse` handles them itself.
"""
import builtins

import numpy as np

from .. import primitives
from ..runtime import (densify, grad_or_zeros, list_append, seq_concat, seq_repeat, seq_scatter, seq_setitem,
                       seq_unrepeat, seq_unwritten, seq_written, setitem, unbroadcast, unreduce, unstack,
                       written)
from .registry import adjoint, d, tangent


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
    d[object] = unstack(d[y], object) if isinstance(object, list) else unbroadcast(d[y], object)


@tangent(np.array, np.asarray)
def array(y, object, dtype=None):
    d[y] = np.array(d[object], dtype)


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
