"""Helpers of elementwise rules: the gradient and tangent of a cast (zero through an integer or boolean
dtype), and which of its operands `np.clip` returned where.

    >>> uncast(np.float32(1.0), np.zeros(2), "int64").tolist()
    [0.0, 0.0]
"""
from __future__ import annotations

import numpy as np

from .dtypes import float_dtype
from .gradients import zeros_like


def uncast(g, x, dtype):
    """The gradient of casting `x` to `dtype`: zero through an integer or boolean dtype (the cast is
    piecewise constant), else `g` cast back to x's own floating dtype."""
    if np.dtype(dtype).kind in "biu":
        return zeros_like(x)
    if isinstance(x, np.ndarray) and x.dtype.kind in "fc" and np.result_type(g) != x.dtype:
        return np.asarray(g).astype(x.dtype)
    return g


def cast_tangent(t, dtype):
    """The tangent of a cast to `dtype` of a value with tangent `t`: zero through an integer or boolean dtype."""
    if np.dtype(dtype).kind in "biu":
        return np.zeros(np.shape(t), dtype=float_dtype(t))
    return t


def clip_choice(a, lo, hi):
    """What ``np.clip(a, lo, hi)`` returns, element by element: 0 for `a`, 1 for `lo`, 2 for `hi`
    (NumPy computes ``minimum(maximum(a, lo), hi)``, so `hi` wins where ``lo > hi``).

        >>> clip_choice(np.array([-2.0, 0.0, 2.0]), -1.0, 1.0).tolist(), clip_choice(0.0, 1.0, -1.0).tolist()
        ([1, 0, 2], 2)
    """
    a = np.asarray(a)
    pick = np.zeros(np.broadcast_shapes(a.shape, np.shape(lo) if lo is not None else (),
                                        np.shape(hi) if hi is not None else ()), dtype=np.int8)
    low = a
    if lo is not None:
        pick = np.where(a < lo, 1, pick)
        low = np.maximum(a, lo)
    if hi is not None:
        pick = np.where(low > hi, 2, pick)
    return pick
