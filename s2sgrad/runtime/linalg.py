"""The adjoints and tangents of matrix decompositions and of the other `np.linalg` functions whose
derivatives take more than a line: `eigh`, `eig`, `cholesky`, `svd`, `pinv`, `matrix_power`,
`tensorinv`, `tensorsolve`, `multi_dot`, and `np.kron` and `np.cross`.

All work on stacks of matrices (the last two axes), as NumPy's functions do. A decomposition's
adjoint takes the tuple of its results' adjoints, None where an output has none; a symmetric
input's gradient lives on the triangle NumPy reads (``UPLO``), so it is the derivative of exactly
what NumPy computes.

    >>> a = np.array([[2.0, 1.0], [1.0, 3.0]])
    >>> g = eigh_grad((np.ones(2), None), np.linalg.eigh(a), "L")
    >>> (np.round(g, 12) + 0.0).tolist()      # d trace(a) / da, on the lower triangle
    [[1.0, 0.0], [0.0, 1.0]]
"""
from __future__ import annotations

import numpy as np

from ..errors import NoDerivativeRule
from .dtypes import float_dtype


def _t(x):
    return np.swapaxes(x, -1, -2)


def _eye(n: int, value):
    """The identity matrix of size `n` in the floating dtype of `value`."""
    return np.eye(n, dtype=float_dtype(value))


def _gaps(w):
    """``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal, 0 on it (the eigenvalue gaps' reciprocals)."""
    diff = w[..., None, :] - w[..., :, None]
    eye = np.eye(w.shape[-1], dtype=bool)
    return np.where(eye, 0.0, 1.0 / np.where(eye, 1.0, diff))


def _on_triangle(s, lower: bool):
    """A gradient `s` with respect to a symmetric matrix, moved onto the triangle NumPy reads."""
    full = s + _t(s)
    tri = np.tril(full, -1) if lower else np.triu(full, 1)
    return tri + _eye(s.shape[-1], s) * s


def _symmetric_from(da, lower: bool):
    """The symmetric matrix NumPy sees when it reads only one triangle of `da`."""
    tri = np.tril(da, -1) if lower else np.triu(da, 1)
    return tri + _t(tri) + _eye(da.shape[-1], da) * da


def eigh_grad(g, y, UPLO="L"):
    """The gradient of ``np.linalg.eigh(a, UPLO)`` for the adjoints ``g = (gw, gv)`` of its results `y`."""
    w, v = y
    gw, gv = g
    s = 0.0
    if gw is not None:
        s = (v * np.expand_dims(gw, -2)) @ _t(v)
    if gv is not None:
        s = s + v @ (_gaps(w) * (_t(v) @ gv)) @ _t(v)
    return _on_triangle(np.broadcast_to(s, v.shape), UPLO in ("L", "l"))


def eigh_tangent(da, y, UPLO="L"):
    """The tangents ``(dw, dv)`` of ``np.linalg.eigh(a, UPLO)`` along `da`."""
    w, v = y
    m = _t(v) @ _symmetric_from(da, UPLO in ("L", "l")) @ v
    return np.diagonal(m, 0, -2, -1), v @ (_gaps(w) * m)


def _pivots(v):
    """For each eigenvector (column of `v`), a mask of the row of its largest component, which LAPACK makes
    real."""
    return np.arange(v.shape[-2])[:, None] == np.argmax(np.abs(v), axis=-2)[..., None, :]


def _at_pivots(x, pivots):
    return np.sum(x * pivots, axis=-2, keepdims=True)


