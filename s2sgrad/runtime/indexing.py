"""The gradient of a read by index, ``x[index]``: the read's gradient placed at `index` in zeros shaped like
`x` (an array, or a list, tuple or dict); rows an integer vector gathers give a `SparseGrad`.

    >>> scatter(np.array([1.0, 2.0]), np.zeros(3), [0, 0]).tolist()
    [3.0, 0.0, 0.0]
    >>> seq_scatter(5.0, [1.0, 2.0], 1)
    [None, 5.0]
"""
from __future__ import annotations

import numpy as np

from .dtypes import float_dtype
from .sparse import SparseGrad


def scatter(g, x, index):
    """The gradient of ``x[index]``: `g` placed at `index` in zeros shaped like x, repeats accumulated."""
    if isinstance(x, (list, tuple, dict)):
        return seq_scatter(g, x, index)
    shape = np.shape(x)
    if _is_row_gather(index, shape):
        return SparseGrad(np.asarray(index), g, shape)
    out = np.zeros(shape, dtype=float_dtype(x, g))
    np.add.at(out, index, g)
    return out


def _is_row_gather(index, shape) -> bool:
    return (isinstance(index, np.ndarray) and index.ndim == 1 and index.dtype.kind in "iu"
            and len(shape) >= 2)


def seq_scatter(g, x, index):
    """The gradient of ``x[index]`` where x is a list or tuple: None (zero) everywhere but at index."""
    if isinstance(x, dict):
        return {index: g}
    out = [None] * len(x)
    if isinstance(index, slice):
        for i, gi in zip(range(*index.indices(len(x))), g):
            out[i] = gi
    else:
        out[index] = g
    return tuple(out) if isinstance(x, tuple) else out
