"""Rules for NumPy's elementwise functions.

Unary ufuncs name their argument `x`, binary ones `x1` and `x2`, as NumPy does.
An argument of a binary function may have been broadcast, so its gradient is
summed back to its shape with `unbroadcast` (which does nothing when the shapes agree).
Most are a line of `tables`: the partial of each argument, from which both the
adjoint and the tangent template are made; ``scalar=`` gives the `math` twin the
same rules (``math.sin`` gets ``d[x] = d[y] * math.cos(x)``).
"""
import builtins
import math
import operator

import numpy as np

from ..runtime import clip_choice, divide_or_zero, unbroadcast
from .registry import adjoint, complex_adjoint, d, same_for_complex, tangent
from .tables import broadcasting, elementwise

# --- exponentials and logarithms ---------------------------------------------

elementwise(np.exp, lambda g, y, x: g * y, scalar=math.exp)
elementwise(np.exp2, lambda g, y, x: g * y * math.log(2.0), scalar=getattr(math, "exp2", None))   # (Python 3.11)
elementwise(np.expm1, lambda g, y, x: g * (y + 1.0), scalar=math.expm1)
elementwise(np.log, lambda g, y, x: g / x)                     # (math.log takes a base: see math_scalar)
elementwise(np.log2, lambda g, y, x: g / (x * math.log(2.0)), scalar=math.log2)
elementwise(np.log10, lambda g, y, x: g / (x * math.log(10.0)), scalar=math.log10)
elementwise(np.log1p, lambda g, y, x: g / (1.0 + x), scalar=math.log1p)
broadcasting(np.logaddexp, lambda g, y, x1, x2: g * np.exp(x1 - y), lambda g, y, x1, x2: g * np.exp(x2 - y))
broadcasting(np.logaddexp2, lambda g, y, x1, x2: g * np.exp2(x1 - y), lambda g, y, x1, x2: g * np.exp2(x2 - y))

# --- powers and roots --------------------------------------------------------

elementwise(np.sqrt, lambda g, y, x: g * 0.5 / y, scalar=math.sqrt)
elementwise(np.cbrt, lambda g, y, x: g / (3.0 * y * y), scalar=getattr(math, "cbrt", None))
elementwise(np.square, lambda g, y, x: g * 2.0 * x)
elementwise(np.reciprocal, lambda g, y, x: -g * y * y)
broadcasting((np.power, np.float_power),                        # (x2 = 0: zero, also at x1 = 0)
             lambda g, y, x1, x2: g * x2 * x1 ** np.where(x2 == 0, 1.0, x2 - 1.0),
             lambda g, y, x1, x2: g * y * np.log(np.where(x1 == 0, 1.0, x1)))


@adjoint(np.hypot)
def hypot(y, x1, x2):
    """At (0, 0) the gradient is 0, as for `np.linalg.norm`."""
    d[x1] = unbroadcast(divide_or_zero(d[y] * x1, y), x1)
    d[x2] = unbroadcast(divide_or_zero(d[y] * x2, y), x2)


@tangent(np.hypot)
def hypot(y, x1, x2):
    d[y] = divide_or_zero(d[x1] * x1 + d[x2] * x2, y)


# --- trigonometric and hyperbolic --------------------------------------------

