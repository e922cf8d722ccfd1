"""Rules for Python's builtins that pick, order or regroup values: ``max``, ``min``, ``sorted``, ``list``,
``tuple``, ``divmod``, ``math.prod``, ``math.fsum``, the forms of ``max``/``min``/``sorted`` with a key and the
start of ``functools.reduce`` (lowering writes a key's values, ``map`` and ``reduce`` as loops calling the
function, `frontend.builtin_calls`), and the forward-mode rules of their gradients' helpers.

The forward sweep calls the builtin itself, so it returns what Python returns (the very item ``max`` picked,
a list from ``sorted``, the errors on empty sequences). Ties: ``max(a, b)`` without a key returns the first
maximal item, but the candidates equal to the result share its gradient evenly, as `np.maximum`'s do (the
central difference at a tie, and the same value either way); with a key, items that tie in the key may
differ in value, and the gradient goes to the one returned (``max(x, -x, key=abs)`` is x).

    >>> import builtins as python
    >>> from s2sgrad.rules import rule_for, tangent_rule_for
    >>> rule_for(python.max).output, tangent_rule_for(python.sorted).output
    ('y', 'y')
"""
import builtins
import math

import numpy as np

from .. import runtime
from ..runtime import (
    add_grads,
    grad_or_zeros,
    keyed_index,
    product_grads_tangent,
    product_tangent,
    scatter,
    seq_scatter,
    sort_order,
    unbroadcast,
    unreduce,
    zeros_like,
)
from .registry import adjoint, d, nondifferentiable, tangent

# Builtins whose result is a list or tuple (its gradient is a list, None where zero).
SEQUENCE_RESULTS = {builtins.list, builtins.tuple, builtins.sorted, builtins.divmod, runtime.sorted_by_keys}

nondifferentiable(runtime.keyed_index, runtime.sort_order, runtime.extremum_shares)


@adjoint(builtins.max, builtins.min)
def max(y, *args, key=None, default=None):
    """``d[args]`` lists the arguments' gradients, with one argument the gradient of its items. (A key that is
    not a module-level function lowering rewrites into `keyed_extremum`.)"""
    grads = extremum_grads(d[y], args, y, key)
    d[args] = grads
    d[default] = default_grad(d[y], args, default)


@tangent(builtins.max, builtins.min)
def max(y, *args, key=None, default=None):
    d[y] = extremum_tangent(d[args], args, y, key=key) if default is None \
        else extremum_tangent(d[args], args, y, d[default], key)


@adjoint(runtime.keyed_extremum)
def keyed_extremum(y, fn, items, keys, has_default=False, default=None):
    index = keyed_index(fn, keys, has_default)
    d[items] = picked_grads(d[y], items, index)
    d[default] = unbroadcast(d[y], default) if index is None else zeros_like(default)


@tangent(runtime.keyed_extremum)
def keyed_extremum(y, fn, items, keys, has_default=False, default=None):
    index = keyed_index(fn, keys, has_default)
    d[y] = d[items][index] if not has_default else (d[default] if index is None else d[items][index])


@adjoint(builtins.sorted)
def sorted(y, iterable, key=None, reverse=False):
    """Each item gets its place's gradient. (A key that is not a module-level function lowering rewrites into
    `sorted_by_keys`.)"""
    d[iterable] = unsorted_grads(d[y], iterable, sort_order(iterable, reverse, key))


@tangent(builtins.sorted)
def sorted(y, iterable, key=None, reverse=False):
    d[y] = sorted_tangent(d[iterable], sort_order(iterable, reverse, key))


@adjoint(runtime.sorted_by_keys)
def sorted_by_keys(y, items, keys, reverse=False):
    d[items] = unsorted_grads(d[y], items, sort_order(keys, reverse))


@tangent(runtime.sorted_by_keys)
def sorted_by_keys(y, items, keys, reverse=False):
    d[y] = sorted_tangent(d[items], sort_order(keys, reverse))


@adjoint(builtins.list, builtins.tuple)
def list(y, iterable=()):
    """An array's items are its rows; a list's or tuple's are themselves (a range or a dict's keys: none)."""
    d[iterable] = listed_grads(d[y], iterable)


@tangent(builtins.list)
def list(y, iterable=()):
    d[y] = list(d[iterable])


@tangent(builtins.tuple)
def tuple(y, iterable=()):
    d[y] = tuple(d[iterable])


@adjoint(builtins.divmod)
def divmod(y, a, b):
    """The quotient ``y[0]`` is piecewise constant; the remainder ``y[1]`` is ``a - b * y[0]``."""
    remainder = grad_or_zeros(d[y][1], y[1])
    d[a] = unbroadcast(remainder, a)
    d[b] = unbroadcast(-remainder * y[0], b)


@tangent(builtins.divmod)
def divmod(y, a, b):
    d[y] = (np.zeros_like(y[0]), d[a] - d[b] * y[0])


@adjoint(runtime.first_item)
def first_item(y, items):
    d[items] = seq_scatter(d[y], items, 0) if isinstance(items, (list, tuple)) \
        else scatter(d[y], items, 0)


@tangent(runtime.first_item)
def first_item(y, items):
    d[y] = first_item(d[items])


@adjoint(math.prod)
def prod(y, iterable, start=1):
    d[iterable] = product_grads(d[y], iterable, start)
    d[start] = unbroadcast(d[y] * math.prod(iterable), start)


@tangent(math.prod)
def prod(y, iterable, start=1):
    d[y] = product_tangent(d[iterable], iterable, start) + d[start] * math.prod(iterable)


@adjoint(math.fsum)
def fsum(y, seq):
    d[seq] = [d[y] for _ in seq] if isinstance(seq, (list, tuple)) else unreduce(d[y], seq, 0)


@tangent(math.fsum)
def fsum(y, seq):
    d[y] = math.fsum(d[seq])


# --- forward mode over the gradients above (Hessian-vector products): linear in the gradient ------------

@tangent(runtime.extremum_grads)
def extremum_grads(out, g, args, y, key=None):
    d[out] = extremum_grads(d[g], args, y, key)


@tangent(runtime.default_grad)
def default_grad(out, g, args, default):
    d[out] = default_grad(d[g], args, default)


@tangent(runtime.extremum_tangent)
def extremum_tangent(out, tangents, args, y, default_tangent=None, key=None):
    d[out] = extremum_tangent(d[tangents], args, y, d[default_tangent], key)


@tangent(runtime.picked_grads)
def picked_grads(out, g, items, index):
    d[out] = picked_grads(d[g], items, index)


@tangent(runtime.unsorted_grads)
def unsorted_grads(out, g, items, order):
    d[out] = unsorted_grads(d[g], items, order)


@tangent(runtime.sorted_tangent)
def sorted_tangent(out, tangent, order):
    d[out] = sorted_tangent(d[tangent], order)


@tangent(runtime.listed_grads)
def listed_grads(out, g, x):
    d[out] = listed_grads(d[g], x)


@tangent(runtime.product_grads)
def product_grads(out, g, items, start=1):
    """Linear in `g` and in `start`; through the items, the product's second derivatives."""
    d[out] = add_grads(add_grads(product_grads(d[g], items, start), product_grads(g * d[start], items)),
                       product_grads_tangent(g, items, d[items], start))
