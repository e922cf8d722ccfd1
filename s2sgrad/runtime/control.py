"""The lowered form's control flow and the statements and expressions it spells as calls: loops
(`while_loop`; a loop over a dict counts its trips with `dict_keys`), branches (`if_else`), asserts,
``raise`` (`raise_error`), which path a ``try`` takes (`exception_of`), a name only a loop binds
(`UNBOUND`, `read_after_loop`), f-strings, and the check that a function whose gradient is taken returns a scalar
(or an array of one element, whose seed `output_seed` shapes like it).

    >>> while_loop(lambda i, n: i < n, lambda i, n: (i + 1,), (0,), (3,))
    (3,)
    >>> if_else(2 > 1, lambda: "then", lambda: "else")
    'then'
    >>> exception_of(lambda a: 1 / a, (ZeroDivisionError,), 0.0)
    ZeroDivisionError('float division by zero')
"""
from __future__ import annotations

import copy

import numpy as np

from ..errors import NonScalarOutput
from .dtypes import float_dtype


def while_loop(cond, body, loop_vars, captures=()):
    """Run ``loop_vars = body(*loop_vars, *captures)`` while ``cond(*loop_vars, *captures)``: the lowered
    form of a loop, whose loop invariants (`captures`) are passed explicitly."""
    while cond(*loop_vars, *captures):
        loop_vars = body(*loop_vars, *captures)
    return loop_vars


def if_else(test, then, orelse):
    """``then()`` if `test` else ``orelse()``; the lowered form of a branch."""
    return then() if test else orelse()


def dict_keys(mapping) -> list:
    """The keys of a dict, as a list (how a loop over a dict's keys, values or items counts its trips)."""
    return list(mapping)


def assert_true(test, message=None):
    """The generated form of ``assert test, message``."""
    assert test, message


def raise_error(exception, cause=None):
    """The generated form of ``raise exception`` (``from cause``)."""
    if cause is not None:
        raise exception from cause
    raise exception


def exception_of(probe, exceptions: tuple, *values):
    """The exception of one of the types `exceptions` that running a ``try`` block (`probe`, the user's own code
    of the block, called with copies of the `values` it reads) raises, or None: which path the ``try`` takes.
    The global random state is put back afterwards, so that the block, run for real, draws the same numbers."""
    state = np.random.get_state()
    try:
        probe(*(_copied(v) for v in values))
    except exceptions as error:
        return error
    finally:
        np.random.set_state(state)
    return None


def _copied(value):
    try:
        return copy.deepcopy(value)
    except Exception:                     # (an object that cannot be copied is passed as it is)
        return value


class _Unbound:
    """What a name holds that only a loop binds, before the loop's first trip."""

    def __repr__(self):
        return "UNBOUND"


UNBOUND = _Unbound()


def read_after_loop(value, name: str):
    """`value`, read as the name `name` after a loop that binds it: an error, as in Python, if no trip ran."""
    if value is UNBOUND:
        raise UnboundLocalError(f"cannot access local variable '{name}' where it is not associated with a value")
    return value


def format_string(template: str, *values) -> str:
    """An f-string: ``f"{x:.2f}!"`` is ``format_string("{0:.2f}!", x)``."""
    return template.format(*values)


def check_scalar(value, function: str) -> None:
    """Refuse an output that is not a scalar or an array of one element where a gradient needs a scalar."""
    if isinstance(value, (list, tuple, dict)) or np.size(value) != 1:
        raise NonScalarOutput(f"grad needs '{function}' to return a scalar, but it returned "
                              f"{type(value).__name__} of shape {np.shape(value)}",
                              hint="use sg.vjp(f) and pass the output's adjoint, "
                                   "or reduce the output to a scalar (np.sum, np.mean)")


def output_seed(value, seed, function: str):
    """The adjoint `seed` of a gradient's output `value`, shaped like it: `seed` for a scalar, an array of
    `seed` for an array of one element (its gradient is that of the element); other outputs are refused.

        >>> output_seed(np.ones((1, 1)), 1.0, "f")
        array([[1.]])
    """
    check_scalar(value, function)
    return seed if np.ndim(value) == 0 else np.full(np.shape(value), seed, dtype=float_dtype(value, seed))
