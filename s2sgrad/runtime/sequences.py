"""Lists and tuples written functionally (``xs.append(x)``, ``xs[i] = v``, ``a + b``, ``xs * n``), and the
gradients of these operations and of stacking a list into an array (None is a zero element).

    >>> list_append([1, 2], 3), seq_repeat((1,), 2)
    ([1, 2, 3], (1, 1))
    >>> seq_unrepeat([1.0, 2.0, None, 4.0], [0.0, 0.0])
    [1.0, 6.0]
"""
from __future__ import annotations

import inspect

import numpy as np

from .dtypes import float_dtype
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
        out = np.zeros(seq.shape, dtype=float_dtype(seq.dtype))
        for i, gi in enumerate(parts):
            if gi is not None:
                out[i] += gi
        return out
    return parts


def unpack_filled(seq, required: int, defaults: tuple) -> tuple:
    """The arguments a call ``f(*seq)`` passes to f's positional parameters: `required` of them without defaults,
    then those with `defaults` that `seq` does not fill, at their defaults.

        >>> unpack_filled([1, 2], 1, (5, 6))
        (1, 2, 6)
    """
    items = list(seq)
    if not required <= len(items) <= required + len(defaults):
        raise TypeError(f"the call takes {required} to {required + len(defaults)} positional arguments but "
                        f"{len(items)} were given")
    return (*items, *defaults[len(items) - required:])


def filled_grad(g, seq, required: int, defaults: tuple, of_defaults: bool = False):
    """The gradient of `seq` (or, with `of_defaults`, of `defaults`) from the gradient `g` of
    ``unpack_filled(seq, required, defaults)``."""
    n = len(seq)
    parts = [None] * (required + len(defaults)) if g is None else list(g)
    if of_defaults:
        return [None] * (n - required) + parts[n:]
    return unpacked_grad(parts[:n], seq, n, 0, None)


def bind_call(parameters: tuple, args, kwargs: dict, defaults: tuple) -> tuple:
    """What ``f(*args, **kwargs)`` passes to each parameter of f, as Python binds it: `parameters` are f's
    (name, kind) pairs (`inspect.Parameter` kinds as numbers), in order; `defaults` the default values of those
    that have one (a parameter's ``kind >= 10`` marks it as having one). ``*xs`` gets a tuple, ``**kw`` a dict.

        >>> bind_call((("a", 1), ("b", 11)), [1.0], {}, (5.0,))
        (1.0, 5.0)
    """
    signature, defaulted = _signature(parameters)
    bound = signature.bind(*args, **kwargs)
    values = []
    for (name, kind), given in zip(parameters, (n in bound.arguments for n, _ in parameters)):
        kind %= 10
        if given:
            values.append(bound.arguments[name])
        elif name in defaulted:
            values.append(defaults[defaulted.index(name)])
        else:
            values.append(() if kind == 2 else {})
    return tuple(values)


def bound_grad(g, parameters: tuple, args, kwargs: dict, defaults: tuple, part: str):
    """The gradient of `args`, `kwargs` or `defaults` (`part`) from the gradient `g` of
    ``bind_call(parameters, args, kwargs, defaults)``."""
    signature, defaulted = _signature(parameters)
    bound = signature.bind(*args, **kwargs)
    out_args, out_kwargs, out_defaults = [None] * len(args), {}, [None] * len(defaults)
    position = 0
    for (name, kind), gk in zip(parameters, [None] * len(parameters) if g is None else g):
        kind %= 10
        if name not in bound.arguments:
            if name in defaulted:
                out_defaults[defaulted.index(name)] = gk
            continue
        if kind in (0, 1) and position < len(args) and name not in kwargs:
            out_args[position] = gk
            position += 1
        elif kind == 2:
            for k, gi in enumerate([None] * len(bound.arguments[name]) if gk is None else gk):
                out_args[position + k] = gi
            position += len(bound.arguments[name])
        elif kind == 4:
            out_kwargs.update({} if gk is None else {k: v for k, v in gk.items() if v is not None})
        elif gk is not None:
            out_kwargs[name] = gk
    return {"args": out_args, "kwargs": out_kwargs, "defaults": out_defaults}[part]


def _signature(parameters: tuple):
    params = [inspect.Parameter(name, inspect._ParameterKind(kind % 10), default=None if kind >= 10 else
                                inspect.Parameter.empty) for name, kind in parameters]
    return inspect.Signature(params), [name for name, kind in parameters if kind >= 10]


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
