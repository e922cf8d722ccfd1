"""Complex values between real arguments and a real output, through the whole pipeline.

A complex value's adjoint is ``dL/dRe(z) - 1j * dL/dIm(z)`` (autograd's convention); a real value's adjoint
is the real part of what reaches it. Each function below is checked with `grad` against central finite
differences, and with `jvp` and `hvp` against differences of the function and of its gradient. Calls of a
function whose rule is not known to hold for complex values are refused at the user's line.
"""
import numpy as np
import pytest
from gradcheck import assert_grad_matches_fd

import s2sgrad as sg

W = np.array([[0.5, -1.0, 0.25], [1.5, 0.3, -0.7]])


def phase(x):
    z = x * np.exp(1j * x)
    return np.sum(np.real(z) * 2.0 + np.imag(z * z)) + np.sum(np.angle(z + 0.5))


def modulus(x):
    z = x * (1.0 + 2.0j) - 0.5j
    return np.sum(np.abs(z) ** 2) + np.sum(abs(z))


def conjugate_product(x, y):
    z = (x + 1j * y) @ (y - 0.5j * x)
    return np.abs(np.sum(np.conj(z) * z))


def power_spectrum(x):
    spectrum = np.fft.fft(x)
    return np.sum(np.abs(spectrum) ** 2) / x.size


def filtered(x):
    kernel = np.fft.rfft(np.array([0.5, 0.25, 0.0, 0.0, 0.0, 0.25]))
    return np.sum(np.fft.irfft(np.fft.rfft(x) * kernel, n=6) ** 2)


def spectral_2d(x):
    spectrum = np.fft.fftshift(np.fft.fft2(x, norm="ortho"))
    return np.sum(np.real(spectrum) * np.imag(spectrum)) + np.mean(np.abs(spectrum))


def round_trip(x):
    z = np.fft.ifftn(np.fft.fftn(x * x, s=(4, 5), axes=(0, 1)), axes=(0,))
    return np.sum(np.real(z * np.conj(z)))


def weighted(x):
    z = np.exp(1j * x) * (W @ x)[0]
    return np.real(np.dot(np.sum(z), np.mean(z)))


def in_a_loop(x):
    acc = 0.0 + 0.0j
    for k in range(3):
        acc = acc + np.sum(np.exp(1j * k * x) * x)
    return np.abs(acc) + np.real(acc)


def weight_in_a_loop(w, x):
    h = x
    total = 0.0
    for _ in range(3):
        z = np.tanh(w @ h) * (1.0 + 0.5j)
        h = np.real(z * np.conj(z))
        total = total + np.sum(np.abs(np.fft.fft(h)))
    return total


def hermitian(x):
    return np.sum(np.fft.hfft(np.fft.ihfft(x) * (1.0 + 1.0j)) ** 2)


def eigen(x):
    """Complex eigenvalues of a real matrix; LAPACK's eigenvectors (unit norm, largest component real) have
    signs that jump: a loss of them invariant under the sign only."""
    w, v = np.linalg.eig(x)
    return np.sum(np.real(w) * W[0, :2]) + np.sum(np.imag(w) ** 2) + np.sum(np.abs(v) * W[:, :2]) \
        + np.sum(np.real(v * v) * W[:, 1:]) + np.sum(np.imag(v * v) * W[:, :2].T[:, 0])


rng = np.random.default_rng(3)
X = rng.uniform(0.3, 1.5, 6)
CASES = [(phase, (X,), 0), (modulus, (X,), 0), (conjugate_product, (X[:3].reshape(1, 3), X[3:].reshape(3, 1)), (0, 1)),
         (power_spectrum, (X,), 0), (filtered, (X,), 0), (spectral_2d, (X.reshape(2, 3),), 0),
         (round_trip, (X.reshape(2, 3),), 0), (weighted, (X[:3],), 0), (in_a_loop, (X,), 0),
         (weight_in_a_loop, (0.3 * rng.standard_normal((3, 3)), X[:3]), (0, 1)), (hermitian, (X,), 0),
         (eigen, (np.array([[0.5, -1.2], [1.1, 0.3]]),), 0)]


@pytest.mark.parametrize("f, args, wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_grad_matches_finite_differences(f, args, wrt):
    grads = assert_grad_matches_fd(f, args, wrt)
    for g in grads if isinstance(wrt, tuple) else [grads]:
        assert np.asarray(g).dtype == np.float64


def _along(f, args, wrt, directions, h=1e-5):
    index = list(wrt) if isinstance(wrt, tuple) else [wrt]

    def at(t):
        moved = list(args)
        for i, v in zip(index, directions):
            moved[i] = args[i] + t * v
        return f(*moved)
    return lambda: (at(h) - at(-h)) / (2 * h)


@pytest.mark.parametrize("f, args, wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_jvp_and_hvp_match_differences(f, args, wrt):
    index = list(wrt) if isinstance(wrt, tuple) else [wrt]
    directions = [np.random.default_rng(0).standard_normal(np.shape(args[i])) for i in index]
    tangent_in = tuple(directions) if isinstance(wrt, tuple) else directions[0]
    value, tangent = sg.jvp(f, wrt=wrt)(*args, tangent_in)
    assert np.isrealobj(tangent)
    assert tangent == pytest.approx(_along(f, args, wrt, directions)(), rel=1e-6, abs=1e-8)

    hvp = sg.hvp(f, wrt=wrt)(*args, tangent_in)
    grad = sg.grad(f, wrt=wrt)
    numeric = _along(lambda *a: np.concatenate([np.ravel(g) for g in (grad(*a) if isinstance(wrt, tuple)
                                                                     else [grad(*a)])]), args, wrt, directions)()
    got = np.concatenate([np.ravel(g) for g in (hvp if isinstance(wrt, tuple) else [hvp])])
    assert np.isrealobj(got)
    np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-6)


def into_a_norm(x):
    z = x * 1j
    return np.linalg.norm(z)


def into_a_maximum(x):
    z = np.fft.fft(x)
    return np.sum(np.maximum(z, 0.0).real)


def into_a_sort(x):
    z = np.exp(1j * x)
    return np.real(np.sort(z)[0])


@pytest.mark.parametrize("f, line", [(into_a_norm, "return np.linalg.norm(z)"),
                                     (into_a_maximum, "return np.sum(np.maximum(z, 0.0).real)"),
                                     (into_a_sort, "return np.real(np.sort(z)[0])")],
                         ids=["norm", "maximum", "sort"])
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_rule_not_known_to_hold_for_complex_values_is_refused_at_the_line(f, line, mode):
    with pytest.raises(sg.UnsupportedSyntax, match=r"is called on a complex value between 'x' and the output") \
            as info:
        sg.grad(f)(X) if mode == "grad" else sg.jvp(f)(X, X)
    assert info.value.location is not None and info.value.location.text.strip() == line


def test_a_real_argument_meeting_a_complex_one_gets_a_real_gradient_in_place():
    """The gradient of a weight read every trip of a loop accumulates in its own (real) buffer."""
    source = sg.source(weight_in_a_loop, wrt=(0, 1), args=(np.eye(3), X[:3]))
    assert "np.real(" in source
