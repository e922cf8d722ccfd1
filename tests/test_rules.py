"""Every derivative rule against central finite differences, on several shapes, axes and broadcasting pairs.

The rules are evaluated directly from the rule table (see rule_harness.py), not through `s2sgrad.grad`.
"""
import ast
import builtins
import collections
import dataclasses
import importlib
import inspect
import math
import operator
import types

import numpy as np
import pytest
from library_rule_cases import CASES as LIBRARY_CASES
from rule_harness import Case, adjoint_name, check_rule

from s2sgrad import runtime
from s2sgrad.ir import primitives
from s2sgrad.rules import is_nondifferentiable, rule_for
from s2sgrad.rules.registry import _RULES, complex_rule_for

# --- argument makers: each takes a random generator ------------------------------

def normal(*shape):
    return lambda rng: rng.standard_normal(shape)


def uniform(low, high, *shape):
    return lambda rng: rng.uniform(low, high, shape)


def away(*shape):
    """Values at least 0.2 away from zero (for abs, sign-dependent rules, divisors)."""
    return lambda rng: rng.choice([-1.0, 1.0], shape) * rng.uniform(0.2, 2.0, shape)


def scalar(low=-1.5, high=1.5):
    """A Python float."""
    return lambda rng: float(rng.uniform(low, high))


def matrix(*shape):
    """Well-conditioned square matrices (a stack of them if `shape` has more than two axes)."""
    return lambda rng: rng.standard_normal(shape) + 3.0 * np.eye(shape[-1])


def arrays(*shapes):
    """A list of arrays."""
    return lambda rng: [rng.standard_normal(s) for s in shapes]


def symmetric(*shape):
    """Symmetric matrices with well-separated eigenvalues (a stack if `shape` has more than two axes)."""
    def make(rng):
        q = np.linalg.qr(rng.standard_normal(shape))[0]
        w = np.arange(shape[-1]) * 1.5 + rng.uniform(-0.3, 0.3, shape[:-1])
        return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)
    return make


def spd(*shape):
    """Symmetric positive-definite matrices."""
    def make(rng):
        b = rng.standard_normal(shape)
        return b @ np.swapaxes(b, -1, -2) + shape[-1] * np.eye(shape[-1])
    return make


def real_spectrum(*shape):
    """Non-symmetric matrices with real, well-separated eigenvalues."""
    def make(rng):
        q = rng.standard_normal(shape) + 2.0 * np.eye(shape[-1])
        w = np.arange(1, shape[-1] + 1) * 1.5 + rng.uniform(-0.3, 0.3, shape[:-1])
        return np.linalg.solve(np.swapaxes(q, -1, -2), np.swapaxes(q * w[..., None, :], -1, -2)).swapaxes(-1, -2)
    return make


def distinct_singular(*shape):
    """Matrices with well-separated nonzero singular values."""
    def make(rng):
        m, n = shape[-2:]
        k = min(m, n)
        u = np.linalg.qr(rng.standard_normal(shape[:-2] + (m, k)))[0]
        v = np.linalg.qr(rng.standard_normal(shape[:-2] + (n, k)))[0]
        s = np.arange(k, 0, -1) * 1.5 + 0.5
        return (u * s) @ np.swapaxes(v, -1, -2)
    return make


def case(primitive, *args, wrt=(0,), name="", **kwargs):
    return Case(primitive, args, kwargs, tuple(wrt), name)


CASES = []


def add(*cases):
    CASES.extend(cases)


# --- elementwise, one argument ----------------------------------------------------

REAL, POS, UNIT, ABOVE1, AWAY = (-1.5, 1.5), (0.3, 2.5), (-0.9, 0.9), (1.2, 3.0), None
UNARY = [
    (np.exp, REAL), (np.exp2, REAL), (np.expm1, REAL), (np.log, POS), (np.log2, POS), (np.log10, POS),
    (np.log1p, POS), (np.sqrt, POS), (np.cbrt, POS), (np.square, REAL), (np.reciprocal, POS),
    (np.sin, REAL), (np.cos, REAL), (np.tan, UNIT), (np.arcsin, UNIT), (np.arccos, UNIT), (np.arctan, REAL),
    (np.sinh, REAL), (np.cosh, REAL), (np.tanh, REAL), (np.arcsinh, REAL), (np.arccosh, ABOVE1),
    (np.arctanh, UNIT), (np.deg2rad, REAL), (np.rad2deg, REAL), (np.radians, REAL), (np.degrees, REAL),
    (np.sinc, REAL),
    (np.negative, REAL), (np.positive, REAL), (np.abs, AWAY), (np.fabs, AWAY), (np.real, REAL),
    (np.conj, REAL),
]
for fn, domain in UNARY:
    for shape in [(), (5,), (3, 4)]:
        maker = away(*shape) if domain is AWAY else uniform(*domain, *shape)
        add(case(fn, maker, name=f"{fn.__name__}-{shape}"))
    maker = (lambda rng: float(away()(rng))) if domain is AWAY else scalar(*domain)
    add(case(fn, maker, name=f"{fn.__name__}-float"))

# --- elementwise, two arguments, with broadcasting -------------------------------

BROADCAST = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((4,), (3, 4)), ((3, 4), ()), ((2, 1, 4), (3, 1))]
BINARY = [
    (np.add, normal, normal), (np.subtract, normal, normal), (np.multiply, normal, normal),
    (np.divide, normal, away), (np.power, lambda *s: uniform(0.5, 2.0, *s), normal),
    (np.float_power, lambda *s: uniform(0.5, 2.0, *s), normal),
    (np.hypot, normal, away), (np.arctan2, normal, away), (np.logaddexp, normal, normal),
    (np.logaddexp2, normal, normal), (np.maximum, normal, normal), (np.minimum, normal, normal),
    (np.fmax, normal, normal), (np.fmin, normal, normal),
    (np.mod, lambda *s: uniform(0.1, 0.9, *s), lambda *s: uniform(1.1, 2.0, *s)),
    (np.fmod, lambda *s: uniform(-0.9, 0.9, *s), lambda *s: uniform(1.1, 2.0, *s)),
    (operator.mod, lambda *s: uniform(0.1, 0.9, *s), lambda *s: uniform(1.1, 2.0, *s)),
    (operator.add, normal, normal), (operator.sub, normal, normal), (operator.mul, normal, normal),
    (operator.truediv, normal, away), (operator.pow, lambda *s: uniform(0.5, 2.0, *s), normal),
]
for fn, make1, make2 in BINARY:
    qualified = ("operator." if getattr(operator, fn.__name__, None) is fn else "") + fn.__name__
    for s1, s2 in BROADCAST:
        add(case(fn, make1(*s1), make2(*s2), wrt=(0, 1), name=f"{qualified}-{s1}-{s2}"))
    add(case(fn, lambda rng, m=make1: float(m()(rng)), lambda rng, m=make2: float(m()(rng)), wrt=(0, 1),
             name=f"{qualified}-floats"))
add(case(np.power, uniform(0.5, 2.0, 3, 4), 3, name="power-int-exponent"),
    # polynomial features at 0: exponent 0 at base 0 has derivative 0 (not 0 * inf)
    case(np.power, lambda rng: np.array([0.0, 0.0, 0.0, 0.7]), np.arange(4.0), name="power-zeros-base-and-exponent"),
    case(operator.pow, lambda rng: np.array([0.0, 0.0, 0.0, 0.7]), np.arange(4), name="operator.pow-zeros-base"),
    case(np.power, uniform(0.5, 2.0, 3, 4), 2.5, name="power-float-exponent"),
    case(operator.neg, normal(3, 4), name="neg"), case(operator.pos, normal(3), name="pos"),
    case(operator.matmul, normal(3, 4), normal(4, 2), wrt=(0, 1), name="matmul-op"))

