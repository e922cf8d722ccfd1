"""Rules for SciPy's special functions (``scipy.special``), registered when the program imports ``scipy.special``.

The partials call SciPy through `scipy_special` (imported at its first use), so a
generated gradient of ``gammaln`` reads ``scipy_special.digamma(x)``; like every template they
read only NumPy, `math`, the runtime and their parameters (generated code sees nothing else). An argument
these functions have no derivative in (the order of ``polygamma``, the shape
parameters of ``gammainc`` and ``betainc``) is marked with `no_derivative`: a
derivative flowing into it is refused, never zero.
"""
import math

import numpy as np
from scipy import special

from ..runtime import scipy_special, unbroadcast, unreduce
from .registry import adjoint, d, no_derivative, nondifferentiable, tangent
from .tables import broadcasting, elementwise

# --- gamma and beta functions -------------------------------------------------

elementwise(special.gamma, lambda g, y, x: g * y * scipy_special.digamma(x))
elementwise(special.gammaln, lambda g, y, x: g * scipy_special.digamma(x))
elementwise(special.rgamma, lambda g, y, x: -g * y * scipy_special.digamma(x))
elementwise(special.digamma, lambda g, y, x: g * scipy_special.zeta(2.0, x))     # (trigamma; special.psi is digamma)
broadcasting(special.beta, lambda g, y, a, b: g * y * (scipy_special.digamma(a) - scipy_special.digamma(a + b)),
             lambda g, y, a, b: g * y * (scipy_special.digamma(b) - scipy_special.digamma(a + b)))
broadcasting(special.betaln, lambda g, y, a, b: g * (scipy_special.digamma(a) - scipy_special.digamma(a + b)),
             lambda g, y, a, b: g * (scipy_special.digamma(b) - scipy_special.digamma(a + b)))
nondifferentiable(special.gammasgn)


@adjoint(special.polygamma)
def polygamma(y, n, x):
    d[n] = no_derivative("scipy.special.polygamma has no derivative in its order n")
    d[x] = unbroadcast(d[y] * scipy_special.polygamma(n + 1, x), x)


@tangent(special.polygamma)
def polygamma(y, n, x):
    d[y] = d[x] * scipy_special.polygamma(n + 1, x) + no_derivative("scipy.special.polygamma has no derivative "
                                                                     "in its order n", d[n])


@adjoint(special.multigammaln)
def multigammaln(y, a, dimension=1):
    """``log Gamma_p(a)`` sums ``gammaln(a - j / 2)`` over j < p, the integer SciPy calls `d` (passed by position:
    here d names derivatives)."""
    d[a] = d[y] * np.sum(scipy_special.digamma(np.expand_dims(a, -1) - np.arange(dimension) / 2.0), -1)


@tangent(special.multigammaln)
def multigammaln(y, a, dimension=1):
    d[y] = d[a] * np.sum(scipy_special.digamma(np.expand_dims(a, -1) - np.arange(dimension) / 2.0), -1)


@adjoint(special.gammainc)
def gammainc(y, a, x):
    """The regularized lower incomplete gamma function: a derivative in x only."""
    d[a] = no_derivative("scipy.special.gammainc has no derivative in its shape a")
    d[x] = unbroadcast(d[y] * np.exp((a - 1.0) * np.log(x) - x - scipy_special.gammaln(a)), x)


@tangent(special.gammainc)
def gammainc(y, a, x):
    d[y] = d[x] * np.exp((a - 1.0) * np.log(x) - x - scipy_special.gammaln(a)) \
        + no_derivative("scipy.special.gammainc has no derivative in its shape a", d[a])


@adjoint(special.gammaincc)
def gammaincc(y, a, x):
    d[a] = no_derivative("scipy.special.gammaincc has no derivative in its shape a")
    d[x] = unbroadcast(-d[y] * np.exp((a - 1.0) * np.log(x) - x - scipy_special.gammaln(a)), x)


@tangent(special.gammaincc)
def gammaincc(y, a, x):
    d[y] = -d[x] * np.exp((a - 1.0) * np.log(x) - x - scipy_special.gammaln(a)) \
        + no_derivative("scipy.special.gammaincc has no derivative in its shape a", d[a])


