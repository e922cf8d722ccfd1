"""Rules for functions that copy, rearrange, join, repeat or cut out parts of arrays.

Their gradients rearrange the output's gradient back the other way.
"""
import numpy as np

from ..ir import primitives
from ..runtime import (
    as_column,
    broadcast_like,
    cast_tangent,
    linspace_fraction,
    one_step,
    sorted_like,
    unbroadcast,
    uncast,
    unconcatenate,
    undiagonal,
    unrepeat,
    unsort,
    untake,
    untile,
)
from .registry import adjoint, d, same_for_complex, tangent


@adjoint(np.copy)
def copy(y, a, order="K", subok=False):
    d[a] = d[y]


@tangent(np.copy)
def copy(y, a, order="K", subok=False):
    d[y] = np.copy(d[a])


@adjoint(primitives.astype)
def astype(y, x, dtype):
    """Zero through an integer or boolean dtype; otherwise the gradient cast back to x's dtype."""
    d[x] = uncast(d[y], x, dtype)


@tangent(primitives.astype)
def astype(y, x, dtype):
    d[y] = cast_tangent(d[x], dtype)


FLOAT_TYPES = [getattr(np, name) for name in ("float16", "float32", "float64", "longdouble") if hasattr(np, name)]


@adjoint(*FLOAT_TYPES)
def float_cast(y, x):
    """``np.float32(x)`` and the like: the gradient cast back to x's dtype."""
    d[x] = uncast(d[y], x, None)


@tangent(*FLOAT_TYPES)
def float_cast(y, x):
    d[y] = d[x]


# --- arrays made from numbers: the gradient of a number is the sum of the gradients of where it went