# where and clip
for cond_shape, s1, s2 in [((3, 4), (3, 4), (3, 4)), ((3, 4), (4,), (3, 1)), ((3, 4), (), (3, 4))]:
    add(case(np.where, lambda rng, s=cond_shape: rng.uniform(size=s) > 0.5, normal(*s1), normal(*s2), wrt=(1, 2),
             name=f"where-{s1}-{s2}"))
add(case(np.where, True, scalar(), scalar(), wrt=(1, 2), name="where-floats"))
add(case(np.clip, normal(3, 4), -0.5, 0.5, name="clip"),
    case(np.clip, normal(3, 4), uniform(-1, -0.1, 4), uniform(0.1, 1, 3, 1), wrt=(0, 1, 2), name="clip-arrays"),
    case(np.clip, normal(3, 4), None, uniform(-0.5, 0.5, 4), wrt=(0, 2), name="clip-upper"),
    case(np.clip, normal(5), wrt=(0, "a_min"), a_min=uniform(-0.6, 0.2, 5), a_max=0.4, name="clip-keywords"),
    case(np.clip, scalar(), -0.2, 0.3, wrt=(0, 1, 2), name="clip-floats"),
    # reversed bounds: NumPy returns a_max wherever a_min > a_max, so a_max alone gets the gradient there
    case(np.clip, normal(3, 4), 0.5, -0.5, wrt=(0, 1, 2), name="clip-reversed"),
    case(np.clip, normal(3, 4), uniform(-1, 1, 4), uniform(-1, 1, 3, 1), wrt=(0, 1, 2), name="clip-mixed-order"),
    case(np.clip, normal(3, 4), uniform(-1, 1, 4), None, wrt=(0, 1), name="clip-lower"))
if np.lib.NumpyVersion(np.__version__) >= "2.1.0":
    add(case(np.clip, normal(3, 4), wrt=(0, "min", "max"), min=uniform(-1, 0, 4), max=uniform(0, 1, 3, 1),
             name="clip-min-max"))

# --- reductions -----------------------------------------------------------------

AXES = [((5,), None, False), ((3, 4), None, False), ((3, 4), None, True), ((3, 4), 0, False), ((3, 4), 1, True),
        ((3, 4), -1, False), ((2, 3, 4), (0, 2), False), ((2, 3, 4), (0, 2), True), ((2, 3, 4), 1, True)]
for fn in [np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.var, np.std]:
    make = (lambda *s: uniform(0.5, 1.5, *s)) if fn is np.prod else normal
    for shape, axis, keepdims in AXES:
        add(case(fn, make(*shape), axis=axis, keepdims=keepdims, name=f"{fn.__name__}-{shape}-{axis}-{keepdims}"))
    add(case(fn, make(3, 4), name=f"{fn.__name__}-default"))
add(case(np.sum, scalar(), name="sum-float"), case(np.mean, scalar(), name="mean-float"),
    case(np.sum, normal(3, 4), 0, name="sum-axis-positional"),
    case(np.var, normal(3, 4), ddof=1, name="var-ddof1"), case(np.std, normal(3, 4), 1, ddof=1, name="std-ddof1"),
    case(np.var, normal(2, 3, 4), (0, 1), None, None, 1, True, name="var-positional"),
    case(np.std, normal(6), ddof=2, keepdims=True, name="std-ddof2"))
for fn in [np.cumsum, np.cumprod]:
    make = (lambda *s: uniform(0.5, 1.5, *s)) if fn is np.cumprod else normal
    for shape, axis in [((5,), None), ((3, 4), None), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), -2)]:
        add(case(fn, make(*shape), axis=axis, name=f"{fn.__name__}-{shape}-{axis}"))
add(case(np.bincount, np.array([0, 2, 2, 5]), wrt=("weights",), weights=normal(4), name="bincount-weights"))


def with_zeros(*shape, at=((0,),)):
    """Normal values with zeros at the given flat positions (products are polynomials: exact there too)."""
    def make(rng):
        a = rng.standard_normal(shape)
        a.flat[[i for (i,) in at]] = 0.0
        return a
    return make


# products with zero entries: the gradient is the product of the other entries, never a division by zero
for zeros in [((1,),), ((1,), (3,)), ((0,), (2,), (5,))]:
    for shape, axis, keepdims in [((6,), None, False), ((2, 3), None, False), ((2, 3), 0, False), ((2, 3), 1, True),
                                  ((2, 3), (0, 1), True)]:
        add(case(np.prod, with_zeros(*shape, at=zeros), axis=axis, keepdims=keepdims,
                 name=f"prod-zeros{len(zeros)}-{shape}-{axis}-{keepdims}"))
    for shape, axis in [((6,), None), ((2, 3), None), ((2, 3), 0), ((2, 3), 1)]:
        add(case(np.cumprod, with_zeros(*shape, at=zeros), axis=axis, name=f"cumprod-zeros{len(zeros)}-{shape}-{axis}"))

# norms
NORMS = [((5,), None, None, False), ((5,), 2, None, False), ((5,), 1, None, False), ((5,), 3, None, False),
         ((5,), 0.5, None, False), ((5,), np.inf, None, False), ((5,), -np.inf, None, False),
         ((3, 4), None, None, False), ((3, 4), None, None, True), ((3, 4), "fro", None, False),
         ((3, 4), None, 0, False), ((3, 4), 2, 1, True), ((3, 4), 1, -1, False), ((3, 4), np.inf, 0, True),
         ((3, 4), "nuc", None, False), ((3, 4), 2, None, False), ((3, 4), -2, None, False),
         ((3, 4), 1, None, False), ((3, 4), -1, None, False), ((3, 4), np.inf, None, False),
         ((3, 4), -np.inf, None, False), ((2, 3, 4), None, None, False), ((2, 3, 4), None, (0, 2), False),
         ((2, 3, 4), "fro", (2, 0), True), ((2, 3, 4), "nuc", (1, 2), False), ((2, 3, 4), 2, (0, 2), True),
         ((2, 3, 4), np.inf, (1, 2), False), ((2, 3, 4), 3, 1, False)]
for shape, ord, axis, keepdims in NORMS:
    add(case(np.linalg.norm, normal(*shape), ord=ord, axis=axis, keepdims=keepdims,
             name=f"norm-{shape}-{ord}-{axis}-{keepdims}"))
add(case(np.linalg.norm, normal(3, 4), 2, name="norm-ord-positional"))

# --- shapes ----------------------------------------------------------------------