def eig_grad(g, y, a):
    """The gradient of ``np.linalg.eig(a)`` for ``g = (gw, gv)``, where the eigenvalues are distinct. The
    eigenvectors are LAPACK's: unit norm, the largest component real (real eigenvectors: only their sign is
    free, and kept); so the gradient holds for every function of them, not only those of ``|v|``."""
    w, v = y
    gw, gv = g
    n = w.shape[-1]
    gm = 0.0 if gw is None else _eye(n, gw) * np.expand_dims(gw, -2)
    if gv is not None:
        s = np.sum(gv * v, axis=-2, keepdims=True)                 # (the adjoint of each column's own part)
        gd = gv - np.real(s) * np.conj(v)
        pivots = _pivots(v)
        gd = gd + pivots * (-1j * np.imag(s) / _at_pivots(v, pivots))
        gm = gm + _gaps(w) * (_t(v) @ gd)
    grad = np.linalg.solve(_t(v), np.broadcast_to(gm, v.shape) @ _t(v))
    return grad if np.iscomplexobj(a) else np.real(grad)


def eig_tangent(da, y):
    """The tangents ``(dw, dv)`` of ``np.linalg.eig(a)`` along `da` (see `eig_grad` for the eigenvectors)."""
    w, v = y
    m = np.linalg.solve(v, da @ v)
    dv = v @ (_gaps(w) * m)
    own = -np.real(np.sum(np.conj(v) * dv, axis=-2, keepdims=True))
    if np.iscomplexobj(v):
        pivots = _pivots(v)
        own = own - 1j * np.imag(_at_pivots(dv, pivots)) / _at_pivots(v, pivots)
    return np.diagonal(m, 0, -2, -1), dv + v * own


def eigvals_grad(g, a):
    """The gradient of ``np.linalg.eigvals(a)``."""
    return eig_grad((g, None), np.linalg.eig(a), a)


def eigvals_tangent(da, a):
    """The tangent of ``np.linalg.eigvals(a)`` along `da`."""
    return eig_tangent(da, np.linalg.eig(a))[0]


def _phi(x):
    """The lower triangle of `x`, its diagonal halved."""
    return np.tril(x) - 0.5 * _eye(x.shape[-1], x) * x


def cholesky_grad(g, y, upper=False):
    """The gradient of ``np.linalg.cholesky(a, upper=upper)``, on the triangle NumPy reads."""
    low = _t(y) if upper else y
    gl = _t(g) if upper else g
    p = _phi(_t(low) @ gl)
    s = np.linalg.solve(_t(low), _t(np.linalg.solve(_t(low), _t(p))))
    return _on_triangle(0.5 * (s + _t(s)), not upper)


def cholesky_tangent(da, y, upper=False):
    """The tangent of ``np.linalg.cholesky(a, upper=upper)`` along `da`."""
    low = _t(y) if upper else y
    sym = _symmetric_from(da, not upper)
    x = np.linalg.solve(low, _t(np.linalg.solve(low, _t(sym))))
    dl = low @ _phi(x)
    return _t(dl) if upper else dl


def check_not_hermitian(name: str, hermitian) -> None:
    """Refuse ``np.linalg.<name>(..., hermitian=True)``, which reads one triangle through `eigh`."""
    if hermitian:
        raise NoDerivativeRule(f"np.linalg.{name}(..., hermitian=True) has no derivative rule",
                               hint=f"call np.linalg.{name}(a) (or np.linalg.eigh(a))")


def check_no_extra_vectors(used) -> None:
    """Refuse an adjoint of the singular vectors past min(m, n) of ``np.linalg.svd(a, full_matrices=True)``."""
    if used:
        raise NoDerivativeRule("the singular vectors past min(m, n) of np.linalg.svd(a, full_matrices=True) are an "
                               "arbitrary basis: they have no derivative", hint="pass full_matrices=False")


def _reduced_svd(y, a, full_matrices):
    """u, s, vh of the thin decomposition, from the results `y` (full ones cut to min(m, n))."""
    u, s, vh = y
    k = s.shape[-1]
    return u[..., :k], s, vh[..., :k, :]


