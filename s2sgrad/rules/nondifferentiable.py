"""Functions with no gradient: their results are integers, booleans, shapes, dtypes, fresh
constants, random draws, or piecewise constant (sign, floor, round). No gradient flows
through a call of one of them.

Names are listed as strings so that a function missing from the installed NumPy or
Python is skipped rather than an error.
"""
import builtins
import math

import numpy as np

from .. import primitives
from .registry import nondifferentiable

_NUMPY = """
    shape ndim size result_type can_cast promote_types min_scalar_type iscomplexobj isrealobj
    isscalar issubdtype broadcast_shapes iterable
    zeros ones empty zeros_like ones_like empty_like eye identity tri indices diag_indices diag_indices_from tril_indices triu_indices
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
    len range int bool str repr format isinstance issubclass type hasattr callable id hash
    print enumerate zip round ord chr all any
"""
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

nondifferentiable(primitives.both, primitives.either, primitives.not_in)
