"""A power whose exponent is 0 has derivative 0 in its base, also where the base is 0 (``b * a ** (b - 1)``
would be ``0 * inf``): polynomial features ``x ** np.arange(n)`` evaluated at 0, ``x ** 0``, ``math.pow``,
through grad, jvp and hvp, against hand-derived values."""
import math

import numpy as np
import pytest

import s2sgrad as sg

C = np.array([2.0, -3.0, 0.5, 4.0])


def polynomial(x):
    return np.sum(C * x ** np.arange(4))


def polynomial_power(x):
    return np.sum(C * np.power(x, np.arange(4.0)))


def constant_power(x):
    return np.sum(x ** 0 + 3.0 * np.power(x, 0.0)) + x[0] ** 2


def scalar_pow(x):
    return math.pow(x, 0.0) + math.pow(x, 2.0)


def polynomial_derivative(x):            # d/dx sum(c_k x^k) = sum(k c_k x^(k-1))
    return C[1] + 2 * C[2] * x + 3 * C[3] * x ** 2


@pytest.mark.parametrize("f", [polynomial, polynomial_power])
@pytest.mark.parametrize("x", [0.0, 1.5])
def test_polynomial_features(f, x):
    point = np.array([x])
    assert np.allclose(sg.grad(f)(point), [polynomial_derivative(x)], rtol=1e-12)
    assert np.isclose(sg.jvp(f)(point, np.ones(1))[1], polynomial_derivative(x), rtol=1e-12)
    assert np.allclose(sg.hvp(f)(point, np.ones(1)), [2 * C[2] + 6 * C[3] * x], rtol=1e-12)


def test_an_exponent_of_zero_at_zero():
    x = np.array([0.0, 2.0])
    assert np.array_equal(sg.grad(constant_power)(x), [0.0, 0.0])
    assert sg.jvp(constant_power)(x, np.ones(2))[1] == 0.0
    assert sg.grad(scalar_pow)(0.0) == 0.0
    assert sg.grad(scalar_pow)(1.5) == 3.0
