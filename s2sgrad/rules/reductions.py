"""Rules for NumPy's reductions: the gradient is spread back over the reduced axes.

`unreduce(g, a, axis, keepdims)` puts back the axes a reduction removed and
broadcasts g to the shape of `a`. NumPy's `where=` argument is not in these
signatures, so a call that passes it has no rule.
"""
import numpy as np

from ..runtime import (
    cumprod_grad,
    cumprod_tangent,
    divide_or_zero,
    float_dtype,
    median_weights,
    norm_grad,
    product_of_others,
    unbroadcast,
    unreduce,
    weights_like,
)
from .registry import adjoint, d, same_for_complex, tangent


@adjoint(np.sum)
def sum(y, a, axis=None, dtype=None, out=None, keepdims=False):
    d[a] = unreduce(d[y], a, axis, keepdims)


@tangent(np.sum)
def sum(y, a, axis=None, dtype=None, out=None, keepdims=False):
    d[y] = np.sum(d[a], axis=axis, keepdims=keepdims)


@adjoint(np.mean)
def mean(y, a, axis=None, dtype=None, out=None, keepdims=False):
    d[a] = unreduce(d[y], a, axis, keepdims) * (np.size(y) / np.size(a))


@tangent(np.mean)
def mean(y, a, axis=None, dtype=None, out=None, keepdims=False):
    d[y] = np.mean(d[a], axis=axis, keepdims=keepdims)


@adjoint(np.prod)
def prod(y, a, axis=None, dtype=None, out=None, keepdims=False):
    """The gradient of an element is the product of the others in its lane (exact with zeros in `a`)."""
    d[a] = unreduce(d[y], a, axis, keepdims) * product_of_others(a, axis)


@tangent(np.prod)
def prod(y, a, axis=None, dtype=None, out=None, keepdims=False):
    d[y] = np.sum(d[a] * product_of_others(a, axis), axis=axis, keepdims=keepdims)


@adjoint(np.max, np.min, np.amax, np.amin, np.nanmax, np.nanmin)
def max(y, a, axis=None, out=None, keepdims=False, initial=None):
    """The gradient goes to the elements equal to the extremum (and to `initial` if it is), shared evenly
    among ties (a nan of ``np.nanmax`` equals nothing: it gets none)."""
    hit = a == unreduce(y, a, axis, keepdims)
    ties = np.sum(hit, axis, keepdims=keepdims, dtype=float_dtype(a))
    d[a] = unreduce(d[y] / (ties if initial is None else ties + (initial == y)), a, axis, keepdims) * hit
    d[initial] = np.sum(d[y] * (initial == y) / (ties + (initial == y)))


@tangent(np.max, np.min, np.amax, np.amin, np.nanmax, np.nanmin)
def max(y, a, axis=None, out=None, keepdims=False, initial=None):
    """The mean of the tangents of the elements (and `initial`) equal to the extremum."""
    hit = a == unreduce(y, a, axis, keepdims)
    ties = np.sum(hit, axis=axis, keepdims=keepdims, dtype=float_dtype(a))
    d[y] = (np.sum(d[a] * hit, axis=axis, keepdims=keepdims) + d[initial] * (initial == y)) \
        / (ties if initial is None else ties + (initial == y))


@adjoint(np.ptp)
def ptp(y, a, axis=None, out=None, keepdims=False):
    """The maximum's gradient less the minimum's, each shared among its ties (0 where a lane is constant)."""
    top = a == np.max(a, axis=axis, keepdims=True)
    bottom = a == np.min(a, axis=axis, keepdims=True)
    share = top / np.sum(top, axis=axis, keepdims=True, dtype=float_dtype(a)) \
        - bottom / np.sum(bottom, axis=axis, keepdims=True, dtype=float_dtype(a))
    d[a] = unreduce(d[y], a, axis, keepdims) * share


@tangent(np.ptp)
def ptp(y, a, axis=None, out=None, keepdims=False):
    top = a == np.max(a, axis=axis, keepdims=True)
    bottom = a == np.min(a, axis=axis, keepdims=True)
    share = top / np.sum(top, axis=axis, keepdims=True, dtype=float_dtype(a)) \
        - bottom / np.sum(bottom, axis=axis, keepdims=True, dtype=float_dtype(a))
    d[y] = np.sum(d[a] * share, axis=axis, keepdims=keepdims)


@adjoint(np.nansum)
def nansum(y, a, axis=None, dtype=None, out=None, keepdims=False):
    """A nan counts as zero: it gets no gradient."""
    d[a] = unreduce(d[y], a, axis, keepdims) * np.logical_not(np.isnan(a))


@tangent(np.nansum)
def nansum(y, a, axis=None, dtype=None, out=None, keepdims=False):
    d[y] = np.sum(np.where(np.isnan(a), 0.0, d[a]), axis=axis, keepdims=keepdims)


@adjoint(np.nanmean)
def nanmean(y, a, axis=None, dtype=None, out=None, keepdims=False):
    """The mean of the numbers that are not nan."""
    d[a] = unreduce(d[y], a, axis, keepdims) * np.logical_not(np.isnan(a)) \
        / np.sum(np.logical_not(np.isnan(a)), axis=axis, keepdims=True, dtype=float_dtype(a))