def svd_grad(g, y, a, full_matrices=True, compute_uv=True, hermitian=False):
    """The gradient of ``np.linalg.svd(a, full_matrices, compute_uv)``, for distinct nonzero singular values.
    With full matrices of a non-square `a`, the columns past min(m, n) are arbitrary: they may get no adjoint."""
    check_not_hermitian("svd", hermitian)
    if not compute_uv:
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        return (u * np.expand_dims(g, -2)) @ vh
    gu, gs, gvh = g
    k = y[1].shape[-1]
    check_no_extra_vectors(full_matrices and (gu is not None and np.any(gu[..., k:])
                                              or gvh is not None and np.any(gvh[..., k:, :])))
    u, s, vh = _reduced_svd(y, a, full_matrices)
    v = _t(vh)
    m, n = a.shape[-2:]
    f = _gaps(s * s)
    inner = 0.0 if gs is None else _eye(k, gs) * np.expand_dims(gs, -2)
    out = 0.0
    if gu is not None:
        gu = gu[..., :k]
        utgu = _t(u) @ gu
        inner = inner + (f * (utgu - _t(utgu))) * np.expand_dims(s, -2)
        if m > k:
            out = out + (gu - u @ utgu) / np.expand_dims(s, -2) @ vh
    if gvh is not None:
        gv = _t(gvh[..., :k, :])
        vtgv = vh @ gv
        inner = inner + np.expand_dims(s, -1) * (f * (vtgv - _t(vtgv)))
        if n > k:
            out = out + u @ _t((gv - v @ vtgv) / np.expand_dims(s, -2))
    return np.broadcast_to(u @ inner @ vh + out, a.shape)


def svd_tangent(da, y, a, full_matrices=True, compute_uv=True, hermitian=False):
    """The tangents of ``np.linalg.svd(a, ...)`` along `da`. With full matrices of a non-square `a`, the
    columns past min(m, n) are an arbitrary basis: their tangent is NaN."""
    check_not_hermitian("svd", hermitian)
    if not compute_uv:
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        return np.diagonal(_t(u) @ da @ _t(vh), 0, -2, -1)
    u, s, vh = _reduced_svd(y, a, full_matrices)
    v = _t(vh)
    m, n = a.shape[-2:]
    p = _t(u) @ da @ v
    f = _gaps(s * s)
    srow, scol = np.expand_dims(s, -2), np.expand_dims(s, -1)
    du = u @ (f * (p * srow + scol * _t(p)))
    dv = v @ (f * (scol * p + _t(p) * srow))
    if m > s.shape[-1]:
        du = du + (da @ v - u @ p) / srow
    if n > s.shape[-1]:
        dv = dv + (_t(da) @ u - v @ _t(p)) / srow
    if full_matrices and m != n:
        extra = np.full(y[0].shape[:-1] + (m - du.shape[-1],), np.nan) if m > n else None
        du = np.concatenate([du, extra], -1) if extra is not None else du
        dvh = _t(dv) if m > n else np.concatenate([_t(dv), np.full(y[2].shape[:-2] + (n - m, n), np.nan)], -2)
        return du, np.diagonal(p, 0, -2, -1), dvh
    return du, np.diagonal(p, 0, -2, -1), _t(dv)




def pinv_grad(g, y, a, hermitian=False):
    """The gradient of ``np.linalg.pinv(a)`` (where its rank does not change)."""
    check_not_hermitian("pinv", hermitian)
    yt = _t(y)
    m, n = a.shape[-2:]
    return (-(yt @ g @ yt) + _t(_eye(m, y) - a @ y) @ _t(g) @ y @ yt
            + yt @ y @ _t(g) @ _t(_eye(n, y) - y @ a))


def pinv_tangent(da, y, a, hermitian=False):
    """The tangent of ``np.linalg.pinv(a)`` along `da` (where its rank does not change)."""
    check_not_hermitian("pinv", hermitian)
    yt = _t(y)
    m, n = a.shape[-2:]
    return (-(y @ da @ y) + y @ yt @ _t(da) @ (_eye(m, y) - a @ y)
            + (_eye(n, y) - y @ a) @ _t(da) @ yt @ y)


