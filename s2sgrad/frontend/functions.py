"""Which callables s2sgrad transforms itself, rather than applying a derivative rule to them: the
user's functions, and the nested ``def``s and lambdas `lower` lifts out of them (`LiftedFunction`).

    >>> import numpy as np
    >>> def f(x):
    ...     return x * 2.0
    >>> import statistics
    >>> is_user_function(f), is_user_function(np.sin), is_user_function(statistics.mean), is_recomputed(f)
    (True, False, False, False)

A function of NumPy, of the standard library or of an installed package (one under site-packages) is
library code: it is applied through a derivative rule, or refused where a derivative flows through it
for want of one, and never transformed as the user's own.
"""
from __future__ import annotations

import inspect
import os
import sysconfig
from dataclasses import dataclass, field

from ..ir import primitives
from ..markers import is_marked_recompute
from ..rules import is_nondifferentiable, rule_for
from ..runtime import derivative_jvp, derivative_vjp
from .parse import ParsedFunction


@dataclass(eq=False)
class LiftedFunction:
    """A nested ``def`` (or lambda) lifted out of its enclosing function: its free locals become parameters."""

    parsed: ParsedFunction
    free: list = field(default_factory=list)
    recompute: bool = False                  # decorated with s2sgrad.recompute
    functions: dict = field(default_factory=dict)   # the nested defs it can call
    parameters: object = None                # its `signatures.Parameters`, defaults as atoms evaluated at its def
    also_returns: tuple = ()                 # parameters it changes in place: it returns (result, *their
    #                                          final versions), and the caller rebinds its variables to them
    statics: dict = field(default_factory=dict)     # parameters bound to the callable values a call gives them
    fields: dict = field(default_factory=dict)   # parameters holding records -> their kinds (see `objects`)

    @property
    def __name__(self):
        return self.parsed.tree.name


def is_user_function(fn) -> bool:
    """Is `fn` transformed itself (rather than applied through a derivative rule)?"""
    if isinstance(fn, LiftedFunction):
        return True
    return inspect.isfunction(fn) and rule_for(fn) is None and not is_nondifferentiable(fn) \
        and fn not in primitives.INTERNAL and not _is_librarys(fn) and not hasattr(fn, "s2sgrad_derivative") \
        and fn is not derivative_vjp and fn is not derivative_jvp


# Where the standard library and installed packages live.
_LIBRARY_DIRECTORIES = tuple(sorted({os.path.join(os.path.realpath(sysconfig.get_paths()[kind]), "")
                                     for kind in ("stdlib", "platstdlib", "purelib", "platlib")}))


def _is_librarys(fn) -> bool:
    """A function of NumPy's own (``np.full`` is Python code), of the standard library or of an installed package:
    one without a rule has none, it is not transformed."""
    if (getattr(fn, "__module__", None) or "").split(".")[0] == "numpy":
        return True
    filename = getattr(getattr(fn, "__code__", None), "co_filename", "")
    found = _LIBRARY_FILES.get(filename)
    if found is None:
        found = _LIBRARY_FILES[filename] = os.path.isabs(filename) and \
            os.path.realpath(filename).startswith(_LIBRARY_DIRECTORIES)
    return found


_LIBRARY_FILES: dict[str, bool] = {}      # a code object's file -> is it the standard library's or a package's?


def is_recomputed(fn) -> bool:
    """Was `fn` marked with s2sgrad.recompute (store its inputs, run it again backwards)?"""
    if isinstance(fn, LiftedFunction):
        return fn.recompute
    return is_marked_recompute(fn)
