"""Primal-only work of backward loops done on all trips at once (s2sgrad/vectorize.py): where it applies,
where it must not, and that gradients stay those of the naive scheme and of finite differences."""
import re

import numpy as np
import pytest

import s2sgrad as sg
from s2sgrad.runtime import Stack

from gradcheck import finite_difference

rng = np.random.default_rng(3)


def rnn(W, h, xs):
    for x in xs:
        h = np.tanh(W @ h + x)
    return np.sum(h ** 2)


def nested(x, n, m):
    y = x
    for i in range(n):
        z = y
        for j in range(m):
            z = np.sin(z) * 0.9 + x
        y = np.cos(z) * y
    return np.sum(y)


def dot_inside(x, w, n):
    y = x
    for i in range(n):
        y = np.sin(y) + np.dot(y, w) * 0.1
    return np.sum(y)


def dot_only(x, w, n):
    y = x
    for i in range(n):
        y = np.dot(y, w) * w + y
    return np.sum(y)


def int_start(x, n):
    y = np.zeros(3, dtype=int)
    for i in range(n):
        y = np.sin(y) * x
    return np.sum(y)


def same_gradient(fn, args, wrt=0):
    fast = sg.grad(fn, wrt)(*args)
    slow = sg.grad(fn, wrt, optimize=False)(*args)
    for a, b in zip(fast if isinstance(wrt, tuple) else [fast], slow if isinstance(wrt, tuple) else [slow]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    return sg.source(fn, wrt, args=args)


def test_derivative_factors_are_computed_for_all_trips_before_the_loop():
    W, h, xs = rng.standard_normal((4, 4)) * 0.5, rng.standard_normal(4), rng.standard_normal((6, 4))
    text = same_gradient(rnn, (W, h, xs), wrt=(0, 1))
    forward, backward = text.split("# backward sweep")
    assert forward.count(".push(") == 2                     # h once a trip, and its final value after the loop
    assert "h_stack_rows = h_stack.pop_rows(trips + 1)" in backward and ".pop()" not in backward
    assert "h_2_rows = h_stack_rows[:-1]" in backward        # h_2 of a trip is h of the next
    assert "h_rows = h_stack_rows[1:]" in backward and "h_rows.append" not in backward
    assert "h_2_terms = 1.0 - h_2_rows * h_2_rows" in backward
    assert "for h_2_term in h_2_terms:" in backward and "dh * h_2_term" in backward
    numeric = finite_difference(rnn, (W, h, xs), 0)
    np.testing.assert_allclose(sg.grad(rnn)(W, h, xs), numeric, rtol=1e-6, atol=1e-8)


def test_inner_loops_pop_their_own_trips_as_rows():
    x = rng.standard_normal(3)
    text = same_gradient(nested, (x, 3, 4))
    inner = text.split("# backward sweep")[1].split("for ", 1)[1]
    assert ".pop_rows(trips" in inner                              # inside the outer loop's adjoint
    np.testing.assert_allclose(sg.grad(nested)(x, 3, 4), finite_difference(nested, (x, 3, 4), 0),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("n", [0, 1, 5])
def test_any_number_of_trips(n):
    W, h = rng.standard_normal((3, 3)) * 0.5, rng.standard_normal(3)
    xs = rng.standard_normal((n, 3))
    same_gradient(rnn, (W, h, xs), wrt=(0, 1))


def test_a_value_read_also_other_than_elementwise_is_read_row_by_row():
    x, w = rng.standard_normal(3), rng.standard_normal(3)
    text = same_gradient(dot_inside, (x, w, 4), wrt=(0, 1))
    assert re.search(r"for y, (\w+) in zip\(\w+_rows, \w+_terms\):", text) and ".pop()" not in text


def test_a_value_read_only_other_than_elementwise_is_popped_each_trip():
    x, w = rng.standard_normal(3), rng.standard_normal(3)
    text = same_gradient(dot_only, (x, w, 4), wrt=(0, 1))
    assert "y_stack.pop()" in text and "pop_rows" not in text


def test_large_values_are_popped_each_trip():
    W, h, xs = rng.standard_normal((300, 300)) * 0.05, rng.standard_normal(300), rng.standard_normal((3, 300))
    text = same_gradient(rnn, (W, h, xs), wrt=(0, 1))
    backward = text.split("# backward sweep")[1]
    assert "pop_rows" not in text and re.search(r"h_2 = h_stack.pop\(\)  # the loop's final value\n +for _ in range\(trips\):",
                                              backward)
    assert re.search(r"h_2 = (\w+)\n", backward.split("for _ in")[1])            # carried to the next trip


def test_values_widened_from_int_to_float_keep_their_gradient():
    x = rng.standard_normal(3)
    text = same_gradient(int_start, (x, 4))
    np.testing.assert_allclose(sg.grad(int_start)(x, 4), finite_difference(int_start, (x, 4), 0),
                               rtol=1e-6, atol=1e-8)
    assert "pop_rows" in text


def test_pop_rows_pops_the_last_pushed_first():
    s = Stack([np.zeros(2), np.ones(2), np.full(2, 2.0)])
    np.testing.assert_array_equal(s.pop_rows(2), [[2.0, 2.0], [1.0, 1.0]])
    assert len(s) == 1 and s.pop_rows(0).shape == (0,) and len(s) == 1


@pytest.mark.parametrize("other", [np.int64, np.float64])
def test_pop_rows_refuses_to_mix_boolean_values_with_others(other):
    s = Stack([np.zeros(2, dtype=bool), np.ones(2, dtype=other)])
    with pytest.raises(TypeError, match="changed dtype from trip to trip"):
        s.pop_rows(2)


def test_pop_rows_widens_integers_among_floats():
    s = Stack([np.arange(2), np.ones(2, dtype=np.float32), np.ones(2)])
    assert s.pop_rows(3).dtype == np.float64