def matrix_power_grad(g, a, n):
    """The gradient of ``np.linalg.matrix_power(a, n)``."""
    if n == 0:
        return np.zeros(np.shape(a), dtype=float_dtype(a))
    if n < 0:
        inv = np.linalg.inv(a)
        gi = matrix_power_grad(g, inv, -n)
        return -(_t(inv) @ gi @ _t(inv))
    at = _t(a)
    powers = [np.broadcast_to(_eye(a.shape[-1], a), a.shape)]
    for _ in range(n - 1):
        powers.append(powers[-1] @ at)
    return sum(powers[k] @ g @ powers[n - 1 - k] for k in range(n))


def matrix_power_tangent(da, a, n):
    """The tangent of ``np.linalg.matrix_power(a, n)`` along `da`."""
    if n == 0:
        return np.zeros(np.shape(a), dtype=float_dtype(a))
    if n < 0:
        inv = np.linalg.inv(a)
        return matrix_power_tangent(-(inv @ da @ inv), inv, -n)
    powers = [np.broadcast_to(_eye(a.shape[-1], a), a.shape)]
    for _ in range(n - 1):
        powers.append(powers[-1] @ a)
    return sum(powers[k] @ da @ powers[n - 1 - k] for k in range(n))


def tensorinv_grad(g, y, a, ind=2):
    """The gradient of ``np.linalg.tensorinv(a, ind)``: that of a matrix inverse, reshaped."""
    rows = int(np.prod(a.shape[:ind]))
    ym = np.reshape(y, (-1, rows))
    return np.reshape(-(ym.T @ np.reshape(g, ym.shape) @ ym.T), a.shape)


def tensorinv_tangent(da, y, a, ind=2):
    """The tangent of ``np.linalg.tensorinv(a, ind)`` along `da`."""
    rows = int(np.prod(a.shape[:ind]))
    ym = np.reshape(y, (-1, rows))
    return np.reshape(-(ym @ np.reshape(da, (rows, -1)) @ ym), y.shape)


def _tensorsolve_matrix(a, b, axes):
    """`a` with `axes` moved to the end, as the square matrix ``np.linalg.tensorsolve`` solves with."""
    if axes is not None:
        a = np.moveaxis(a, axes, range(a.ndim - len(axes), a.ndim))
    return a, np.reshape(a, (int(np.size(b)), -1))


def tensorsolve_grad_a(g, y, a, b, axes=None):
    """The gradient of ``np.linalg.tensorsolve(a, b, axes)`` with respect to `a`."""
    moved, am = _tensorsolve_matrix(a, b, axes)
    gb = np.linalg.solve(am.T, np.ravel(g))
    ga = np.reshape(-np.outer(gb, np.ravel(y)), moved.shape)
    if axes is not None:
        ga = np.moveaxis(ga, range(a.ndim - len(axes), a.ndim), axes)
    return ga


def tensorsolve_grad_b(g, a, b, axes=None):
    """The gradient of ``np.linalg.tensorsolve(a, b, axes)`` with respect to `b`."""
    _, am = _tensorsolve_matrix(a, b, axes)
    return np.reshape(np.linalg.solve(am.T, np.ravel(g)), np.shape(b))


def tensorsolve_tangent(da, db, y, a, b, axes=None):
    """The tangent of ``np.linalg.tensorsolve(a, b, axes)`` along `da` and `db` (None: zero)."""
    _, am = _tensorsolve_matrix(a, b, axes)
    rhs = np.zeros(np.size(b), dtype=float_dtype(y)) if db is None else np.ravel(db)
    if da is not None:
        rhs = rhs - _tensorsolve_matrix(da, b, axes)[1] @ np.ravel(y)
    return np.reshape(np.linalg.solve(am, rhs), np.shape(y))