add(
    case(np.copy, normal(3, 4), name="copy"), case(np.copy, scalar(), name="copy-float"),
    case(primitives.astype, normal(3, 4), float, name="astype"),
    case(primitives.astype, uniform(-3, 3, 3, 4), int, name="astype-int"),
    case(primitives.astype, normal(3, 4), bool, name="astype-bool"),
    # narrower floats only where their rounding is far below the finite differences' step
    case(primitives.astype, uniform(-1e-5, 1e-5, 3, 4), np.float32, name="astype-float32"),
    case(np.float32, uniform(-1e-5, 1e-5, 3, 4), name="float32"),
    # (np.float16 rounds too coarsely for finite differences: test_float16_cast below)
    case(np.float64, normal(3), name="float64"), case(np.longdouble, normal(3), name="longdouble"),
    case(np.full, (3, 4), scalar(), wrt=(1,), name="full"),
    case(np.full, (3, 4), normal(4), wrt=(1,), name="full-row"),
    case(np.full, (3, 4), scalar(), np.int64, wrt=(1,), name="full-int"),
    case(np.full_like, normal(3, 4), scalar(), wrt=(1,), name="full_like"),
    case(np.full_like, normal(2, 3), normal(3), wrt=(1,), name="full_like-row"),
    case(np.linspace, scalar(), scalar(), 5, wrt=(0, 1), name="linspace"),
    case(np.linspace, scalar(), scalar(), 4, False, wrt=(0, 1), name="linspace-no-endpoint"),
    case(np.linspace, scalar(), scalar(), 1, wrt=(0, 1), name="linspace-one"),
    case(np.linspace, normal(3), normal(2, 1), 4, axis=-1, wrt=(0, 1), name="linspace-arrays-axis"),
    case(np.linspace, normal(3), scalar(), 4, wrt=(0, 1), name="linspace-arrays"),
    case(np.logspace, scalar(), scalar(), 5, wrt=(0, 1), name="logspace"),
    case(np.logspace, normal(2), scalar(), 4, base=uniform(1.5, 3.0, 2), wrt=(0, 1, "base"), name="logspace-base"),
    case(np.geomspace, uniform(0.5, 2, 2), uniform(1, 3, 2), 5, wrt=(0, 1), name="geomspace"),
    case(np.geomspace, scalar(-2, -0.5), scalar(-3, -1), 4, False, wrt=(0, 1), name="geomspace-negative"),
    case(np.arange, scalar(0, 1), 5.0, 0.5, wrt=(0, 2), name="arange"),
    case(np.arange, scalar(0, 1), 4.5, wrt=(0,), name="arange-start"),
    case(np.arange, scalar(3.2, 3.8), wrt=(0,), name="arange-stop"),
    case(np.reshape, normal(3, 4), (2, 6), name="reshape"), case(np.reshape, normal(12), (3, -1), name="reshape-1"),
    case(np.reshape, normal(2, 3, 2), (12,), order="F", name="reshape-F"),
    case(np.ravel, normal(3, 4), name="ravel"), case(np.ravel, normal(3, 4), "F", name="ravel-F"),
    case(np.squeeze, normal(3, 1, 4), name="squeeze"), case(np.squeeze, normal(1, 3, 1), axis=2, name="squeeze-axis"),
    case(np.expand_dims, normal(3, 4), 0, name="expand_dims"),
    case(np.expand_dims, normal(3, 4), (1, -1), name="expand_dims-tuple"),
    case(np.atleast_1d, scalar(), name="atleast_1d"), case(np.atleast_2d, normal(4), name="atleast_2d"),
    case(np.atleast_3d, normal(3, 4), name="atleast_3d"),
    case(np.transpose, normal(3, 4), name="transpose"), case(np.transpose, normal(2, 3, 4), name="transpose-3d"),
    case(np.transpose, normal(2, 3, 4), (2, 0, 1), name="transpose-axes"),
    case(np.transpose, normal(2, 3, 4), axes=(-1, 0, 1), name="transpose-negative"),
    case(np.swapaxes, normal(2, 3, 4), 0, -1, name="swapaxes"),
    case(np.moveaxis, normal(2, 3, 4), 0, -1, name="moveaxis"),
    case(np.moveaxis, normal(2, 3, 4), [0, 1], [2, 0], name="moveaxis-list"),
    case(np.broadcast_to, normal(4), (3, 4), name="broadcast_to"),
    case(np.broadcast_to, normal(3, 1), (2, 3, 4), name="broadcast_to-3d"),
    case(np.broadcast_to, scalar(), (3,), name="broadcast_to-float"),
    case(np.concatenate, arrays((2, 3), (4, 3)), name="concatenate"),
    case(np.concatenate, arrays((2, 3), (2, 1), (2, 2)), axis=1, name="concatenate-axis1"),
    case(np.concatenate, arrays((2, 3), (5,)), axis=None, name="concatenate-none"),
    case(np.concatenate, lambda rng: tuple(arrays((3,), (2,))(rng)), -1, name="concatenate-tuple"),
    case(np.hstack, arrays((3,), (2,)), name="hstack-1d"), case(np.hstack, arrays((2, 3), (2, 1)), name="hstack-2d"),
    case(np.vstack, arrays((3,), (3,)), name="vstack-1d"), case(np.vstack, arrays((2, 3), (1, 3)), name="vstack-2d"),
    case(np.vstack, arrays((2, 3), (3,)), name="vstack-mixed"),
    case(np.vstack, arrays((3,), (3,), (3,)), name="vstack-three-1d"),
    case(np.vstack, arrays((3,), (2, 3), (3,)), name="vstack-1d-2d-1d"),
    case(np.vstack, arrays((), ()), name="vstack-scalars"),
    case(np.hstack, arrays((), (2,)), name="hstack-0d-1d"),
    case(np.hstack, arrays((2, 3, 1), (2, 1, 1)), name="hstack-3d"),
    case(np.dstack, arrays((3,), (3,)), name="dstack-1d"), case(np.dstack, arrays((2, 3), (2, 3)), name="dstack-2d"),
    case(np.dstack, arrays((2, 3, 2), (2, 3), (2, 3, 1)), name="dstack-mixed"),
    case(np.dstack, arrays((), ()), name="dstack-scalars"),
    case(np.column_stack, arrays((3,), (3,)), name="column_stack-1d"),
    case(np.column_stack, arrays((3,), (3, 2), (3,)), name="column_stack-mixed"),
    case(np.column_stack, arrays((3, 1, 2), (3, 2, 2)), name="column_stack-3d"),
    case(np.concatenate, arrays((2, 3, 2), (2, 1, 2)), axis=-2, name="concatenate-negative-axis"),
    case(np.stack, arrays((3,), (3,), (3,)), axis=-1, name="stack-last"),
    *([case(np.row_stack, arrays((3,), (2, 3)), name="row_stack")] if hasattr(np, "row_stack") else []),
    case(np.stack, arrays((3,), (3,)), name="stack"), case(np.stack, arrays((2, 3), (2, 3)), axis=1, name="stack-1"),
    case(np.sort, normal(5), name="sort"), case(np.sort, normal(3, 4), 0, name="sort-axis0"),
    case(np.sort, normal(3, 4), None, name="sort-none"), case(np.sort, normal(2, 3, 4), axis=1, name="sort-3d"),
    case(np.tile, normal(3), 2, name="tile"), case(np.tile, normal(2, 3), (2, 1, 2), name="tile-more-reps"),
    case(np.tile, normal(2, 3, 4), (2, 1), name="tile-fewer-reps"),
    case(np.repeat, normal(2, 3), 2, name="repeat"),
    case(np.repeat, normal(2, 3), [2, 0], axis=0, name="repeat-list"),
    case(np.repeat, normal(2, 3), 3, axis=-1, name="repeat-axis"), case(np.repeat, scalar(), 3, name="repeat-float"),
    case(np.repeat, normal(2, 3), [1, 2, 3], 1, name="repeat-list-axis1"),
    case(np.flip, normal(3, 4), name="flip"), case(np.flip, normal(3, 4), 0, name="flip-0"),
    case(np.flip, normal(2, 3, 4), (0, 2), name="flip-tuple"),
    case(np.fliplr, normal(3, 4), name="fliplr"), case(np.flipud, normal(3, 4), name="flipud"),
    case(np.roll, normal(5), 2, name="roll"), case(np.roll, normal(3, 4), (1, -2), (0, 1), name="roll-axes"),
    case(np.roll, normal(3, 4), 5, name="roll-flat"),
    case(np.diag, normal(4), name="diag-1d"), case(np.diag, normal(3), 1, name="diag-1d-k1"),
    case(np.diag, normal(3), -2, name="diag-1d-k-2"), case(np.diag, normal(4, 4), name="diag-2d"),
    case(np.diag, normal(3, 5), 1, name="diag-2d-k1"), case(np.diag, normal(5, 3), -1, name="diag-2d-k-1"),
    case(np.diag, normal(3, 5), 3, name="diag-2d-k3"),
    case(np.diagonal, normal(3, 4), name="diagonal"),
    case(np.diagonal, normal(3, 4, 5), 1, 2, 0, name="diagonal-axes"),
    case(np.triu, normal(4, 4), name="triu"), case(np.triu, normal(3, 5), 1, name="triu-k1"),
    case(np.triu, normal(2, 4, 4), -1, name="triu-stack"),
    case(np.tril, normal(4, 4), name="tril"), case(np.tril, normal(5, 3), -1, name="tril-k-1"),
    case(np.tril, normal(2, 4, 4), 1, name="tril-stack"),
    case(np.take, normal(5), [0, 0, 3], name="take"), case(np.take, normal(3, 4), [[0, 2], [1, 1]], axis=1,
                                                               name="take-axis"),
    case(np.take, normal(3, 4), [1, 11, 11], name="take-flat"), case(np.take, normal(3, 4), 2, 0, name="take-int"),
    case(np.take, normal(4), [5, -1], mode="wrap", name="take-wrap"),
    case(np.take, normal(4), [7, -3], mode="clip", name="take-clip"),
    case(operator.getitem, normal(4, 3), np.array([0, 0, 2]), name="getitem-repeated"),
    case(operator.getitem, normal(4, 3), (slice(1, 3), 0), name="getitem-slice"),
)
if hasattr(np, "matrix_transpose"):
    add(case(np.matrix_transpose, normal(2, 3, 4), name="matrix_transpose"),
        case(np.linalg.matrix_transpose, normal(3, 4), name="linalg.matrix_transpose"),
        case(np.linalg.diagonal, normal(2, 3, 4), offset=1, name="linalg.diagonal"))

