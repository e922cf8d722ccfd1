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
from typing import Callable

from .errors import S2SGradError


def stop_gradient(x):
    """`x` itself, through which no gradient flows."""
    return x


def recompute(g: Callable) -> Callable:
    """Mark `g` so that, inside a differentiated function, a call of it stores only its inputs
    and `g` is run again in the backward sweep (cf. ``tf.recompute_grad``).

    Called outside differentiation it is `g` itself:

        >>> @recompute
        ... def block(h, W):
        ...     return np.tanh(W @ h)
    """
    if not inspect.isfunction(g):
        raise S2SGradError(f"recompute needs a Python function (defined with def), not {g!r}",
                           hint="wrap the call in a function of your own and mark that one")
    g.__s2sgrad_recompute__ = True
    return g


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
