"""What numba-compiled gradients call at run time: the stack of rows, and the runtime helpers of the NumPy
backend that the covered programs reach, each written in the subset numba compiles (one implementation per
kind of argument, chosen when numba types the call).

A stack is a typed array whose first axis counts the pushes, with the number of rows pushed beside it as an
int; `stack_new` makes it at the first push, `stack_grown` doubles it when it is full:

    >>> import numpy as np
    >>> rows = stack_new(np.ones(2), 1)
    >>> rows.shape
    (1, 2)
    >>> stack_grown(rows).shape
    (2, 2)

(Called from Python, as here, each helper runs uncompiled.)
"""
from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

__all__ = ["NoRows", "NotScalar", "check_scalar", "complete", "like", "matmul", "output_seed", "setitem", "stack_grown",
           "stack_new", "stack_rows", "unbroadcast", "unreduce", "written", "zeros_like"]


class NoRows(Exception):
    """A stack the backward sweep reads as one array got no row (its loop ran no trip): the shape of its rows
    is not known, and the gradient is computed by the NumPy backend instead."""


class NotScalar(Exception):
    """The output `check_scalar` checks is an array of more than one element."""


def _is_array(t) -> bool:
    return isinstance(t, types.Array)


def stack_new(value, capacity):
    """An empty stack for rows like `value` with room for `capacity` of them."""
    return np.empty((max(capacity, 1),) + np.shape(value), np.asarray(value).dtype)


@overload(stack_new)
def _stack_new(value, capacity):
    if _is_array(value):
        return lambda value, capacity: np.empty((max(capacity, 1),) + value.shape, value.dtype)
    if isinstance(value, types.Boolean):
        return lambda value, capacity: np.empty(max(capacity, 1), np.bool_)
    if isinstance(value, types.Integer):
        return lambda value, capacity: np.empty(max(capacity, 1), np.int64)
    if isinstance(value, types.Float):
        return lambda value, capacity: np.empty(max(capacity, 1), np.float64)
    return None


@njit(cache=True)
def stack_grown(rows):
    """`rows` copied into a stack of twice its capacity."""
    grown = np.empty((2 * rows.shape[0],) + rows.shape[1:], rows.dtype)
    grown[:rows.shape[0]] = rows
    return grown


@njit(cache=True)
def stack_rows(rows, top, n):
    """The `n` rows below `top`, the last pushed first, as one contiguous array."""
    return np.ascontiguousarray(rows[top - n:top][::-1])


def matmul(a, b):
    """``a @ b``; a product with a vector runs as loops numba compiles (no library call per small product)."""
    return a @ b


@overload(matmul)
def _matmul(a, b):
    if not (_is_array(a) and _is_array(b)):
        return None
    if a.ndim == 2 and b.ndim == 1:
        def matrix_vector(a, b):
            out = np.zeros(a.shape[0])
            for i in range(a.shape[0]):
                total = 0.0
                for j in range(a.shape[1]):
                    total += a[i, j] * b[j]
                out[i] = total
            return out
        return matrix_vector
    if a.ndim == 1 and b.ndim == 2:
        def vector_matrix(a, b):
            out = np.zeros(b.shape[1])
            for i in range(b.shape[0]):
                for j in range(b.shape[1]):
                    out[j] += a[i] * b[i, j]
            return out
        return vector_matrix
    if a.ndim == 1 and b.ndim == 1:
        def vector_vector(a, b):
            total = 0.0
            for i in range(a.shape[0]):
                total += a[i] * b[i]
            return total
        return vector_vector
    def matrix_matrix(a, b):
        if a.shape[-1] == 0:                  # (numba's product over an empty axis leaves its result unwritten)
            return np.zeros(a.shape[:-1] + b.shape[1:])
        return np.ascontiguousarray(a) @ np.ascontiguousarray(b)
    return matrix_matrix


def zeros_like(x):
    """A zero gradient for `x`: 0.0 for a number, a float array of x's shape for an array."""
    return np.zeros(np.shape(x)) if np.ndim(x) else 0.0


@overload(zeros_like)
def _zeros_like(x):
    if _is_array(x):
        return lambda x: np.zeros(x.shape)
    return lambda x: 0.0


def complete(g, x):
    """The gradient handed to the user for `x`: a copy of an array (never an alias), a number as it is."""
    return np.copy(g) if np.ndim(g) else g


@overload(complete)
def _complete(g, x):
    if _is_array(g):
        return lambda g, x: np.copy(g)
    return lambda g, x: g


def like(x):
    """`x` as the backward sweep keeps it when it reads only its shape (here: `x` itself)."""
    return x


@overload(like)
def _like(x):
    return lambda x: x


def check_scalar(value, function):
    """Refuse an output that is not a number or an array of one element."""
    if np.size(value) != 1:
        raise NotScalar()


@overload(check_scalar)
def _check_scalar(value, function):
    if _is_array(value):
        def check(value, function):
            if value.size != 1:
                raise NotScalar()
        return check
    return lambda value, function: None


def output_seed(value, seed, function):
    """The adjoint `seed` of a gradient's output `value`, shaped like it (an array of one element)."""
    check_scalar(value, function)
    return np.full(np.shape(value), seed) if np.ndim(value) else seed


@overload(output_seed)
def _output_seed(value, seed, function):
    if _is_array(value):
        def seeded(value, seed, function):
            if value.size != 1:
                raise NotScalar()
            return np.full(value.shape, seed)
        return seeded
    return lambda value, seed, function: seed


def setitem(x, index, value):
    """``x`` with ``x[index] = value``, as a new array."""
    out = np.copy(x)
    out[index] = value
    return out


@overload(setitem)
def _setitem(x, index, value):
    if _is_array(x):
        def write(x, index, value):
            out = np.copy(x)
            out[index] = value
            return out
        return write
    return None


def written(g, index):
    """The gradient of the value written by ``x[index] = v`` at an integer index: ``g[index]``, a copy."""
    return np.copy(g[index]) if np.ndim(g[index]) else g[index]


@overload(written)
def _written(g, index):
    if _is_array(g) and isinstance(index, types.Integer):
        if g.ndim == 1:
            return lambda g, index: g[index]
        return lambda g, index: np.copy(g[index])
    return None


def unbroadcast(g, x):
    """`g` summed over the axes along which `x` was broadcast (a number, or an array of g's shape or of its
    trailing axes)."""
    while np.ndim(g) > np.ndim(x):
        g = np.sum(g, axis=0)
    return g


@overload(unbroadcast)
def _unbroadcast(g, x):
    if not _is_array(g):
        return lambda g, x: g
    if not _is_array(x):
        return lambda g, x: np.sum(g)
    if g.ndim == x.ndim:
        return lambda g, x: g
    if g.ndim == x.ndim + 1:
        return lambda g, x: np.sum(g, axis=0)
    return None


def unreduce(g, x):
    """The gradient of a whole-array reduction, a number, spread to the shape of `x`."""
    return np.full(np.shape(x), g)


@overload(unreduce)
def _unreduce(g, x):
    if _is_array(x) and not _is_array(g):
        return lambda g, x: np.full(x.shape, g)
    return None
