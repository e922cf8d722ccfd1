"""A gradient that is zero but at some rows (`SparseGrad`: the gradient of gathering rows, ``x[rows]``), and
the dense form of a gradient.

    >>> g = SparseGrad(np.array([0, 0]), np.ones((2, 2)), (3, 2))
    >>> densify(g).tolist()
    [[2.0, 2.0], [0.0, 0.0], [0.0, 0.0]]
"""
from __future__ import annotations

import numpy as np

from .dtypes import float_dtype


class SparseGrad:
    """A gradient that is zero except at some rows: ``dense[indices] += values``.

    It stays sparse while sparse gradients are added to it, and becomes dense
    when something dense is added or the user receives it.
    """

    __slots__ = ("indices", "values", "shape")
    __array_ufunc__ = None           # make NumPy defer ``dense + sparse`` to __radd__

    def __init__(self, indices, values, shape):
        self.indices = indices
        self.values = values
        self.shape = shape

    def dense(self) -> np.ndarray:
        out = np.zeros(self.shape, dtype=float_dtype(self.values))
        np.add.at(out, self.indices, self.values)
        return out

    def __add__(self, other):
        if isinstance(other, SparseGrad) and isinstance(self.indices, np.ndarray) \
                and isinstance(other.indices, np.ndarray) \
                and self.indices.ndim == other.indices.ndim == 1:
            return SparseGrad(np.concatenate([self.indices, other.indices]),
                              np.concatenate([np.broadcast_to(self.values, self.indices.shape + self.shape[1:]),
                                              np.broadcast_to(other.values, other.indices.shape + other.shape[1:])]),
                              self.shape)
        return densify(other) + self.dense()

    __radd__ = __add__

    def __repr__(self) -> str:
        return f"SparseGrad(indices={self.indices!r}, values={self.values!r}, shape={self.shape})"


def densify(g):
    """The dense form of a gradient (a no-op unless it is a SparseGrad)."""
    return g.dense() if isinstance(g, SparseGrad) else g
