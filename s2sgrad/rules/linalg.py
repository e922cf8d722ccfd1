"""Rules for products, contractions and the linear algebra of `np.linalg`.

``np.dot`` and ``np.inner`` are contractions of one axis each, so they share
the gradients of ``np.tensordot``. Matrix functions work on stacks of
matrices too (the last two axes), as NumPy's do.
"""
import numpy as np

from ..runtime import (einsum_grad, grad_or_zeros, matmul_grad_a, matmul_grad_b, tensordot_grad_a,
                       tensordot_grad_b, unbroadcast, undiagonal)
from .registry import adjoint, d


@adjoint(np.matmul)
def matmul(y, x1, x2, /, out=None):
    d[x1] = matmul_grad_a(d[y], x1, x2)
    d[x2] = matmul_grad_b(d[y], x1, x2)


@adjoint(np.dot)
def dot(y, a, b, out=None):
    """The last axis of `a` meets the second-to-last of `b` (its only one for a vector); a scalar multiplies."""
    axes = ([-1], [-2 if np.ndim(b) > 1 else -1]) if np.ndim(a) and np.ndim(b) else 0
    d[a] = tensordot_grad_a(d[y], a, b, axes)
    d[b] = tensordot_grad_b(d[y], a, b, axes)


@adjoint(np.inner)
def inner(y, a, b, /):
    axes = ([-1], [-1]) if np.ndim(a) and np.ndim(b) else 0
    d[a] = tensordot_grad_a(d[y], a, b, axes)
    d[b] = tensordot_grad_b(d[y], a, b, axes)


@adjoint(np.outer)
def outer(y, a, b, out=None):
    d[a] = np.reshape(np.dot(d[y], np.ravel(b)), np.shape(a))
    d[b] = np.reshape(np.dot(np.ravel(a), d[y]), np.shape(b))


@adjoint(np.tensordot)
def tensordot(y, a, b, axes=2):
    d[a] = tensordot_grad_a(d[y], a, b, axes)
    d[b] = tensordot_grad_b(d[y], a, b, axes)


@adjoint(np.einsum)
def einsum(y, subscripts, *operands, out=None, optimize=False):
    """``d[operands]`` is the list of the operands' gradients."""
    d[operands] = einsum_grad(d[y], subscripts, operands)


@adjoint(np.linalg.inv)
def inv(y, a):
    yT = np.swapaxes(y, -1, -2)
    d[a] = -(yT @ d[y] @ yT)


@adjoint(np.linalg.det)
def det(y, a):
    d[a] = np.expand_dims(d[y] * y, (-2, -1)) * np.swapaxes(np.linalg.inv(a), -1, -2)


@adjoint(np.linalg.slogdet)
def slogdet(y, a):
    """Only the log-determinant ``y[1]`` carries a gradient: the sign is piecewise constant."""
    d[a] = np.expand_dims(grad_or_zeros(d[y][1], y[1]), (-2, -1)) * np.swapaxes(np.linalg.inv(a), -1, -2)


@adjoint(np.linalg.solve)
def solve(y, a, b):
    """A 1-D `b` is one right-hand side; otherwise `b` is a (stack of) matrices of right-hand sides."""
    vec = np.ndim(b) == 1
    gb = np.linalg.solve(np.swapaxes(a, -1, -2), d[y][..., None] if vec else d[y])
    d[b] = unbroadcast(gb[..., 0] if vec else gb, b)
    d[a] = unbroadcast(-(gb @ np.swapaxes(y[..., None] if vec else y, -1, -2)), a)


@adjoint(np.trace)
def trace(y, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d[a] = undiagonal(np.expand_dims(d[y], -1), a, offset, axis1, axis2)


if hasattr(np, "vecdot"):  # NumPy 2
    @adjoint(np.linalg.trace)
    def linalg_trace(y, x, /, *, offset=0, dtype=None):
        d[x] = undiagonal(np.expand_dims(d[y], -1), x, offset, -2, -1)

    @adjoint(np.linalg.matmul)
    def linalg_matmul(y, x1, x2, /):
        d[x1] = matmul_grad_a(d[y], x1, x2)
        d[x2] = matmul_grad_b(d[y], x1, x2)

    @adjoint(np.linalg.outer)
    def linalg_outer(y, x1, x2, /):
        d[x1] = np.dot(d[y], x2)
        d[x2] = np.dot(x1, d[y])

    @adjoint(np.linalg.tensordot)
    def linalg_tensordot(y, x1, x2, /, *, axes=2):
        d[x1] = tensordot_grad_a(d[y], x1, x2, axes)
        d[x2] = tensordot_grad_b(d[y], x1, x2, axes)

    @adjoint(np.vecdot, np.linalg.vecdot)
    def vecdot(y, x1, x2, /, *, axis=-1):
        d[x1] = unbroadcast(np.expand_dims(d[y], axis) * x2, x1)
        d[x2] = unbroadcast(np.expand_dims(d[y], axis) * x1, x2)