elementwise(np.sin, lambda g, y, x: g * np.cos(x), scalar=math.sin)
elementwise(np.cos, lambda g, y, x: -g * np.sin(x), scalar=math.cos)
elementwise(np.tan, lambda g, y, x: g * (1.0 + y * y), scalar=math.tan)
elementwise(np.arcsin, lambda g, y, x: g / np.sqrt(1.0 - x * x), scalar=math.asin)
elementwise(np.arccos, lambda g, y, x: -g / np.sqrt(1.0 - x * x), scalar=math.acos)
elementwise(np.arctan, lambda g, y, x: g / (1.0 + x * x), scalar=math.atan)
elementwise(np.sinh, lambda g, y, x: g * np.cosh(x), scalar=math.sinh)
elementwise(np.cosh, lambda g, y, x: g * np.sinh(x), scalar=math.cosh)
elementwise(np.tanh, lambda g, y, x: g * (1.0 - y * y), scalar=math.tanh)
elementwise(np.arcsinh, lambda g, y, x: g / np.sqrt(x * x + 1.0), scalar=math.asinh)
elementwise(np.arccosh, lambda g, y, x: g / np.sqrt(x * x - 1.0), scalar=math.acosh)
elementwise(np.arctanh, lambda g, y, x: g / (1.0 - x * x), scalar=math.atanh)
elementwise((np.deg2rad, np.radians), lambda g, y, x: g * (np.pi / 180.0), scalar=math.radians)
elementwise((np.rad2deg, np.degrees), lambda g, y, x: g * (180.0 / np.pi), scalar=math.degrees)
elementwise(np.sinc, lambda g, y, x: g * np.where(x == 0, 0.0, (np.cos(np.pi * x) - y) / np.where(x == 0, 1.0, x)))


@adjoint(np.arctan2)
def arctan2(y, x1, x2):
    d[x1] = unbroadcast(d[y] * x2 / (x1 * x1 + x2 * x2), x1)
    d[x2] = unbroadcast(-d[y] * x1 / (x1 * x1 + x2 * x2), x2)


@tangent(np.arctan2)
def arctan2(y, x1, x2):
    d[y] = (d[x1] * x2 - d[x2] * x1) / (x1 * x1 + x2 * x2)


# --- arithmetic ----------------------------------------------------------------

broadcasting((np.add, operator.add), lambda g, y, x1, x2: g, lambda g, y, x1, x2: g)


@adjoint(np.subtract, operator.sub)
def subtract(y, x1, x2):
    d[x1] = unbroadcast(d[y], x1)
    d[x2] = unbroadcast(-d[y], x2)


@tangent(np.subtract, operator.sub)
def subtract(y, x1, x2):
    d[y] = d[x1] - d[x2]


@adjoint(np.multiply, operator.mul)
def multiply(y, x1, x2):
    d[x1] = unbroadcast(d[y] * x2, x1)
    d[x2] = unbroadcast(d[y] * x1, x2)


@tangent(np.multiply, operator.mul)
def multiply(y, x1, x2):
    d[y] = d[x1] * x2 + x1 * d[x2]


@adjoint(np.divide, operator.truediv)  # np.true_divide is np.divide
def divide(y, x1, x2):
    d[x1] = unbroadcast(d[y] / x2, x1)
    d[x2] = unbroadcast(-d[y] * y / x2, x2)


@tangent(np.divide, operator.truediv)
def divide(y, x1, x2):
    d[y] = d[x1] / x2 - d[x2] * y / x2


@adjoint(np.mod, np.fmod, operator.mod)  # np.remainder is np.mod; Python's % on floats is np.mod
def mod(y, x1, x2):
    d[x1] = unbroadcast(d[y], x1)
    d[x2] = unbroadcast(-d[y] * (x1 - y) / x2, x2)


@tangent(np.mod, np.fmod, operator.mod)
def mod(y, x1, x2):
    d[y] = d[x1] - d[x2] * (x1 - y) / x2


elementwise((np.negative, operator.neg), lambda g, y, x: -g)
elementwise((np.positive, operator.pos), lambda g, y, x: g)
elementwise(np.fabs, lambda g, y, x: g * np.sign(x))
elementwise(np.conjugate, lambda g, y, x: np.conj(g))        # np.conj is np.conjugate


@adjoint(np.absolute, builtins.abs)                           # np.abs is np.absolute
def absolute(y, x):
    d[x] = d[y] * np.sign(x)


@tangent(np.absolute, builtins.abs)
def absolute(y, x):
    """Also of a complex `x`: ``Re(conj(x) dx) / |x|`` (0 at 0)."""
    d[y] = divide_or_zero(np.real(np.conj(x) * d[x]), y)


@complex_adjoint(np.absolute, builtins.abs)
def absolute(y, x):
    """Holds for real `x` too. (Not ``np.sign(x)``, which is constant only on the reals.)"""
    d[x] = divide_or_zero(d[y] * np.conj(x), y)


