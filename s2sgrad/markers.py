"""The markers a user writes into a function to say how to differentiate it: `stop_gradient`,
`recompute` and `checkpointed`. Each is the identity at run time; the stages that read them (`desugar`,
`lower`, the rules) recognise them by identity, so this module imports nothing of theirs.

    >>> import numpy as np
    >>> @recompute
    ... def block(h, W):
    ...     return np.tanh(W @ h)
    >>> is_marked_recompute(block)
    True
"""
from __future__ import annotations

import inspect
import types
from typing import Callable

from .errors import S2SGradError


def stop_gradient(x):
    """`x` itself, through which no gradient flows."""
    return x


def recompute(g: Callable) -> Callable:
    """`g`, marked so that inside a differentiated function a call of it stores only its inputs
    and `g` is run again in the backward sweep (cf. ``tf.recompute_grad``).

    The marked function is a copy (the same code, globals, defaults and closure); `g` itself is left as it
    is, so ``block = recompute(step)`` recomputes the calls of `block` and not those of `step`. Called
    outside differentiation it computes what `g` computes:

        >>> def step(h, W):
        ...     return np.tanh(W @ h)
        >>> block = recompute(step)
        >>> is_marked_recompute(block), is_marked_recompute(step), block.__name__, recompute(block) is block
        (True, False, 'step', True)
    """
    if not inspect.isfunction(g):
        raise S2SGradError(f"recompute needs a Python function (defined with def), not {g!r}",
                           hint="wrap the call in a function of your own and mark that one")
    if is_marked_recompute(g):
        return g
    marked = types.FunctionType(g.__code__, g.__globals__, g.__name__, g.__defaults__, g.__closure__)
    marked.__kwdefaults__ = dict(g.__kwdefaults__) if g.__kwdefaults__ else None
    marked.__dict__.update(g.__dict__)
    marked.__qualname__, marked.__module__, marked.__doc__ = g.__qualname__, g.__module__, g.__doc__
    marked.__annotations__ = dict(g.__annotations__)
    marked.__s2sgrad_recompute__ = True
    return marked


def checkpointed(value, schedule):
    """`value` itself; in a loop header it marks the loop for checkpointing with `schedule`.

        for t in sg.checkpointed(range(n), sg.Revolve(snapshots=10)):
            ...
        while sg.checkpointed(t < T, sg.Online(snapshots=10)):
            ...
    """
    return value


def is_marked_recompute(fn) -> bool:
    """Was `fn` marked with `recompute`?"""
    return getattr(fn, "__s2sgrad_recompute__", False)
