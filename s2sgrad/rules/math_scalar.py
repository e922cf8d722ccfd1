"""Rules for the `math` module's functions of Python floats, and for the builtins abs, float and pow.

The `math` functions take positional-only arguments named as in CPython
(``math.atan2(y, x)``, ``math.pow(x, y)``), so their results are named `z`
where `y` is taken.
"""
import builtins
import math

import numpy as np

from ..runtime import divide_or_zero, unbroadcast
from .registry import adjoint, d, tangent


@adjoint(math.exp)
def exp(y, x):
    d[x] = d[y] * y


@tangent(math.exp)
def exp(y, x):
    d[y] = d[x] * y


@adjoint(math.expm1)
def expm1(y, x):
    d[x] = d[y] * (y + 1.0)


@tangent(math.expm1)
def expm1(y, x):
    d[y] = d[x] * (y + 1.0)


@adjoint(math.log)
def log(y, x, base=math.e):
    d[x] = d[y] / (x * math.log(base))
    d[base] = -d[y] * y / (base * math.log(base))


@tangent(math.log)
def log(y, x, base=math.e):
    d[y] = d[x] / (x * math.log(base)) - d[base] * y / (base * math.log(base))


@adjoint(math.log1p)
def log1p(y, x):
    d[x] = d[y] / (1.0 + x)


@tangent(math.log1p)
def log1p(y, x):
    d[y] = d[x] / (1.0 + x)


@adjoint(math.log2)
def log2(y, x):
    d[x] = d[y] / (x * math.log(2.0))


@tangent(math.log2)
def log2(y, x):
    d[y] = d[x] / (x * math.log(2.0))


@adjoint(math.log10)
def log10(y, x):
    d[x] = d[y] / (x * math.log(10.0))


@tangent(math.log10)
def log10(y, x):
    d[y] = d[x] / (x * math.log(10.0))


@adjoint(math.sqrt)
def sqrt(y, x):
    d[x] = d[y] * 0.5 / y


@tangent(math.sqrt)
def sqrt(y, x):
    d[y] = d[x] * 0.5 / y


@adjoint(math.pow)
def pow(z, x, y):
    d[x] = d[z] * y * x ** (y - 1.0) if y != 0 else 0.0
    d[y] = d[z] * z * math.log(x) if x > 0 else 0.0


@tangent(math.pow)
def pow(z, x, y):
    d[z] = d[x] * (y * x ** (y - 1.0) if y != 0 else 0.0) + d[y] * z * (math.log(x) if x > 0 else 0.0)


@adjoint(math.hypot)
def hypot(z, *coordinates):
    """``d[coordinates]`` is the list of the coordinates' gradients; 0 at the origin, as for `np.linalg.norm`."""
    d[coordinates] = [divide_or_zero(d[z] * c, z) for c in coordinates]


@tangent(math.hypot)
def hypot(z, *coordinates):
    """``d[coordinates]`` is the tuple of the coordinates' tangents, None where zero."""
    d[z] = divide_or_zero(sum([c * t for c, t in zip(coordinates, d[coordinates]) if t is not None]), z)


@adjoint(math.fabs)
def fabs(y, x):
    d[x] = d[y] * math.copysign(1.0, x) if x != 0 else 0.0


@tangent(math.fabs)
def fabs(y, x):
    d[y] = d[x] * (math.copysign(1.0, x) if x != 0 else 0.0)


@adjoint(math.sin)
def sin(y, x):
    d[x] = d[y] * math.cos(x)


@tangent(math.sin)
def sin(y, x):
    d[y] = d[x] * math.cos(x)


@adjoint(math.cos)
def cos(y, x):
    d[x] = -d[y] * math.sin(x)


@tangent(math.cos)
def cos(y, x):
    d[y] = -d[x] * math.sin(x)


@adjoint(math.tan)
def tan(y, x):
    d[x] = d[y] * (1.0 + y * y)


@tangent(math.tan)
def tan(y, x):
    d[y] = d[x] * (1.0 + y * y)


@adjoint(math.asin)
def asin(y, x):
    d[x] = d[y] / math.sqrt(1.0 - x * x)


@tangent(math.asin)
def asin(y, x):
    d[y] = d[x] / math.sqrt(1.0 - x * x)


@adjoint(math.acos)
def acos(y, x):
    d[x] = -d[y] / math.sqrt(1.0 - x * x)


@tangent(math.acos)
def acos(y, x):
    d[y] = -d[x] / math.sqrt(1.0 - x * x)


@adjoint(math.atan)
def atan(y, x):
    d[x] = d[y] / (1.0 + x * x)


@tangent(math.atan)
def atan(y, x):
    d[y] = d[x] / (1.0 + x * x)


