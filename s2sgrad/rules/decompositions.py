"""Rules for the decompositions of `np.linalg` and the functions computed from them.

A decomposition returns a tuple (``w, v = np.linalg.eigh(a)``): its adjoint ``d[y]`` is the tuple of its
results' adjoints (None where one has none), its tangent a tuple too. The helpers are in
`runtime.linalg`. Eigenvectors and singular vectors are NumPy's own, whose signs LAPACK fixes; their
gradients hold where the eigenvalues (singular values) are distinct. `eigh` and `cholesky` read one
triangle of `a` (``UPLO``, ``upper``): the gradient is on that triangle, the derivative of exactly what
NumPy computes.
"""
import numpy as np

from ..runtime import (
    cholesky_grad,
    cholesky_tangent,
    eig_grad,
    eig_tangent,
    eigh_grad,
    eigh_tangent,
    eigvals_grad,
    eigvals_tangent,
    matrix_power_grad,
    matrix_power_tangent,
    pinv_grad,
    pinv_tangent,
    svd_grad,
    svd_tangent,
    tensorinv_grad,
    tensorinv_tangent,
    tensorsolve_grad_a,
    tensorsolve_grad_b,
    tensorsolve_tangent,
)
from .registry import adjoint, d, same_for_complex, tangent


@adjoint(np.linalg.eigh)
def eigh(y, a, UPLO="L"):
    d[a] = eigh_grad(d[y], y, UPLO)


@tangent(np.linalg.eigh)
def eigh(y, a, UPLO="L"):
    d[y] = eigh_tangent(d[a], y, UPLO)


@adjoint(np.linalg.eigvalsh)
def eigvalsh(y, a, UPLO="L"):
    d[a] = eigh_grad((d[y], None), np.linalg.eigh(a, UPLO), UPLO)


@tangent(np.linalg.eigvalsh)
def eigvalsh(y, a, UPLO="L"):
    d[y] = eigh_tangent(d[a], np.linalg.eigh(a, UPLO), UPLO)[0]


@adjoint(np.linalg.eig)
def eig(y, a):
    """Where the eigenvalues are distinct; they and the eigenvectors may be complex."""
    d[a] = eig_grad(d[y], y, a)


@tangent(np.linalg.eig)
def eig(y, a):
    d[y] = eig_tangent(d[a], y)


@adjoint(np.linalg.eigvals)
def eigvals(y, a):
    d[a] = eigvals_grad(d[y], a)


@tangent(np.linalg.eigvals)
def eigvals(y, a):
    d[y] = eigvals_tangent(d[a], a)


@adjoint(np.linalg.cholesky)
def cholesky(y, a, /, *, upper=False):
    d[a] = cholesky_grad(d[y], y, upper)


@tangent(np.linalg.cholesky)
def cholesky(y, a, /, *, upper=False):
    d[y] = cholesky_tangent(d[a], y, upper)


@adjoint(np.linalg.svd)
def svd(y, a, full_matrices=True, compute_uv=True, hermitian=False):
    d[a] = svd_grad(d[y], y, a, full_matrices, compute_uv, hermitian)


@tangent(np.linalg.svd)
def svd(y, a, full_matrices=True, compute_uv=True, hermitian=False):
    d[y] = svd_tangent(d[a], y, a, full_matrices, compute_uv, hermitian)


@adjoint(np.linalg.pinv)
def pinv(y, a, rcond=None, hermitian=False, *, rtol=None):
    """Where the rank does not change near `a` (a full-rank `a`)."""
    d[a] = pinv_grad(d[y], y, a, hermitian)


@tangent(np.linalg.pinv)
def pinv(y, a, rcond=None, hermitian=False, *, rtol=None):
    d[y] = pinv_tangent(d[a], y, a, hermitian)


@adjoint(np.linalg.matrix_power)
def matrix_power(y, a, n):
    d[a] = matrix_power_grad(d[y], a, n)


@tangent(np.linalg.matrix_power)
def matrix_power(y, a, n):
    d[y] = matrix_power_tangent(d[a], a, n)


@adjoint(np.linalg.tensorinv)
def tensorinv(y, a, ind=2):
    d[a] = tensorinv_grad(d[y], y, a, ind)


@tangent(np.linalg.tensorinv)
def tensorinv(y, a, ind=2):
    d[y] = tensorinv_tangent(d[a], y, a, ind)


@adjoint(np.linalg.tensorsolve)
def tensorsolve(y, a, b, axes=None):
    d[a] = tensorsolve_grad_a(d[y], y, a, b, axes)
    d[b] = tensorsolve_grad_b(d[y], a, b, axes)


@tangent(np.linalg.tensorsolve)
def tensorsolve(y, a, b, axes=None):
    d[y] = tensorsolve_tangent(d[a], d[b], y, a, b, axes)


same_for_complex(np.linalg.eig, np.linalg.eigvals)      # (complex eigenvalues and eigenvectors: see runtime.linalg)