@adjoint(special.betainc)
def betainc(y, a, b, x):
    """The regularized incomplete beta function: a derivative in x only."""
    d[a] = no_derivative("scipy.special.betainc has no derivative in its shape a")
    d[b] = no_derivative("scipy.special.betainc has no derivative in its shape b")
    d[x] = unbroadcast(d[y] * np.exp((a - 1.0) * np.log(x) + (b - 1.0) * np.log1p(-x) - scipy_special.betaln(a, b)),
                       x)


@tangent(special.betainc)
def betainc(y, a, b, x):
    d[y] = d[x] * np.exp((a - 1.0) * np.log(x) + (b - 1.0) * np.log1p(-x) - scipy_special.betaln(a, b)) \
        + no_derivative("scipy.special.betainc has no derivative in its shape a", d[a]) \
        + no_derivative("scipy.special.betainc has no derivative in its shape b", d[b])


# --- error functions and the normal distribution's --------------------------------

elementwise(special.erf, lambda g, y, x: g * (2.0 / math.sqrt(math.pi)) * np.exp(-x * x))
elementwise(special.erfc, lambda g, y, x: -g * (2.0 / math.sqrt(math.pi)) * np.exp(-x * x))
elementwise(special.erfcx, lambda g, y, x: g * (2.0 * x * y - 2.0 / math.sqrt(math.pi)))
elementwise(special.erfinv, lambda g, y, x: g * (math.sqrt(math.pi) / 2.0) * np.exp(y * y))
elementwise(special.erfcinv, lambda g, y, x: -g * (math.sqrt(math.pi) / 2.0) * np.exp(y * y))
elementwise(special.dawsn, lambda g, y, x: g * (1.0 - 2.0 * x * y))
elementwise(special.ndtr, lambda g, y, x: g * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi))
elementwise(special.log_ndtr, lambda g, y, x: g * np.exp(-0.5 * x * x - y) / math.sqrt(2.0 * math.pi))
elementwise(special.ndtri, lambda g, y, x: g * math.sqrt(2.0 * math.pi) * np.exp(0.5 * y * y))

# --- logistic, logarithms ------------------------------------------------------------

elementwise(special.expit, lambda g, y, x: g * y * (1.0 - y))
elementwise(special.logit, lambda g, y, x: g / (x * (1.0 - x)))
elementwise(special.log_expit, lambda g, y, x: g * scipy_special.expit(-x))
elementwise(special.entr, lambda g, y, x: -g * (np.log(x) + 1.0))
# at x = 0 the result is 0 whatever y is: the partials are log(y) and x / y, as JAX has them
broadcasting(special.xlogy, lambda g, y, x1, x2: g * np.log(x2), lambda g, y, x1, x2: g * x1 / x2)
broadcasting(special.xlog1py, lambda g, y, x1, x2: g * np.log1p(x2), lambda g, y, x1, x2: g * x1 / (1.0 + x2))


@adjoint(special.logsumexp)
def logsumexp(y, a, axis=None, b=None, keepdims=False):
    """``log(sum(b * exp(a)))``: the weights ``b * exp(a - y)`` (`return_sign` is not in the signature: no rule)."""
    d[a] = unbroadcast(unreduce(d[y], a, axis, keepdims) * (1.0 if b is None else b)
                       * np.exp(a - unreduce(y, a, axis, keepdims)), a)
    d[b] = unbroadcast(unreduce(d[y], a, axis, keepdims) * np.exp(a - unreduce(y, a, axis, keepdims)), b)


@tangent(special.logsumexp)
def logsumexp(y, a, axis=None, b=None, keepdims=False):
    d[y] = np.sum((d[a] * (1.0 if b is None else b) + d[b]) * np.exp(a - unreduce(y, a, axis, keepdims)),
                  axis=axis, keepdims=keepdims)


@adjoint(special.softmax)
def softmax(y, x, axis=None):
    d[x] = y * (d[y] - np.sum(d[y] * y, axis=axis, keepdims=True))


@tangent(special.softmax)
def softmax(y, x, axis=None):
    d[y] = y * (d[x] - np.sum(d[x] * y, axis=axis, keepdims=True))


