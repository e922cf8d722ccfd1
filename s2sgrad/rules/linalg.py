"""Rules for products, contractions and the linear algebra of `np.linalg`.

``np.dot`` and ``np.inner`` are contractions of one axis each, so they share
the gradients of ``np.tensordot``. Matrix functions work on stacks of
matrices too (the last two axes), as NumPy's do.
"""
import numpy as np

from ..runtime import (
    cross_grad,
    einsum_grad,
    einsum_tangent,
    grad_or_zeros,
    kron_grad_a,
    kron_grad_b,
    matmul_grad_a,
    matmul_grad_b,
    multi_dot_grad,
    multi_dot_tangent,
    norm_grad,
    svd_grad,
    svd_tangent,
    tensordot_grad_a,
    tensordot_grad_b,
    unbroadcast,
    undiagonal,
    vector_norm_grad,
)
from .registry import adjoint, d, same_for_complex, tangent


@adjoint(np.matmul)
def matmul(y, x1, x2, /, out=None):
    d[x1] = matmul_grad_a(d[y], x1, x2)
    d[x2] = matmul_grad_b(d[y], x1, x2)


@tangent(np.matmul)
def matmul(y, x1, x2, /, out=None):
    d[y] = np.matmul(d[x1], x2) + np.matmul(x1, d[x2])


@adjoint(np.dot)
def dot(y, a, b, out=None):
    """The last axis of `a` meets the second-to-last of `b` (its only one for a vector); a scalar multiplies."""
    axes = ([-1], [-2 if np.ndim(b) > 1 else -1]) if np.ndim(a) and np.ndim(b) else 0
    d[a] = tensordot_grad_a(d[y], a, b, axes)
    d[b] = tensordot_grad_b(d[y], a, b, axes)


@tangent(np.dot)
def dot(y, a, b, out=None):
    d[y] = np.dot(d[a], b) + np.dot(a, d[b])


@adjoint(np.inner)
def inner(y, a, b, /):
    axes = ([-1], [-1]) if np.ndim(a) and np.ndim(b) else 0
    d[a] = tensordot_grad_a(d[y], a, b, axes)
    d[b] = tensordot_grad_b(d[y], a, b, axes)


@tangent(np.inner)
def inner(y, a, b, /):
    d[y] = np.inner(d[a], b) + np.inner(a, d[b])


@adjoint(np.outer)
def outer(y, a, b, out=None):
    d[a] = np.reshape(np.dot(d[y], np.ravel(b)), np.shape(a))
    d[b] = np.reshape(np.dot(np.ravel(a), d[y]), np.shape(b))


@tangent(np.outer)
def outer(y, a, b, out=None):
    d[y] = np.outer(d[a], b) + np.outer(a, d[b])


@adjoint(np.tensordot)
def tensordot(y, a, b, axes=2):
    d[a] = tensordot_grad_a(d[y], a, b, axes)
    d[b] = tensordot_grad_b(d[y], a, b, axes)


@tangent(np.tensordot)
def tensordot(y, a, b, axes=2):
    d[y] = np.tensordot(d[a], b, axes) + np.tensordot(a, d[b], axes)


@adjoint(np.einsum)
def einsum(y, subscripts, *operands, out=None, optimize=False):
    """``d[operands]`` is the list of the operands' gradients."""
    d[operands] = einsum_grad(d[y], subscripts, operands)


@tangent(np.einsum)
def einsum(y, subscripts, *operands, out=None, optimize=False):
    """``d[operands]`` is the tuple of the operands' tangents, None where zero."""
    d[y] = einsum_tangent(subscripts, operands, d[operands])


@adjoint(np.linalg.inv)
def inv(y, a):
    yT = np.swapaxes(y, -1, -2)
    d[a] = -(yT @ d[y] @ yT)


@tangent(np.linalg.inv)
def inv(y, a):
    d[y] = -(y @ d[a] @ y)


@adjoint(np.linalg.det)
def det(y, a):
    d[a] = np.expand_dims(d[y] * y, (-2, -1)) * np.swapaxes(np.linalg.inv(a), -1, -2)