@adjoint(np.full)
def full(y, shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    d[fill_value] = uncast(unbroadcast(d[y], fill_value), fill_value, dtype)


@tangent(np.full)
def full(y, shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    d[y] = cast_tangent(np.full(np.shape(y), d[fill_value]), dtype)


@adjoint(np.full_like)
def full_like(y, a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """Only `a`'s shape and dtype are read: it gets no gradient."""
    d[fill_value] = uncast(unbroadcast(d[y], fill_value), fill_value, np.result_type(y))


@tangent(np.full_like)
def full_like(y, a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    d[y] = cast_tangent(np.full(np.shape(y), d[fill_value]), np.result_type(y))


@adjoint(np.linspace)
def linspace(y, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """``y = start + t * (stop - start)``, t from 0 to 1 along `axis`."""
    t = linspace_fraction(y, num, endpoint, axis)
    d[start] = uncast(unbroadcast(np.sum(d[y] * (1.0 - t), axis=axis), start), start, dtype)
    d[stop] = uncast(unbroadcast(np.sum(d[y] * t, axis=axis), stop), stop, dtype)


@tangent(np.linspace)
def linspace(y, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    t = linspace_fraction(y, num, endpoint, axis)
    first = one_step(y, axis)                    # start and stop broadcast to the shape of one step
    d[y] = cast_tangent(np.expand_dims(broadcast_like(d[start], first), axis) * (1.0 - t)
                        + np.expand_dims(broadcast_like(d[stop], first), axis) * t, dtype)


@adjoint(np.logspace)
def logspace(y, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``y = base ** (start + t * (stop - start))``."""
    t = linspace_fraction(y, num, endpoint, axis)
    g = d[y] * y * np.log(np.expand_dims(base, axis))
    d[start] = uncast(unbroadcast(np.sum(g * (1.0 - t), axis=axis), start), start, dtype)
    d[stop] = uncast(unbroadcast(np.sum(g * t, axis=axis), stop), stop, dtype)
    d[base] = unbroadcast(np.sum(d[y] * y * np.log(y) / np.log(np.expand_dims(base, axis)), axis=axis) / base, base)


@tangent(np.logspace)
def logspace(y, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    t = linspace_fraction(y, num, endpoint, axis)
    first = one_step(y, axis)
    d[y] = cast_tangent(y * np.log(np.expand_dims(base, axis))
                        * (np.expand_dims(broadcast_like(d[start], first), axis) * (1.0 - t)
                           + np.expand_dims(broadcast_like(d[stop], first), axis) * t)
                        + y * np.log(y) / np.log(np.expand_dims(base, axis))
                        * np.expand_dims(broadcast_like(d[base] / base, first), axis), dtype)


@adjoint(np.geomspace)
def geomspace(y, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``y = start * (stop / start) ** t``."""
    t = linspace_fraction(y, num, endpoint, axis)
    d[start] = uncast(unbroadcast(np.sum(d[y] * y * (1.0 - t), axis=axis) / start, start), start,
                      dtype)
    d[stop] = uncast(unbroadcast(np.sum(d[y] * y * t, axis=axis) / stop, stop), stop, dtype)


@tangent(np.geomspace)
def geomspace(y, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    t = linspace_fraction(y, num, endpoint, axis)
    first = one_step(y, axis)
    d[y] = cast_tangent(y * (np.expand_dims(broadcast_like(d[start] / start, first), axis) * (1.0 - t)
                             + np.expand_dims(broadcast_like(d[stop] / stop, first), axis) * t), dtype)


@adjoint(np.arange)
def arange(y, start, stop=None, step=None, dtype=None, *, device=None, like=None):
    """Element k is ``start + k * step``; `stop` (and a lone first argument, which is the stop) only sets the length."""
    d[start] = uncast(np.sum(d[y]), start, np.result_type(y)) if stop is not None else 0.0
    d[step] = uncast(np.sum(d[y] * np.arange(np.size(y))), step, np.result_type(y))


@tangent(np.arange)
def arange(y, start, stop=None, step=None, dtype=None, *, device=None, like=None):
    d[y] = cast_tangent(broadcast_like(d[start] * (stop is not None), y) + d[step] * np.arange(np.size(y)),
                        np.result_type(y))


@adjoint(as_column)
def column(y, x):
    """A piece of ``np.c_[...]``."""
    d[x] = np.reshape(d[y], np.shape(x))


@tangent(as_column)
def column(y, x):
    d[y] = as_column(d[x])


@adjoint(np.reshape)
def reshape(y, a, /, shape=None, order="C", *, newshape=None, copy=None):
    d[a] = np.reshape(d[y], np.shape(a), order=order)


@tangent(np.reshape)
def reshape(y, a, /, shape=None, order="C", *, newshape=None, copy=None):
    d[y] = np.reshape(d[a], np.shape(y), order=order)


@adjoint(np.ravel)
def ravel(y, a, order="C"):
    d[a] = np.reshape(d[y], np.shape(a), order=order)


@tangent(np.ravel)
def ravel(y, a, order="C"):
    d[y] = np.ravel(d[a], order)


@adjoint(np.squeeze)
def squeeze(y, a, axis=None):
    d[a] = np.reshape(d[y], np.shape(a))


@tangent(np.squeeze)
def squeeze(y, a, axis=None):
    d[y] = np.squeeze(d[a], axis)


@adjoint(np.expand_dims)
def expand_dims(y, a, axis):
    d[a] = np.reshape(d[y], np.shape(a))


@tangent(np.expand_dims)
def expand_dims(y, a, axis):
    d[y] = np.expand_dims(d[a], axis)


@adjoint(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def atleast_1d(y, ary):
    """One argument only (NumPy's ``*arys``); with several the result is a tuple and there is no rule."""
    d[ary] = np.reshape(d[y], np.shape(ary))


@tangent(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def atleast_1d(y, ary):
    d[y] = np.reshape(d[ary], np.shape(y))


@adjoint(np.transpose)
def transpose(y, a, axes=None):
    """Axis i of the result is axis ``axes[i]`` of `a`: move it back (no `axes` reverses them all)."""
    d[a] = np.moveaxis(d[y], np.arange(np.ndim(a)), axes) if np.ndim(axes) else np.transpose(d[y])


@tangent(np.transpose)
def transpose(y, a, axes=None):
    d[y] = np.transpose(d[a], axes)


@adjoint(np.swapaxes)
def swapaxes(y, a, axis1, axis2):
    d[a] = np.swapaxes(d[y], axis1, axis2)


@tangent(np.swapaxes)
def swapaxes(y, a, axis1, axis2):
    d[y] = np.swapaxes(d[a], axis1, axis2)


@adjoint(np.moveaxis)
def moveaxis(y, a, source, destination):
    d[a] = np.moveaxis(d[y], destination, source)


@tangent(np.moveaxis)
def moveaxis(y, a, source, destination):
    d[y] = np.moveaxis(d[a], source, destination)


@adjoint(np.broadcast_to)
def broadcast_to(y, array, shape, subok=False):
    d[array] = unbroadcast(d[y], array)


@tangent(np.broadcast_to)
def broadcast_to(y, array, shape, subok=False):
    d[y] = np.broadcast_to(d[array], shape)


@adjoint(np.concatenate)
def concatenate(y, arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    d[arrays] = unconcatenate(d[y], arrays, axis)


@tangent(np.concatenate)
def concatenate(y, arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    d[y] = np.concatenate(d[arrays], axis)


@adjoint(np.hstack)
def hstack(y, tup, *, dtype=None, casting="same_kind"):
    d[tup] = unconcatenate(d[y], tup, 0 if np.ndim(tup[0]) <= 1 else 1)


@tangent(np.hstack)
def hstack(y, tup, *, dtype=None, casting="same_kind"):
    d[y] = np.hstack(d[tup])


@adjoint(np.vstack, *[getattr(np, name) for name in ("row_stack",) if hasattr(np, name)])
def vstack(y, tup, *, dtype=None, casting="same_kind"):
    d[tup] = unconcatenate(d[y], tup, 0, ndmin=2)


@tangent(np.vstack, *[getattr(np, name) for name in ("row_stack",) if hasattr(np, name)])
def vstack(y, tup, *, dtype=None, casting="same_kind"):
    d[y] = np.vstack(d[tup])


@adjoint(np.dstack)
def dstack(y, tup):
    d[tup] = unconcatenate(d[y], tup, 2, ndmin=3)


@tangent(np.dstack)
def dstack(y, tup):
    d[y] = np.dstack(d[tup])


@adjoint(np.column_stack)
def column_stack(y, tup):
    d[tup] = unconcatenate(d[y], tup, 1, ndmin="columns")


@tangent(np.column_stack)
def column_stack(y, tup):
    d[y] = np.column_stack(d[tup])


@adjoint(np.sort)
def sort(y, a, axis=-1, kind=None, order=None, *, stable=None):
    """Each sorted value's gradient goes back to the element it came from."""
    d[a] = unsort(d[y], a, axis)


@tangent(np.sort)
def sort(y, a, axis=-1, kind=None, order=None, *, stable=None):
    d[y] = sorted_like(d[a], a, axis)


@adjoint(np.tile)
def tile(y, A, reps):
    d[A] = untile(d[y], A, reps)


@tangent(np.tile)
def tile(y, A, reps):
    d[y] = np.tile(d[A], reps)


@adjoint(np.repeat)
def repeat(y, a, repeats, axis=None):
    d[a] = unrepeat(d[y], a, repeats, axis)


@tangent(np.repeat)
def repeat(y, a, repeats, axis=None):
    d[y] = np.repeat(d[a], repeats, axis)


@adjoint(np.flip)
def flip(y, m, axis=None):
    d[m] = np.flip(d[y], axis)


@tangent(np.flip)
def flip(y, m, axis=None):
    d[y] = np.flip(d[m], axis)


@adjoint(np.fliplr)
def fliplr(y, m):
    d[m] = np.fliplr(d[y])


@tangent(np.fliplr)
def fliplr(y, m):
    d[y] = np.fliplr(d[m])


@adjoint(np.flipud)
def flipud(y, m):
    d[m] = np.flipud(d[y])


@tangent(np.flipud)
def flipud(y, m):
    d[y] = np.flipud(d[m])


@adjoint(np.roll)
def roll(y, a, shift, axis=None):
    d[a] = np.roll(d[y], np.negative(shift), axis)


@tangent(np.roll)
def roll(y, a, shift, axis=None):
    d[y] = np.roll(d[a], shift, axis)


@adjoint(np.diag)
def diag(y, v, k=0):
    d[v] = np.diagonal(d[y], k) if np.ndim(v) == 1 else undiagonal(d[y], v, k)


@tangent(np.diag)
def diag(y, v, k=0):
    d[y] = np.diag(d[v], k)


@adjoint(np.diagonal)
def diagonal(y, a, offset=0, axis1=0, axis2=1):
    d[a] = undiagonal(d[y], a, offset, axis1, axis2)


@tangent(np.diagonal)
def diagonal(y, a, offset=0, axis1=0, axis2=1):
    d[y] = np.diagonal(d[a], offset, axis1, axis2)


@adjoint(np.triu)
def triu(y, m, k=0):
    d[m] = np.triu(d[y], k)


@tangent(np.triu)
def triu(y, m, k=0):
    d[y] = np.triu(d[m], k)


@adjoint(np.tril)
def tril(y, m, k=0):
    d[m] = np.tril(d[y], k)


@tangent(np.tril)
def tril(y, m, k=0):
    d[y] = np.tril(d[m], k)


@adjoint(np.take)
def take(y, a, indices, axis=None, out=None, mode="raise"):
    d[a] = untake(d[y], a, indices, axis, mode)


@tangent(np.take)
def take(y, a, indices, axis=None, out=None, mode="raise"):
    d[y] = np.take(d[a], indices, axis=axis, mode=mode)


if hasattr(np, "matrix_transpose"):  # NumPy 2
    @adjoint(np.matrix_transpose, np.linalg.matrix_transpose)
    def matrix_transpose(y, x, /):
        d[x] = np.swapaxes(d[y], -1, -2)

    @tangent(np.matrix_transpose, np.linalg.matrix_transpose)
    def matrix_transpose(y, x, /):
        d[y] = np.swapaxes(d[x], -1, -2)

    @adjoint(np.linalg.diagonal)
    def linalg_diagonal(y, x, /, *, offset=0):
        d[x] = undiagonal(d[y], x, offset, -2, -1)

    @tangent(np.linalg.diagonal)
    def linalg_diagonal(y, x, /, *, offset=0):
        d[y] = np.linalg.diagonal(d[x], offset=offset)


same_for_complex(np.copy, np.reshape, np.ravel, np.squeeze, np.expand_dims, np.atleast_1d, np.atleast_2d, np.transpose,
                 np.swapaxes, np.moveaxis, np.broadcast_to, np.concatenate, np.hstack, np.vstack, np.tile, np.repeat,
                 np.flip, np.roll, np.diag, np.diagonal, np.triu, np.tril, np.take)   # (moves elements: linear)
