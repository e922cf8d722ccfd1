"""Rules for NumPy's elementwise functions.

Unary ufuncs name their argument `x`, binary ones `x1` and `x2`, as NumPy does.
An argument of a binary function may have been broadcast, so its gradient is
summed back to its shape with `unbroadcast` (which does nothing when the shapes agree).
"""
import operator

import numpy as np

from ..runtime import clip_choice, divide_or_zero, unbroadcast
from .registry import adjoint, d, tangent

# --- exponentials and logarithms ---------------------------------------------

@adjoint(np.exp)
def exp(y, x):
    d[x] = d[y] * y


@tangent(np.exp)
def exp(y, x):
    d[y] = d[x] * y


@adjoint(np.exp2)
def exp2(y, x):
    d[x] = d[y] * y * np.log(2.0)


@tangent(np.exp2)
def exp2(y, x):
    d[y] = d[x] * y * np.log(2.0)


@adjoint(np.expm1)
def expm1(y, x):
    d[x] = d[y] * (y + 1.0)


@tangent(np.expm1)
def expm1(y, x):
    d[y] = d[x] * (y + 1.0)


@adjoint(np.log)
def log(y, x):
    d[x] = d[y] / x


@tangent(np.log)
def log(y, x):
    d[y] = d[x] / x


@adjoint(np.log2)
def log2(y, x):
    d[x] = d[y] / (x * np.log(2.0))


@tangent(np.log2)
def log2(y, x):
    d[y] = d[x] / (x * np.log(2.0))


@adjoint(np.log10)
def log10(y, x):
    d[x] = d[y] / (x * np.log(10.0))


@tangent(np.log10)
def log10(y, x):
    d[y] = d[x] / (x * np.log(10.0))


@adjoint(np.log1p)
def log1p(y, x):
    d[x] = d[y] / (1.0 + x)


@tangent(np.log1p)
def log1p(y, x):
    d[y] = d[x] / (1.0 + x)


@adjoint(np.logaddexp)
def logaddexp(y, x1, x2):
    d[x1] = unbroadcast(d[y] * np.exp(x1 - y), x1)
    d[x2] = unbroadcast(d[y] * np.exp(x2 - y), x2)


@tangent(np.logaddexp)
def logaddexp(y, x1, x2):
    d[y] = d[x1] * np.exp(x1 - y) + d[x2] * np.exp(x2 - y)


@adjoint(np.logaddexp2)
def logaddexp2(y, x1, x2):
    d[x1] = unbroadcast(d[y] * np.exp2(x1 - y), x1)
    d[x2] = unbroadcast(d[y] * np.exp2(x2 - y), x2)


@tangent(np.logaddexp2)
def logaddexp2(y, x1, x2):
    d[y] = d[x1] * np.exp2(x1 - y) + d[x2] * np.exp2(x2 - y)


# --- powers and roots --------------------------------------------------------

@adjoint(np.sqrt)
def sqrt(y, x):
    d[x] = d[y] * 0.5 / y


@tangent(np.sqrt)
def sqrt(y, x):
    d[y] = d[x] * 0.5 / y


@adjoint(np.cbrt)
def cbrt(y, x):
    d[x] = d[y] / (3.0 * y * y)


@tangent(np.cbrt)
def cbrt(y, x):
    d[y] = d[x] / (3.0 * y * y)


@adjoint(np.square)
def square(y, x):
    d[x] = d[y] * 2.0 * x


@tangent(np.square)
def square(y, x):
    d[y] = d[x] * 2.0 * x


@adjoint(np.reciprocal)
def reciprocal(y, x):
    d[x] = -d[y] * y * y


@tangent(np.reciprocal)
def reciprocal(y, x):
    d[y] = -d[x] * y * y


@adjoint(np.power, np.float_power)
def power(y, x1, x2):
    d[x1] = unbroadcast(d[y] * x2 * x1 ** np.where(x2 == 0, 1.0, x2 - 1.0), x1)   # (x2 = 0: zero, also at x1 = 0)
    d[x2] = unbroadcast(d[y] * y * np.log(np.where(x1 == 0, 1.0, x1)), x2)


@tangent(np.power, np.float_power)
def power(y, x1, x2):
    d[y] = d[x1] * x2 * x1 ** np.where(x2 == 0, 1.0, x2 - 1.0) + d[x2] * y * np.log(np.where(x1 == 0, 1.0, x1))


@adjoint(np.hypot)
def hypot(y, x1, x2):
    """At (0, 0) the gradient is 0, as for `np.linalg.norm`."""
    d[x1] = unbroadcast(divide_or_zero(d[y] * x1, y), x1)
    d[x2] = unbroadcast(divide_or_zero(d[y] * x2, y), x2)


@tangent(np.hypot)
def hypot(y, x1, x2):
    d[y] = divide_or_zero(d[x1] * x1 + d[x2] * x2, y)


# --- trigonometric and hyperbolic --------------------------------------------

@adjoint(np.sin)
def sin(y, x):
    d[x] = d[y] * np.cos(x)


@tangent(np.sin)
def sin(y, x):
    d[y] = d[x] * np.cos(x)


@adjoint(np.cos)
def cos(y, x):
    d[x] = -d[y] * np.sin(x)


@tangent(np.cos)
def cos(y, x):
    d[y] = -d[x] * np.sin(x)


@adjoint(np.tan)
def tan(y, x):
    d[x] = d[y] * (1.0 + y * y)


@tangent(np.tan)
def tan(y, x):
    d[y] = d[x] * (1.0 + y * y)


@adjoint(np.arcsin)
def arcsin(y, x):
    d[x] = d[y] / np.sqrt(1.0 - x * x)