# --- linear algebra ---------------------------------------------------------------

PRODUCTS = [((3, 4), (4, 5)), ((4,), (4,)), ((4,), (4, 5)), ((3, 4), (4,)), ((2, 3, 4), (4, 5)),
            ((2, 3, 4), (2, 4, 5)), ((1, 3, 4), (2, 4, 5)), ((4,), (2, 4, 5)), ((2, 3, 4), (4,))]
for s1, s2 in PRODUCTS:
    add(case(np.matmul, normal(*s1), normal(*s2), wrt=(0, 1), name=f"matmul-{s1}-{s2}"),
        case(operator.matmul, normal(*s1), normal(*s2), wrt=(0, 1), name=f"@-{s1}-{s2}"))
for s1, s2 in [((3, 4), (4, 5)), ((4,), (4,)), ((4,), (4, 5)), ((3, 4), (4,)), ((), (3, 4)), ((3,), ()),
               ((2, 3, 4), (4, 5)), ((2, 3, 4), (5, 4, 6)), ((4,), (5, 4, 6)), ((2, 3, 4), (4,))]:
    add(case(np.dot, normal(*s1), normal(*s2), wrt=(0, 1), name=f"dot-{s1}-{s2}"))
add(case(np.dot, scalar(), scalar(), wrt=(0, 1), name="dot-floats"))
for s1, s2 in [((4,), (4,)), ((3, 4), (5, 4)), ((2, 3, 4), (4,)), ((), (3, 4)), ((2, 4), (3, 2, 4))]:
    add(case(np.inner, normal(*s1), normal(*s2), wrt=(0, 1), name=f"inner-{s1}-{s2}"))
add(case(np.outer, normal(3), normal(4), wrt=(0, 1), name="outer"),
    case(np.outer, normal(2, 2), normal(3), wrt=(0, 1), name="outer-ravel"))
for s1, s2, axes in [((3, 4, 5), (4, 5, 6), 2), ((3, 4), (4, 5), 1), ((3,), (4, 2), 0),
                     ((3, 4), (4, 3), ([1, 0], [0, 1])),
                     ((3, 4, 5), (2, 6, 3), ([0], [2])), ((3, 4, 5), (5, 6, 3), ([2, 0], [0, -1])),
                     ((2, 3), (3, 2), ([-1], [0]))]:
    add(case(np.tensordot, normal(*s1), normal(*s2), axes, wrt=(0, 1), name=f"tensordot-{s1}-{s2}-{axes}"))
add(case(np.tensordot, normal(3, 4), normal(3, 4), wrt=(0, 1), name="tensordot-default"))
EINSUMS = [("ij,jk->ik", (3, 4), (4, 5)), ("ij,jk", (3, 4), (4, 5)), ("i,i", (4,), (4,)), ("i,i->", (4,), (4,)),
           ("ij->ji", (3, 4)), ("ii->i", (4, 4)), ("ii", (4, 4)), ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
           ("...ij,...jk->...ik", (2, 3, 4), (2, 4, 5)), ("...ij,jk", (2, 3, 4), (4, 5)), ("ij,j->i", (3, 4), (4,)),
           ("ij->", (3, 4)), ("i,j->ij", (3,), (4,)), ("ij,jk,kl->il", (2, 3), (3, 4), (4, 2)),
           ("ij,ij->ij", (3, 4), (3, 4)), ("ij,kj->", (3, 4), (2, 4)), ("ij,kj->k", (3, 4), (2, 4)),
           ("iij,j->i", (3, 3, 4), (4,)), ("Ba,a", (2, 3), (3,)), ("i...,i->...", (3, 2, 2), (3,)),
           ("ij, jk -> ik", (3, 4), (4, 5))]
for subscripts, *shapes in EINSUMS:
    add(case(np.einsum, subscripts, *[normal(*s) for s in shapes], wrt=tuple(range(1, len(shapes) + 1)),
             name=f"einsum-{subscripts}"))
add(case(np.linalg.inv, matrix(4, 4), name="inv"), case(np.linalg.inv, matrix(2, 3, 3), name="inv-stack"),
    case(np.linalg.det, matrix(4, 4), name="det"), case(np.linalg.det, matrix(2, 3, 3), name="det-stack"),
    case(np.linalg.slogdet, matrix(4, 4), name="slogdet"),
    case(np.linalg.slogdet, matrix(2, 3, 3), name="slogdet-stack"),
    case(np.linalg.solve, matrix(4, 4), normal(4), wrt=(0, 1), name="solve-vector"),
    case(np.linalg.solve, matrix(4, 4), normal(4, 2), wrt=(0, 1), name="solve-matrix"),
    case(np.linalg.solve, matrix(2, 3, 3), normal(2, 3, 2), wrt=(0, 1), name="solve-stack"),
    case(np.linalg.solve, matrix(3, 3), normal(2, 3, 2), wrt=(0, 1), name="solve-broadcast-a"),
    case(np.trace, normal(4, 4), name="trace"), case(np.trace, normal(3, 5), 1, name="trace-offset"),
    case(np.trace, normal(3, 4, 5), -1, 2, 1, name="trace-axes"))
