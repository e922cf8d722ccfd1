"""The adjoints and tangents of NumPy's reductions that need more than a broadcast back: products and
cumulative products (exact where a factor is zero) and norms (whose gradient at zero is 0, the subgradient
of least norm).

    >>> cumprod_grad(np.ones(3), np.array([2.0, 0.0, 0.0]), np.array([2.0, 0.0, 3.0])).tolist()
    [1.0, 8.0, 0.0]
"""
from __future__ import annotations

import numpy as np

from ..errors import NoDerivativeRule
from .arrays import unreduce
from .dtypes import float_dtype


def divide_or_zero(g, y):
    """``g / y``, and 0 where y is 0: the gradient of a norm (or a standard deviation) at zero is
    taken to be 0, the subgradient of least norm (as ``np.sign(0)`` is 0 for ``abs``).

        >>> divide_or_zero(np.array([1.0, 1.0]), np.array([2.0, 0.0])).tolist()
        [0.5, 0.0]
    """
    zero = np.equal(y, 0)
    if not np.any(zero):
        return g / y
    return np.where(zero, 0.0, np.divide(g, np.where(zero, 1.0, y)))


def _reduced(axis, ndim):
    """The axes a reduction over `axis` (None, an int or a tuple) removes."""
    if axis is None:
        return tuple(range(ndim))
    return tuple(np.array(np.atleast_1d(axis)) % max(ndim, 1))


def product_of_others(a, axis=None):
    """For each element of `a`, the product of the other elements of its lane of ``np.prod(a, axis)``:
    the gradient of the product, exact where `a` has zeros (no division by them).

        >>> product_of_others(np.array([2.0, 0.0, 3.0])).tolist()
        [0.0, 6.0, 0.0]
    """
    a = np.asarray(a, dtype=float_dtype(a))
    axes = _reduced(axis, a.ndim)
    nonzero = a != 0
    if np.all(nonzero):
        return np.prod(a, axis=axes, keepdims=True) / a
    zeros = np.sum(~nonzero, axis=axes, keepdims=True)
    rest = np.prod(np.where(nonzero, a, 1.0), axis=axes, keepdims=True)     # the product of the nonzeros
    safe = np.where(nonzero, a, 1.0)
    return np.where(zeros == 0, rest / safe, np.where((zeros == 1) & ~nonzero, rest, 0.0))


def product_of_others_tangent(a, t, axis=None):
    """The tangent of ``product_of_others(a, axis)`` along `t`, exact where `a` has zeros."""
    a = np.asarray(a, dtype=float_dtype(a))
    axes = _reduced(axis, a.ndim)
    nonzero = a != 0
    safe = np.where(nonzero, a, 1.0)
    zeros = np.sum(~nonzero, axis=axes, keepdims=True)
    rest = np.prod(safe, axis=axes, keepdims=True)
    ratio = np.where(nonzero, t / safe, 0.0)
    total = np.sum(ratio, axis=axes, keepdims=True)                   # sum of t/a over the nonzeros
    at_zeros = np.sum(np.where(nonzero, 0.0, t), axis=axes, keepdims=True)
    none = rest / safe * (total - ratio)
    one = np.where(nonzero, at_zeros * rest / safe, rest * total)
    two = np.where(nonzero, 0.0, rest * (at_zeros - t))
    return np.where(zeros == 0, none, np.where(zeros == 1, one, np.where(zeros == 2, two, 0.0)))


def _reverse_cumsum(v, axis):
    return np.flip(np.cumsum(np.flip(v, axis), axis), axis)


def cumprod_grad(g, y, a, axis=None):
    """The gradient of ``y = np.cumprod(a, axis)``, exact where `a` has zeros: the gradient of an element
    is the sum over later products of the product of the other factors."""
    shape = np.shape(a)
    if axis is None:
        a, y, g, axis = np.ravel(a), np.ravel(y), np.ravel(g), 0
    a = np.asarray(a, dtype=float_dtype(a))
    nonzero = a != 0
    if np.all(nonzero):
        return np.reshape(_reverse_cumsum(g * y, axis) / a, shape)
    safe = np.where(nonzero, a, 1.0)
    first = ~nonzero & (np.cumsum(~nonzero, axis) == 1)              # the first zero of each lane
    past_first = np.cumprod(np.where(first, 1.0, a), axis)             # the products with that zero left out
    out = np.where(nonzero, _reverse_cumsum(g * y, axis) / safe,
                   np.where(first, _reverse_cumsum(g * past_first, axis), 0.0))
    return np.reshape(out, shape)


