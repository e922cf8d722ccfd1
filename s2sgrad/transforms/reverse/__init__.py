"""Reverse mode: turn a lowered function into a forward sweep and a backward sweep.

The forward sweep is the primal code plus, inside loops, pushes of the values
the backward sweep reads (and each loop's trip count). The backward sweep
visits statements in reverse and applies each one's derivative rule:

    y = np.sin(x) * w            # forward
    ...
    dsin = dy * w                # backward: the rule of * ...
    dw = dy * sin
    dx = dsin * np.cos(x)        # ... then the rule of np.sin

`sweeps.Reverse` drives the two; `adjoints` tracks adjoints symbolically, `recording` plans what the
forward sweep keeps, `backward_sweep` and `forward_sweep` write the code.

    >>> from s2sgrad.transforms.reverse import Reverse, Sweeps
"""
from .rows import RowStack
from .sweeps import Reverse, Sweeps

__all__ = ["Reverse", "Sweeps", "RowStack"]