def multi_dot_grad(g, arrays):
    """The gradients of ``np.linalg.multi_dot(arrays)``, one per array (a 1-D first or last one is a
    row or column vector, as NumPy takes it)."""
    mats = [np.atleast_2d(x) for x in arrays]
    if np.ndim(arrays[-1]) == 1:
        mats[-1] = mats[-1].T
    g = np.reshape(g, (mats[0].shape[0], mats[-1].shape[1]))
    prefix = [_eye(mats[0].shape[0], g)]
    for m in mats[:-1]:
        prefix.append(prefix[-1] @ m)
    suffix = [_eye(mats[-1].shape[1], g)]
    for m in mats[:0:-1]:
        suffix.append(m @ suffix[-1])
    suffix = suffix[::-1]
    return [np.reshape(prefix[k].T @ g @ suffix[k].T, np.shape(x)) for k, x in enumerate(arrays)]


def multi_dot_tangent(arrays, tangents):
    """The tangent of ``np.linalg.multi_dot(arrays)`` along `tangents` (None where zero)."""
    terms = [np.linalg.multi_dot([*arrays[:k], t, *arrays[k + 1:]]) for k, t in enumerate(tangents)
             if t is not None]
    if not terms:
        product = np.linalg.multi_dot(arrays)
        return np.zeros(np.shape(product), dtype=float_dtype(product))
    return sum(terms[1:], terms[0])


def _kron_blocks(g, a, b):
    """`g` (the shape of ``np.kron(a, b)``) with its axes split into pairs (a's axis, b's axis)."""
    nd = max(np.ndim(a), np.ndim(b))
    sa = (1,) * (nd - np.ndim(a)) + np.shape(a)
    sb = (1,) * (nd - np.ndim(b)) + np.shape(b)
    return np.reshape(g, [n for pair in zip(sa, sb) for n in pair]), sa, sb, nd


def kron_grad_a(g, a, b):
    """The gradient of ``np.kron(a, b)`` with respect to `a`."""
    blocks, sa, sb, nd = _kron_blocks(g, a, b)
    out = np.tensordot(blocks, np.reshape(b, sb), (list(range(1, 2 * nd, 2)), list(range(nd))))
    return np.reshape(out, np.shape(a))


def kron_grad_b(g, a, b):
    """The gradient of ``np.kron(a, b)`` with respect to `b`."""
    blocks, sa, sb, nd = _kron_blocks(g, a, b)
    out = np.tensordot(blocks, np.reshape(a, sa), (list(range(0, 2 * nd, 2)), list(range(nd))))
    return np.reshape(out, np.shape(b))


def _as_3d(x, axis):
    """Vectors along `axis` moved to the last axis and padded to 3 components; and their length."""
    x = np.moveaxis(np.asarray(x, dtype=float_dtype(x)), axis, -1)
    n = x.shape[-1]
    return (np.concatenate([x, np.zeros(x.shape[:-1] + (1,), dtype=x.dtype)], -1) if n == 2 else x), n


def cross_grad(g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None, of="a"):
    """The gradient of ``np.cross(a, b, axisa, axisb, axisc, axis)`` with respect to `a` (``of="a"``) or `b`."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a3, na = _as_3d(a, axisa)
    b3, nb = _as_3d(b, axisb)
    if na == 2 and nb == 2:
        zero = np.zeros(np.shape(g), dtype=float_dtype(g))
        g3 = np.stack([zero, zero, g], -1)
    else:
        g3 = np.moveaxis(g, axisc, -1)
    x, n, ax = (a, na, axisa) if of == "a" else (b, nb, axisb)
    grad = np.cross(b3, g3) if of == "a" else np.cross(g3, a3)
    grad = np.moveaxis(grad[..., :n], -1, axisa if of == "a" else axisb)
    return _summed_to(grad, np.shape(x))


def _summed_to(g, shape):
    while np.ndim(g) > len(shape):
        g = np.sum(g, axis=0)
    axes = tuple(i for i, (n, m) in enumerate(zip(shape, np.shape(g))) if n == 1 and m != 1)
    return np.sum(g, axis=axes, keepdims=True) if axes else g
