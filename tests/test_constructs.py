"""Ordinary constructs that used to crash are differentiated right: grad, jvp and hvp against finite
differences (construct_cases.py), the Hessian of a dict argument, check_grad of a generated gradient."""
import construct_cases
import gradcheck
import numpy as np
import pytest
from construct_cases import CASES, D, X

import s2sgrad as sg

STEP = 1e-5


def moved(value, direction, t):
    """`value` + t * `direction`, for numbers, arrays and (named) tuples, lists and dicts of them."""
    if isinstance(value, dict):
        return {k: moved(value[k], direction[k], t) for k in value}
    if isinstance(value, (list, tuple)):
        items = [moved(v, d, t) for v, d in zip(value, direction)]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return value + t * direction


def random_like(value, rng):
    if isinstance(value, dict):
        return {k: random_like(value[k], rng) for k in value}
    if isinstance(value, (list, tuple)):
        items = [random_like(v, rng) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return rng.standard_normal(np.shape(value)) if np.ndim(value) else float(rng.standard_normal())


def along(fn, args, wrt, direction):
    """The central difference of `fn` at `args` along `direction` for argument `wrt`."""
    def at(t):
        shifted = list(args)
        shifted[wrt] = moved(args[wrt], direction, t)
        return fn(*shifted)
    plus, minus = gradcheck.leaves(at(STEP)), gradcheck.leaves(at(-STEP))
    return [(np.asarray(p) - np.asarray(m)) / (2 * STEP) for p, m in zip(plus, minus)]


def assert_leaves_close(got, expected):
    got = gradcheck.leaves(got)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("fn, args, wrt", CASES, ids=[f"{c[0].__name__}-{c[2]}" for c in CASES])
def test_construct_is_differentiated_right(fn, args, wrt):
    gradcheck.assert_grad_matches_fd(fn, args, wrt, rtol=1e-6, atol=1e-8)
    direction = random_like(args[wrt], np.random.default_rng(0))
    value, tangent = sg.jvp(fn, wrt)(*args, direction)
    assert value == pytest.approx(fn(*args), rel=1e-12)
    assert_leaves_close([tangent], along(fn, args, wrt, direction))
    assert_leaves_close(sg.hvp(fn, wrt)(*args, direction), along(sg.grad(fn, wrt), args, wrt, direction))


def test_a_named_tuple_gradient_is_that_named_tuple():
    pair = construct_cases.Pair(X, 2.0)
    grad = sg.grad(construct_cases.named_tuple_indexed)(pair)
    assert type(grad) is construct_cases.Pair
    np.testing.assert_allclose(grad.a, 2.0 + np.cos(X))
    assert grad.b == pytest.approx(np.sum(X))


def test_the_hessian_of_a_dict_argument_is_a_dict_of_dicts_of_blocks():
    def f(p):
        return np.sum(p["a"] ** 2 * p["b"]) + p["c"] ** 3
    point = {"a": np.array([1.0, 2.0]), "b": np.array([0.5, 1.5]), "c": 0.7}
    hessian = sg.hessian(f)(point)
    assert set(hessian) == {"a", "b", "c"} and all(set(row) == {"a", "b", "c"} for row in hessian.values())
    np.testing.assert_allclose(hessian["a"]["a"], np.diag(2 * point["b"]))
    np.testing.assert_allclose(hessian["a"]["b"], np.diag(2 * point["a"]))
    np.testing.assert_allclose(hessian["b"]["b"], np.zeros((2, 2)))
    np.testing.assert_allclose(hessian["a"]["c"], np.zeros(2))
    assert hessian["c"]["c"] == pytest.approx(6 * point["c"])


def test_the_hessian_of_a_dict_matches_finite_differences_of_its_gradient():
    fn = construct_cases.dict_values
    hessian = sg.hessian(fn)(D)
    for key in D:
        for k in range(D[key].size):
            direction = {name: np.zeros_like(v) for name, v in D.items()}
            direction[key][k] = 1.0
            column = along(sg.grad(fn), (D,), 0, direction)
            for row, expected in zip(D, column):
                np.testing.assert_allclose(hessian[row][key][..., k], expected, rtol=1e-5, atol=1e-7)


def test_check_grad_of_a_generated_gradient_with_a_scalar_output():
    assert sg.check_grad(sg.grad(construct_cases.list_write_of_numbers), 0.6) < 1e-6


def test_check_grad_of_a_function_with_an_array_output_is_refused():
    with pytest.raises(sg.NonScalarOutput, match=r"needs a scalar to differentiate, but the derivative with "
                                                  r"respect to 'x' inside it is an array of shape \(3,\)"):
        sg.check_grad(sg.grad(construct_cases.builtin_sum_of_product), X)
