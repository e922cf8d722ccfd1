"""Lists and tuples written functionally (``xs.append(x)``, ``xs[i] = v``, ``a + b``, ``xs * n``), and the
gradients of these operations and of stacking a list into an array (None is a zero element).

    >>> list_append([1, 2], 3), seq_repeat((1,), 2)
    ([1, 2, 3], (1, 1))
    >>> seq_unrepeat([1.0, 2.0, None, 4.0], [0.0, 0.0])
    [1.0, 6.0]
"""
from __future__ import annotations

import numpy as np

from .gradients import add_grads


def list_append(xs, x):
    """``xs + [x]`` (the lowered form's functional ``xs.append(x)``)."""
    return [*xs, x]


def seq_setitem(xs, index, value):
    """``xs`` with ``xs[index] = value`` where xs is a list, as a new list (the functional list write).

        >>> seq_setitem([1, 2, 3], 1, 5), seq_setitem([1, 2, 3], slice(0, 2), [7])
        ([1, 5, 3], [7, 3])
    """
    out = list(xs)
    out[index] = value
    return out


def seq_written(g, index, value):
    """The gradient of the value written by ``ys[index] = value`` (ys a list): its part of `g`, the
    gradient of ys (None where zero)."""
    if isinstance(index, slice) and index.step in (None, 1):
        start = index.indices(len(g) - len(value) + len(range(*index.indices(len(g)))))[0]
        return list(g[start:start + len(value)])
    return g[index]


def seq_unwritten(g, xs, index, value):
    """The gradient of the list `xs` that ``ys = xs; ys[index] = value`` overwrote: `g` (ys's gradient)
    with the written part taken out and zeros (None) for what was overwritten."""
    out = list(g)
    if isinstance(index, slice) and index.step in (None, 1):
        start, stop, _ = index.indices(len(xs))
        out[start:start + len(value)] = [None] * len(range(start, stop))
    else:
        out[index] = [None] * len(out[index]) if isinstance(index, slice) else None
    return out


def seq_concat(a, b):
    """``a + b`` of two lists or tuples.

        >>> seq_concat([1], (2, 3)), seq_concat((1,), (2,))
        ([1, 2, 3], (1, 2))
    """
    return (*a, *b) if isinstance(a, tuple) and isinstance(b, tuple) else [*a, *b]


def seq_repeat(xs, n):
    """``xs * n`` of a list or tuple and an integer."""
    return xs * n


def seq_unrepeat(g, xs):
    """The gradient of `xs` from the gradient `g` of ``xs * n``: the sum of g's chunks."""
    size, out = len(xs), [None] * len(xs)
    for k, gk in enumerate(g):
        out[k % size] = add_grads(out[k % size], gk)
    return out


def unstack(g, x, axis=0):
    """The gradient of ``np.stack(x, axis)`` (or ``np.array(x)``) for a list x: one slice per element."""
    return [np.take(g, i, axis=axis) for i in range(len(x))]
