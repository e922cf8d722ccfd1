"""A function whose output is an array of one element (``np.sum(x, keepdims=True)``, ``x[:1] @ W[:, :1]``) has
the gradient of that element, as in autograd: in `grad`, `value_and_grad`, and in the derivatives built on the
generated gradient (`hvp`, `hessian`, grad of grad). Bigger outputs are still refused, at the return."""
import re

import numpy as np
import pytest

import s2sgrad as sg
from tests.gradcheck import finite_difference
from tests.test_higher_order import check_hvp


def keepdims_sum(x):
    return np.sum(np.sin(x) * x, keepdims=True)


def first_product(x, y):
    return x[:1] * y[:1]


def quadratic_form(x, W):
    return x[None, :] @ W @ x[:, None]          # shape (1, 1): the matmul adjoints need a seed of that shape


def sliced_matmul(x, W):
    return np.tanh(x[:1] @ W[:1, :1])[None]      # shape (1, 1)


def mean_of_matrix(A):
    return np.mean(A ** 3, axis=(0, 1), keepdims=True)


def reshaped(x):
    return np.reshape(np.dot(x, x) * x[0], (1, 1, 1))


def at_least_1d(x):
    return np.atleast_1d(np.sum(np.exp(x)))


def in_a_loop(x):
    total = np.zeros(1)
    for k in range(3):
        total = total + x[k:k + 1] ** 2
    return total


RNG = np.random.default_rng(3)
X = RNG.standard_normal(3)
W = RNG.standard_normal((3, 3))
CASES = [
    (keepdims_sum, (X,)),
    (first_product, (X, RNG.standard_normal(3))),
    (quadratic_form, (X, W)),
    (sliced_matmul, (X, W)),
    (mean_of_matrix, (RNG.standard_normal((2, 3)),)),
    (reshaped, (X,)),
    (at_least_1d, (X,)),
    (in_a_loop, (X,)),
]
IDS = [f.__name__ for f, _ in CASES]


def _element_function(f):
    """`f`'s one element, as a scalar function."""
    def element(*args):
        return f(*args)[(0,) * np.ndim(f(*args))]
    element.__name__ = f"{f.__name__}_element"
    return element


@pytest.mark.parametrize("f, args", CASES, ids=IDS)
def test_grad_is_the_gradient_of_the_one_element(f, args):
    for k in range(len(args)):
        got = sg.grad(f, wrt=k)(*args)
        assert np.shape(got) == np.shape(args[k])
        np.testing.assert_allclose(got, finite_difference(_element_function(f), args, k), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f, args", CASES, ids=IDS)
def test_value_and_grad_returns_the_output_as_it_is(f, args):
    value, g = sg.value_and_grad(f, wrt=tuple(range(len(args))))(*args)
    expected = f(*args)
    assert type(value) is type(expected) and np.shape(value) == np.shape(expected)
    np.testing.assert_allclose(value, expected)
    for got, want in zip(g, sg.grad(f, wrt=tuple(range(len(args))))(*args)):
        np.testing.assert_allclose(got, want)


@pytest.mark.parametrize("f, args", CASES, ids=IDS)
def test_hvp_matches_differences_of_the_gradient(f, args):
    check_hvp(f, args, wrt=0)


@pytest.mark.parametrize("f, args", CASES[:3], ids=IDS[:3])
def test_hessian_is_that_of_the_one_element(f, args):
    x, step = args[0], 1e-5
    gradient = sg.grad(f)
    columns = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = step
        columns.append((gradient(x + e, *args[1:]) - gradient(x - e, *args[1:])) / (2 * step))
    np.testing.assert_allclose(sg.hessian(f)(*args), np.stack(columns, axis=-1), rtol=1e-6, atol=1e-8)


def cubed_in_an_array(s):
    return np.reshape(s ** 3, (1,))


def test_grad_of_grad_of_a_one_element_output():
    assert sg.grad(sg.grad(cubed_in_an_array))(1.5) == pytest.approx(6 * 1.5)
    assert sg.grad(sg.grad(cubed_in_an_array))(1.5) == pytest.approx(sg.api.forward.grad_of_grad(cubed_in_an_array)(1.5))


def row_sums(A):
    return np.sum(A, axis=1, keepdims=True)


def elementwise(x):
    return x * 2.0


def empty_sum(x):
    return np.sum(x[:0], axis=0, keepdims=True)[:0]


@pytest.mark.parametrize("derivative", [sg.grad, sg.value_and_grad], ids=["grad", "value_and_grad"])
@pytest.mark.parametrize("f, arg, shape", [(row_sums, np.ones((2, 3)), (2, 1)), (elementwise, np.ones(3), (3,)),
                                           (empty_sum, np.ones(3), (0,))], ids=["row_sums", "elementwise", "empty"])
def test_bigger_or_empty_outputs_are_refused_at_the_return(derivative, f, arg, shape):
    with pytest.raises(sg.NonScalarOutput, match=re.escape(f"to return a scalar, but it returned ndarray of shape "
                                                           f"{shape}")) as error:
        derivative(f)(arg)
    assert error.value.location.line == f.__code__.co_firstlineno + 1


@pytest.mark.parametrize("options", [{"optimize": False}, {"checkpoint": sg.Periodic(1)}], ids=["naive", "checkpoint"])
def test_the_seed_is_shaped_under_every_scheme(options):
    for f, args in (CASES[2], CASES[-1]):
        np.testing.assert_allclose(sg.grad(f, **options)(*args), sg.grad(f)(*args), rtol=1e-12)


@pytest.mark.parametrize("f, args", CASES, ids=IDS)
def test_check_grad_takes_the_one_element(f, args):
    assert sg.check_grad(f, *args, wrt=tuple(range(len(args)))) < 1e-6