@adjoint(special.log_softmax)
def log_softmax(y, x, axis=None):
    d[x] = d[y] - np.exp(y) * np.sum(d[y], axis=axis, keepdims=True)


@tangent(special.log_softmax)
def log_softmax(y, x, axis=None):
    d[y] = d[x] - np.sum(np.exp(y) * d[x], axis=axis, keepdims=True)


# --- Bessel functions ----------------------------------------------------------------

elementwise(special.j0, lambda g, y, x: -g * scipy_special.j1(x))
elementwise(special.y0, lambda g, y, x: -g * scipy_special.y1(x))
elementwise(special.j1, lambda g, y, x: g * (scipy_special.j0(x) - scipy_special.jv(2, x)) / 2.0)
elementwise(special.y1, lambda g, y, x: g * (scipy_special.y0(x) - scipy_special.yv(2.0, x)) / 2.0)
elementwise(special.i0, lambda g, y, x: g * scipy_special.i1(x))
elementwise(special.i1, lambda g, y, x: g * (scipy_special.i0(x) + scipy_special.iv(2, x)) / 2.0)
elementwise(special.i0e, lambda g, y, x: g * (scipy_special.i1e(x) - np.sign(x) * y))
elementwise(special.i1e, lambda g, y, x: g * ((scipy_special.i0e(x) + scipy_special.ive(2, x)) / 2.0 - np.sign(x) * y))


@adjoint(special.jv)                    # special.jn is special.jv
def jv(y, v, z):
    d[v] = no_derivative("scipy.special.jv has no derivative in its order v")
    d[z] = unbroadcast(d[y] * (scipy_special.jv(v - 1, z) - scipy_special.jv(v + 1, z)) / 2.0, z)


@tangent(special.jv)
def jv(y, v, z):
    d[y] = d[z] * (scipy_special.jv(v - 1, z) - scipy_special.jv(v + 1, z)) / 2.0 \
        + no_derivative("scipy.special.jv has no derivative in its order v", d[v])


@adjoint(special.yv)
def yv(y, v, z):
    d[v] = no_derivative("scipy.special.yv has no derivative in its order v")
    d[z] = unbroadcast(d[y] * (scipy_special.yv(v - 1, z) - scipy_special.yv(v + 1, z)) / 2.0, z)


@tangent(special.yv)
def yv(y, v, z):
    d[y] = d[z] * (scipy_special.yv(v - 1, z) - scipy_special.yv(v + 1, z)) / 2.0 \
        + no_derivative("scipy.special.yv has no derivative in its order v", d[v])


@adjoint(special.yn)
def yn(y, n, x):
    d[x] = unbroadcast(d[y] * (scipy_special.yn(n - 1, x) - scipy_special.yn(n + 1, x)) / 2.0, x)


@tangent(special.yn)
def yn(y, n, x):
    d[y] = d[x] * (scipy_special.yn(n - 1, x) - scipy_special.yn(n + 1, x)) / 2.0


@adjoint(special.iv)
def iv(y, v, z):
    d[v] = no_derivative("scipy.special.iv has no derivative in its order v")
    d[z] = unbroadcast(d[y] * (scipy_special.iv(v - 1, z) + scipy_special.iv(v + 1, z)) / 2.0, z)


@tangent(special.iv)
def iv(y, v, z):
    d[y] = d[z] * (scipy_special.iv(v - 1, z) + scipy_special.iv(v + 1, z)) / 2.0 \
        + no_derivative("scipy.special.iv has no derivative in its order v", d[v])


@adjoint(special.ive)
def ive(y, v, z):
    """``iv(v, z) * exp(-|z|)``."""
    d[v] = no_derivative("scipy.special.ive has no derivative in its order v")
    d[z] = unbroadcast(d[y] * (y * (v / z - np.sign(z)) + scipy_special.ive(v + 1, z)), z)


@tangent(special.ive)
def ive(y, v, z):
    d[y] = d[z] * (y * (v / z - np.sign(z)) + scipy_special.ive(v + 1, z)) \
        + no_derivative("scipy.special.ive has no derivative in its order v", d[v])
