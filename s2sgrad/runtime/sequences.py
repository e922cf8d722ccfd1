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
    out = dict(xs) if isinstance(xs, dict) else list(xs)
    out[index] = value
    return out


def seq_written(g, index, value):
    """The gradient of the value written by ``ys[index] = value`` (ys a list): its part of `g`, the
    gradient of ys (None where zero)."""
    if isinstance(g, dict) or g is None:
        return None if g is None else g.get(index)
    if isinstance(index, slice) and index.step in (None, 1):
        start = index.indices(len(g) - len(value) + len(range(*index.indices(len(g)))))[0]
        return list(g[start:start + len(value)])
    return g[index]


def seq_unwritten(g, xs, index, value):
    """The gradient of the list `xs` that ``ys = xs; ys[index] = value`` overwrote: `g` (ys's gradient)
    with the written part taken out and zeros (None) for what was overwritten."""
    if isinstance(g, dict) or g is None:
        return None if g is None else {k: v for k, v in g.items() if k != index}
    out = list(g)
    if isinstance(index, slice) and index.step in (None, 1):
        start, stop, _ = index.indices(len(xs))
        out[start:start + len(value)] = [None] * len(range(start, stop))
    else:
        out[index] = [None] * len(out[index]) if isinstance(index, slice) else None
    return out


def unpack_starred(seq, before: int, after: int, rest):
    """The items of `seq` (a list, tuple or array) as ``a, *rest, b = seq`` unpacks them (`before` items, the
    middle as a list, `after` items), or (with `rest` "tuple" or None) as a call ``f(*seq)`` fills `before`
    positional parameters and, with "tuple", the ``*args`` tuple.

        >>> unpack_starred([1, 2, 3, 4], 1, 1, "list"), unpack_starred((5, 6), 1, 0, "tuple")
        ((1, [2, 3], 4), (5, (6,)))
    """
    items = list(seq)
    if rest is None and len(items) != before:
        raise TypeError(f"the call takes {before} positional argument(s) from *{type(seq).__name__} of {len(items)}")
    if len(items) < before + after:
        raise ValueError(f"not enough values to unpack (expected at least {before + after}, got {len(items)})")
    if rest is None:
        return tuple(items)
    middle = items[before:len(items) - after]
    return (*items[:before], middle if rest == "list" else tuple(middle), *items[len(items) - after:])


def unpacked_grad(g, seq, before: int, after: int, rest):
    """The gradient of `seq` from the gradient `g` of ``unpack_starred(seq, before, after, rest)``."""
    n = len(seq)
    parts = [None] * n if g is None else list(g)
    if rest is not None and g is not None:
        middle = parts[before] if parts[before] is not None else [None] * (n - before - after)
        parts = parts[:before] + list(middle) + parts[before + 1:]
    if isinstance(seq, np.ndarray):
        out = np.zeros(seq.shape, dtype=np.result_type(seq.dtype, float))
        for i, gi in enumerate(parts):
            if gi is not None:
                out[i] += gi
        return out
    return parts


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
