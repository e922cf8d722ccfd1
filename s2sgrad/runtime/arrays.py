"""Broadcasting and reduction, undone and redone: a gradient summed down to its operand's shape
(`unbroadcast`, `sum_to`), a reduction's gradient spread back over the reduced axes (`unreduce`), a tangent
spread to a result's shape (`broadcast_like`).

    >>> unbroadcast(np.ones((3, 4)), np.ones(4)).tolist()
    [3.0, 3.0, 3.0, 3.0]
    >>> unreduce(np.array([1.0, 2.0]), np.zeros((2, 3)), axis=1).tolist()
    [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
"""
from __future__ import annotations

import numpy as np

from .dtypes import weak


def unbroadcast(g, x):
    """Sum `g` over the axes along which `x` was broadcast, so that it has x's shape."""
    try:
        shape = x.shape
        if g.shape == shape:
            return g
    except AttributeError:
        shape = np.shape(x)
        if np.shape(g) == shape:
            return g
    g = sum_to(g, shape)
    if not isinstance(x, np.ndarray):
        return g.item() if g.ndim == 0 and isinstance(x, (float, int)) else g
    return g


def sum_to(g, shape):
    """Sum `g` over its broadcast axes down to `shape` (``unbroadcast`` with the shape known)."""
    g = np.asarray(g)
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis, keepdims=True)
    return g


def unreduce(g, x, axis=None, keepdims=False):
    """Broadcast the gradient of a reduction over `axis` back to the shape of `x`."""
    shape = np.shape(x)
    if not keepdims and axis is not None and np.ndim(g) < len(shape):
        g = np.expand_dims(g, axis)
    return np.broadcast_to(weak(g, x), shape)


def broadcast_like(t, y):
    """The tangent `t` spread to the shape of `y`: the tangent of ``a + b`` is ``da`` alone
    where b's tangent is zero, and b may have widened the result.

        >>> broadcast_like(1.0, np.zeros(2)).tolist()
        [1.0, 1.0]
    """
    shape = np.shape(y)
    return t if np.shape(t) == shape else np.broadcast_to(weak(t, y), shape)
