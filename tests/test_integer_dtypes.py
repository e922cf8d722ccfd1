"""A function with a rule that computes in an integer or boolean dtype named by a constant
(``np.sum(x, dtype=int)``: a sum of truncated values) passes no gradient, by keyword or by position,
in reverse and forward mode; a float dtype passes it on."""
import numpy as np
import pytest

import s2sgrad as sg

X = np.array([[1.25, -2.5, 3.75], [0.5, 2.25, -1.5]])


def sum_int(x):
    return np.sum(x, dtype=int) * x[0, 0] + np.sum(x * x)


def mean_int32_positional(x):
    return np.mean(x, None, np.int32) * x[0, 0] + np.sum(x * x)


def cumsum_int(x):
    return np.sum(np.cumsum(x, axis=1, dtype=np.int64)) * x[0, 0] + np.sum(x * x)


def prod_bool(x):
    return np.prod(x, dtype=bool) * x[0, 0] + np.sum(x * x)


@pytest.mark.parametrize("f", [sum_int, mean_int32_positional, cumsum_int, prod_bool])
def test_an_integer_dtype_passes_no_gradient(f):
    expected = 2.0 * X
    expected[0, 0] += float(f(X) - np.sum(X * X)) / X[0, 0]       # the integer part, as a constant factor
    np.testing.assert_allclose(sg.grad(f)(X), expected, rtol=1e-12)
    direction = np.arange(6.0).reshape(2, 3) - 2.0
    _, tangent = sg.jvp(f)(X, direction)
    np.testing.assert_allclose(tangent, np.sum(expected * direction), rtol=1e-12)


def sum_float32(x):
    return np.sum(x * x, dtype=np.float32)


def test_a_float_dtype_passes_the_gradient():
    np.testing.assert_allclose(sg.grad(sum_float32)(X), 2.0 * X, rtol=1e-6)


def squares(x):
    return np.sum(x ** 2)


def squares_of_parts(p):
    return np.sum(p["a"] ** 2) + np.sum(p["b"][0] * p["b"][1])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_a_gradient_has_its_arguments_floating_dtype(dtype):
    x = np.arange(3, dtype=dtype)
    assert sg.grad(squares)(x).dtype == dtype
    assert sg.value_and_grad(squares)(x)[1].dtype == dtype
    assert sg.vjp(squares)(x, 1.0)[1].dtype == dtype
    assert np.array_equal(sg.grad(squares)(x), 2 * x)
    p = {"a": x, "b": [x, np.ones(3)]}
    g = sg.grad(squares_of_parts)(p)
    assert (g["a"].dtype, g["b"][0].dtype, g["b"][1].dtype) == (dtype, dtype, np.float64)
