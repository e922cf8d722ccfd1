"""Rules for NumPy's functions written in Python that move, cut, pad, pick or combine elements linearly:
``np.split`` and its kin, ``rot90``, ``rollaxis``, ``diff``, ``gradient``, ``pad``, ``append``,
``take_along_axis``, ``partition``, ``select``, ``kron``, ``cross``, ``convolve``, ``correlate``,
``polyval``, ``interp``, ``trapezoid``, ``vdot``, ``copysign``, ``ediff1d``, ``vander``,
``cumulative_sum`` and ``nan_to_num``.

NumPy's own Python functions are never transformed as the user's code; these rules are
what makes them differentiable. A keyword the template does not take (``np.diff``'s
`prepend`, ``np.interp``'s `period`) leaves a call without a rule: it is refused where a
derivative flows through it.
"""
import numpy as np

from ..runtime import (
    complete,
    float_dtype,
    full_convolution,
    trapezoid_weights,
    unbroadcast,
    undiff,
    ungradient,
    unpad,
    unreduce,
    unselect,
    untake_along_axis,
)
from .registry import adjoint, d, no_derivative, tangent

# --- cutting into pieces: the pieces' gradients joined back (a piece nothing flowed into is zeros) ------


@adjoint(np.split, np.array_split)
def split(y, ary, indices_or_sections, axis=0):
    d[ary] = np.concatenate(complete(d[y], y), axis)


@tangent(np.split, np.array_split)
def split(y, ary, indices_or_sections, axis=0):
    d[y] = np.array_split(d[ary], indices_or_sections, axis)


@adjoint(np.hsplit)
def hsplit(y, ary, indices_or_sections):
    d[ary] = np.concatenate(complete(d[y], y), 1 if np.ndim(ary) > 1 else 0)


@tangent(np.hsplit)
def hsplit(y, ary, indices_or_sections):
    d[y] = np.hsplit(d[ary], indices_or_sections)


@adjoint(np.vsplit)
def vsplit(y, ary, indices_or_sections):
    d[ary] = np.concatenate(complete(d[y], y), 0)


@tangent(np.vsplit)
def vsplit(y, ary, indices_or_sections):
    d[y] = np.vsplit(d[ary], indices_or_sections)


@adjoint(np.dsplit)
def dsplit(y, ary, indices_or_sections):
    d[ary] = np.concatenate(complete(d[y], y), 2)


@tangent(np.dsplit)
def dsplit(y, ary, indices_or_sections):
    d[y] = np.dsplit(d[ary], indices_or_sections)


# --- moving axes and elements ------------------------------------------------------------------------


@adjoint(np.rot90)
def rot90(y, m, k=1, axes=(0, 1)):
    d[m] = np.rot90(d[y], -k, axes)


@tangent(np.rot90)
def rot90(y, m, k=1, axes=(0, 1)):
    d[y] = np.rot90(d[m], k, axes)


@adjoint(np.rollaxis)
def rollaxis(y, a, axis, start=0):
    """``rollaxis`` moves `axis` to before `start`: to ``start - 1`` if it was before it."""
    source = axis % np.ndim(a)
    begin = start + np.ndim(a) if start < 0 else start
    d[a] = np.moveaxis(d[y], begin - 1 if source < begin else begin, source)


@tangent(np.rollaxis)
def rollaxis(y, a, axis, start=0):
    d[y] = np.rollaxis(d[a], axis, start)


@adjoint(np.append)
def append(y, arr, values, axis=None):
    """With no axis both are flattened first."""
    n = np.size(arr) if axis is None else np.shape(arr)[axis]
    d[arr] = np.reshape(np.take(d[y], np.arange(n), axis), np.shape(arr))
    d[values] = np.reshape(np.take(d[y], np.arange(n, np.shape(y)[0 if axis is None else axis]), axis),
                           np.shape(values))


@tangent(np.append)
def append(y, arr, values, axis=None):
    d[y] = np.append(d[arr], d[values], axis)


@adjoint(np.take_along_axis)
def take_along_axis(y, arr, indices, axis=-1):
    d[arr] = untake_along_axis(d[y], arr, indices, axis)


@tangent(np.take_along_axis)
def take_along_axis(y, arr, indices, axis=-1):
    d[y] = np.take_along_axis(d[arr], indices, axis)


@adjoint(np.partition)
def partition(y, a, kth, axis=-1, kind="introselect", order=None):
    """Each value's gradient goes back to the element ``np.argpartition`` puts there (one of equal values)."""
    d[a] = untake_along_axis(d[y], a, np.argpartition(a, kth, axis=axis), axis)


@tangent(np.partition)
def partition(y, a, kth, axis=-1, kind="introselect", order=None):
    d[y] = np.take_along_axis(d[a], np.argpartition(a, kth, axis=axis), axis)


@adjoint(np.select)
def select(y, condlist, choicelist, default=0):
    """Each element's gradient goes to the first choice whose condition holds there, else to the default."""
    parts = unselect(d[y], condlist, choicelist)
    d[choicelist] = parts[:-1]
    d[default] = unbroadcast(parts[-1], default)


