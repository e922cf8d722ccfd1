"""Python's builtins that pick, order or regroup values (``max``, ``min``, ``sorted``, ``list``, ``math.prod``,
``functools.reduce``), their forms with a key (whose values lowering computes with a loop calling the key),
and the gradients and tangents of these (None is a zero element of a list's gradient).

    >>> keyed_extremum(max, [3.0, -4.0], [3.0, 4.0]), sorted_by_keys([3.0, -4.0, 1.0], [3.0, 4.0, 1.0])
    (-4.0, [1.0, 3.0, -4.0])
    >>> extremum_grads(1.0, (2.0, 2.0, 1.0), 2.0)
    [0.5, 0.5, 0.0]
    >>> unsorted_grads([1.0, 2.0, None], [3.0, 1.0, 2.0], sort_order([3.0, 1.0, 2.0]))
    [None, 1.0, 2.0]
"""
from __future__ import annotations

import numpy as np

from .arrays import unbroadcast
from .dtypes import float_dtype
from .gradients import zeros_like


def _candidates(args):
    """What ``max(*args)`` chooses among: the items of its one argument, else the arguments."""
    return args[0] if len(args) == 1 else args


def _shares_dtype(items):
    """The dtype of the candidates' shares of a gradient: their own floating dtype (items that are not numbers
    or arrays count as float64)."""
    if isinstance(items, np.ndarray):
        return float_dtype(items)
    dtype = float_dtype(0.0)
    for v in items:
        if isinstance(v, (np.ndarray, np.generic, int, float)):
            dtype = float_dtype(dtype, v)
    return dtype


def _hits(items, y):
    """Which of `items` equal `y` (booleans; an array's items are its rows)."""
    if isinstance(items, np.ndarray):
        return np.asarray(items == y).reshape(len(items), -1).all(axis=1)
    return np.array([bool(np.all(item == y)) for item in items], dtype=bool)


def _picked(items, y, key) -> int:
    """The position of the item ``max(items, key=key)`` returned, `y`: itself, or else the first whose key is y's."""
    for k, item in enumerate(items):
        if item is y:
            return k
    target = key(y)
    return next((k for k, item in enumerate(items) if key(item) == target), 0)


def extremum_shares(args, y, key=None) -> np.ndarray:
    """The share of the gradient of ``y = max(*args)`` (or `min`) each candidate gets. Without a key the
    candidates equal to `y` share it evenly, as `np.maximum`'s do (a NaN result is the first candidate's);
    with one, items that tie in the key may differ in value, and it goes to the one returned."""
    items = _candidates(args)
    dtype = _shares_dtype(items)
    if key is not None:
        hits = np.zeros(len(items), dtype=bool)
        hits[_picked(items, y, key)] = True
        return hits.astype(dtype)
    hits = _hits(items, y)
    if len(hits) and not hits.any():
        hits[0] = True
    return hits.astype(dtype) / int(np.count_nonzero(hits))


def _share(g, s, item):
    """`item`'s part `s` of the result's gradient `g` (the result may be another candidate, of another shape)."""
    if not s:
        return zeros_like(item)
    part = g * s
    if np.shape(part) != np.shape(item):
        part = np.broadcast_to(part, np.broadcast_shapes(np.shape(part), np.shape(item)))
    return unbroadcast(part, item)


def _spread(g, items, shares):
    """The gradient of each of `items` (an array's rows, a list's items) given the result's, `g`."""
    if isinstance(items, np.ndarray):
        return np.reshape(shares, (-1,) + (1,) * (np.ndim(items) - 1)) * np.asarray(g)
    return [_share(g, s, item) if s else None for item, s in zip(items, shares.tolist())]


def extremum_grads(g, args, y, key=None) -> list:
    """The gradients of the arguments of ``y = max(*args, key=key)`` or `min`: with one argument, the gradient
    of its items (a list, or an array for an array)."""
    shares = extremum_shares(args, y, key)
    if len(args) == 1:
        return [_spread(g, args[0], shares)]
    return [_share(g, s, a) for a, s in zip(args, shares.tolist())]


def extremum_tangent(tangents, args, y, default_tangent=None, key=None):
    """The tangent of ``y = max(*args, key=key)`` from the arguments' tangents (None where zero), and of
    ``default=``."""
    shares = extremum_shares(args, y, key)
    if len(args) == 1 and len(shares) == 0:
        return zeros_like(y) if default_tangent is None else default_tangent
    if len(args) == 1:
        tangent = tangents[0]
        if isinstance(tangent, np.ndarray) and isinstance(args[0], np.ndarray):
            return np.tensordot(shares, tangent, axes=1)
        tangents = tangent
    terms = [s * t for s, t in zip(shares.tolist(), tangents) if s and t is not None]
    return sum(terms[1:], terms[0]) if terms else zeros_like(y)


