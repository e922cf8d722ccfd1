"""The adjoints of NumPy's linear functions written in Python: each helper applies the transpose of one
function to a gradient (``np.diff``, ``np.gradient``, ``np.pad``, ``np.take_along_axis``, ``np.kron``,
``np.convolve``, ``np.select``, ``scipy.signal.convolve``), and is itself linear in that gradient.

    >>> undiff(np.array([1.0, 10.0]), 1, -1).tolist()            # y = [x1 - x0, x2 - x1]
    [-1.0, -9.0, 10.0]
    >>> untake_along_axis(np.array([1.0, 2.0]), np.zeros(3), np.array([2, 2]), 0).tolist()
    [0.0, 0.0, 3.0]
"""
from __future__ import annotations

import numpy as np

from ..errors import NoDerivativeRule
from .arrays import unbroadcast
from .dtypes import float_dtype
from .gradients import complete


def undiff(g, n, axis):
    """The gradient of ``np.diff(a, n, axis)``: the transpose of one difference, ``n`` times (a difference
    of the gradient with a zero before and after, negated)."""
    for _ in range(n):
        zero = float_dtype(g).type(0.0)
        g = -np.diff(g, 1, axis, prepend=zero, append=zero)
    return g


def ungradient(g, f, *varargs, axis=None, edge_order=1):
    """The gradient of ``np.gradient(f, *varargs, axis=axis, edge_order=edge_order)``: along each axis the
    derivative is a matrix (``np.gradient`` of the identity), applied transposed to that axis's gradient."""
    ndim = np.ndim(f)
    axes = list(range(ndim)) if axis is None else [a % ndim for a in np.atleast_1d(axis)]
    pieces = list(g) if len(axes) > 1 else [g]
    spacings = list(varargs) * len(axes) if len(varargs) == 1 else list(varargs) or [1.0] * len(axes)
    dtype = float_dtype(f, pieces[0])
    out = np.zeros(np.shape(f), dtype=dtype)
    for k, piece, spacing in zip(axes, pieces, spacings):
        matrix = np.gradient(np.eye(np.shape(f)[k], dtype=dtype), spacing, axis=0, edge_order=edge_order)
        piece = complete(piece, out)
        out = out + np.moveaxis(np.tensordot(matrix.T, np.moveaxis(piece, k, 0), 1), 0, k)
    return out


COPYING_MODES = ("constant", "edge", "reflect", "symmetric", "wrap", "empty")


def unpad(g, array, pad_width, mode="constant"):
    """The gradient of ``np.pad(array, pad_width, mode)`` for the modes that copy elements: each element
    gets the gradients of its copies (found by padding the elements' positions the same way)."""
    if mode not in COPYING_MODES:
        raise NoDerivativeRule(f"np.pad has no derivative rule for mode={mode!r}",
                               hint=f"pad with one of the modes {', '.join(map(repr, COPYING_MODES))}")
    positions = np.reshape(np.arange(np.size(array)), np.shape(array))
    if mode in ("constant", "empty"):
        positions = np.pad(positions, pad_width, "constant", constant_values=-1)
    else:
        positions = np.pad(positions, pad_width, mode)
    kept = positions >= 0
    out = np.zeros(np.size(array), dtype=float_dtype(g))
    np.add.at(out, positions[kept], np.asarray(g)[kept])
    return np.reshape(out, np.shape(array))


def untake_along_axis(g, arr, indices, axis):
    """The gradient of ``np.take_along_axis(arr, indices, axis)``: each element of g goes back to the element
    it was taken from, repeated indices adding up (``axis=None``: of the flattened arr)."""
    g = np.asarray(g, dtype=float_dtype(g))
    if axis is None:
        out = np.zeros(np.size(arr), dtype=g.dtype)
        np.add.at(out, np.ravel(indices), np.ravel(g))
        return np.reshape(out, np.shape(arr))
    out = np.zeros(np.shape(arr), dtype=g.dtype)
    where = list(np.ogrid[tuple(slice(n) for n in np.shape(g))])
    where[axis] = np.broadcast_to(indices, np.shape(g))
    np.add.at(out, tuple(where), g)
    return out


def full_convolution(g, a, v, mode="full"):
    """The gradient of ``np.convolve(a, v, mode)`` (or ``np.correlate``) as that of the full convolution:
    g put where the `mode` part of it lies, zeros around."""
    n, m = np.size(a), np.size(v)
    start = {"full": 0, "same": (min(n, m) - 1) // 2, "valid": min(n, m) - 1}[mode]
    out = np.zeros(n + m - 1, dtype=float_dtype(g))
    out[start:start + np.size(g)] = g
    return out


def unselect(g, condlist, choicelist):
    """The gradient of ``np.select(condlist, choicelist, default)``: each element of g goes to the first choice
    whose condition holds there, else to the default; the choices' gradients (summed back to their shapes)
    and, last, the default's, at the result's shape."""
    g = np.asarray(g)
    taken = np.zeros(np.shape(g), dtype=bool)
    out = []
    for condition, choice in zip(condlist, choicelist):
        here = np.logical_and(condition, np.logical_not(taken))
        out.append(unbroadcast(np.where(here, g, 0.0), choice))
        taken = np.logical_or(taken, here)
    return out + [np.where(taken, 0.0, g)]


def signal_full(g, in1, in2, mode="full"):
    """The gradient of ``scipy.signal.convolve(in1, in2, mode)`` (or ``correlate``) as that of the full
    convolution, along every axis: g put where SciPy's `mode` part of it lies (``same``: centred, of in1's
    shape), zeros around."""
    full = [n1 + n2 - 1 for n1, n2 in zip(np.shape(in1), np.shape(in2))]
    starts = [{"full": 0, "same": (n2 - 1) // 2, "valid": min(n1, n2) - 1}[mode]
              for n1, n2 in zip(np.shape(in1), np.shape(in2))]
    out = np.zeros(full, dtype=float_dtype(g))
    out[tuple(slice(start, start + n) for start, n in zip(starts, np.shape(g)))] = g
    return out
