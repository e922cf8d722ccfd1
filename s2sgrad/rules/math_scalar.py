"""Rules for the `math` module's functions of Python floats, and for the builtins float and pow.

The `math` functions that are NumPy functions of a scalar (``math.sin`` is
``np.sin`` of a float) get their rules in `ufuncs`, with ``np.f`` read as
``math.f``; here are the others. They take positional-only arguments named as
in CPython (``math.atan2(y, x)``, ``math.pow(x, y)``), so their results are
named `z` where `y` is taken.
"""
import builtins
import math

import numpy as np

from ..runtime import divide_or_zero
from .registry import adjoint, d, tangent
from .tables import broadcasting, elementwise


@adjoint(math.log)
def log(y, x, base=math.e):
    d[x] = d[y] / (x * math.log(base))
    d[base] = -d[y] * y / (base * math.log(base))


@tangent(math.log)
def log(y, x, base=math.e):
    d[y] = d[x] / (x * math.log(base)) - d[base] * y / (base * math.log(base))


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


@adjoint(math.atan2)
def atan2(z, y, x):
    d[y] = d[z] * x / (x * x + y * y)
    d[x] = -d[z] * y / (x * x + y * y)


@tangent(math.atan2)
def atan2(z, y, x):
    d[z] = (d[y] * x - d[x] * y) / (x * x + y * y)


elementwise(math.erf, lambda g, y, x: g * (2.0 / math.sqrt(math.pi)) * math.exp(-x * x))
elementwise(math.erfc, lambda g, y, x: -g * (2.0 / math.sqrt(math.pi)) * math.exp(-x * x))
elementwise(math.copysign, lambda g, z, x, y: g * math.copysign(1.0, x) * math.copysign(1.0, y))


# --- builtins that act on numbers (abs is np.absolute's rule, in ufuncs) -----------

elementwise(builtins.float, lambda g, y, x=0.0: g)
broadcasting(builtins.pow, lambda g, y, base, exp, mod=None: g * exp * base ** (exp - 1.0),
             lambda g, y, base, exp, mod=None: g * y * np.log(np.where(base == 0, 1.0, base)))