@tangent(np.select)
def select(y, condlist, choicelist, default=0):
    d[y] = np.select(condlist, complete(d[choicelist], choicelist), d[default])


# --- linear combinations of neighbours ------------------------------------------------------------------


@adjoint(np.diff)
def diff(y, a, n=1, axis=-1):
    """(`prepend` and `append` are not in the signature: a call passing them has no rule.)"""
    d[a] = undiff(d[y], n, axis)


@tangent(np.diff)
def diff(y, a, n=1, axis=-1):
    d[y] = np.diff(d[a], n, axis)


@adjoint(np.gradient)
def gradient(y, f, *varargs, axis=None, edge_order=1):
    """Linear in f: the transpose along each axis (`ungradient`); the spacings are constants."""
    d[f] = ungradient(d[y], f, *varargs, axis=axis, edge_order=edge_order)


@tangent(np.gradient)
def gradient(y, f, *varargs, axis=None, edge_order=1):
    d[y] = np.gradient(d[f], *varargs, axis=axis, edge_order=edge_order)


@adjoint(np.pad)
def pad(y, array, pad_width, mode="constant"):
    """The modes that copy elements (constant zeros, edge, reflect, symmetric, wrap); `constant_values` and
    the other modes' keywords are not in the signature."""
    d[array] = unpad(d[y], array, pad_width, mode)


@tangent(np.pad)
def pad(y, array, pad_width, mode="constant"):
    d[y] = np.pad(d[array], pad_width, mode)


@adjoint(np.convolve)
def convolve(y, a, v, mode="full"):
    d[a] = np.correlate(full_convolution(d[y], a, v, mode), v, "valid")
    d[v] = np.correlate(full_convolution(d[y], a, v, mode), a, "valid")


@tangent(np.convolve)
def convolve(y, a, v, mode="full"):
    d[y] = np.convolve(d[a], v, mode) + np.convolve(a, d[v], mode)


@adjoint(np.correlate)
def correlate(y, a, v, mode="valid"):
    """``correlate(a, v)`` is ``convolve(a, v[::-1])`` (real arrays)."""
    d[a] = np.correlate(full_convolution(d[y], a, v, mode), np.flip(v), "valid")
    d[v] = np.flip(np.correlate(full_convolution(d[y], a, v, mode), a, "valid"))


@tangent(np.correlate)
def correlate(y, a, v, mode="valid"):
    d[y] = np.correlate(d[a], v, mode) + np.correlate(a, d[v], mode)


# --- polynomials and interpolation ----------------------------------------------------------------------


@adjoint(np.polyval)
def polyval(y, p, x):
    """p is an array of coefficients, the highest power first."""
    powers = np.arange(np.size(p) - 1, -1, -1, dtype=float_dtype(p, x))
    d[p] = np.ravel(d[y]) @ (np.expand_dims(np.ravel(x * np.ones_like(y)), -1) ** powers)
    d[x] = unbroadcast(d[y] * np.polyval(np.polyder(p).astype(float_dtype(p)), x), x)


@tangent(np.polyval)
def polyval(y, p, x):
    d[y] = np.polyval(d[p], x) + d[x] * np.polyval(np.polyder(p).astype(float_dtype(p)), x)


@adjoint(np.interp)
def interp(y, x, xp, fp, left=None, right=None):
    """In x: the slope of the segment x lies in; at a knot, of the segment to its right, and 0 from the last
    knot on and before the first (where the result is constant). In fp, left and right: the weights of the
    linear interpolation. The knots xp are constants here (a derivative flowing into them is refused);
    `period` is not in the signature."""
    knots = np.asarray(xp)
    values = np.asarray(fp)
    segment = np.clip(np.searchsorted(knots, x, side="right") - 1, 0, np.size(knots) - 2)
    width = knots[segment + 1] - knots[segment]
    below = np.logical_and(x < knots[0], left is not None)
    above = np.logical_and(x > knots[-1], right is not None)
    kept = d[y] * np.logical_not(np.logical_or(below, above))
    t = np.clip((x - knots[segment]) / width, 0.0, 1.0)
    d[x] = d[y] * np.where(np.logical_and(x >= knots[0], x < knots[-1]),
                           (values[segment + 1] - values[segment]) / width, 0.0)
    d[xp] = no_derivative("np.interp has no derivative rule in its knots xp")
    d[fp] = np.bincount(np.ravel(segment), np.ravel(kept * (1.0 - t)), np.size(values)) \
        + np.bincount(np.ravel(segment + 1), np.ravel(kept * t), np.size(values))
    d[left] = np.sum(d[y] * below)
    d[right] = np.sum(d[y] * above)