def cumprod_tangent(t, y, a, axis=None):
    """The tangent of ``y = np.cumprod(a, axis)`` along `t`, exact where `a` has zeros."""
    shape = np.shape(y)
    if axis is None:
        a, y, t, axis = np.ravel(a), np.ravel(y), np.ravel(t), 0
    a = np.asarray(a, dtype=float_dtype(a))
    nonzero = a != 0
    if np.all(nonzero):
        return np.reshape(y * np.cumsum(t / a, axis), shape)
    first = ~nonzero & (np.cumsum(~nonzero, axis) == 1)
    past_first = np.cumprod(np.where(first, 1.0, a), axis)
    out = y * np.cumsum(np.where(nonzero, t / np.where(nonzero, a, 1.0), 0.0), axis) \
        + np.cumsum(np.where(first, t, 0.0), axis) * past_first
    return np.reshape(out, shape)


def _no_zero_for_second_derivative(a):
    if np.any(np.equal(a, 0)):
        raise NoDerivativeRule("the second derivative of np.cumprod at an array with a zero entry is not supported",
                               hint="keep the factors away from zero, or differentiate once")


def cumprod_grad_tangent_y(g, t, a, axis=None):
    """The tangent of ``cumprod_grad(g, y, a, axis)`` along a tangent `t` of y (refused where `a` has a zero)."""
    _no_zero_for_second_derivative(a)
    return cumprod_grad(g, t, a, axis)


def cumprod_grad_tangent_a(g, y, a, t, axis=None):
    """The tangent of ``cumprod_grad(g, y, a, axis)`` along a tangent `t` of a (refused where `a` has a zero)."""
    _no_zero_for_second_derivative(a)
    return -cumprod_grad(g, y, a, axis) * t / a


def norm_grad(g, y, x, ord=None, axis=None, keepdims=False):
    """The gradient of ``np.linalg.norm(x, ord, axis, keepdims)``: vector p-norms, matrix 'fro', 'nuc', 1, 2, inf."""
    x = np.asarray(x)
    matrix = (axis is None and x.ndim == 2 or np.ndim(axis) == 1 and len(axis) == 2) and ord is not None
    if not matrix:
        g, y = unreduce(g, x, axis, keepdims), unreduce(y, x, axis, keepdims)
        if ord in (np.inf, -np.inf):
            hit = np.abs(x) == y
            return g * np.sign(x) * hit / unreduce(np.sum(hit, axis, keepdims=True), x, axis, True)
        if ord == 0:
            return np.zeros(x.shape, dtype=float_dtype(x))
        p = 2 if ord is None else ord
        return g * np.sign(x) * divide_or_zero(np.abs(x), y) ** (p - 1)
    axes = tuple(np.array((0, 1) if axis is None else axis) % x.ndim)
    g = np.moveaxis(g if keepdims else np.expand_dims(g, axes), axes, (-2, -1))
    y = np.moveaxis(np.asarray(y) if keepdims else np.expand_dims(y, axes), axes, (-2, -1))
    xm = np.moveaxis(x, axes, (-2, -1))
    if ord == "fro":
        dm = xm / y
    elif ord in ("nuc", 2, -2):
        u, _, vh = np.linalg.svd(xm, full_matrices=False)
        k = 0 if ord == 2 else -1  # the largest or the smallest singular value
        dm = u @ vh if ord == "nuc" else u[..., [k]] @ vh[..., [k], :]
    else:  # 1, -1: extreme column sum of |x|; inf, -inf: extreme row sum
        sums = np.abs(xm).sum(-2 if ord in (1, -1) else -1, keepdims=True)
        hit = sums == y
        dm = np.sign(xm) * hit / hit.sum((-2, -1), keepdims=True)
    return np.moveaxis(g * dm, (-2, -1), axes)


