"""Loops reading parameters kept in a dict, list, tuple or record: a read the loop cannot change is done once
before it (the loop then captures the value as a plain argument, and its gradient is accumulated in one batched
product after the backward loop); a read the loop can change (a container written in the loop, a key that
depends on the loop variable) stays in it; a loop over a container's items adds each item's gradient into
its slot alone. Every gradient is checked against central finite differences."""
import re
from typing import NamedTuple

import numpy as np
import pytest
from gradcheck import assert_grad_matches_fd

import s2sgrad as sg

RNG = np.random.default_rng(14)


def _normal(*shape, scale=0.4):
    return RNG.normal(size=shape) * scale


# ---------------------------------------------------------------- the functions


def dict_rnn(p, xs):
    h = np.zeros(p["b"].shape[0])
    for t in range(xs.shape[0]):
        h = 0.9 * h + 0.1 * np.tanh(p["W"] @ h + p["U"] @ xs[t] + p["b"])
    return np.sum(h ** 2)


def list_rnn(ws, xs):
    h = np.zeros(3)
    for t in range(xs.shape[0]):
        h = np.tanh(ws[0] @ h + ws[1] @ xs[t] + ws[2])
    return np.sum(h ** 2)


def tuple_invariant_index(ws, k, xs):
    h = np.zeros(3)
    for t in range(xs.shape[0]):
        h = np.tanh(ws[k] @ h + xs[t])
    return np.sum(h ** 2) + np.sum(ws[0])


def nested_dicts(p, xs):
    h = np.zeros(3)
    for t in range(xs.shape[0]):
        h = np.tanh(p["cell"]["W"] @ h + p["cell"]["b"] * xs[t])
    return np.sum(h * p["out"])


def read_outside_too(p, xs):
    h = p["h0"] * 2.0
    for t in range(xs.shape[0]):
        h = np.sin(p["W"] @ h) + xs[t]
    return np.sum(h * p["W"][0])


def while_and_nested_loops(p, n, m):
    h = np.ones(3)
    i = 0
    while i < n:
        for _ in range(m):
            h = np.tanh(p["W"] @ h) * p["s"]
        i += 1
    return np.sum(h)


def written_in_loop(p, xs):
    h = np.zeros(3)
    for t in range(xs.shape[0]):
        h = np.tanh(p["W"] @ h + xs[t])
        p["W"] = p["W"] * 0.9
    return np.sum(h ** 2)


def key_from_loop_variable(ws, x):
    h = x
    for t in range(len(ws)):
        h = np.tanh(ws[t] @ h)
    return np.sum(h)


def keys_from_loop(p, x):
    h = x
    for k in ("a", "b", "a"):
        h = np.sin(p[k] * h)
    return np.sum(h)


def read_under_branch(p, xs):
    h = np.zeros(3)
    for t in range(xs.shape[0]):
        if t % 2 == 0:
            h = np.tanh(p["W"] @ h + xs[t])
        else:
            h = h * p["s"]
    return np.sum(h ** 2)


def layers_in_a_list(params, x):
    h = x
    for W, b in params:
        h = np.tanh(h @ W + b)
    return np.sum(h ** 2)


def dicts_in_a_list(layers, x):
    h = x
    for layer in layers:
        h = np.tanh(h @ layer["W"] + layer["b"])
    return np.sum(h)


class Cell:
    def __init__(self, W, b):
        self.W = W
        self.b = b


def record_fields(cell, xs):
    h = np.zeros(3)
    for t in range(xs.shape[0]):
        h = np.tanh(cell.W @ h + cell.b + xs[t])
    return np.sum(h ** 2)


class Fields(NamedTuple):
    W: np.ndarray
    b: np.ndarray


def separate_arguments(W, b, xs):
    h = np.zeros(3)
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + b + xs[t])
    return np.sum(h ** 2)


def _rnn_dict():
    return {"W": _normal(3, 3), "U": _normal(3, 2), "b": _normal(3)}


CASES = {
    "dict_constant_keys": (dict_rnn, lambda: (_rnn_dict(), _normal(5, 2))),
    "list_constant_index": (list_rnn, lambda: ([_normal(3, 3), _normal(3, 2), _normal(3)], _normal(4, 2))),
    "tuple_invariant_index": (tuple_invariant_index, lambda: ((_normal(3, 3), _normal(3, 3)), 1, _normal(4, 3))),
    "nested_dicts": (nested_dicts, lambda: ({"cell": {"W": _normal(3, 3), "b": _normal(3)}, "out": _normal(3)},
                                            _normal(4))),
    "read_outside_too": (read_outside_too, lambda: ({"h0": _normal(3), "W": _normal(3, 3)}, _normal(4, 3))),
    "while_and_nested_loops": (while_and_nested_loops, lambda: ({"W": _normal(3, 3), "s": 1.1}, 2, 3)),
    "written_in_loop": (written_in_loop, lambda: ({"W": _normal(3, 3)}, _normal(4, 3))),
    "key_from_loop_variable": (key_from_loop_variable, lambda: ([_normal(3, 3) for _ in range(3)], _normal(3))),
    "keys_from_loop": (keys_from_loop, lambda: ({"a": _normal(3), "b": _normal(3)}, _normal(3))),
    "read_under_branch": (read_under_branch, lambda: ({"W": _normal(3, 3), "s": 0.8}, _normal(5, 3))),
    "layers_in_a_list": (layers_in_a_list, lambda: ([(_normal(2, 3), _normal(3)), (_normal(3, 3), _normal(3)),
                                                     (_normal(3, 2), _normal(2))], _normal(4, 2))),
    "dicts_in_a_list": (dicts_in_a_list, lambda: ([{"W": _normal(2, 3), "b": _normal(3)},
                                                   {"W": _normal(3, 2), "b": _normal(2)}], _normal(4, 2))),
    "named_tuple_fields": (record_fields, lambda: (Fields(_normal(3, 3), _normal(3)), _normal(4, 3))),
}
RECORD = (record_fields, lambda: (Cell(_normal(3, 3), _normal(3)), _normal(4, 3)))


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradient_matches_finite_differences(case):
    fn, make = CASES[case]
    assert_grad_matches_fd(fn, make(), wrt=0)


