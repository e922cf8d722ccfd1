"""NumPy's writes made functional: ``x[index] = value`` (`setitem`), ``np.add.at`` and its kin (`add_at`,
...) and NumPy's other in-place functions (`written_copy`), each on a copy; and the gradient of the values a
write wrote (`written`, where a repeated index keeps its last write).

    >>> x = np.zeros(3)
    >>> setitem(x, 1, 5.0).tolist(), add_at(x, [0, 0], 1.0).tolist(), x.tolist()
    ([0.0, 5.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 0.0])
"""
from __future__ import annotations

import numpy as np

from .dtypes import float_dtype
from .sparse import densify


def setitem(x, index, value):
    """``x`` with ``x[index] = value``, as a new array (the lowered form's functional write). An array keeps
    its dtype, as it does when written in place (a float written into an integer array is truncated)."""
    if isinstance(x, np.ndarray):
        out = np.array(x, copy=True)
    else:
        out = np.array(x, dtype=np.result_type(np.asarray(x).dtype, np.asarray(value).dtype))
    out[index] = value
    return out


def written(g, index):
    """The gradient of the values written by ``x[index] = v``: ``g[index]``, where a repeated index
    keeps only its last write (as NumPy does) and the earlier ones get zero.

        >>> written(np.array([1.0, 2.0, 3.0]), [0, 0, 2])
        array([0., 1., 3.])
    """
    if type(index) is int and type(g) is np.ndarray and g.ndim == 1 and g.dtype.kind == "f":
        return g[index]                       # one element of a float vector: a copy already, the same value
    g = densify(g)
    part = np.array(g[index], dtype=float_dtype(g), copy=True) if np.ndim(g) else g
    if _may_repeat(index) and np.size(part) > 1:
        # Which write each element of the part is: the same NumPy assignment as the forward write,
        # so where an index repeats, the write that survives is the one NumPy kept.
        order = np.arange(np.size(part)).reshape(np.shape(part))
        owner = np.full(np.shape(g), -1, dtype=np.intp)
        owner[index] = order
        part[owner[index] != order] = 0.0
    return part


def _may_repeat(index) -> bool:
    """Whether an index can name one element twice: it has an integer array or list in it (a basic
    index, or a boolean mask, never does)."""
    parts = index if isinstance(index, tuple) else (index,)
    for part in parts:
        if isinstance(part, list) or isinstance(part, np.ndarray) and part.dtype.kind != "b" and part.ndim:
            return True
    return False


def _copy(a):
    return np.array(a, copy=True)


def _functional_at(ufunc):
    """``ufunc.at(a, indices, b)`` on a copy of `a`, as a function of its own (one rule each)."""
    def at(a, indices, b):
        out = _copy(a)
        ufunc.at(out, indices, b)
        return out
    at.__name__ = at.__qualname__ = f"{ufunc.__name__}_at"
    at.__doc__ = f"``np.{ufunc.__name__}.at(a, indices, b)`` on a copy of `a`: repeats accumulated."
    return at


add_at = _functional_at(np.add)
subtract_at = _functional_at(np.subtract)
maximum_at = _functional_at(np.maximum)
minimum_at = _functional_at(np.minimum)


def extremum_ties(y, a, indices, b):
    """For ``y = maximum_at(a, indices, b)`` (or minimum_at): how many of the candidates for each element
    of y (its old value in `a`, the b's sent to it) equal the result. The gradient is shared among them,
    as `np.maximum`'s is on a tie."""
    count = (np.asarray(a) == y).astype(float_dtype(y))
    picked = np.asarray(y)[indices]
    np.add.at(count, indices, np.broadcast_to(b, np.shape(picked)) == picked)
    return count


def at_copy(ufunc, a, indices, b=None):
    """``ufunc.at(a, indices, b)`` on a copy of `a` (no derivative rule: refused on the differentiated path)."""
    out = _copy(a)
    ufunc.at(out, indices, *(() if b is None else (b,)))
    return out


def written_copy(fn, a, *args, **kwargs):
    """``fn(a, ...)``, a NumPy function that writes into `a` (np.put, np.place, np.fill_diagonal, ...),
    on a copy of `a` (no derivative rule: refused on the differentiated path)."""
    out = _copy(a)
    fn(out, *args, **kwargs)
    return out
