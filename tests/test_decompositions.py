"""Second derivatives through `np.linalg`'s decompositions and the transforms of `np.fft`: `hvp` (forward mode
over the generated gradient, which reads the helpers of `runtime.linalg` and `runtime.fft` as code) against
central differences of the gradient. First derivatives are in test_rules.py, test_tangent_rules.py and
test_api_surface.py.
"""
import numpy as np
import pytest

import s2sgrad as sg

W = np.arange(9.0).reshape(3, 3) / 10


def eigh_values_and_vectors(a):
    w, v = np.linalg.eigh(a + a.T)
    return np.sum(w * w) + np.sum(W * v * v)


def cholesky(a):
    return np.sum(W * np.linalg.cholesky(a @ a.T + 3 * np.eye(3)))


def svd(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(s ** 3) + np.sum(W * u * u) + np.sum(W * vh * vh)


def pinv(a):
    return np.sum(W * np.linalg.pinv(a))


def eig(a):
    w, v = np.linalg.eig(a)
    return np.sum(np.abs(w) ** 2) + np.sum(np.abs(v) * W)


def kron_and_cross(a):
    return np.sum(np.kron(a, a) ** 2) + np.sum(np.cross(a, a[::-1]) ** 2)


def multi_dot(a):
    return np.sum(np.linalg.multi_dot([a, a, a]) * W)


def transforms(a):
    return np.sum(np.abs(np.fft.rfft2(a)) ** 2) + np.sum(np.fft.irfft(np.fft.fft(a[0]), n=4) ** 2)


CASES = [eigh_values_and_vectors, cholesky, svd, pinv, eig, kron_and_cross, multi_dot, transforms]


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_hvp_matches_differences_of_the_gradient(f):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 3)) + 2 * np.eye(3)
    v = rng.standard_normal((3, 3))
    grad = sg.grad(f)
    h = 1e-5
    numeric = (grad(x + h * v) - grad(x - h * v)) / (2 * h)
    np.testing.assert_allclose(sg.hvp(f)(x, v), numeric, rtol=1e-6, atol=1e-6 * np.max(np.abs(numeric)))