if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
    add(case(np.linalg.solve, matrix(2, 3, 3), normal(3), wrt=(0, 1), name="solve-stack-vector"),
        case(np.linalg.trace, normal(2, 3, 4), offset=1, name="linalg.trace"),
        case(np.linalg.matmul, normal(2, 3, 4), normal(4, 2), wrt=(0, 1), name="linalg.matmul"),
        case(np.linalg.outer, normal(3), normal(4), wrt=(0, 1), name="linalg.outer"),
        case(np.linalg.tensordot, normal(3, 4), normal(4, 2), axes=1, wrt=(0, 1), name="linalg.tensordot"),
        case(np.vecdot, normal(3, 4), normal(4), wrt=(0, 1), name="vecdot"),
        case(np.vecdot, normal(4, 3), normal(4, 1), axis=0, wrt=(0, 1), name="vecdot-axis0"),
        case(np.linalg.vecdot, normal(2, 3, 4), normal(3, 4), wrt=(0, 1), name="linalg.vecdot"),
        case(np.linalg.cross, normal(4, 3), normal(3), wrt=(0, 1), name="linalg.cross"),
        case(np.linalg.cross, normal(3, 4), normal(3, 4), axis=0, wrt=(0, 1), name="linalg.cross-axis"),
        case(np.linalg.vector_norm, normal(3, 4), name="vector_norm"),
        case(np.linalg.vector_norm, normal(3, 4), ord=3, axis=1, keepdims=True, name="vector_norm-keepdims"),
        case(np.linalg.vector_norm, normal(2, 3, 4), ord=1.5, axis=(0, 2), name="vector_norm-axes"),
        case(np.linalg.vector_norm, away(3, 4), ord=1, name="vector_norm-ord1"),
        case(np.linalg.matrix_norm, normal(3, 4), name="matrix_norm"),
        case(np.linalg.matrix_norm, distinct_singular(2, 3, 4), ord="nuc", keepdims=True, name="matrix_norm-nuc"),
        case(np.linalg.matrix_norm, distinct_singular(3, 4), ord=2, name="matrix_norm-2"),
        case(np.linalg.svdvals, distinct_singular(2, 4, 3), name="svdvals"))


add(case(np.linalg.eigh, symmetric(4, 4), name="eigh"), case(np.linalg.eigh, symmetric(2, 3, 3), name="eigh-stack"),
    case(np.linalg.eigh, symmetric(3, 3), "U", name="eigh-upper"),
    case(np.linalg.eigvalsh, symmetric(4, 4), name="eigvalsh"),
    case(np.linalg.eigvalsh, symmetric(3, 3), UPLO="U", name="eigvalsh-upper"),
    case(np.linalg.eig, real_spectrum(4, 4), name="eig"), case(np.linalg.eig, real_spectrum(2, 3, 3), name="eig-stack"),
    case(np.linalg.eig, symmetric(3, 3), name="eig-symmetric"),
    case(np.linalg.eigvals, real_spectrum(3, 3), name="eigvals"),
    case(np.linalg.eigvals, normal(4, 4), name="eigvals-complex-spectrum"),
    case(np.linalg.cholesky, spd(4, 4), name="cholesky"), case(np.linalg.cholesky, spd(2, 3, 3), name="cholesky-stack"),
    case(np.linalg.cholesky, spd(3, 3), upper=True, name="cholesky-upper"),
    case(np.linalg.svd, distinct_singular(4, 3), full_matrices=False, name="svd-thin-tall"),
    case(np.linalg.svd, distinct_singular(3, 5), full_matrices=False, name="svd-thin-wide"),
    case(np.linalg.svd, distinct_singular(3, 3), name="svd-square"),
    case(np.linalg.svd, distinct_singular(2, 4, 3), full_matrices=False, name="svd-stack"),
    case(np.linalg.svd, distinct_singular(4, 3), compute_uv=False, name="svd-values"),
    case(np.linalg.svd, distinct_singular(3, 4), False, False, name="svd-values-wide"),
    case(np.linalg.pinv, distinct_singular(4, 3), name="pinv-tall"),
    case(np.linalg.pinv, distinct_singular(3, 5), name="pinv-wide"),
    case(np.linalg.pinv, matrix(2, 3, 3), name="pinv-stack"),
    case(np.linalg.matrix_power, matrix(3, 3), 3, name="matrix_power"),
    case(np.linalg.matrix_power, matrix(3, 3), 1, name="matrix_power-one"),
    case(np.linalg.matrix_power, matrix(3, 3), 0, name="matrix_power-zeros"),
    case(np.linalg.matrix_power, matrix(2, 3, 3), -2, name="matrix_power-negative"),
    case(np.linalg.tensorinv, lambda rng: np.reshape(rng.standard_normal((6, 6)) + 3 * np.eye(6), (2, 3, 6)), 2,
         name="tensorinv"),
    case(np.linalg.tensorinv, lambda rng: np.reshape(rng.standard_normal((4, 4)) + 3 * np.eye(4), (4, 2, 2)), 1,
         name="tensorinv-ind1"),
    case(np.linalg.tensorsolve, lambda rng: np.reshape(rng.standard_normal((6, 6)) + 3 * np.eye(6), (2, 3, 6)),
         normal(2, 3), wrt=(0, 1), name="tensorsolve"),
    case(np.linalg.tensorsolve, lambda rng: np.reshape(rng.standard_normal((6, 6)) + 3 * np.eye(6), (6, 2, 3)),
         normal(2, 3), axes=(0,), wrt=(0, 1), name="tensorsolve-axes"),
    case(np.linalg.multi_dot, arrays((2, 3), (3, 4), (4, 2)), name="multi_dot"),
    case(np.linalg.multi_dot, arrays((3,), (3, 4), (4, 2), (2,)), name="multi_dot-1d"),
    case(np.vdot, normal(3, 2), normal(6), wrt=(0, 1), name="vdot"),
    case(np.kron, normal(2, 3), normal(3, 2), wrt=(0, 1), name="kron"),
    case(np.kron, normal(3), normal(2, 2), wrt=(0, 1), name="kron-mixed"),
    case(np.cross, normal(4, 3), normal(3), wrt=(0, 1), name="cross"),
    case(np.cross, normal(3, 2), normal(3, 2), wrt=(0, 1), name="cross-2d"),
    case(np.cross, normal(2), normal(3), wrt=(0, 1), name="cross-mixed"),
    case(np.cross, normal(3, 4), normal(3, 4), axis=0, wrt=(0, 1), name="cross-axis"),
    case(np.cross, normal(3, 4), normal(4, 3), axisa=0, axisc=0, wrt=(0, 1), name="cross-axes"))


# --- np.fft: complex results of real arguments; complex arguments where the transform takes them ----------

def cnormal(*shape):
    return lambda rng: rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


fft = np.fft
for fn in (fft.fft, fft.ifft):
    name = fn.__name__
    add(case(fn, normal(8), name=name), case(fn, normal(8), n=6, name=f"{name}-n-short"),
        case(fn, normal(5), n=8, name=f"{name}-n-long"), case(fn, normal(5, 3), axis=0, name=f"{name}-axis"),
        case(fn, normal(2, 6), norm="ortho", name=f"{name}-ortho"), case(fn, normal(6), norm="forward",
                                                                         name=f"{name}-forward"),
        case(fn, cnormal(6), name=f"{name}-complex"))
for fn in (fft.fft2, fft.ifft2, fft.fftn, fft.ifftn):
    name = fn.__name__
    add(case(fn, normal(4, 5), name=name), case(fn, normal(3, 4), s=(5, 3), name=f"{name}-s"),
        case(fn, normal(3, 2, 4), axes=(0, 2), norm="ortho", name=f"{name}-axes"),
        case(fn, cnormal(3, 4), norm="forward", name=f"{name}-complex"))
