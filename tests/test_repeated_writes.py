"""Writes at an index that names an element twice: NumPy keeps one of the writes (the last), so the
values of the others reach nothing and get no gradient, through ``y[idx] = v`` and ``y[idx] += v``.
Every kind of index that can repeat is swept (lists, integer arrays, tuples of them, mixed with slices,
2-D index arrays), with repeats and without, each against finite differences in reverse and forward mode."""
import numpy as np
import pytest
from gradcheck import assert_grad_matches_fd

import s2sgrad as sg

INDICES = {
    "list": [0, 0, 2],
    "list-negative": [-3, 0, 1],
    "array": np.array([1, 1, 1]),
    "array-2d": np.array([[0, 2], [2, 2]]),
    "tuple-of-lists": ([0, 0, 1], [1, 1, 2]),
    "slice-and-list": (slice(None), [2, 2]),
    "list-and-int": ([1, 1], 0),
    "no-repeat": [2, 0],
}
SHAPES = {"list": (4,), "list-negative": (3,), "array": (3,), "array-2d": (3,), "tuple-of-lists": (3, 3),
          "slice-and-list": (2, 3), "list-and-int": (2, 3), "no-repeat": (3,)}


def _value_shape(name):
    return np.zeros(SHAPES[name])[INDICES[name]].shape


def set_at(x, v, idx):
    y = x * 1.0
    y[idx] = v * v
    return np.sum(y * y * x)


def add_at(x, v, idx):
    y = x * 1.0
    y[idx] += v * v
    return np.sum(np.sin(y) * x)


@pytest.mark.parametrize("write", [set_at, add_at], ids=["set", "add"])
@pytest.mark.parametrize("name", INDICES)
def test_repeated_index_write(write, name):
    rng = np.random.default_rng(len(name))
    x = rng.uniform(0.5, 1.5, SHAPES[name])
    v = rng.uniform(0.5, 1.5, _value_shape(name))
    assert_grad_matches_fd(write, (x, v, INDICES[name]), wrt=(0, 1))


@pytest.mark.parametrize("name", INDICES)
def test_repeated_index_write_forward(name):
    rng = np.random.default_rng(len(name))
    x = rng.uniform(0.5, 1.5, SHAPES[name])
    v = rng.uniform(0.5, 1.5, _value_shape(name))
    dv = rng.standard_normal(v.shape)
    _, tangent = sg.jvp(set_at, wrt=1)(x, v, INDICES[name], dv)
    eps = 1e-6
    numeric = (set_at(x, v + eps * dv, INDICES[name]) - set_at(x, v - eps * dv, INDICES[name])) / (2 * eps)
    assert np.isclose(tangent, numeric, rtol=1e-6)


def test_repeated_index_value_gradient_by_hand():
    """``y[[0, 0]] = v``: NumPy keeps v[1], so v[0] gets nothing and v[1] all of y[0]'s gradient."""
    def f(v):
        y = np.zeros(2)
        y[[0, 0]] = v
        return 3.0 * y[0] + y[1]
    assert np.array_equal(sg.grad(f)(np.array([1.0, 2.0])), [0.0, 3.0])