@adjoint(np.real)
def real(y, val):
    d[val] = d[y]


@tangent(np.real)
def real(y, val):
    d[y] = np.real(d[val])


@adjoint(np.real_if_close)
def real_if_close(y, a, tol=100):
    d[a] = d[y]


@tangent(np.real_if_close)
def real_if_close(y, a, tol=100):
    """The real part where NumPy dropped the imaginary one."""
    d[y] = np.real(d[a]) if np.isrealobj(y) else d[a]


@adjoint(np.imag)
def imag(y, val):
    """Of a real `val`: zeros."""
    d[val] = -(1j * d[y]) if np.iscomplexobj(val) else 0.0 * d[y]


@tangent(np.imag)
def imag(y, val):
    d[y] = np.imag(d[val])


@adjoint(np.angle)
def angle(y, z, deg=False):
    """Of a real `z`: zeros (0 or pi, piecewise)."""
    d[z] = (-(1j * divide_or_zero(d[y] * np.conj(z), np.real(z * np.conj(z)))) if np.iscomplexobj(z)
            else 0.0 * d[y]) * (180.0 / np.pi if deg else 1.0)


@tangent(np.angle)
def angle(y, z, deg=False):
    """Also of a complex `z`: ``Im(conj(z) dz) / |z|**2`` (0 at 0)."""
    d[y] = divide_or_zero(np.imag(np.conj(z) * d[z]), np.real(z * np.conj(z))) * (180.0 / np.pi if deg else 1.0)


# --- selection: the gradient goes to the argument that was picked --------------

# The result equals the argument it picked; on a tie each argument gets half.
broadcasting((np.maximum, np.minimum, np.fmax, np.fmin),
             lambda g, y, x1, x2: g * (x1 == y) - 0.5 * g * (x1 == x2),
             lambda g, y, x1, x2: g * (x2 == y) - 0.5 * g * (x1 == x2))


@adjoint(np.where)
def where(z, condition, x=None, y=None):
    d[x] = unbroadcast(np.where(condition, d[z], 0.0), x)
    d[y] = unbroadcast(np.where(condition, 0.0, d[z]), y)


@tangent(np.where)
def where(z, condition, x=None, y=None):
    d[z] = np.where(condition, d[x], d[y])


@adjoint(np.clip)
def clip(y, a, a_min=None, a_max=None, out=None, *, min=None, max=None):
    """The gradient goes to what NumPy returned (the upper bound where the bounds are reversed)."""
    pick = clip_choice(a, a_min if min is None else min, a_max if max is None else max)
    d[a] = unbroadcast(d[y] * (pick == 0), a)
    d[a_min] = unbroadcast(d[y] * (pick == 1), a_min)
    d[a_max] = unbroadcast(d[y] * (pick == 2), a_max)
    d[min] = unbroadcast(d[y] * (pick == 1), min)
    d[max] = unbroadcast(d[y] * (pick == 2), max)


@tangent(np.clip)
def clip(y, a, a_min=None, a_max=None, out=None, *, min=None, max=None):
    pick = clip_choice(a, a_min if min is None else min, a_max if max is None else max)
    d[y] = (d[a] * (pick == 0) + d[a_min] * (pick == 1) + d[a_max] * (pick == 2)
            + d[min] * (pick == 1) + d[max] * (pick == 2))


# Holomorphic functions (and arithmetic) follow autograd's convention for a complex value's adjoint,
# ``dL/dRe(z) - 1j * dL/dIm(z)``, as written: no conjugates.
same_for_complex(np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p, np.sqrt, np.square, np.reciprocal,
                 np.power, operator.pow, np.sin, np.cos, np.tan, np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh,
                 np.tanh, np.arcsinh, np.arccosh, np.arctanh, np.add, operator.add, np.subtract, operator.sub,
                 np.multiply, operator.mul, np.divide, operator.truediv, np.negative, operator.neg, np.positive,
                 operator.pos, np.conjugate, np.real, np.real_if_close, np.imag, np.angle, np.where)