add(case(fft.fftn, normal(2, 3, 4), name="fftn-3d"), case(fft.fftn, normal(2, 3, 4), s=(4, 2), name="fftn-s-last"))
for fn in (fft.rfft, fft.ihfft):
    name = fn.__name__
    add(case(fn, normal(8), name=name), case(fn, normal(7), name=f"{name}-odd"),
        case(fn, normal(8), n=5, name=f"{name}-n-short"), case(fn, normal(5), n=8, name=f"{name}-n-long"),
        case(fn, normal(6, 3), axis=0, norm="ortho", name=f"{name}-axis"),
        case(fn, normal(6), norm="forward", name=f"{name}-forward"))
for fn in (fft.irfft, fft.hfft):
    name = fn.__name__
    add(case(fn, normal(5), name=name), case(fn, cnormal(5), name=f"{name}-complex"),
        case(fn, cnormal(5), n=7, name=f"{name}-n-odd"), case(fn, cnormal(5), n=4, name=f"{name}-n-short"),
        case(fn, cnormal(5), n=12, name=f"{name}-n-long"),
        case(fn, cnormal(4, 3), axis=0, norm="ortho", name=f"{name}-axis"),
        case(fn, cnormal(5), norm="forward", name=f"{name}-forward"))
for fn in (fft.rfft2, fft.rfftn):
    name = fn.__name__
    add(case(fn, normal(4, 6), name=name), case(fn, normal(4, 5), s=(3, 7), name=f"{name}-s"),
        case(fn, normal(3, 2, 4), axes=(0, 2), norm="ortho", name=f"{name}-axes"))
for fn in (fft.irfft2, fft.irfftn):
    name = fn.__name__
    add(case(fn, normal(4, 3), name=name), case(fn, cnormal(4, 4), name=f"{name}-complex"),
        case(fn, cnormal(4, 3), s=(3, 5), name=f"{name}-s"),
        case(fn, cnormal(3, 2, 4), axes=(0, 2), norm="forward", name=f"{name}-axes"))
add(case(np.real_if_close, normal(3), name="real_if_close"),
    case(np.imag, normal(3), name="imag"), case(np.angle, away(4), name="angle"),
    case(np.angle, away(4), deg=True, name="angle-deg"))
for fn in (fft.fftshift, fft.ifftshift):
    name = fn.__name__
    add(case(fn, normal(5), name=name), case(fn, normal(4, 5), axes=0, name=f"{name}-axis"),
        case(fn, cnormal(3, 5), name=f"{name}-complex"))

# --- math module and builtins -----------------------------------------------------

MATH = [(math.exp, REAL), (math.expm1, REAL), (math.log, POS), (math.log1p, POS), (math.log2, POS),
        (math.log10, POS), (math.sqrt, POS), (math.fabs, (0.2, 2.0)), (math.fabs, (-2.0, -0.2)), (math.sin, REAL),
        (math.cos, REAL), (math.tan, UNIT), (math.asin, UNIT), (math.acos, UNIT), (math.atan, REAL),
        (math.sinh, REAL), (math.cosh, REAL), (math.tanh, REAL), (math.asinh, REAL), (math.acosh, ABOVE1),
        (math.atanh, UNIT), (math.degrees, REAL), (math.radians, REAL), (math.erf, REAL), (math.erfc, REAL),
        (builtins.abs, (-2.0, -0.2)), (builtins.float, REAL)]
if hasattr(math, "cbrt"):
    MATH += [(math.cbrt, POS), (math.exp2, REAL)]
for fn, domain in MATH:
    for seed_shift in range(2):
        add(case(fn, scalar(*domain), name=f"math.{fn.__name__}-{domain}-{seed_shift}"))
add(case(math.log, scalar(*POS), scalar(1.5, 4.0), wrt=(0, 1), name="math.log-base"),
    case(math.pow, scalar(*POS), scalar(*REAL), wrt=(0, 1), name="math.pow"),
    case(math.pow, scalar(-2.0, -0.5), 3.0, name="math.pow-negative-base"),
    case(math.atan2, scalar(), scalar(0.2, 2.0), wrt=(0, 1), name="math.atan2"),
    case(math.atan2, scalar(), scalar(-2.0, -0.2), wrt=(0, 1), name="math.atan2-negative-x"),
    case(math.hypot, scalar(), scalar(0.2, 1.0), wrt=(0, 1), name="math.hypot"),
    case(math.hypot, scalar(), scalar(), scalar(0.2, 1.0), wrt=(0, 1, 2), name="math.hypot-3"),
    case(math.copysign, scalar(0.2, 2.0), -1.0, name="math.copysign"),
    case(builtins.abs, away(3, 4), name="builtins.abs-array"),
    case(builtins.pow, scalar(*POS), scalar(), wrt=(0, 1), name="builtins.pow-floats"),
    case(builtins.pow, uniform(0.5, 2.0, 3, 4), normal(4), wrt=(0, 1), name="builtins.pow-arrays"))

# --- containers ---------------------------------------------------------------------

add(case(np.array, arrays((3,), (3,)), name="array-list"),
    case(np.asarray, normal(3, 4), name="asarray"),
    case(np.asarray, uniform(-3, 3, 3, 4), dtype=int, name="asarray-int"),
    case(np.array, uniform(-3, 3, 3, 4), np.int32, name="array-int32"),
    case(np.array, uniform(-1e-5, 1e-5, 3, 4), np.float32, name="array-float32"),
    case(np.array, arrays((3,), (3,)), int, name="array-list-int"),
    case(builtins.sum, arrays((3,), (3,), (3,)), name="builtin-sum"),
    case(builtins.sum, normal(4, 3), name="builtin-sum-array"),
    case(primitives.seq_setitem, arrays((3,), (2,)), 1, normal(4), wrt=(0, 2), name="seq_setitem"),
    case(primitives.seq_setitem, arrays((3,), (2,), (1,)), slice(0, 2), arrays((4,)), wrt=(0, 2),
         name="seq_setitem-slice"),
    case(primitives.seq_concat, arrays((3,), (2,)), arrays((4,)), wrt=(0, 1), name="seq_concat"),
    case(primitives.seq_repeat, arrays((3,), (2,)), 3, name="seq_repeat"),
    case(primitives.list_append, arrays((3,), (2,)), normal(4), wrt=(0, 1), name="list_append"),
    case(primitives.seq_getitem, arrays((3,), (2,)), 1, name="seq_getitem"),
    case(primitives.setitem, normal(4, 3), slice(1, 3), normal(2, 3), wrt=(0, 2), name="setitem-slice"),
    case(primitives.setitem, normal(4, 3), (0, slice(None)), normal(3), wrt=(0, 2), name="setitem-row"),
    case(primitives.setitem, normal(5), np.array([0, 2]), scalar(), wrt=(0, 2), name="setitem-broadcast"))

# dicts, unpacking, calls bound as Python binds them, records (an adjoint: a dict of the keys or fields given one)
@dataclasses.dataclass
class Layer:
    W: np.ndarray
    b: float
    n: int


Point = collections.namedtuple("Point", "x y")


def mapping(**shapes):
    """A dict of arrays of the given shapes."""
    return lambda rng: {k: rng.standard_normal(s) for k, s in shapes.items()}


def layer(n=3):
    return lambda rng: Layer(rng.standard_normal(n), float(rng.standard_normal()), 2)


