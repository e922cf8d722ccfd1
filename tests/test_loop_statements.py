"""Gradients of loops say no more than the hand adjoint: a ``for`` over a range printed as one, its counter the
trip count (counted down in the backward sweep, never pushed), weight gradients summed after the backward loop
assigned there, a dict argument's gradient returned as a display, copies nothing reads left out. Each mechanism
is asserted on the generated code, and every variant's gradient against finite differences."""
import re

import numpy as np
import pytest
from gradcheck import assert_grad_matches_fd, assert_vjp_matches_fd

import s2sgrad as sg


def _normal(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape) * 0.5


def _forward(source: str) -> str:
    return source.split("# backward sweep")[0]


# ---------------------------------------------------------------- loops over a range


def over_shape(W, xs):
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h ** 2)


def over_len(W, xs):
    h = np.zeros(W.shape[0])
    for t in range(len(xs)):
        h = np.tanh(W @ h * (t + 1) + xs[t])
    return np.sum(h ** 2)


def over_constant(W, xs):
    h = xs[0]
    for t in range(3):
        h = np.sin(W @ h) + t
    return np.sum(h)


def over_parameter(W, xs, n):
    h = xs[0]
    for t in range(n):
        h = np.sin(W @ h) * (t + 1)
    return np.sum(h)


def with_break(W, xs):
    h = xs[0]
    for t in range(len(xs)):
        if t == 2:
            break
        h = np.sin(W @ h + xs[t])
    return np.sum(h)


def nested(W, xs):
    s = 0.0
    for i in range(len(xs)):
        h = xs[i]
        for j in range(2):
            h = np.tanh(W @ h) * (i + j + 1)
        s = s + np.sum(h)
    return s


def counter_read_after(W, xs):
    h = xs[0]
    for t in range(len(xs)):
        h = np.sin(W @ h)
    return np.sum(h) * t


def over_items(Ws, x):
    h = x
    for k, W in enumerate(Ws):
        h = np.tanh(W @ h) * (k + 1)
    return np.sum(h * h)


LOOPS = {  # function, arguments, is its forward loop printed as a for?
    "range of a shape": (over_shape, lambda: (_normal(3, 3), _normal(4, 3)), True),
    "range of a length, counter read": (over_len, lambda: (_normal(3, 3), _normal(4, 3)), True),
    "range of a constant": (over_constant, lambda: (_normal(3, 3), _normal(2, 3)), True),
    "range of a parameter": (over_parameter, lambda: (_normal(3, 3), _normal(2, 3), 3), False),
    "break": (with_break, lambda: (_normal(3, 3), _normal(4, 3)), False),
    "nested": (nested, lambda: (_normal(3, 3), _normal(3, 3)), True),
    "counter read after the loop": (counter_read_after, lambda: (_normal(3, 3), _normal(3, 3)), True),
    "items of a list, enumerated": (over_items, lambda: ([_normal(3, 3, seed=k) for k in range(3)], _normal(3)),
                                    True),
}


@pytest.mark.parametrize("case", sorted(LOOPS))
def test_a_loop_over_a_range_is_printed_as_a_for_and_its_gradient_is_right(case):
    fn, make, as_for = LOOPS[case]
    args = make()
    forward = _forward(sg.source(fn, 0, args=args))
    assert ("while " not in forward) == as_for, forward
    assert "trips += 1" not in forward, forward          # the loop's own counter counts its trips
    assert_grad_matches_fd(fn, args, 0)


def over_items(W, U, xs):
    h = np.zeros(W.shape[0])
    for x in xs:
        h = np.tanh(W @ h + U @ x)
    return np.sum(h ** 2)


def test_a_loop_over_items_counts_with_an_index_not_with_the_trip_counter():
    W, U, xs = 0.5 * _normal(3, 3), _normal(3, 2), _normal(5, 2)
    source = sg.source(over_items, (0, 1), args=(W, U, xs))
    assert "for t in range(x_trips):" in source and "x = xs[t]" in source, source
    assert not re.search(r"for trips(_\d+)? in ", source), source
    assert_grad_matches_fd(over_items, (W, U, xs), (0, 1))


@pytest.mark.parametrize("case", ["range of a length, counter read", "items of a list, enumerated"])
def test_the_counter_is_counted_down_not_pushed(case):
    fn, make, _ = LOOPS[case]
    source = sg.source(fn, 0, args=make())
    assert not re.search(r"\b(t|k|\w+_count)_stack\b", source), source
    assert re.search(r"\b(\w+) = \1 - 1\n", source.split("# backward sweep")[1]), source


