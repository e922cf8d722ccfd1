"""Primal-only work of backward loops done on all trips at once (s2sgrad/vectorize.py): where it applies,
where it must not, and that gradients stay those of the naive scheme and of finite differences."""
import re
import types

import numpy as np
import pytest
from gradcheck import finite_difference

import s2sgrad as sg
from s2sgrad.runtime import Stack

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
        single = np.asarray(a).dtype == np.float32           # (computed in float32, in another order)
        np.testing.assert_allclose(a, b, rtol=1e-5 if single else 1e-12, atol=1e-6 if single else 1e-14)
    return sg.source(fn, wrt, args=args)


def test_derivative_factors_are_computed_for_all_trips_before_the_loop():
    W, h, xs = rng.standard_normal((4, 4)) * 0.5, rng.standard_normal(4), rng.standard_normal((6, 4))
    text = same_gradient(rnn, (W, h, xs), wrt=(0, 1))
    forward, backward = text.split("# backward sweep")
    assert forward.count(".push(") == 2                     # h once a trip, and its final value after the loop
    assert "h_stack_rows = h_stack.pop_rows(trips + 1)" in backward and ".pop()" not in backward
    assert "h_2_rows = h_stack_rows[:-1]" in backward        # h_2 of a trip is h of the next
    assert "h_rows = h_stack_rows[1:]" in backward and "h_rows.append" not in backward
    assert "dmatmul_rows = h_2_rows * h_2_rows" in backward
    assert "for dmatmul in dmatmul_rows:" in backward and "dmatmul *= dh" in backward
    numeric = finite_difference(rnn, (W, h, xs), 0)
    np.testing.assert_allclose(sg.grad(rnn)(W, h, xs), numeric, rtol=1e-6, atol=1e-8)
    text = sg.source(rnn, (0, 1), args=(W, h, xs), optimize=set(sg.OPTIMIZATIONS) - {"rows_in_place"})
    assert "h_2_terms = 1.0 - h_2_rows * h_2_rows" in text
    assert "for h_2_term in h_2_terms:" in text and "dh * h_2_term" in text


def rnn_with_inputs(W, U, b, xs):
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
    return np.sum(h ** 2)


def rnn_inputs(steps=5, dtype=np.float64):
    return (rng.standard_normal((4, 4)).astype(dtype) * 0.5, rng.standard_normal((4, 3)).astype(dtype),
            rng.standard_normal(4).astype(dtype), rng.standard_normal((steps, 3)).astype(dtype))


def rnn_with_inputs_reference(W, U, b, xs):
    hs = [np.zeros(4)]
    for x in xs:
        hs.append(np.tanh(W @ hs[-1] + U @ x + b))
    dh, dW, dU, db = 2 * hs[-1], np.zeros_like(W), np.zeros_like(U), np.zeros_like(b)
    for t in reversed(range(len(xs))):
        da = dh * (1 - hs[t + 1] ** 2)
        dW, dU, db, dh = dW + np.outer(da, hs[t]), dU + np.outer(da, xs[t]), db + da, W.T @ da
    return dW, dU, db


@pytest.mark.parametrize("steps", [0, 1, 5])
def test_rows_of_an_argument_read_one_per_trip_are_the_argument_itself(steps):
    args = rnn_inputs(steps)
    text = same_gradient(rnn_with_inputs, args, wrt=(0, 1, 2))
    forward, backward = text.split("# backward sweep")
    assert "item_rows = xs[:t_stop][::-1]" in backward and "item_stack" not in text
    assert forward.count(".push(") == 2                     # only h: xs[t] is not pushed
    for got, expected in zip(sg.grad(rnn_with_inputs, (0, 1, 2))(*args), rnn_with_inputs_reference(*args)):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)


def test_float32_inputs_that_make_float64_states_still_write_products_into_rows():
    args = rnn_inputs(dtype=np.float32)                      # h = np.zeros(...) is float64: so is every state
    text = same_gradient(rnn_with_inputs, args, wrt=(0, 1, 2))
    assert "dmatmul *= dh" in text


def test_float32_rows_are_not_written_with_float64_products():
    W, h, xs = rng.standard_normal((4, 4)) * 0.5, rng.standard_normal(4), rng.standard_normal((6, 4))
    text = same_gradient(rnn, (W.astype(np.float32), h.astype(np.float32), xs.astype(np.float32)), wrt=0)
    assert "*= dh" not in text and ".append(dmatmul)" in text
    assert "np.subtract(1.0, h_2_terms, out=h_2_terms)" in text         # float32 all along: exact


def test_the_seed_of_a_vjp_is_specialized_on_too():
    args = rnn_inputs()
    vjp = sg.vjp(rnn_with_inputs, (0, 1, 2))
    for seed in (1.0, np.float32(0.5), np.array(2.0)):
        _, grads = vjp(*args, seed)
        for got, expected in zip(grads, rnn_with_inputs_reference(*args)):
            np.testing.assert_allclose(got, seed * expected, rtol=1e-12)
    assert "*= dh" in sg.source(rnn_with_inputs, (0, 1, 2), args=args)
    assert "*= dh" not in sg.source(rnn_with_inputs, (0, 1, 2), args=args, mode="vjp")   # for any seed


def test_hessian_vector_products_through_rows_written_in_place():
    W, h, xs = rng.standard_normal((3, 3)) * 0.5, rng.standard_normal(3), rng.standard_normal((4, 3))
    v = rng.standard_normal((3, 3))
    hv = sg.hvp(rnn)(W, h, xs, v)
    step = 1e-6
    numeric = (sg.grad(rnn)(W + step * v, h, xs) - sg.grad(rnn)(W - step * v, h, xs)) / (2 * step)
    np.testing.assert_allclose(hv, numeric, rtol=1e-5, atol=1e-8)


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
    large_rnn = types.FunctionType(rnn.__code__, rnn.__globals__, "rnn")   # (chosen at the size generating its code)
    text = same_gradient(large_rnn, (W, h, xs), wrt=(0, 1))
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


def gated(Wf, Wi, xs):
    h = np.zeros(Wf.shape[0])
    c = np.zeros(Wf.shape[0])
    for x in xs:
        hx = np.concatenate([h, x])              # its shape is known: the gates' rows can be stacked
        f = 1 / (1 + np.exp(-(Wf @ hx)))
        i = np.tanh(Wi @ hx)
        c = f * c + (1 - f) * i
        h = np.tanh(c)
    return np.sum(h)


def test_a_gated_cell_through_a_concatenation_is_vectorized_and_batched():
    Wf, Wi, xs = rng.standard_normal((4, 7)) * 0.3, rng.standard_normal((4, 7)) * 0.3, rng.standard_normal((6, 3))
    text = same_gradient(gated, (Wf, Wi, xs), wrt=(0, 1))
    backward = text.split("# backward sweep")[1]
    assert "hx_rows = hx_stack.pop_rows(x_trips)" in backward and "unbroadcast(" not in backward
    assert ".T @ hx_rows" in backward and "np.outer" not in backward
    assert "dh = dhx[:n_Wf]" in backward and "unconcatenate(" not in text and "t_stack" not in text
    for k in (0, 1):
        np.testing.assert_allclose(sg.grad(gated, k)(Wf, Wi, xs), finite_difference(gated, (Wf, Wi, xs), k),
                                   rtol=1e-6, atol=1e-8)
