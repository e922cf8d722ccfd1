"""Rules for `np.fft`: the transforms, their real-signal kin and the shifts.

With autograd's convention for a complex value's adjoint (``dL/dRe(z) - 1j * dL/dIm(z)``), a transform's
adjoint is the same transform of the result's adjoint (a DFT matrix is symmetric), cut or padded back to the
argument's length (`fitted`); the real-signal transforms keep half a spectrum (`runtime.fft`). Every
transform is linear: its tangent is the transform of the argument's tangent.
"""
import numpy as np

from ..runtime import (
    fitted,
    hfft_grad,
    ihfft_grad,
    irfft_grad,
    irfftn_grad,
    rfft_grad,
    rfftn_grad,
    transform_axes,
)
from .registry import adjoint, d, same_for_complex, tangent


@adjoint(np.fft.fft)
def fft(y, a, n=None, axis=-1, norm=None, out=None):
    d[a] = fitted(np.fft.fft(d[y], None, axis, norm), a, [axis])


@adjoint(np.fft.ifft)
def ifft(y, a, n=None, axis=-1, norm=None, out=None):
    d[a] = fitted(np.fft.ifft(d[y], None, axis, norm), a, [axis])


@adjoint(np.fft.fft2)
def fft2(y, a, s=None, axes=(-2, -1), norm=None, out=None):
    d[a] = fitted(np.fft.fft2(d[y], None, axes, norm), a, axes)


@adjoint(np.fft.ifft2)
def ifft2(y, a, s=None, axes=(-2, -1), norm=None, out=None):
    d[a] = fitted(np.fft.ifft2(d[y], None, axes, norm), a, axes)


@adjoint(np.fft.fftn)
def fftn(y, a, s=None, axes=None, norm=None, out=None):
    d[a] = fitted(np.fft.fftn(d[y], None, transform_axes(a, s, axes), norm), a, transform_axes(a, s, axes))


@adjoint(np.fft.ifftn)
def ifftn(y, a, s=None, axes=None, norm=None, out=None):
    d[a] = fitted(np.fft.ifftn(d[y], None, transform_axes(a, s, axes), norm), a, transform_axes(a, s, axes))


@adjoint(np.fft.rfft)
def rfft(y, a, n=None, axis=-1, norm=None, out=None):
    d[a] = rfft_grad(d[y], a, n, axis, norm)


@adjoint(np.fft.irfft)
def irfft(y, a, n=None, axis=-1, norm=None, out=None):
    d[a] = irfft_grad(d[y], a, n, axis, norm)


@adjoint(np.fft.rfft2)
def rfft2(y, a, s=None, axes=(-2, -1), norm=None, out=None):
    d[a] = rfftn_grad(d[y], a, s, axes, norm)


@adjoint(np.fft.irfft2)
def irfft2(y, a, s=None, axes=(-2, -1), norm=None, out=None):
    d[a] = irfftn_grad(d[y], a, s, axes, norm)


@adjoint(np.fft.rfftn)
def rfftn(y, a, s=None, axes=None, norm=None, out=None):
    d[a] = rfftn_grad(d[y], a, s, axes, norm)


@adjoint(np.fft.irfftn)
def irfftn(y, a, s=None, axes=None, norm=None, out=None):
    d[a] = irfftn_grad(d[y], a, s, axes, norm)


@adjoint(np.fft.hfft)
def hfft(y, a, n=None, axis=-1, norm=None, out=None):
    d[a] = hfft_grad(d[y], a, n, axis, norm)


@adjoint(np.fft.ihfft)
def ihfft(y, a, n=None, axis=-1, norm=None, out=None):
    d[a] = ihfft_grad(d[y], a, n, axis, norm)


@adjoint(np.fft.fftshift)
def fftshift(y, x, axes=None):
    d[x] = np.fft.ifftshift(d[y], axes)


@adjoint(np.fft.ifftshift)
def ifftshift(y, x, axes=None):
    d[x] = np.fft.fftshift(d[y], axes)


# --- tangents: each transform is linear --------------------------------------------------------------------

@tangent(np.fft.fft)
def fft(y, a, n=None, axis=-1, norm=None, out=None):
    d[y] = np.fft.fft(d[a], n, axis, norm)


@tangent(np.fft.ifft)
def ifft(y, a, n=None, axis=-1, norm=None, out=None):
    d[y] = np.fft.ifft(d[a], n, axis, norm)


@tangent(np.fft.fft2)
def fft2(y, a, s=None, axes=(-2, -1), norm=None, out=None):
    d[y] = np.fft.fft2(d[a], s, axes, norm)


@tangent(np.fft.ifft2)
def ifft2(y, a, s=None, axes=(-2, -1), norm=None, out=None):
    d[y] = np.fft.ifft2(d[a], s, axes, norm)


@tangent(np.fft.fftn)
def fftn(y, a, s=None, axes=None, norm=None, out=None):
    d[y] = np.fft.fftn(d[a], s, axes, norm)


@tangent(np.fft.ifftn)
def ifftn(y, a, s=None, axes=None, norm=None, out=None):
    d[y] = np.fft.ifftn(d[a], s, axes, norm)


@tangent(np.fft.rfft)
def rfft(y, a, n=None, axis=-1, norm=None, out=None):
    d[y] = np.fft.rfft(d[a], n, axis, norm)


@tangent(np.fft.irfft)
def irfft(y, a, n=None, axis=-1, norm=None, out=None):
    d[y] = np.fft.irfft(d[a], n, axis, norm)


@tangent(np.fft.rfft2)
def rfft2(y, a, s=None, axes=(-2, -1), norm=None, out=None):
    d[y] = np.fft.rfft2(d[a], s, axes, norm)


@tangent(np.fft.irfft2)
def irfft2(y, a, s=None, axes=(-2, -1), norm=None, out=None):
    d[y] = np.fft.irfft2(d[a], s, axes, norm)


@tangent(np.fft.rfftn)
def rfftn(y, a, s=None, axes=None, norm=None, out=None):
    d[y] = np.fft.rfftn(d[a], s, axes, norm)


@tangent(np.fft.irfftn)
def irfftn(y, a, s=None, axes=None, norm=None, out=None):
    d[y] = np.fft.irfftn(d[a], s, axes, norm)


@tangent(np.fft.hfft)
def hfft(y, a, n=None, axis=-1, norm=None, out=None):
    d[y] = np.fft.hfft(d[a], n, axis, norm)


@tangent(np.fft.ihfft)
def ihfft(y, a, n=None, axis=-1, norm=None, out=None):
    d[y] = np.fft.ihfft(d[a], n, axis, norm)


@tangent(np.fft.fftshift)
def fftshift(y, x, axes=None):
    d[y] = np.fft.fftshift(d[x], axes)


@tangent(np.fft.ifftshift)
def ifftshift(y, x, axes=None):
    d[y] = np.fft.ifftshift(d[x], axes)


same_for_complex(np.fft.fft, np.fft.ifft, np.fft.fft2, np.fft.ifft2, np.fft.fftn, np.fft.ifftn, np.fft.rfft,
                 np.fft.irfft, np.fft.rfft2, np.fft.irfft2, np.fft.rfftn, np.fft.irfftn, np.fft.hfft, np.fft.ihfft,
                 np.fft.fftshift, np.fft.ifftshift)
