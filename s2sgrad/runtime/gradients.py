"""Gradients of any structure: zeros shaped like a value (`zeros_like`, also of a `Like`, which stands for an
array the backward sweep needs only the shape of), sums (`add_grads`; None is a zero), and the gradient
handed to the user (`complete`).

    >>> zeros_like([1.0, np.ones(2)])
    [0.0, array([0., 0.])]
    >>> add_grads(None, 1.0), add_grads([1.0, None], [2.0, 3.0])
    (1.0, [3.0, 3.0])
"""
from __future__ import annotations

import numpy as np

from .dtypes import float_dtype
from .records import as_parts, is_record, record_complete
from .sparse import SparseGrad, densify


class Like:
    """What the backward sweep keeps of an array it needs only the shape of: shape and dtype.

        >>> np.shape(Like(np.zeros((2, 3))))
        (2, 3)
    """

    __slots__ = ("shape", "dtype")

    def __init__(self, array):
        self.shape = array.shape
        self.dtype = array.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)


def like(x):
    """`x` as the backward sweep keeps it when it reads only x's shape: arrays become a `Like`."""
    return Like(x) if isinstance(x, np.ndarray) else x


def rebuilt(x, items: list):
    """A list or tuple of the type of `x` holding `items` (a named tuple takes them one by one).

        >>> import collections
        >>> rebuilt(collections.namedtuple("P", "a b")(1, 2), [3, 4])
        P(a=3, b=4)
    """
    return type(x)(*items) if isinstance(x, tuple) and hasattr(x, "_fields") else type(x)(items)


def zeros_like(x):
    """A zero gradient for `x`: 0.0 for a scalar, a float array for an array, and so on for containers."""
    if isinstance(x, Like):
        return np.zeros(x.shape, dtype=float_dtype(x.dtype))
    if isinstance(x, (list, tuple)):          # (None in a container of gradients is a zero: it stays None)
        return rebuilt(x, [None if v is None else zeros_like(v) for v in x])
    if isinstance(x, dict):
        return {k: None if v is None else zeros_like(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, dtype=float_dtype(x.dtype))
    if isinstance(x, complex):
        return 0j
    if is_record(x):
        return record_complete(None, x, complete)
    return 0.0 if np.ndim(x) == 0 else np.zeros(np.shape(x))


def complete(g, x):
    """The gradient handed to the user for `x`: zeros where `g` is None, dense, and never an alias.

        >>> complete([None, np.ones(2)], [1.0, np.zeros(2)])
        [0.0, array([1., 1.])]
        >>> complete(np.float64(2.0), np.array(1.0))
        array(2.)
    """
    if g is None:
        return zeros_like(x)
    if isinstance(x, (list, tuple)):
        return rebuilt(x, [complete(gi, xi) for gi, xi in zip(g, x)])
    if isinstance(x, dict):
        return {k: complete(g.get(k), v) for k, v in x.items()}
    if is_record(x):
        return record_complete(g, x, complete)
    if isinstance(g, SparseGrad):
        return g.dense()
    if isinstance(g, np.ndarray):
        if not isinstance(x, np.ndarray) and np.ndim(x) == 0 and g.ndim == 0:
            return g.item()
        return np.array(g, dtype=float_dtype(g.dtype), copy=True)
    if isinstance(x, np.ndarray):                 # arithmetic on 0-d arrays gives NumPy scalars
        return np.array(g, dtype=float_dtype(g))
    return g


def add_grads(a, b):
    """The sum of two gradients of any structure; None is a zero."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return rebuilt(a, [add_grads(u, v) for u, v in zip(a, b)])
    if is_record(a) or is_record(b):
        a, b = as_parts(a), as_parts(b)
    if isinstance(a, dict):
        return {k: add_grads(a.get(k), b.get(k)) for k in a.keys() | b.keys()}
    if isinstance(a, SparseGrad) or isinstance(b, SparseGrad):
        return a + b
    return a + b


def grad_or_zeros(g, x):
    """`g`, or a zero gradient shaped like `x` where `g` is None (an element nothing flowed into)."""
    return zeros_like(x) if g is None else densify(g)
