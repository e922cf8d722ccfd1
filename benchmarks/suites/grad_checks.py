"""autograd's `check_grads` and `combo_check` on s2sgrad: each call checks the reverse mode (and the forward
mode where the test asks for it, and the second derivatives for ``order=2``) against finite differences,
and records the outcomes in `RECORDED` for the pytest plugin (`autograd_plugin`) to collect, without
stopping the test: the next check of the same test still runs.

    >>> import numpy as np
    >>> del RECORDED[:]
    >>> check_grads(lambda x: np.sin(x) * x)(np.array([0.5, 1.0]))
    >>> [(o.mode, o.status) for o in RECORDED]
    [('rev', 'passed'), ('fwd', 'passed'), ('rev2', 'passed')]
"""
from __future__ import annotations

import itertools

import numpy as np

from .checks import Outcome, check_jvp, check_second_order, check_vjp
from .wrappers import python_call

RECORDED: list = []          # the outcomes of the checks the current test made


def check_grads(fun, argnum=0, modes=("fwd", "rev"), order=2):
    """``check_grads(fun, argnum, modes, order)(*args, **kwargs)`` checks the first-order derivatives of
    `fun` with respect to the argument(s) `argnum` in the `modes` asked for and, for ``order`` 2 (autograd's
    default), the second derivatives by forward over reverse mode (`checks.check_second_order`)."""
    wrt = tuple(argnum) if isinstance(argnum, list) else argnum

    def at(*args, **kwargs):
        if getattr(fun, "__adapter__", False):
            RECORDED.extend(Outcome(mode, "not-mapped", "a derivative made by the adapter's operators")
                            for mode in ("rev", "fwd") if mode in modes)
            return
        function, args, kwargs, argnum = python_call(fun, args, kwargs, wrt)
        if "rev" in modes:
            RECORDED.append(check_vjp(function, args, kwargs, argnum, seed=len(RECORDED)))
        if "fwd" in modes:
            RECORDED.append(check_jvp(function, args, kwargs, argnum, seed=len(RECORDED)))
        if order > 1:
            RECORDED.append(check_second_order(function, args, kwargs, argnum, seed=len(RECORDED)))
    return at


def combo_check(fun, *args, **kwargs):
    """``combo_check(fun, argnum, modes=...)(values_0, values_1, ..., key=values)``: `check_grads` at every
    combination of the given argument values and keyword values."""
    def at(*arg_lists, **kwarg_lists):
        keyed = [[(key, value) for value in values] for key, values in kwarg_lists.items()]
        for combination in itertools.product(*arg_lists):
            for chosen in itertools.product(*keyed):
                check_grads(fun, *args, **kwargs)(*combination, **dict(chosen))
    return at


def scalar_close(a, b, tol: float = 1e-6) -> bool:
    return abs(a - b) < tol or abs(a - b) / abs(a + b) < tol


def check_equivalent(x, y) -> None:
    """Two values are equal up to a small tolerance, leaf by leaf."""
    from .checks import leaves
    for a, b in zip(leaves(x), leaves(y), strict=True):
        assert np.allclose(a, b, rtol=1e-6, atol=1e-6), f"Value mismatch:\nx: {x}\ny: {y}"