@tangent(np.nanmean)
def nanmean(y, a, axis=None, dtype=None, out=None, keepdims=False):
    d[y] = np.sum(np.where(np.isnan(a), 0.0, d[a]), axis=axis, keepdims=keepdims) \
        / np.sum(np.logical_not(np.isnan(a)), axis=axis, keepdims=keepdims, dtype=float_dtype(a))


@adjoint(np.median)
def median(y, a, axis=None, out=None, keepdims=False):
    """The middle element of each lane, or the mean of the two middle ones (see `median_weights` for ties);
    `overwrite_input` is not in the signature: a call passing it has no rule."""
    d[a] = unreduce(d[y], a, axis, keepdims) * median_weights(a, axis)


@tangent(np.median)
def median(y, a, axis=None, out=None, keepdims=False):
    d[y] = np.sum(d[a] * median_weights(a, axis), axis=axis, keepdims=keepdims)


@adjoint(np.average)
def average(y, a, axis=None, weights=None, *, keepdims=False):
    """``sum(w * a) / sum(w)``; `returned` is not in the signature (a call passing it has no rule)."""
    w = 1.0 if weights is None else weights_like(weights, a, axis)
    total = np.sum(np.broadcast_to(w, np.shape(a)), axis=axis, keepdims=True, dtype=float_dtype(a, w))
    d[a] = unreduce(d[y], a, axis, keepdims) * w / total
    d[weights] = np.reshape(unbroadcast(unreduce(d[y], a, axis, keepdims) * (a - unreduce(y, a, axis, keepdims))
                                        / total, w), np.shape(weights))


@tangent(np.average)
def average(y, a, axis=None, weights=None, *, keepdims=False):
    w = 1.0 if weights is None else weights_like(weights, a, axis)
    d[y] = (np.sum(d[a] * w, axis=axis, keepdims=keepdims)
            + np.sum(weights_like(d[weights], a, axis) * (a - unreduce(y, a, axis, keepdims)), axis=axis,
                     keepdims=keepdims)) / np.sum(np.broadcast_to(w, np.shape(a)), axis=axis, keepdims=keepdims,
                                                                 dtype=float_dtype(a, w))


@adjoint(np.var)
def var(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    n = np.size(a) / np.size(y) - ddof
    d[a] = unreduce(d[y], a, axis, keepdims) * (2.0 / n) * (a - np.mean(a, axis, keepdims=True))


@tangent(np.var)
def var(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    n = np.size(a) / np.size(y) - ddof
    d[y] = np.sum((a - np.mean(a, axis, keepdims=True)) * d[a], axis=axis, keepdims=keepdims) * (2.0 / n)


@adjoint(np.std)
def std(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """At zero variance the gradient is 0 (the subgradient of least norm), as for `np.linalg.norm`."""
    n = np.size(a) / np.size(y) - ddof
    d[a] = unreduce(divide_or_zero(d[y], y), a, axis, keepdims) * (a - np.mean(a, axis, keepdims=True)) / n


@tangent(np.std)
def std(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    n = np.size(a) / np.size(y) - ddof
    d[y] = divide_or_zero(np.sum((a - np.mean(a, axis, keepdims=True)) * d[a], axis=axis, keepdims=keepdims), n * y)


@adjoint(np.cumsum)
def cumsum(y, a, axis=None, dtype=None, out=None):
    d[a] = np.reshape(np.flip(np.cumsum(np.flip(d[y], axis), axis), axis), np.shape(a))


@tangent(np.cumsum)
def cumsum(y, a, axis=None, dtype=None, out=None):
    d[y] = np.cumsum(d[a], axis=axis)


@adjoint(np.cumprod)
def cumprod(y, a, axis=None, dtype=None, out=None):
    """Exact with zeros in `a` (see `cumprod_grad`)."""
    d[a] = cumprod_grad(d[y], y, a, axis)


@tangent(np.cumprod)
def cumprod(y, a, axis=None, dtype=None, out=None):
    """Exact with zeros in `a` (see `cumprod_tangent`)."""
    d[y] = cumprod_tangent(d[a], y, a, axis)


@adjoint(np.linalg.norm)
def norm(y, x, ord=None, axis=None, keepdims=False):
    """The 2-norm and the Frobenius norm inline; the other orders in `norm_grad`. At zero the
    gradient is 0, the subgradient of least norm (as for ``abs``): ``norm(x) ** 2`` gets ``2 * x``."""
    d[x] = (unreduce(divide_or_zero(d[y], y), x, axis, keepdims) * x if ord in (None, "fro")
            else norm_grad(d[y], y, x, ord, axis, keepdims))


@tangent(np.linalg.norm)
def norm(y, x, ord=None, axis=None, keepdims=False):
    """The 2-norm and the Frobenius norm inline; the other orders through `norm_grad`."""
    d[y] = (divide_or_zero(np.sum(x * d[x], axis=axis, keepdims=keepdims), y) if ord in (None, "fro")
            else np.sum(norm_grad(np.ones_like(y), y, x, ord, axis, keepdims) * d[x], axis=axis,
                        keepdims=keepdims))


@adjoint(np.bincount)
def bincount(y, x, /, weights=None, minlength=0):
    d[weights] = d[y][x]


@tangent(np.bincount)
def bincount(y, x, /, weights=None, minlength=0):
    d[y] = np.bincount(x, d[weights], minlength)


same_for_complex(np.sum, np.mean, np.prod, np.cumsum)     # (linear, or holomorphic: see ufuncs)