@tangent(np.linalg.det)
def det(y, a):
    d[y] = y * np.trace(np.linalg.solve(a, d[a]), axis1=-2, axis2=-1)


@adjoint(np.linalg.slogdet)
def slogdet(y, a):
    """Only the log-determinant ``y[1]`` carries a gradient: the sign is piecewise constant."""
    d[a] = np.expand_dims(grad_or_zeros(d[y][1], y[1]), (-2, -1)) * np.swapaxes(np.linalg.inv(a), -1, -2)


@tangent(np.linalg.slogdet)
def slogdet(y, a):
    """The sign ``y[0]`` is piecewise constant: its tangent is zero."""
    d[y] = (np.zeros_like(y[0]), np.trace(np.linalg.solve(a, d[a]), axis1=-2, axis2=-1))


@adjoint(np.linalg.solve)
def solve(y, a, b):
    """A 1-D `b` is one right-hand side; otherwise `b` is a (stack of) matrices of right-hand sides."""
    vec = np.ndim(b) == 1
    gb = np.linalg.solve(np.swapaxes(a, -1, -2), d[y][..., None] if vec else d[y])
    d[b] = unbroadcast(gb[..., 0] if vec else gb, b)
    d[a] = unbroadcast(-(gb @ np.swapaxes(y[..., None] if vec else y, -1, -2)), a)


@tangent(np.linalg.solve)
def solve(y, a, b):
    """A 1-D `b` is one right-hand side; otherwise `b` is a (stack of) matrices of right-hand sides."""
    vec = np.ndim(b) == 1
    rhs = d[b] - (d[a] @ y[..., None])[..., 0] if vec else d[b] - d[a] @ y
    d[y] = np.linalg.solve(a, rhs[..., None])[..., 0] if vec else np.linalg.solve(a, rhs)


