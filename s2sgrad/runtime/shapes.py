"""The adjoints and tangents of NumPy's functions that move elements around: joining (`unconcatenate`),
copying (`untile`, `unrepeat`), picking (`undiagonal`, `untake`) and sorting (`unsort`, `sorted_like`), and
the shapes `np.c_` and `np.linspace` give their operands.

    >>> unconcatenate(np.arange(5.0), [np.zeros(2), np.zeros(3)])
    [array([0., 1.]), array([2., 3., 4.])]
    >>> unsort(np.array([10.0, 20.0]), np.array([2.0, 1.0])).tolist()
    [20.0, 10.0]
"""
from __future__ import annotations

import numpy as np

from ..errors import NoDerivativeRule
from .dtypes import float_dtype


def _stacked_shape(x, ndmin):
    """The shape `x` takes in a stacking: ``ndmin`` 1 and 2 as ``np.atleast_1d/2d`` (leading axes), 3 as
    ``np.atleast_3d`` (a vector is (1, n, 1)), ``"columns"`` as ``np.column_stack`` (a vector is one column)."""
    shape = np.shape(x)
    if ndmin == "columns":
        return shape if len(shape) >= 2 else (max(np.size(x), 1), 1)
    if ndmin == 3 and len(shape) < 3:
        return {0: (1, 1, 1), 1: (1, *shape, 1), 2: (*shape, 1)}[len(shape)]
    return (1,) * (ndmin - len(shape)) + shape


def unconcatenate(g, arrays, axis=0, ndmin=1):
    """The gradient of ``np.concatenate(arrays, axis)`` (and hstack, vstack, dstack, column_stack, with
    `ndmin` the layout each array takes first, see `_stacked_shape`): g cut into one piece per array."""
    if axis is None:
        g, axis, sizes = np.ravel(g), 0, [np.size(x) for x in arrays]
    else:
        sizes = [_stacked_shape(x, ndmin)[axis] for x in arrays]
    grads = [np.reshape(p, np.shape(x)) for p, x in zip(np.split(g, np.cumsum(sizes)[:-1], axis), arrays)]
    return np.stack(grads) if isinstance(arrays, np.ndarray) else grads


def untile(g, x, reps):
    """The gradient of ``np.tile(x, reps)``: g summed over the copies."""
    shape, reps = np.shape(x), tuple(np.atleast_1d(reps))
    n = max(len(shape), len(reps))
    pairs = zip((1,) * (n - len(reps)) + reps, (1,) * (n - len(shape)) + shape)
    g = np.reshape(g, [size for pair in pairs for size in pair])
    return np.reshape(g.sum(axis=tuple(range(0, 2 * n, 2))), shape)


def unrepeat(g, x, repeats, axis=None):
    """The gradient of ``np.repeat(x, repeats, axis)``: g summed over the copies of each element."""
    shape = np.shape(x)
    n = int(np.prod(shape)) if axis is None else shape[axis]
    axis = 0 if axis is None else axis % len(shape)
    g = np.moveaxis(np.asarray(g), axis, 0)
    if np.size(repeats) == 1:
        out = np.reshape(g, (n, int(np.ravel(repeats)[0])) + g.shape[1:]).sum(axis=1)
    else:
        out = np.zeros((n,) + g.shape[1:], dtype=float_dtype(g))
        np.add.at(out, np.repeat(np.arange(n), repeats), g)
    return np.reshape(np.moveaxis(out, 0, axis), shape)


def undiagonal(g, x, offset=0, axis1=0, axis2=1):
    """The gradient of ``np.diagonal(x, offset, axis1, axis2)``: g placed on that diagonal of zeros shaped like x."""
    out = np.zeros(np.shape(x), dtype=float_dtype(x, g))
    view = np.moveaxis(out, (axis1, axis2), (-2, -1))
    rows, cols = view.shape[-2] - max(-offset, 0), view.shape[-1] - max(offset, 0)
    i = np.arange(max(0, min(rows, cols)))
    view[..., i + max(-offset, 0), i + max(offset, 0)] = g
    return out


def untake(g, x, indices, axis=None, mode="raise"):
    """The gradient of ``np.take(x, indices, axis, mode=mode)``: g added at the indices, repeats accumulated."""
    shape = np.shape(x)
    out = np.zeros(np.size(x) if axis is None else shape, dtype=float_dtype(g))
    axis = 0 if axis is None else axis % len(shape)
    n, indices = out.shape[axis], np.asarray(indices)
    indices = np.mod(indices, n) if mode == "wrap" else np.clip(indices, 0, n - 1) if mode == "clip" else indices
    k = indices.ndim
    g = np.moveaxis(np.asarray(g), list(range(axis, axis + k)), list(range(k)))
    np.add.at(np.moveaxis(out, axis, 0), indices, g)
    return np.reshape(out, shape)


def as_column(x):
    """`x` as ``np.c_`` takes it: a number or a vector becomes one column, arrays of two or more axes stay."""
    return np.reshape(x, (-1, 1)) if np.ndim(x) < 2 else x


def one_step(y, axis=0):
    """An uninitialized array shaped like one step of `y` along `axis` (what the start and stop of
    ``np.linspace`` broadcast to), also where `y` has no step at all (``num=0``)."""
    shape = list(np.shape(y))
    del shape[axis]
    return np.empty(shape, dtype=float_dtype(y))


def linspace_fraction(y, num, endpoint=True, axis=0):
    """Where each element of ``y = np.linspace(start, stop, num, endpoint, axis=axis)`` lies between
    start (0) and stop (1), shaped to broadcast against y: ``y = start + t * (stop - start)``."""
    if isinstance(y, tuple):
        raise NoDerivativeRule("no derivative rule for np.linspace with retstep=True",
                               hint="compute the step as (stop - start) / (num - 1)")
    steps = max(num - 1, 1) if endpoint else max(num, 1)
    t = np.arange(num, dtype=float_dtype(y)) / steps
    shape = [1] * np.ndim(y)
    shape[axis] = num
    return np.reshape(t, shape)


def _sort_order(a, axis):
    """Where each element of ``np.sort(a, axis)`` came from (ties in order of appearance), and the axis
    (0 of the flattened array for ``axis=None``)."""
    a = np.asarray(a)
    if axis is None:
        return np.argsort(np.ravel(a), kind="stable"), 0
    return np.argsort(a, axis=axis, kind="stable"), axis


def unsort(g, a, axis=-1):
    """The gradient of ``np.sort(a, axis)``: each element of g goes back where its sorted value came from."""
    order, along = _sort_order(a, axis)
    out = np.zeros(np.shape(order), dtype=float_dtype(g))
    np.put_along_axis(out, order, g, along)
    return np.reshape(out, np.shape(a))


def sorted_like(t, a, axis=-1):
    """`t` in the order ``np.sort(a, axis)`` puts a's elements (the tangent of a sort)."""
    order, along = _sort_order(a, axis)
    return np.take_along_axis(np.ravel(t) if axis is None else np.broadcast_to(t, np.shape(a)), order, along)
