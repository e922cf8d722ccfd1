"""The adjoints of `np.fft`'s transforms that take more than the transform itself.

A discrete Fourier transform is a symmetric matrix, so with autograd's convention for a complex value's
adjoint (``dL/dRe(z) - 1j * dL/dIm(z)``) the adjoint of ``np.fft.fft`` is ``np.fft.fft`` again, cut or
padded back to the argument's length (`fitted`). The transforms of real signals (`rfft`, `irfft` and their
kin) keep half the spectrum; their adjoints are here.

    >>> fitted(np.ones(4), np.zeros(2), [-1]).tolist()
    [1.0, 1.0]
    >>> irfft_grad(np.ones(4), np.zeros(3, complex), None, -1, None).tolist()     # all in the zero frequency
    [(1+0j), 0j, 0j]
"""
from __future__ import annotations

import numpy as np

from .dtypes import float_dtype

SWAPPED = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def fitted(g, a, axes):
    """`g` cut or padded with zeros, along each of `axes`, to the length `a` has there."""
    for axis in axes:
        g = _resized(g, axis, np.shape(a)[axis])
    return g


def _resized(g, axis, want):
    have = g.shape[axis]
    if have > want:
        return np.take(g, np.arange(want), axis=axis)
    if have < want:
        pad = [(0, 0)] * g.ndim
        pad[axis] = (0, want - have)
        return np.pad(g, pad)
    return g


def transform_axes(a, s, axes):
    """The axes an n-dimensional transform of `a` runs over, as NumPy picks them (all, or the last len(s))."""
    if axes is None:
        axes = range(np.ndim(a)) if s is None else range(-len(s), 0)
    return [ax % np.ndim(a) for ax in axes]


def _lengths(a, s, axes, real_output):
    """The lengths of the full signal along `axes` (a real output's last from its halved spectrum)."""
    if s is not None:
        return list(s)
    shape = [np.shape(a)[ax] for ax in axes]
    if real_output:
        shape[-1] = 2 * (shape[-1] - 1)
    return shape


def rfftn_grad(g, a, s=None, axes=None, norm=None):
    """The gradient of ``np.fft.rfftn(a, s, axes, norm)`` (`a` real)."""
    axes = transform_axes(a, s, axes)
    lengths = _lengths(a, s, axes, False)
    full = _resized(np.asarray(g), axes[-1], lengths[-1])         # the spectrum's other half has no adjoint
    return fitted(np.real(np.fft.fftn(full, None, axes, norm)), a, axes)


def irfftn_grad(g, a, s=None, axes=None, norm=None):
    """The gradient of ``np.fft.irfftn(a, s, axes, norm)``: the transform of the real output's adjoint, its
    last axis halved, the frequencies that stand for two (a conjugate pair) doubled."""
    axes = transform_axes(a, s, axes)
    n = _lengths(a, s, axes, True)[-1]
    half = np.take(np.fft.ifftn(g, None, axes, norm), np.arange(n // 2 + 1), axis=axes[-1])
    weights = np.full(n // 2 + 1, 2.0, dtype=float_dtype(g))
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    shape = [1] * half.ndim
    shape[axes[-1]] = n // 2 + 1
    grad = fitted(half * np.reshape(weights, shape), a, axes)
    return grad if np.iscomplexobj(a) else np.real(grad)       # (a real spectrum's imaginary parts are not free)


def rfft_grad(g, a, n=None, axis=-1, norm=None):
    """The gradient of ``np.fft.rfft(a, n, axis, norm)``."""
    return rfftn_grad(g, a, None if n is None else [n], [axis], norm)


def irfft_grad(g, a, n=None, axis=-1, norm=None):
    """The gradient of ``np.fft.irfft(a, n, axis, norm)``."""
    return irfftn_grad(g, a, None if n is None else [n], [axis], norm)


def hfft_grad(g, a, n=None, axis=-1, norm=None):
    """The gradient of ``np.fft.hfft(a, n, axis, norm)``, which is ``irfft(conj(a))`` with the norm swapped."""
    return np.conj(irfft_grad(g, a, n, axis, SWAPPED[norm]))   # (real where `a` is)


def ihfft_grad(g, a, n=None, axis=-1, norm=None):
    """The gradient of ``np.fft.ihfft(a, n, axis, norm)``, which is ``conj(rfft(a))`` with the norm swapped."""
    return rfft_grad(np.conj(g), a, n, axis, SWAPPED[norm])