@adjoint(np.trace)
def trace(y, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d[a] = undiagonal(np.expand_dims(d[y], -1), a, offset, axis1, axis2)


@tangent(np.trace)
def trace(y, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d[y] = np.trace(d[a], offset, axis1, axis2)


if hasattr(np, "vecdot"):  # NumPy 2
    @adjoint(np.linalg.trace)
    def linalg_trace(y, x, /, *, offset=0, dtype=None):
        d[x] = undiagonal(np.expand_dims(d[y], -1), x, offset, -2, -1)

    @tangent(np.linalg.trace)
    def linalg_trace(y, x, /, *, offset=0, dtype=None):
        d[y] = np.linalg.trace(d[x], offset=offset)

    @adjoint(np.linalg.matmul)
    def linalg_matmul(y, x1, x2, /):
        d[x1] = matmul_grad_a(d[y], x1, x2)
        d[x2] = matmul_grad_b(d[y], x1, x2)

    @tangent(np.linalg.matmul)
    def linalg_matmul(y, x1, x2, /):
        d[y] = np.linalg.matmul(d[x1], x2) + np.linalg.matmul(x1, d[x2])

    @adjoint(np.linalg.outer)
    def linalg_outer(y, x1, x2, /):
        d[x1] = np.dot(d[y], x2)
        d[x2] = np.dot(x1, d[y])

    @tangent(np.linalg.outer)
    def linalg_outer(y, x1, x2, /):
        d[y] = np.linalg.outer(d[x1], x2) + np.linalg.outer(x1, d[x2])

    @adjoint(np.linalg.tensordot)
    def linalg_tensordot(y, x1, x2, /, *, axes=2):
        d[x1] = tensordot_grad_a(d[y], x1, x2, axes)
        d[x2] = tensordot_grad_b(d[y], x1, x2, axes)

    @tangent(np.linalg.tensordot)
    def linalg_tensordot(y, x1, x2, /, *, axes=2):
        d[y] = np.linalg.tensordot(d[x1], x2, axes=axes) + np.linalg.tensordot(x1, d[x2], axes=axes)

    @adjoint(np.linalg.cross)
    def linalg_cross(y, x1, x2, /, *, axis=-1):
        d[x1] = cross_grad(d[y], x1, x2, -1, -1, -1, axis, "a")
        d[x2] = cross_grad(d[y], x1, x2, -1, -1, -1, axis, "b")

    @tangent(np.linalg.cross)
    def linalg_cross(y, x1, x2, /, *, axis=-1):
        d[y] = np.linalg.cross(d[x1], x2, axis=axis) + np.linalg.cross(x1, d[x2], axis=axis)

    @adjoint(np.linalg.vector_norm)
    def vector_norm(y, x, /, *, axis=None, keepdims=False, ord=2):
        d[x] = vector_norm_grad(d[y], y, x, axis, keepdims, ord)

    @tangent(np.linalg.vector_norm)
    def vector_norm(y, x, /, *, axis=None, keepdims=False, ord=2):
        d[y] = np.sum(vector_norm_grad(np.ones_like(y), y, x, axis, keepdims, ord) * d[x], axis=axis,
                      keepdims=keepdims)

    @adjoint(np.linalg.matrix_norm)
    def matrix_norm(y, x, /, *, keepdims=False, ord="fro"):
        d[x] = norm_grad(d[y], y, x, ord, (-2, -1), keepdims)

    @tangent(np.linalg.matrix_norm)
    def matrix_norm(y, x, /, *, keepdims=False, ord="fro"):
        d[y] = np.sum(norm_grad(np.ones_like(y), y, x, ord, (-2, -1), keepdims) * d[x], axis=(-2, -1),
                      keepdims=keepdims)

    @adjoint(np.linalg.svdvals)
    def svdvals(y, x, /):
        d[x] = svd_grad(d[y], y, x, False, False)

    @tangent(np.linalg.svdvals)
    def svdvals(y, x, /):
        d[y] = svd_tangent(d[x], y, x, False, False)

    @adjoint(np.vecdot, np.linalg.vecdot)
    def vecdot(y, x1, x2, /, *, axis=-1):
        d[x1] = unbroadcast(np.expand_dims(d[y], axis) * x2, x1)
        d[x2] = unbroadcast(np.expand_dims(d[y], axis) * x1, x2)

    @tangent(np.vecdot, np.linalg.vecdot)
    def vecdot(y, x1, x2, /, *, axis=-1):
        d[y] = np.vecdot(d[x1], x2, axis=axis) + np.vecdot(x1, d[x2], axis=axis)


@adjoint(np.linalg.multi_dot)
def multi_dot(y, arrays, *, out=None):
    d[arrays] = multi_dot_grad(d[y], arrays)


@tangent(np.linalg.multi_dot)
def multi_dot(y, arrays, *, out=None):
    d[y] = multi_dot_tangent(arrays, d[arrays])


@adjoint(np.vdot)
def vdot(y, a, b, /):
    d[a] = np.reshape(d[y] * np.ravel(b), np.shape(a))
    d[b] = np.reshape(d[y] * np.ravel(a), np.shape(b))


@tangent(np.vdot)
def vdot(y, a, b, /):
    d[y] = np.vdot(d[a], b) + np.vdot(a, d[b])


@adjoint(np.kron)
def kron(y, a, b):
    d[a] = kron_grad_a(d[y], a, b)
    d[b] = kron_grad_b(d[y], a, b)


@tangent(np.kron)
def kron(y, a, b):
    d[y] = np.kron(d[a], b) + np.kron(a, d[b])


@adjoint(np.cross)
def cross(y, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    d[a] = cross_grad(d[y], a, b, axisa, axisb, axisc, axis, "a")
    d[b] = cross_grad(d[y], a, b, axisa, axisb, axisc, axis, "b")


@tangent(np.cross)
def cross(y, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    d[y] = np.cross(d[a], b, axisa, axisb, axisc, axis) + np.cross(a, d[b], axisa, axisb, axisc, axis)


# Products and the inverse are holomorphic: their rules hold for complex values as written (no conjugates).
same_for_complex(np.matmul, np.dot, np.inner, np.outer, np.tensordot, np.einsum, np.trace, np.kron,
                 np.linalg.multi_dot, np.linalg.inv, np.linalg.solve, np.linalg.det)
