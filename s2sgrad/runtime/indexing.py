"""The gradient of a read by index, ``x[index]``: the read's gradient placed at `index` in zeros shaped like
`x` (an array, or a list, tuple or dict); rows an integer vector gathers give a `SparseGrad`.

    >>> scatter(np.array([1.0, 2.0]), np.zeros(3), [0, 0]).tolist()
    [3.0, 0.0, 0.0]
    >>> seq_scatter(5.0, [1.0, 2.0], 1)
    [None, 5.0]

A loop adding the gradient of one item of a container per trip starts from `no_grads` and adds into the
item's slot alone (`seq_add_at`), never forming a zero for the other items:

    >>> gs = no_grads([1.0, 2.0, 3.0])
    >>> seq_add_at(seq_add_at(gs, 1.0, [1.0, 2.0, 3.0], 2), 4.0, [1.0, 2.0, 3.0], 2)
    [None, None, 5.0]
"""
from __future__ import annotations

import numpy as np

from .dtypes import float_dtype
from .gradients import add_grads, zeros_like
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


def no_grads(x):
    """The zero gradient of `x` that costs nothing where x is a list, tuple or dict: None in every slot."""
    if isinstance(x, dict):
        return {k: None for k in x}
    if isinstance(x, (list, tuple)):
        return [None] * len(x) if isinstance(x, list) else (None,) * len(x)
    return zeros_like(x)


def seq_add_at(gs, g, x, index):
    """`gs` (the gradient of `x`) plus the gradient `g` of ``x[index]``: where x is a list, tuple or dict, a copy
    of gs with g added into the slot at `index` alone (a copy of the container, not of its items)."""
    if not isinstance(x, (list, tuple, dict)) or isinstance(index, slice) or gs is None:
        return add_grads(gs, scatter(g, x, index))
    out = dict(gs) if isinstance(gs, dict) else list(gs)
    out[index] = add_grads(out.get(index) if isinstance(out, dict) else out[index], g)
    return tuple(out) if isinstance(x, tuple) else out