def default_grad(g, args, default):
    """The gradient of `default` in ``max(iterable, default=default)``: the result's where the iterable is empty."""
    return unbroadcast(g, default) if len(args[0]) == 0 else zeros_like(default)


def keyed_index(fn, keys, has_default=False):
    """The index of the item ``fn(items, key=k)`` returns (`fn` max or min, ``keys = [k(v) for v in items]``): the
    first extreme key, found with Python's own comparisons; None where there are no items and a default is given."""
    if has_default:
        return fn(range(len(keys)), key=keys.__getitem__, default=None)
    return fn(range(len(keys)), key=keys.__getitem__)


def keyed_extremum(fn, items, keys, has_default=False, default=None):
    """``fn(items, key=k)`` (or ``fn(items, key=k, default=default)``), `fn` max or min, from ``keys = [k(v) for v
    in items]``."""
    index = keyed_index(fn, keys, has_default)
    return default if index is None else items[index]


def picked_grads(g, items, index):
    """The gradient of `items` where item `index` (None: none) was picked and the result's gradient is `g`."""
    if isinstance(items, np.ndarray):
        out = zeros_like(items)
        if index is not None:
            out[index] = g
        return out
    return [None if index != k else g for k in range(len(items))]


def sort_order(items, reverse=False, key=None) -> list:
    """The positions of `items` in the order ``sorted(items, key=key, reverse=reverse)`` puts them (a stable sort,
    with Python's own comparisons)."""
    if not isinstance(items, (list, tuple, np.ndarray)):
        items = list(items)                     # (a dict's keys, a range)
    keys = items if key is None else [key(v) for v in items]
    return sorted(range(len(keys)), key=keys.__getitem__, reverse=reverse)


def sorted_by_keys(items, keys, reverse=False) -> list:
    """``sorted(items, key=k, reverse=reverse)`` from ``keys = [k(v) for v in items]``."""
    return [items[i] for i in sort_order(keys, reverse)]


def unsorted_grads(g, items, order):
    """The gradient of `items` from that, `g`, of the list their sorted copy is (``order``: `sort_order`'s)."""
    out = [None] * len(order)
    for k, i in enumerate(order):
        out[i] = g[k]
    return listed_grads(out, items)


def sorted_tangent(tangent, order) -> list:
    """The tangent of a sorted copy from that of what was sorted (``order``: `sort_order`'s); zeros for a dict's
    keys."""
    if isinstance(tangent, dict):
        return [0.0] * len(order)
    return [tangent[i] for i in order]


def listed_grads(g, x):
    """The gradient of `x` from that, `g`, of ``list(x)`` (a list, None where zero): a list for a list or tuple,
    an array for an array, None (no gradient) for anything else (a dict's keys, a range)."""
    if isinstance(x, np.ndarray):
        out = zeros_like(x)
        for k, gk in enumerate(g):
            if gk is not None:
                out[k] = gk
        return out
    if isinstance(x, (list, tuple)):
        return list(g)
    return None


def first_item(items):
    """``items[0]``, the start of ``functools.reduce(f, items)`` without an initial value."""
    if len(items) == 0:
        raise TypeError("reduce() of empty iterable with no initial value")
    return items[0]


def _others(items, start):
    """For each of `items`, the product of `start` and the other items (no division: exact at zeros)."""
    values = list(items)
    before, after = [start], [1]
    for v in values:
        before.append(before[-1] * v)
    for v in reversed(values):
        after.append(after[-1] * v)
    return [before[k] * after[len(values) - 1 - k] for k in range(len(values))]


def product_grads(g, items, start=1):
    """The gradients of the items of ``math.prod(items, start=start)``: a list, or an array for an array."""
    grads = [unbroadcast(g * other, v) for other, v in zip(_others(items, start), items)]
    if isinstance(items, np.ndarray):
        return np.array(grads, dtype=float_dtype(items)).reshape(np.shape(items))
    return grads


def product_tangent(tangent, items, start=1):
    """The tangent of ``math.prod(items, start=start)`` from the items' (a list, None where zero, or an array)."""
    terms = [other * t for other, t in zip(_others(items, start), tangent) if t is not None]
    return sum(terms[1:], terms[0]) if terms else 0.0 * start


def product_grads_tangent(g, items, tangent, start=1):
    """The tangent of ``product_grads(g, items, start)`` from the items' (a list, None where zero, or an array):
    the product's second derivatives."""
    values, tangent = list(items), list(tangent)
    grads = [unbroadcast(g * product_tangent(tangent[:k] + tangent[k + 1:], values[:k] + values[k + 1:], start), v)
             for k, v in enumerate(values)]
    if isinstance(items, np.ndarray):
        return np.array(grads, dtype=float_dtype(items)).reshape(np.shape(items))
    return grads