@tangent(np.arcsin)
def arcsin(y, x):
    d[y] = d[x] / np.sqrt(1.0 - x * x)


@adjoint(np.arccos)
def arccos(y, x):
    d[x] = -d[y] / np.sqrt(1.0 - x * x)


@tangent(np.arccos)
def arccos(y, x):
    d[y] = -d[x] / np.sqrt(1.0 - x * x)


@adjoint(np.arctan)
def arctan(y, x):
    d[x] = d[y] / (1.0 + x * x)


@tangent(np.arctan)
def arctan(y, x):
    d[y] = d[x] / (1.0 + x * x)


@adjoint(np.arctan2)
def arctan2(y, x1, x2):
    d[x1] = unbroadcast(d[y] * x2 / (x1 * x1 + x2 * x2), x1)
    d[x2] = unbroadcast(-d[y] * x1 / (x1 * x1 + x2 * x2), x2)


@tangent(np.arctan2)
def arctan2(y, x1, x2):
    d[y] = (d[x1] * x2 - d[x2] * x1) / (x1 * x1 + x2 * x2)


@adjoint(np.sinh)
def sinh(y, x):
    d[x] = d[y] * np.cosh(x)


@tangent(np.sinh)
def sinh(y, x):
    d[y] = d[x] * np.cosh(x)


@adjoint(np.cosh)
def cosh(y, x):
    d[x] = d[y] * np.sinh(x)


@tangent(np.cosh)
def cosh(y, x):
    d[y] = d[x] * np.sinh(x)


@adjoint(np.tanh)
def tanh(y, x):
    d[x] = d[y] * (1.0 - y * y)


@tangent(np.tanh)
def tanh(y, x):
    d[y] = d[x] * (1.0 - y * y)


@adjoint(np.arcsinh)
def arcsinh(y, x):
    d[x] = d[y] / np.sqrt(x * x + 1.0)


@tangent(np.arcsinh)
def arcsinh(y, x):
    d[y] = d[x] / np.sqrt(x * x + 1.0)


@adjoint(np.arccosh)
def arccosh(y, x):
    d[x] = d[y] / np.sqrt(x * x - 1.0)


@tangent(np.arccosh)
def arccosh(y, x):
    d[y] = d[x] / np.sqrt(x * x - 1.0)


@adjoint(np.arctanh)
def arctanh(y, x):
    d[x] = d[y] / (1.0 - x * x)


@tangent(np.arctanh)
def arctanh(y, x):
    d[y] = d[x] / (1.0 - x * x)


@adjoint(np.deg2rad, np.radians)
def deg2rad(y, x):
    d[x] = d[y] * (np.pi / 180.0)


@tangent(np.deg2rad, np.radians)
def deg2rad(y, x):
    d[y] = d[x] * (np.pi / 180.0)


@adjoint(np.rad2deg, np.degrees)
def rad2deg(y, x):
    d[x] = d[y] * (180.0 / np.pi)


@tangent(np.rad2deg, np.degrees)
def rad2deg(y, x):
    d[y] = d[x] * (180.0 / np.pi)


@adjoint(np.sinc)
def sinc(y, x):
    d[x] = d[y] * np.where(x == 0, 0.0, (np.cos(np.pi * x) - y) / np.where(x == 0, 1.0, x))


@tangent(np.sinc)
def sinc(y, x):
    d[y] = d[x] * np.where(x == 0, 0.0, (np.cos(np.pi * x) - y) / np.where(x == 0, 1.0, x))


# --- arithmetic ----------------------------------------------------------------

@adjoint(np.add, operator.add)
def add(y, x1, x2):
    d[x1] = unbroadcast(d[y], x1)
    d[x2] = unbroadcast(d[y], x2)


@tangent(np.add, operator.add)
def add(y, x1, x2):
    d[y] = d[x1] + d[x2]


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


@adjoint(np.negative, operator.neg)
def negative(y, x):
    d[x] = -d[y]


@tangent(np.negative, operator.neg)
def negative(y, x):
    d[y] = -d[x]


@adjoint(np.positive, operator.pos)
def positive(y, x):
    d[x] = d[y]


@tangent(np.positive, operator.pos)
def positive(y, x):
    d[y] = d[x]


@adjoint(np.absolute, np.fabs)  # np.abs is np.absolute
def absolute(y, x):
    d[x] = d[y] * np.sign(x)


@tangent(np.absolute, np.fabs)
def absolute(y, x):
    d[y] = d[x] * np.sign(x)


@adjoint(np.real)
def real(y, val):
    d[val] = d[y]


@tangent(np.real)
def real(y, val):
    d[y] = np.real(d[val])


@adjoint(np.conjugate)  # np.conj is np.conjugate
def conjugate(y, x):
    d[x] = np.conj(d[y])


@tangent(np.conjugate)
def conjugate(y, x):
    d[y] = np.conj(d[x])


# --- selection: the gradient goes to the argument that was picked --------------

@adjoint(np.maximum, np.minimum, np.fmax, np.fmin)
def maximum(y, x1, x2):
    """The result equals the argument it picked; on a tie each argument gets half."""
    d[x1] = unbroadcast(d[y] * ((x1 == y) - 0.5 * (x1 == x2)), x1)
    d[x2] = unbroadcast(d[y] * ((x2 == y) - 0.5 * (x1 == x2)), x2)


@tangent(np.maximum, np.minimum, np.fmax, np.fmin)
def maximum(y, x1, x2):
    d[y] = d[x1] * ((x1 == y) - 0.5 * (x1 == x2)) + d[x2] * ((x2 == y) - 0.5 * (x1 == x2))


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
