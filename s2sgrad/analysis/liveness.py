"""Part of stage 4: the primal statements a gradient's forward sweep can leave out.

`grad` returns gradients, not the function's value. A statement whose value
nothing reads, or only the output does when the output is not returned, is
left out, where leaving it out cannot change what happens: NumPy arithmetic
on arrays of known dtypes whose shapes are known to broadcast (or of a single
array) only warns; it never raises. Loops, branches, calls of user functions, indexing and
anything else always run.

    >>> import numpy as np
    >>> from s2sgrad.analysis.activity import analyze
    >>> from s2sgrad.frontend.lower import lower_function
    >>> def f(x):
    ...     y = np.sin(x)
    ...     z = np.cos(x)
    ...     return np.sum(y * z)
    >>> lowered, _ = lower_function(f)
    >>> analysis = analyze(lowered, ["x"], {"x": (3,)}, arg_dtypes={"x": np.dtype("f8")})
    >>> dead = unneeded(lowered.body, needed={"y", "z"}, analysis=analysis)     # what the gradient reads
    >>> [stmt.target for stmt in lowered.body if id(stmt) in dead]
    ['prod', 'sum_1']
"""
from __future__ import annotations

import operator

import numpy as np

from ..ir.nodes import Assign, Op, Var, reads
from ..ir.primitives import is_elementwise_ufunc
from .activity import TENSOR, Analysis

ARITHMETIC = {operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, operator.neg,
              operator.pos, operator.matmul, np.matmul, np.dot}
REDUCTIONS = {np.sum, np.mean, np.prod}           # (np.max and np.min raise on an empty array)


def unneeded(block: list, needed: set[str], analysis: Analysis) -> set[int]:
    """The ids of the statements of `block` (a function's top level) that only compute values nothing in
    `needed`, nor any statement kept, reads."""
    live = set(needed)
    dead = set()
    for stmt in reversed(block):
        if isinstance(stmt, Assign) and stmt.target not in live and _harmless(stmt.value, stmt.target, analysis):
            dead.add(id(stmt))
        else:
            live |= reads([stmt])
    return dead


def is_scalar_output(name: str, analysis: Analysis) -> bool:
    """Is `name` certainly a real scalar (so no check of the output is needed)?"""
    descriptor = analysis.dtypes.of(Var(name)) if analysis.dtypes is not None else None
    return analysis.kind.get(name) == TENSOR and analysis.shapes.concrete(Var(name)) == () \
        and (isinstance(descriptor, np.dtype) and descriptor.kind in "biuf" or descriptor in (float, int))


def _harmless(value, target: str, analysis: Analysis) -> bool:
    """Is computing `value` pure NumPy arithmetic that cannot raise?"""
    if not isinstance(value, Op) or analysis.dtypes is None:
        return False
    fn = value.fn
    if not (fn in ARITHMETIC or is_elementwise_ufunc(fn) and fn.nout == 1 or fn in REDUCTIONS):
        return False
    if value.kwargs and not (fn in REDUCTIONS and set(value.kwargs) <= {"axis", "keepdims"}):
        return False
    arrays = [target] + [a.name for a in value.args if isinstance(a, Var)]
    if not all(isinstance(analysis.dtypes.of(Var(n)), np.dtype) for n in arrays):
        return False
    # one array argument cannot fail to broadcast; with more, known shapes show that they do
    return len(arrays) <= 2 and fn is not operator.matmul and fn is not np.matmul and fn is not np.dot \
        or all(analysis.shapes.concrete(Var(n)) is not None for n in arrays)


__all__ = ["unneeded", "is_scalar_output"]