@adjoint(math.atan2)
def atan2(z, y, x):
    d[y] = d[z] * x / (x * x + y * y)
    d[x] = -d[z] * y / (x * x + y * y)


@tangent(math.atan2)
def atan2(z, y, x):
    d[z] = (d[y] * x - d[x] * y) / (x * x + y * y)


@adjoint(math.sinh)
def sinh(y, x):
    d[x] = d[y] * math.cosh(x)


@tangent(math.sinh)
def sinh(y, x):
    d[y] = d[x] * math.cosh(x)


@adjoint(math.cosh)
def cosh(y, x):
    d[x] = d[y] * math.sinh(x)


@tangent(math.cosh)
def cosh(y, x):
    d[y] = d[x] * math.sinh(x)


@adjoint(math.tanh)
def tanh(y, x):
    d[x] = d[y] * (1.0 - y * y)


@tangent(math.tanh)
def tanh(y, x):
    d[y] = d[x] * (1.0 - y * y)


@adjoint(math.asinh)
def asinh(y, x):
    d[x] = d[y] / math.sqrt(x * x + 1.0)


@tangent(math.asinh)
def asinh(y, x):
    d[y] = d[x] / math.sqrt(x * x + 1.0)


@adjoint(math.acosh)
def acosh(y, x):
    d[x] = d[y] / math.sqrt(x * x - 1.0)


@tangent(math.acosh)
def acosh(y, x):
    d[y] = d[x] / math.sqrt(x * x - 1.0)


@adjoint(math.atanh)
def atanh(y, x):
    d[x] = d[y] / (1.0 - x * x)


@tangent(math.atanh)
def atanh(y, x):
    d[y] = d[x] / (1.0 - x * x)


@adjoint(math.degrees)
def degrees(y, x):
    d[x] = d[y] * (180.0 / math.pi)


@tangent(math.degrees)
def degrees(y, x):
    d[y] = d[x] * (180.0 / math.pi)


@adjoint(math.radians)
def radians(y, x):
    d[x] = d[y] * (math.pi / 180.0)


@tangent(math.radians)
def radians(y, x):
    d[y] = d[x] * (math.pi / 180.0)


@adjoint(math.erf)
def erf(y, x):
    d[x] = d[y] * (2.0 / math.sqrt(math.pi)) * math.exp(-x * x)


@tangent(math.erf)
def erf(y, x):
    d[y] = d[x] * (2.0 / math.sqrt(math.pi)) * math.exp(-x * x)


@adjoint(math.erfc)
def erfc(y, x):
    d[x] = -d[y] * (2.0 / math.sqrt(math.pi)) * math.exp(-x * x)


@tangent(math.erfc)
def erfc(y, x):
    d[y] = -d[x] * (2.0 / math.sqrt(math.pi)) * math.exp(-x * x)


@adjoint(math.copysign)
def copysign(z, x, y):
    d[x] = d[z] * math.copysign(1.0, x) * math.copysign(1.0, y)


@tangent(math.copysign)
def copysign(z, x, y):
    d[z] = d[x] * math.copysign(1.0, x) * math.copysign(1.0, y)


if hasattr(math, "cbrt"):  # Python 3.11
    @adjoint(math.cbrt)
    def cbrt(y, x):
        d[x] = d[y] / (3.0 * y * y)

    @tangent(math.cbrt)
    def cbrt(y, x):
        d[y] = d[x] / (3.0 * y * y)

    @adjoint(math.exp2)
    def exp2(y, x):
        d[x] = d[y] * y * math.log(2.0)

    @tangent(math.exp2)
    def exp2(y, x):
        d[y] = d[x] * y * math.log(2.0)


# --- builtins that act on numbers (and, for abs and pow, on arrays) -----------

@adjoint(builtins.abs)
def builtin_abs(y, x):
    d[x] = d[y] * np.sign(x)


@tangent(builtins.abs)
def builtin_abs(y, x):
    d[y] = d[x] * np.sign(x)


@adjoint(builtins.float)
def builtin_float(y, x=0.0):
    d[x] = d[y]


@tangent(builtins.float)
def builtin_float(y, x=0.0):
    d[y] = d[x]


@adjoint(builtins.pow)
def builtin_pow(y, base, exp, mod=None):
    d[base] = unbroadcast(d[y] * exp * base ** (exp - 1.0), base)
    d[exp] = unbroadcast(d[y] * y * np.log(np.where(base == 0, 1.0, base)), exp)


@tangent(builtins.pow)
def builtin_pow(y, base, exp, mod=None):
    d[y] = d[base] * exp * base ** (exp - 1.0) + d[exp] * y * np.log(np.where(base == 0, 1.0, base))