ARGS_AND_KWARGS = (("a", 1), ("b", 11), ("c", 13), ("kw", 4))
add(case(runtime.make_dict, ("a", "b"), arrays((3,), ()), wrt=(1,), name="make_dict"),
    case(runtime.make_dict, ("a", "b", "a"), arrays((3,), (2,), (4,)), wrt=(1,), name="make_dict-repeats"),
    case(runtime.dict_get, mapping(a=(3,), b=(2,)), "a", normal(3), wrt=(0, 2), name="dict_get"),
    case(runtime.dict_get, mapping(a=(3,)), "c", normal(2), wrt=(0, 2), name="dict_get-default"),
    case(runtime.dict_without, mapping(a=(3,), b=(2,), c=()), ("a",), name="dict_without"),
    case(runtime.dict_values, mapping(a=(3,), b=(2,)), name="dict_values"),
    case(runtime.dict_items, mapping(a=(3,), b=(2,)), name="dict_items"),
    case(runtime.unpack_starred, arrays((3,), (2,), (4,), (1,)), 1, 1, "list", name="unpack_starred"),
    case(runtime.unpack_starred, normal(4, 2), 1, 0, "tuple", name="unpack_starred-array"),
    case(runtime.unpack_starred, arrays((3,), (2,)), 2, 0, None, name="unpack_starred-none"),
    case(runtime.unpack_filled, arrays((3,)), 1, arrays((2,), (4,)), wrt=(0, 2), name="unpack_filled"),
    case(runtime.unpack_filled, arrays((3,), (2,)), 1, arrays((2,), (4,)), wrt=(0, 2), name="unpack_filled-one"),
    case(runtime.bind_call, ARGS_AND_KWARGS, arrays((3,)), mapping(z=(2,)), arrays((4,), ()), wrt=(1, 2, 3),
         name="bind_call"),
    case(runtime.bind_call, (("a", 1), ("rest", 2)), arrays((3,), (2,), ()), {}, (), name="bind_call-varargs",
         wrt=(1,)),
    case(runtime.read_after_loop, normal(3), "x", name="read_after_loop"),
    case(primitives.attribute, layer(), "W", name="attribute"),
    case(primitives.attribute, layer(), "b", name="attribute-float"),
    case(runtime.as_named, Point, arrays((3,), ()), wrt=(1,), name="as_named"),
    case(runtime.with_field, layer(), "W", normal(4), wrt=(0, 2), name="with_field"),
    case(runtime.with_field, layer(), "b", scalar(), wrt=(0, 2), name="with_field-float"))

# Python's builtins that pick, order or regroup values (ties share; a key gives it to the one returned)
def floats(n):
    """A list of Python floats."""
    return lambda rng: [float(v) for v in rng.standard_normal(n)]


for fn in [builtins.max, builtins.min]:
    name = fn.__name__
    add(case(fn, scalar(), scalar(), wrt=(0, 1), name=f"builtin-{name}-2"),
        case(fn, scalar(), scalar(), scalar(), wrt=(0, 1, 2), name=f"builtin-{name}-3"),
        case(fn, normal(5), name=f"builtin-{name}-array"),
        case(fn, floats(4), name=f"builtin-{name}-list"),
        case(fn, arrays((), (), ()), name=f"builtin-{name}-list-0d"),
        case(fn, scalar(), normal(1), wrt=(0, 1), name=f"builtin-{name}-float-and-size-1"),
        case(fn, scalar(), scalar(), key=abs, wrt=(0, 1), name=f"builtin-{name}-key"),
        case(fn, [], default=scalar(), name=f"builtin-{name}-default", wrt=("default",)),
        case(fn, 1.0, 1.0, 0.5, name=f"builtin-{name}-tie-constants"),
        case(runtime.keyed_extremum, fn, normal(4), floats(4), wrt=(1,), name=f"keyed_extremum-{name}"),
        case(runtime.keyed_extremum, fn, [], [], True, scalar(), wrt=(4,), name=f"keyed_extremum-{name}-default"))
add(case(builtins.sorted, normal(5), name="builtin-sorted-array"),
    case(builtins.sorted, floats(4), reverse=True, name="builtin-sorted-reverse"),
    case(builtins.sorted, floats(4), key=abs, name="builtin-sorted-key"),
    case(runtime.sorted_by_keys, floats(4), floats(4), True, name="sorted_by_keys"),
    case(builtins.list, normal(4), name="builtin-list-array"),
    case(builtins.list, arrays((3,), (2,)), name="builtin-list-list"),
    case(builtins.tuple, normal(3, 2), name="builtin-tuple-rows"),
    case(builtins.divmod, uniform(0.5, 2.0, 4), uniform(0.3, 0.4), wrt=(0, 1), name="builtin-divmod-array"),
    case(builtins.divmod, scalar(0.5, 2.0), scalar(0.3, 0.4), wrt=(0, 1), name="builtin-divmod-floats"),
    case(runtime.first_item, arrays((3,), (2,)), name="first_item-list"),
    case(runtime.first_item, normal(3), name="first_item-array"),
    case(math.prod, floats(4), name="math.prod-list"),
    case(math.prod, normal(4), name="math.prod-array"),
    case(math.prod, arrays((3,), (3,)), start=scalar(), wrt=(0, "start"), name="math.prod-start"),
    case(math.fsum, floats(4), name="math.fsum-list"),
    case(math.fsum, normal(4), name="math.fsum-array"),
    case(np.imag, normal(3), name="imag-real"))

# NumPy's in-place functions, lowered as functional writes: repeated indices accumulate; ties share
for fn in [runtime.add_at, runtime.subtract_at, runtime.maximum_at, runtime.minimum_at]:
    add(case(fn, normal(5), np.array([0, 2, 2, 4, 2]), normal(5), wrt=(0, 2), name=f"{fn.__name__}-repeats"),
        case(fn, normal(4, 3), np.array([1, 1, 3]), normal(3), wrt=(0, 2), name=f"{fn.__name__}-rows-broadcast"),
        case(fn, normal(4, 3), (np.array([0, 3, 0]), np.array([2, 1, 2])), normal(3), wrt=(0, 2),
             name=f"{fn.__name__}-pairs"),
        case(fn, normal(5), np.array([1, 1]), scalar(), wrt=(0, 2), name=f"{fn.__name__}-float"))
add(case(runtime.as_column, normal(3), name="as_column-1d"), case(runtime.as_column, scalar(), name="as_column-float"),
    case(runtime.as_column, normal(2, 3), name="as_column-2d"))

# NumPy's Python-level functions and SciPy's (tests/library_rule_cases.py)
add(*LIBRARY_CASES)


def _id(c):
    return c.name or getattr(c.primitive, "__name__", "?")


def _param(c):
    return pytest.param(c, id=_id(c))


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_rule_matches_finite_differences(case):
    for seed in (0, 1):
        check_rule(case, seed)


# --- complex values: the rules that hold for them, on complex versions of the cases above ---------------------

REAL_ONLY = (np.fft.rfft, np.fft.rfft2, np.fft.rfftn, np.fft.ihfft)     # (NumPy refuses complex signals)


def complexified(maker):
    """A maker of complex values like those `maker` makes (float arrays and numbers get an imaginary part)."""
    if not isinstance(maker, types.FunctionType):
        return maker

    def make(rng):
        value, other = maker(rng), maker(rng)
        if isinstance(value, list):
            return [v + 0.3j * w if np.asarray(v).dtype.kind == "f" else v for v, w in zip(value, other)]
        if isinstance(value, (float, np.ndarray)) and np.asarray(value).dtype.kind == "f":
            return value + 0.3j * other
        return value
    return make