def vector_norm_grad(g, y, x, axis=None, keepdims=False, ord=2):
    """The gradient of ``np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)``: the axes of `axis`
    (all of them for None) are one vector."""
    x = np.asarray(x)
    axes = _reduced(axis, x.ndim)
    ends = tuple(range(x.ndim - len(axes), x.ndim))
    moved = np.moveaxis(x, axes, ends)
    lanes = np.reshape(moved, moved.shape[:x.ndim - len(axes)] + (-1,))
    grad = norm_grad(np.reshape(g, lanes.shape[:-1]), np.reshape(y, lanes.shape[:-1]), lanes, ord, -1)
    return np.moveaxis(np.reshape(grad, moved.shape), ends, axes)
def median_weights(a, axis=None):
    """The gradient of ``np.median(a, axis)`` for a gradient of ones: each lane's median is its middle element,
    or the mean of its two middle ones; the weight of a middle value is shared evenly among the elements equal
    to it (as a maximum's among ties).

        >>> median_weights(np.array([3.0, 1.0, 2.0, 5.0])).tolist()
        [0.5, 0.0, 0.5, 0.0]
        >>> median_weights(np.array([2.0, 1.0, 2.0])).tolist()
        [0.5, 0.0, 0.5]
    """
    a = np.asarray(a)
    axes = _reduced(axis, a.ndim)
    lanes = np.moveaxis(a, axes, range(a.ndim - len(axes), a.ndim))
    lanes = np.reshape(lanes, lanes.shape[:a.ndim - len(axes)] + (-1,))
    n = lanes.shape[-1]
    ordered = np.sort(lanes, axis=-1)
    middles = sorted({(n - 1) // 2, n // 2})          # one position for an odd count, two for an even one
    dtype = float_dtype(a)
    weights = np.zeros(lanes.shape, dtype=dtype)
    for k in middles:
        hit = lanes == ordered[..., k:k + 1]
        weights = weights + hit / np.sum(hit, axis=-1, keepdims=True, dtype=dtype) / len(middles)
    kept = [a.shape[k] for k in range(a.ndim) if k not in axes]
    weights = np.reshape(weights, kept + [a.shape[k] for k in axes])
    return np.moveaxis(weights, range(a.ndim - len(axes), a.ndim), axes)


def weights_like(weights, a, axis=None):
    """``np.average``'s weights as an array that broadcasts against `a`: as they are if they have a's number of
    axes, else (1-D weights along one axis) with that axis in place.

        >>> weights_like(np.array([1.0, 2.0]), np.zeros((2, 3)), 0).shape
        (2, 1)
    """
    if np.ndim(weights) == np.ndim(a):
        return weights
    shape = [1] * np.ndim(a)
    shape[int(np.atleast_1d(axis)[0]) % np.ndim(a)] = np.size(weights)
    return np.reshape(weights, shape)


def trapezoid_weights(y, x=None, dx=1.0, axis=-1):
    """The weight of each value of y in ``np.trapezoid(y, x, dx, axis)``: half the spacings on either side,
    as an array that broadcasts against y.

        >>> trapezoid_weights(np.zeros(4), np.array([0.0, 1.0, 3.0, 4.0])).tolist()
        [0.5, 1.5, 1.5, 0.5]
    """
    axis = axis % np.ndim(y)
    if x is None:
        dtype = float_dtype(y, dx)
        spacing = np.full(np.shape(y)[axis] - 1, dx, dtype=dtype) if np.ndim(dx) == 0 else np.asarray(dx, dtype=dtype)
    else:
        spacing = np.diff(x, axis=axis if np.ndim(x) == np.ndim(y) else -1)
    if np.ndim(spacing) == 1:
        shape = [1] * np.ndim(y)
        shape[axis] = -1
        spacing = np.reshape(spacing, shape)
    pad = [(0, 0)] * np.ndim(spacing)
    before, after = list(pad), list(pad)
    before[axis], after[axis] = (1, 0), (0, 1)
    return (np.pad(spacing, before) + np.pad(spacing, after)) / 2.0