@tangent(np.interp)
def interp(y, x, xp, fp, left=None, right=None):
    knots = np.asarray(xp)
    values = np.asarray(fp)
    segment = np.clip(np.searchsorted(knots, x, side="right") - 1, 0, np.size(knots) - 2)
    width = knots[segment + 1] - knots[segment]
    below = np.logical_and(x < knots[0], left is not None)
    above = np.logical_and(x > knots[-1], right is not None)
    t = np.clip((x - knots[segment]) / width, 0.0, 1.0)
    d[y] = d[x] * np.where(np.logical_and(x >= knots[0], x < knots[-1]),
                           (values[segment + 1] - values[segment]) / width, 0.0) \
        + np.logical_not(np.logical_or(below, above)) * ((1.0 - t) * np.asarray(d[fp])[segment]
                                                         + t * np.asarray(d[fp])[segment + 1]) \
        + d[left] * below + d[right] * above + no_derivative("np.interp has no derivative rule in its knots xp", d[xp])


TRAPEZOIDS = [getattr(np, name) for name in ("trapezoid", "trapz") if hasattr(np, name)]


@adjoint(*TRAPEZOIDS)
def trapezoid(area, y, x=None, dx=1.0, axis=-1):
    """Linear in y: each value weighs half the spacings on either side. In the sample points x and the spacing
    dx it has no rule (a derivative flowing into them is refused)."""
    d[y] = unreduce(d[area], y, axis) * trapezoid_weights(y, x, dx, axis)
    d[x] = no_derivative("np.trapezoid has no derivative rule in its sample points x")
    d[dx] = no_derivative("np.trapezoid has no derivative rule in its spacing dx")


@tangent(*TRAPEZOIDS)
def trapezoid(area, y, x=None, dx=1.0, axis=-1):
    d[area] = np.sum(d[y] * trapezoid_weights(y, x, dx, axis), axis=axis) \
        + no_derivative("np.trapezoid has no derivative rule in its sample points x", d[x]) \
        + no_derivative("np.trapezoid has no derivative rule in its spacing dx", d[dx])


@adjoint(np.copysign)
def copysign(y, x1, x2, /):
    """``|x1|`` with the sign of x2: piecewise constant in x2; in x1, 0 at 0 (as for ``abs``)."""
    d[x1] = unbroadcast(d[y] * np.sign(x1) * np.copysign(1.0, x2), x1)


@tangent(np.copysign)
def copysign(y, x1, x2, /):
    d[y] = d[x1] * np.sign(x1) * np.copysign(1.0, x2)


@adjoint(np.ediff1d)
def ediff1d(y, ary, to_end=None, to_begin=None):
    start = 0 if to_begin is None else np.size(to_begin)
    d[ary] = np.reshape(undiff(d[y][start:start + np.size(ary) - 1], 1, -1), np.shape(ary))
    d[to_begin] = np.reshape(d[y][:start], np.shape(to_begin))
    d[to_end] = np.reshape(d[y][start + np.size(ary) - 1:], np.shape(to_end))


@tangent(np.ediff1d)
def ediff1d(y, ary, to_end=None, to_begin=None):
    d[y] = np.ediff1d(d[ary], None if to_end is None else d[to_end], None if to_begin is None else d[to_begin])


@adjoint(np.vander)
def vander(y, x, N=None, increasing=False):
    """Column j is ``x ** p_j``; its derivative ``p_j * x ** (p_j - 1)``, 0 for the column of ones."""
    powers = np.arange(np.shape(y)[1]) if increasing else np.arange(np.shape(y)[1] - 1, -1, -1)
    d[x] = np.sum(d[y] * powers * np.expand_dims(x, -1) ** np.where(powers == 0, 0, powers - 1), axis=1)


@tangent(np.vander)
def vander(y, x, N=None, increasing=False):
    powers = np.arange(np.shape(y)[1]) if increasing else np.arange(np.shape(y)[1] - 1, -1, -1)
    d[y] = np.expand_dims(d[x], -1) * powers * np.expand_dims(x, -1) ** np.where(powers == 0, 0, powers - 1)


if hasattr(np, "cumulative_sum"):  # NumPy 2.1
    @adjoint(np.cumulative_sum)
    def cumulative_sum(y, x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        """A reversed cumulative sum; with `include_initial`, the leading zero's gradient left out."""
        reversed_sums = np.flip(np.cumsum(np.flip(d[y], axis), axis), axis)
        d[x] = np.take(reversed_sums, np.arange(1, np.size(x) + 1 if axis is None else np.shape(y)[axis]),
                       0 if axis is None else axis) if include_initial else reversed_sums

    @tangent(np.cumulative_sum)
    def cumulative_sum(y, x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        d[y] = np.cumulative_sum(d[x], axis=axis, include_initial=include_initial)


@adjoint(np.nan_to_num)
def nan_to_num(y, x, copy=True, nan=0.0, posinf=None, neginf=None):
    """The gradient passes where x is finite; a nan or an infinity takes the replacement's."""
    d[x] = d[y] * np.isfinite(x)
    d[nan] = np.sum(d[y] * np.isnan(x))
    d[posinf] = np.sum(d[y] * np.isposinf(x))
    d[neginf] = np.sum(d[y] * np.isneginf(x))


@tangent(np.nan_to_num)
def nan_to_num(y, x, copy=True, nan=0.0, posinf=None, neginf=None):
    d[y] = d[x] * np.isfinite(x) + d[nan] * np.isnan(x) + d[posinf] * np.isposinf(x) + d[neginf] * np.isneginf(x)