def test_record_fields_read_in_a_loop():
    fn, make = RECORD
    cell, xs = make()
    grad = sg.grad(fn)(cell, xs)
    expected = assert_grad_matches_fd(separate_arguments, (cell.W, cell.b, xs), wrt=(0, 1))
    assert isinstance(grad, Cell)
    assert np.allclose(grad.W, expected[0], rtol=1e-12) and np.allclose(grad.b, expected[1], rtol=1e-12)


def _flat(g):
    if isinstance(g, dict):
        g = list(g.values())
    if isinstance(g, (list, tuple)):
        return np.concatenate([_flat(v) for v in g])
    return np.ravel(g)


@pytest.mark.parametrize("case", ["dict_constant_keys", "nested_dicts", "written_in_loop", "list_constant_index"])
def test_jvp_matches_the_gradient(case):
    fn, make = CASES[case]
    args = make()
    grad = sg.grad(fn)(*args)
    direction = sg.grad(fn)(*make())              # any tangent of the structure of the first argument
    value, derivative = sg.jvp(fn)(*args, direction)
    flat = _flat
    assert np.isclose(value, fn(*args))
    assert np.isclose(derivative, flat(grad) @ flat(direction), rtol=1e-7, atol=1e-10)


# ---------------------------------------------------------------- the generated code


def _loops(source: str) -> list[str]:
    """The text of each ``while``/``for`` block of the generated function (by indentation)."""
    lines, blocks = source.splitlines(), []
    for k, line in enumerate(lines):
        if re.match(r"\s*(while|for) ", line):
            indent = len(line) - len(line.lstrip())
            body = [b for b in lines[k + 1:] if b.strip()]
            end = next((j for j, b in enumerate(body) if len(b) - len(b.lstrip()) <= indent), len(body))
            blocks.append("\n".join(body[:end]))
    return blocks


def _source(case):
    fn, make = CASES[case]
    return sg.source(fn, 0, args=make())


@pytest.mark.parametrize("case", ["dict_constant_keys", "list_constant_index", "tuple_invariant_index",
                                  "nested_dicts", "read_outside_too", "while_and_nested_loops", "named_tuple_fields",
                                  "record"])
def test_invariant_reads_leave_the_loops(case):
    fn, make = RECORD if case == "record" else CASES[case]
    source = sg.source(fn, 0, args=make())
    loops = _loops(source)
    assert loops
    for loop in loops:
        assert not re.search(r"\b(p|ws|cell)(\[|\.W|\.b)", loop), loop
        assert "seq_scatter" not in loop and "seq_add_at" not in loop, loop


def test_dict_weights_are_accumulated_in_one_product_after_the_loop():
    source = _source("dict_constant_keys")
    assert re.search(r"'W': \w+_rows\.T @ \w+_rows", source)        # dW and dU: batched outer products
    assert re.search(r"'b': np\.sum\(\w+_rows, 0\)", source)          # db
    assert source.count("Stack()") == 2                              # h and tanh: as for separate arguments
    assert "zeros_like" not in source and "complete(" not in source  # the dict's gradient: once, after
    assert source.index("return {") > source.rindex("for ")


@pytest.mark.parametrize("case, read", [("written_in_loop", r"p_?\w*\['W'\]"), ("key_from_loop_variable", r"ws\[t\]"),
                                        ("keys_from_loop", r"p\[k\w*\]"), ("read_under_branch", r"p\['W'\]")])
def test_reads_the_loop_can_change_stay_in_it(case, read):
    source = _source(case)
    forward = source[:source.index("# backward sweep")]
    (loop,) = _loops(forward)
    assert re.search(read, loop), loop


def test_a_loop_over_a_list_adds_each_item_gradient_into_its_slot():
    source = _source("layers_in_a_list")
    backward = source[source.index("# backward sweep"):]
    assert "zeros_like(params)" not in backward and "no_grads(params)" in backward
    (loop,) = _loops(backward)
    assert re.search(r"dparams = seq_add_at\(dparams, \w+, params, \w+\)", loop)
    assert "add_grads" not in loop


def _moved(value, direction, step):
    if isinstance(value, dict):
        return {k: _moved(value[k], direction[k], step) for k in value}
    if isinstance(value, (list, tuple)):
        return type(value)(_moved(v, d, step) for v, d in zip(value, direction))
    return value + step * direction


@pytest.mark.parametrize("case", ["dict_constant_keys", "layers_in_a_list"])
def test_hvp_matches_differences_of_gradients(case):
    fn, make = CASES[case]
    args = make()
    direction = sg.grad(fn)(*make())
    product = sg.hvp(fn)(*args, direction)
    step = 1e-5
    ahead = sg.grad(fn)(_moved(args[0], direction, step), *args[1:])
    behind = sg.grad(fn)(_moved(args[0], direction, -step), *args[1:])
    expected = (_flat(ahead) - _flat(behind)) / (2 * step)
    assert np.allclose(_flat(product), expected, rtol=1e-5, atol=1e-7)
