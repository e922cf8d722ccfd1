"""The states of random number generators, saved where code that will run again starts and put back so that
it draws the same numbers again (`s2sgrad.analysis.randomness` finds where).

    >>> import numpy as np
    >>> saved = random_state(np.random)
    >>> first = np.random.normal()
    >>> bool(replay(saved, np.random.normal) == first)
    True
"""
from __future__ import annotations


class RandomStates:
    """The states of some random number generators (NumPy's legacy global state is `np.random` itself),
    to be put back with `restore`."""

    __slots__ = ("generators", "states")

    def __init__(self, generators):
        self.generators = generators
        self.states = [g.get_state() if hasattr(g, "get_state") else g.bit_generator.state for g in generators]

    def restore(self) -> None:
        for g, state in zip(self.generators, self.states):
            if hasattr(g, "set_state"):
                g.set_state(state)
            else:
                g.bit_generator.state = state


def random_state(*generators) -> RandomStates:
    """The current states of `generators`, saved where code that will run again starts.

        >>> import numpy as np
    >>> saved = random_state(np.random)
        >>> first = np.random.normal()
        >>> saved.restore()
        >>> np.random.normal() == first
        True
    """
    return RandomStates(generators)


def swap_random_state(saved: RandomStates) -> RandomStates:
    """Put the states in `saved` back; returns the states they replace."""
    now = RandomStates(saved.generators)
    saved.restore()
    return now


def replay(saved: RandomStates, fn, *args):
    """``fn(*args)`` drawing the random numbers it drew when the states in `saved` were current; the
    generators are left as they were before the call."""
    now = swap_random_state(saved)
    try:
        return fn(*args)
    finally:
        now.restore()
