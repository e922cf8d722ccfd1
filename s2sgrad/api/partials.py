"""A derivative of a ``functools.partial``: the same derivative of the function it binds arguments of, with
those arguments bound to it. `wrt` counts and names the partial's own parameters (those
``inspect.signature`` gives it: the positional ones it leaves, and the keyword ones, bound or not).

    >>> import functools
    >>> import numpy as np
    >>> import s2sgrad as sg
    >>> def loss(x, w):
    ...     return np.sum(w * x ** 2)
    >>> sg.grad(functools.partial(loss, w=2.0))(np.array([1.0, 3.0]))
    array([ 4., 12.])
    >>> float(sg.grad(functools.partial(loss, w=2.0), wrt="w")(np.array([1.0, 3.0])))
    10.0
"""
from __future__ import annotations

import functools
import inspect
from typing import Callable

from ..errors import WrtError
from .generation import def_location


def of_partial(transform: Callable, f: functools.partial, wrt, **options) -> functools.partial:
    """``transform(f, wrt, **options)`` for the partial `f`: a partial of ``transform(f.func, ...)``."""
    params = list(inspect.signature(f).parameters)
    many = isinstance(wrt, (tuple, list))
    names = []
    for item in (wrt if many else [wrt]):
        if isinstance(item, int) and not isinstance(item, bool):
            if not -len(params) <= item < len(params):
                raise WrtError(f"wrt={item} is out of range: the partial of {_name(f)} has {len(params)} "
                               f"argument(s) ({', '.join(params)})", def_location(f.func))
            item = params[item]
        elif isinstance(item, str) and item not in params:
            raise WrtError(f"wrt={item!r} names no argument the partial of {_name(f)} leaves (its arguments: "
                           f"{', '.join(params)})", def_location(f.func),
                           "differentiate with respect to an argument the partial does not bind by position")
        names.append(item)
    inner = transform(f.func, tuple(names) if many else names[0], **options)
    return functools.partial(inner, *f.args, **f.keywords)


def _name(f: functools.partial) -> str:
    return getattr(f.func, "__name__", repr(f.func))
