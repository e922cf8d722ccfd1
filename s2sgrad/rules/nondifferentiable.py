"""Functions with no gradient: their results are integers, booleans, shapes, dtypes, fresh
constants, random draws, or piecewise constant (sign, floor, round). No gradient flows
through a call of one of them. Every other function without a rule is refused where a
gradient would flow through it.

A function whose result moves smoothly with one of its float arguments is not listed, even
if it is often called with constants: `np.unique` (its values are the argument's), the draws
`np.random.normal(loc, scale)`, `uniform(low, high)` and `exponential(scale)`. Called on an
active value, such a function is refused for want of a rule, never given a zero gradient.

Names are listed as strings so that a function missing from the installed NumPy or
Python is skipped rather than an error.
"""
import builtins
import math

import numpy as np

from .. import runtime
from ..errors import NoDerivativeRule
from ..ir import primitives
from ..markers import stop_gradient
from .registry import nondifferentiable

_NUMPY = """
    shape ndim size result_type can_cast promote_types min_scalar_type iscomplexobj isrealobj
    isscalar issubdtype broadcast_shapes iterable
    zeros ones empty zeros_like ones_like empty_like eye identity tri indices diag_indices diag_indices_from
    tril_indices triu_indices
    tril_indices_from triu_indices_from mask_indices ravel_multi_index unravel_index
    argmax argmin nanargmax nanargmin argsort argpartition argwhere lexsort searchsorted digitize
    nonzero flatnonzero count_nonzero isin
    sign signbit floor ceil round around rint trunc fix floor_divide heaviside spacing
    isnan isinf isfinite isneginf isposinf isreal iscomplex isnat
    equal not_equal less less_equal greater greater_equal isclose allclose array_equal array_equiv
    logical_and logical_or logical_not logical_xor all any
    bitwise_and bitwise_or bitwise_xor bitwise_not invert left_shift right_shift
    gcd lcm
    bool bool_ int8 int16 int32 int64 intp uint8 uint16 uint32 uint64 uintp
"""
_NUMPY_RANDOM = """
    seed rand randn randint random random_sample ranf sample standard_normal
    binomial poisson default_rng get_state set_state
"""
_BUILTINS = """
    len range int bool isinstance issubclass type hasattr callable
    print round ord chr all any
"""
# Not among them: zip and enumerate, whose results hold their arguments' values (lowering rewrites them, as loop
# headers and as values, before this matters); str, repr, format, ascii, hash and id (and f-strings) of a
# differentiated value give text or an identity that the program may turn back into a number (float(str(x))); a
# zero gradient would be wrong, so they have no rule, and a gradient flowing through one is refused (see `OPAQUE`).
_MATH = """
    floor ceil trunc isnan isinf isfinite isclose factorial gcd lcm comb perm isqrt
"""


def _existing(module, names: str) -> list:
    return [getattr(module, name) for name in names.split() if hasattr(module, name)]


nondifferentiable(
    *_existing(np, _NUMPY),
    *_existing(np.random, _NUMPY_RANDOM),
    *_existing(builtins, _BUILTINS),
    *_existing(math, _MATH),
)

# Functions whose results are values of some arguments only (np.unique's, heaviside's value at 0, a draw's
# location and scale; with a rule, the items a key picked or ordered, not the keys): without a rule a derivative
# through those is not zero and is refused; with respect to the others they have none. `value_arguments` gives
# the atoms passed to those.
VALUE_ARGUMENTS = {
    np.unique: lambda ar, *_, **__: [ar],
    np.heaviside: lambda x1, x2, *_, **__: [x2],
    np.random.normal: lambda loc=None, scale=None, *_, **__: [v for v in (loc, scale) if v is not None],
    np.random.uniform: lambda low=None, high=None, *_, **__: [v for v in (low, high) if v is not None],
    np.random.exponential: lambda scale=None, *_, **__: [scale] if scale is not None else [],
    runtime.keyed_extremum: lambda fn, items, keys, has_default=False, default=None:
        [v for v in (items, default) if v is not None],
    runtime.sorted_by_keys: lambda items, keys, reverse=False: [items],
}


def value_arguments(op) -> list | None:
    """The arguments of `op` (a call of one of `VALUE_ARGUMENTS`) its result takes values from, else None."""
    spec = next((v for f, v in VALUE_ARGUMENTS.items() if f is op.fn), None)
    if spec is None:
        return None
    try:
        return list(spec(*op.args, **op.kwargs))
    except TypeError:
        return [*op.args, *op.kwargs.values()]


OPAQUE = {str, repr, format, ascii, hash, id, runtime.format_string}   # refused with a message of their own

nondifferentiable(primitives.both, primitives.either, primitives.not_in, runtime.dict_keys, np.ndindex, stop_gradient)


def opaque_call_error(fn, loc):
    """The refusal of a derivative through `fn`, one of `OPAQUE`, or None for any other function."""
    if not any(fn is f for f in OPAQUE):
        return None
    label = "an f-string" if fn is runtime.format_string else f"{fn.__name__}()"
    return NoDerivativeRule(f"{label} of a differentiated value gives text or an identity, through which no "
                            "derivative can be followed", loc,
                            "compute with the number itself, or wrap the value in sg.stop_gradient(...) "
                            "if no derivative should flow through it")
