"""Rules for the `math` module's functions of Python floats, and for the builtins abs, float and pow.

The `math` functions take positional-only arguments named as in CPython
(``math.atan2(y, x)``, ``math.pow(x, y)``), so their results are named `z`
where `y` is taken.
"""
import builtins
import math

import numpy as np

from ..runtime import unbroadcast
from .registry import adjoint, d


@adjoint(math.exp)
def exp(y, x):
    d[x] = d[y] * y


@adjoint(math.expm1)
def expm1(y, x):
    d[x] = d[y] * (y + 1.0)


@adjoint(math.log)
def log(y, x, base=math.e):
    d[x] = d[y] / (x * math.log(base))
    d[base] = -d[y] * y / (base * math.log(base))


@adjoint(math.log1p)
def log1p(y, x):
    d[x] = d[y] / (1.0 + x)


@adjoint(math.log2)
def log2(y, x):
    d[x] = d[y] / (x * math.log(2.0))


@adjoint(math.log10)
def log10(y, x):
    d[x] = d[y] / (x * math.log(10.0))


@adjoint(math.sqrt)
def sqrt(y, x):
    d[x] = d[y] * 0.5 / y


@adjoint(math.pow)
def pow(z, x, y):
    d[x] = d[z] * y * x ** (y - 1.0)
    d[y] = d[z] * z * math.log(x) if x > 0 else 0.0


@adjoint(math.hypot)
def hypot(z, *coordinates):
    """``d[coordinates]`` is the list of the coordinates' gradients."""
    d[coordinates] = [d[z] * c / z for c in coordinates]


@adjoint(math.fabs)
def fabs(y, x):
    d[x] = d[y] * math.copysign(1.0, x) if x != 0 else 0.0


@adjoint(math.sin)
def sin(y, x):
    d[x] = d[y] * math.cos(x)


@adjoint(math.cos)
def cos(y, x):
    d[x] = -d[y] * math.sin(x)


@adjoint(math.tan)
def tan(y, x):
    d[x] = d[y] * (1.0 + y * y)


@adjoint(math.asin)
def asin(y, x):
    d[x] = d[y] / math.sqrt(1.0 - x * x)


@adjoint(math.acos)
def acos(y, x):
    d[x] = -d[y] / math.sqrt(1.0 - x * x)


@adjoint(math.atan)
def atan(y, x):
    d[x] = d[y] / (1.0 + x * x)


@adjoint(math.atan2)
def atan2(z, y, x):
    d[y] = d[z] * x / (x * x + y * y)
    d[x] = -d[z] * y / (x * x + y * y)


@adjoint(math.sinh)
def sinh(y, x):
    d[x] = d[y] * math.cosh(x)


@adjoint(math.cosh)
def cosh(y, x):
    d[x] = d[y] * math.sinh(x)


@adjoint(math.tanh)
def tanh(y, x):
    d[x] = d[y] * (1.0 - y * y)


@adjoint(math.asinh)
def asinh(y, x):
    d[x] = d[y] / math.sqrt(x * x + 1.0)


@adjoint(math.acosh)
def acosh(y, x):
    d[x] = d[y] / math.sqrt(x * x - 1.0)


@adjoint(math.atanh)
def atanh(y, x):
    d[x] = d[y] / (1.0 - x * x)


@adjoint(math.degrees)
def degrees(y, x):
    d[x] = d[y] * (180.0 / math.pi)


@adjoint(math.radians)
def radians(y, x):
    d[x] = d[y] * (math.pi / 180.0)


@adjoint(math.erf)
def erf(y, x):
    d[x] = d[y] * (2.0 / math.sqrt(math.pi)) * math.exp(-x * x)


@adjoint(math.erfc)
def erfc(y, x):
    d[x] = -d[y] * (2.0 / math.sqrt(math.pi)) * math.exp(-x * x)


@adjoint(math.copysign)
def copysign(z, x, y):
    d[x] = d[z] * math.copysign(1.0, x) * math.copysign(1.0, y)


if hasattr(math, "cbrt"):  # Python 3.11
    @adjoint(math.cbrt)
    def cbrt(y, x):
        d[x] = d[y] / (3.0 * y * y)

    @adjoint(math.exp2)
    def exp2(y, x):
        d[x] = d[y] * y * math.log(2.0)


# --- builtins that act on numbers (and, for abs and pow, on arrays) -----------

@adjoint(builtins.abs)
def builtin_abs(y, x):
    d[x] = d[y] * np.sign(x)


@adjoint(builtins.float)
def builtin_float(y, x=0.0):
    d[x] = d[y]


@adjoint(builtins.pow)
def builtin_pow(y, base, exp, mod=None):
    d[base] = unbroadcast(d[y] * exp * base ** (exp - 1.0), base)
    d[exp] = unbroadcast(d[y] * y * np.log(np.where(base == 0, 1.0, base)), exp)