def test_hvp_through_a_counted_down_counter():
    W, xs = _normal(3, 3), _normal(4, 3)
    v = _normal(3, 3, seed=1)
    step = 1e-5
    numeric = (sg.grad(over_len)(W + step * v, xs) - sg.grad(over_len)(W - step * v, xs)) / (2 * step)
    np.testing.assert_allclose(sg.hvp(over_len)(W, xs, v), numeric, rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- what the backward sweep assigns


def rnn(W, U, b, xs):
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
    return np.sum(h ** 2)


def test_weight_gradients_summed_after_the_loop_are_assigned_there():
    args = (_normal(4, 4), _normal(4, 3), _normal(4), _normal(5, 3))
    source = sg.source(rnn, (0, 1, 2), args=args)
    backward = source.split("# backward sweep")[1]
    assert "zeros_like" not in backward and "dW = " in backward and "dW +=" not in backward, source
    assert "broadcast_to" not in backward, source                      # the seed times 2 * h: no broadcast
    for k in range(3):
        assert_grad_matches_fd(rnn, args, k)


def test_no_trip_of_a_batched_loop_still_gives_zeros():
    args = (_normal(4, 4), _normal(4, 3), _normal(4), np.zeros((0, 3)))
    grads = sg.grad(rnn, (0, 1, 2))(*args)
    assert all(np.array_equal(g, np.zeros_like(a)) for g, a in zip(grads, args))


# ---------------------------------------------------------------- a dict argument's gradient


def leaky(p, xs):
    h = np.zeros(p["b"].shape[0])
    for t in range(xs.shape[0]):
        h = 0.9 * h + 0.1 * np.tanh(p["W"] @ h + p["U"] @ xs[t] + p["b"])
    return np.sum(h ** 2)


def unused_key(p, x):
    return np.sum(np.sin(p["a"] * x)) + p["s"] * 2.0


def _dict(dtype=np.float64):
    return {"W": _normal(3, 3).astype(dtype), "U": _normal(3, 2).astype(dtype), "b": _normal(3).astype(dtype)}


def test_a_dict_gradient_is_returned_as_a_display():
    p, xs = _dict(), _normal(4, 2)
    source = sg.source(leaky, 0, args=(p, xs))
    assert "return {'W': " in source and "complete(" not in source and "seq_add_at" not in source, source
    assert "_rows = []" not in source, source         # the trip's product written into its row (dtypes known)
    assert_grad_matches_fd(leaky, (p, xs), 0)
    assert list(sg.grad(leaky)(p, xs)) == ["W", "U", "b"]


def test_a_dict_gradient_has_zeros_where_no_gradient_is_and_numbers_as_numbers():
    p = {"a": _normal(3), "unused": _normal(2), "s": 0.5}
    grads = sg.grad(unused_key)(p, _normal(3))
    assert np.array_equal(grads["unused"], np.zeros(2)) and type(grads["s"]) is float
    assert_grad_matches_fd(unused_key, (p, _normal(3)), 0)
    assert_vjp_matches_fd(unused_key, (p, _normal(3)), 0, 1.5)


def test_a_float32_dict_gets_float32_gradients():
    p, xs = _dict(np.float32), _normal(4, 2).astype(np.float32)
    grads = sg.grad(leaky)(p, xs)
    assert all(g.dtype == np.float32 for g in grads.values())
    expected = sg.grad(leaky)({k: v.astype(np.float64) for k, v in p.items()}, xs.astype(np.float64))
    for key in p:
        np.testing.assert_allclose(grads[key], expected[key], rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- copies nothing reads


def layers(params, x):
    h = x
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    return np.sum((h @ W + b) ** 2)


def test_names_a_loop_binds_first_thing_get_no_value_before_it():
    params = [(_normal(3, 4), _normal(4)), (_normal(4, 4, seed=1), _normal(4, seed=1)), (_normal(4, 2), _normal(2))]
    x = _normal(2, 3)
    source = sg.source(layers, 0, args=(params, x))
    assert "UNBOUND" not in source and "= constant" not in source, source
    assert_grad_matches_fd(layers, (params, x), 0)


def int_keys(p, x):
    h = x
    for t in range(3):
        h = np.tanh(p[0] * h) * p[5]
    return np.sum(h)


def test_a_dict_with_int_keys_in_any_order_keeps_each_items_dtype():
    p, x = {5: _normal(3).astype(np.float32), 0: _normal(3, seed=1)}, _normal(3, seed=2)
    grads = sg.grad(int_keys)(p, x)
    assert list(grads) == [5, 0] and grads[5].dtype == np.float32 and grads[0].dtype == np.float64
    expected = sg.grad(int_keys)({k: v.astype(np.float64) for k, v in p.items()}, x)
    for key in p:
        np.testing.assert_allclose(grads[key], expected[key], rtol=1e-5, atol=1e-6)
    assert_grad_matches_fd(int_keys, ({k: v.astype(np.float64) for k, v in p.items()}, x), 0)