def _first_of_each(cases):
    seen = set()
    return [c for c in cases if id(c.primitive) not in seen and not seen.add(id(c.primitive))]


# the first case of each function whose rule holds for complex values, with complex values
COMPLEX_CASES = [Case(c.primitive, tuple(map(complexified, c.args)), {k: complexified(v) for k, v in c.kwargs.items()},
                      c.wrt, f"{_id(c)}-complex")
                 for c in _first_of_each(c for c in CASES if complex_rule_for(c.primitive) is not None
                                         and c.primitive not in REAL_ONLY
                                         and not any(isinstance(a, type) for a in c.args))]
COMPLEX_CASES += [case(np.absolute, cnormal(3, 4), name="absolute-complex-own"),
                  case(np.imag, cnormal(3), name="imag-complex-own"), case(np.angle, cnormal(4), name="angle-complex"),
                  case(np.angle, cnormal(4), deg=True, name="angle-complex-deg"),
                  case(builtins.abs, cnormal(3), name="builtins.abs-complex")]


@pytest.mark.parametrize("case", [_param(c) for c in COMPLEX_CASES])
def test_complex_rule_matches_finite_differences(case):
    check_rule(case, 0, complex_rule_for(case.primitive))


def test_case_names_unique():
    names = [_id(c) for c in CASES]
    assert len(names) == len(set(names))


# --- coverage: every primitive the issue lists has a rule or is declared nondifferentiable ---

REQUIRED_RULES = [
    operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, operator.matmul, operator.neg,
    np.exp, np.exp2, np.log, np.log2, np.log10, np.log1p, np.expm1, np.sqrt, np.cbrt, np.square, np.reciprocal,
    np.sin, np.cos, np.tan, np.arcsin, np.arccos, np.arctan, np.arctan2, np.sinh, np.cosh, np.tanh, np.abs,
    np.absolute, np.fabs, np.maximum, np.minimum, np.fmax, np.fmin, np.where, np.clip, np.power, np.hypot,
    np.logaddexp, np.logaddexp2, np.add, np.subtract, np.multiply, np.divide, np.true_divide, np.negative,
    np.positive, np.sinc, np.real, np.conj,
    np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.var, np.std, np.cumsum, np.cumprod,
    np.dot, np.matmul, np.inner, np.outer, np.tensordot, np.einsum,
    np.copy, primitives.astype, np.transpose, np.swapaxes, np.moveaxis, np.reshape, np.ravel, np.squeeze,
    np.expand_dims, np.concatenate, np.stack, np.hstack, np.vstack, np.broadcast_to, np.tile, np.repeat, np.flip,
    np.diag, np.trace, np.triu, np.tril, np.take,
    np.linalg.norm, np.linalg.inv, np.linalg.det, np.linalg.slogdet, np.linalg.solve,
    math.sin, math.cos, math.tan, math.asin, math.acos, math.atan, math.atan2, math.sinh, math.cosh, math.tanh,
    math.exp, math.expm1, math.log, math.log1p, math.log2, math.log10, math.sqrt, math.pow, math.hypot,
    math.fabs, math.erf, math.erfc,
]
REQUIRED_NONDIFFERENTIABLE = [
    np.shape, np.ndim, np.size, np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like, np.eye, np.identity, np.argmax, np.argmin, np.argsort, np.sign, np.floor, np.ceil,
    np.round, np.around, np.rint, np.trunc, np.equal, np.not_equal, np.less, np.less_equal, np.greater,
    np.greater_equal, np.logical_and, np.logical_or, np.logical_not, np.logical_xor, np.isclose, np.allclose,
    np.searchsorted, np.isnan, np.isinf, np.isfinite, np.all, np.any, np.nonzero, np.count_nonzero,
    operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne, operator.not_,
    math.floor, math.ceil, math.isnan, builtins.len, builtins.range, builtins.int, builtins.round,
    np.random.rand, np.random.randn, np.random.default_rng, np.int32, np.int64, np.bool_,
]


@pytest.mark.parametrize("primitive", REQUIRED_RULES, ids=lambda p: getattr(p, "__name__", str(p)))
def test_required_rule_exists(primitive):
    assert rule_for(primitive) is not None


@pytest.mark.parametrize("primitive", REQUIRED_NONDIFFERENTIABLE, ids=lambda p: getattr(p, "__name__", str(p)))
def test_required_nondifferentiable(primitive):
    assert is_nondifferentiable(primitive) and rule_for(primitive) is None


def test_float16_cast():
    """``np.float16(x)``: the gradient is the incoming one cast back to x's dtype."""
    import s2sgrad as sg
    x = np.array([0.5, -1.25, 2.0])
    g = sg.grad(lambda x: np.sum(np.float16(x) * np.array([1.0, 2.0, 3.0])))(x)
    assert g.dtype == np.float64 and g.tolist() == [1.0, 2.0, 3.0]


HAND_CHECKED = {id(np.float16)}


def test_every_rule_is_tested():
    tested = {id(c.primitive) for c in CASES} | HAND_CHECKED
    untested = [r.primitive for r in _RULES.values() if id(r.primitive) not in tested]
    assert not untested, f"rules without a finite-difference case: {untested}"


def test_nothing_is_both_rule_and_nondifferentiable():
    from s2sgrad.rules.registry import _NONDIFFERENTIABLE
    assert not set(_RULES) & set(_NONDIFFERENTIABLE)


# --- the form of the templates ------------------------------------------------------

OWN_MODULES = ["ufuncs", "reductions", "shapes", "linalg", "decompositions", "fft", "math_scalar", "arrangements",
               "scipy_special", "scipy_stats", "scipy_signal"]
OWN_RULES = [r for r in {id(r.template): r for r in _RULES.values()}.values()
             if r.template.__module__.rsplit(".", 1)[-1] in OWN_MODULES]


@pytest.mark.parametrize("rule", OWN_RULES,
                         ids=lambda r: f"{r.template.__module__.rsplit('.', 1)[-1]}.{r.template.__name__}")
def test_template_form(rule):
    """Straight-line assignments that read only parameters, d, np, math, the runtime and their own temporaries."""
    params = set(rule.signature.parameters)
    allowed = params | {rule.output, "d", "np", "math", "no_derivative"} | set(runtime.__all__)
    assigned = set()
    for stmt in rule.body:
        assert isinstance(stmt, ast.Assign) and len(stmt.targets) == 1, ast.unparse(stmt)
        target = stmt.targets[0]
        name = adjoint_name(target)
        assert name in params if name is not None else isinstance(target, ast.Name), ast.unparse(stmt)
        bound = {n.id for comp in ast.walk(stmt.value) if isinstance(comp, ast.comprehension)
                 for n in ast.walk(comp.target) if isinstance(n, ast.Name)}
        for node in ast.walk(stmt.value):
            if isinstance(node, ast.Name):
                assert node.id in allowed | assigned | bound, f"{node.id!r} in {ast.unparse(stmt)}"
            if adjoint_name(node) is not None:
                assert adjoint_name(node) == rule.output, ast.unparse(stmt)
        if name is None:
            assigned.add(target.id)


def test_runtime_helpers_documented():
    for name in runtime.__all__:
        assert inspect.getdoc(getattr(runtime, name)), name


def test_rule_modules_import_cleanly():
    for module in OWN_MODULES + ["nondifferentiable"]:
        importlib.import_module(f"s2sgrad.rules.{module}")
