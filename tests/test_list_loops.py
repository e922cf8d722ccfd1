"""Loops over a list or tuple of arrays, or of (W, b) pairs: the backward trip reads the item of trip k back from
the sequence (``item = params[k]``, ``W = item[0]``) instead of popping it, where the loop does not write the
sequence; a sequence the loop writes keeps its items pushed. Every gradient is checked against central finite
differences, and the generated source says what is pushed."""
import re

import numpy as np
import pytest
from gradcheck import assert_grad_matches_fd

import s2sgrad as sg

RNG = np.random.default_rng(14)


def _normal(*shape, scale=0.5):
    return RNG.normal(size=shape) * scale


# ---------------------------------------------------------------- the functions


def pairs_mlp(params, x):
    h = x
    for W, b in params:
        h = np.tanh(h @ W + b)
    return np.sum(h ** 2)


def pairs_but_last(params, x):
    h = x
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    return np.sum((h @ W + b) ** 2)


def items_of_arrays(ws, x):
    h = x
    for w in ws:
        h = np.sin(h * w) + w
    return np.sum(h)


def matrices_chain(ms, x):
    h = x
    for m in ms:
        h = np.tanh(m @ h)
    return np.sum(h * h)


def read_outside_too(params, x):
    h = x
    for W, b in params:
        h = np.tanh(h @ W + b)
    return np.sum(h) + np.sum(params[0][0] ** 2)


def enumerated(params, x):
    h = x
    for k, (W, b) in enumerate(params):
        h = np.tanh(h @ W + (k + 1.0) * b)
    return np.sum(h ** 2)


def zipped(ws, xs):
    h = np.zeros(3)
    for w, x in zip(ws, xs):
        h = np.tanh(w @ h + x)
    return np.sum(h ** 2)


def nested(blocks, x):
    h = x
    for block in blocks:
        for W in block:
            h = np.tanh(h @ W)
    return np.sum(h ** 2)


def written_in_loop(ws, x):
    ws = list(ws)
    h = x
    for k in range(len(ws)):
        w = ws[k]
        h = np.sin(h * w)
        ws[k] = w * h
    return np.sum(h) + np.sum(ws[0] * ws[-1])


def written_after_loop(ws, x):
    ws = list(ws)
    h = x
    for w in ws:
        h = np.sin(h * w)
    ws[0] = h * 2.0
    ws.append(h)
    return np.sum(h * ws[0]) + np.sum(ws[-1])


def overwritten_after_loop(ws, x):
    ws = list(ws)
    h = x
    for w in ws:
        h = np.sin(h * w)
    ws[0] = h
    ws.append(h * 3.0)
    return np.sum(ws[0] * ws[-1])


def item_written_after_loop(a, x):
    ws = [a * 1.0, a * 2.0]
    h = x
    for w in ws:
        h = np.sin(h * w)
    first = ws[0]
    first[1] = 4.0
    return np.sum(h * first)


def item_read_twice(ws, x):
    h = x
    for w in ws:
        h = np.cos(h * w) * w
    return np.sum(h)


def _pairs(widths, tuple_of=False):
    items = [(_normal(a, b), _normal(b)) for a, b in zip(widths[:-1], widths[1:])]
    return tuple(items) if tuple_of else items


CASES = {
    "pairs, different shapes": (pairs_mlp, lambda: (_pairs((4, 3, 5, 2)), _normal(2, 4))),
    "pairs, equal shapes": (pairs_mlp, lambda: (_pairs((3, 3, 3, 3)), _normal(2, 3))),
    "tuple of pairs": (pairs_mlp, lambda: (_pairs((3, 4, 2), tuple_of=True), _normal(2, 3))),
    "pairs but the last": (pairs_but_last, lambda: (_pairs((4, 3, 3, 2)), _normal(2, 4))),
    "list of arrays": (items_of_arrays, lambda: ([_normal(3) for _ in range(4)], _normal(3))),
    "tuple of arrays": (items_of_arrays, lambda: (tuple(_normal(3) for _ in range(3)), _normal(3))),
    "matrices, different shapes": (matrices_chain, lambda: ([_normal(4, 3), _normal(2, 4)], _normal(3))),
    "list read outside the loop": (read_outside_too, lambda: (_pairs((3, 4, 2)), _normal(2, 3))),
    "enumerate": (enumerated, lambda: (_pairs((3, 4, 2)), _normal(2, 3))),
    "zip": (zipped, lambda: ([_normal(3, 3) for _ in range(3)], [_normal(3) for _ in range(3)])),
    "nested lists": (nested, lambda: ([[_normal(3, 3), _normal(3, 2)], [_normal(2, 3)]], _normal(3))),
    "written in the loop": (written_in_loop, lambda: ([_normal(3) for _ in range(3)], _normal(3))),
    "written after the loop": (written_after_loop, lambda: ([_normal(3) for _ in range(3)], _normal(3))),
    "overwritten after the loop": (overwritten_after_loop, lambda: ([_normal(3) for _ in range(3)], _normal(3))),
    "item written after the loop": (item_written_after_loop, lambda: (_normal(3), _normal(3))),
    "item read twice": (item_read_twice, lambda: ([_normal(3) for _ in range(3)], _normal(3))),
}


@pytest.mark.parametrize("wrt", [0, (0, 1), 1])
@pytest.mark.parametrize("case", list(CASES))
def test_gradient_matches_finite_differences(case, wrt):
    fn, make = CASES[case]
    assert_grad_matches_fd(fn, make(), wrt=wrt)


# ---------------------------------------------------------------- what is pushed


def _pushed(source: str) -> set:
    """The names the forward sweep pushes (``like(x)`` as itself)."""
    return {re.sub(r"^like\((\w+)\)$", r"\1", found) for found in re.findall(r"_stack\.push\((.+?)\)\n", source)}


@pytest.mark.parametrize("case", ["pairs, different shapes", "pairs but the last", "tuple of pairs",
                                  "list read outside the loop", "enumerate"])
def test_items_of_pairs_are_read_back(case):
    fn, make = CASES[case]
    source = sg.source(fn, 0, args=make())
    pushed = _pushed(source)
    assert not pushed & {"W", "b", "item"}, source
    assert re.search(r"for \w+ in range\(\w+_trips\):(\n .*)*\n +item = \w+\[item_count\]", source), source


@pytest.mark.parametrize("case", ["list of arrays", "tuple of arrays", "matrices, different shapes", "zip"])
def test_items_of_arrays_are_read_back(case):
    fn, make = CASES[case]
    source = sg.source(fn, 0, args=make())
    assert not _pushed(source) & {"w", "m", "item"}, source


def test_a_sequence_written_in_the_loop_is_read_back_as_pushed():
    """The list the loop writes is pushed each trip (its version of that trip), and the item read from it."""
    fn, make = CASES["written in the loop"]
    source = sg.source(fn, 0, args=make())
    pushed = _pushed(source)
    assert any(re.fullmatch(r"ws_\d+", name) for name in pushed), source
    assert not re.search(r"= ws\[", source.split("# backward sweep")[1]), source


def test_the_last_backward_trip_skips_the_adjoint_of_an_input_without_gradient():
    fn, make = CASES["pairs, different shapes"]
    args = make()
    skipping = sg.source(fn, 0, args=args)
    assert re.search(r"if trip \+ 1 < \w+_trips:.*\n +dh = matmul_grad_a", skipping), skipping
    assert "if trip + 1 <" not in sg.source(fn, (0, 1), args=args)


LEAK = 0.1


def leaky_layers(layers, x):
    h = x
    for W, b in layers:
        h = (1 - LEAK) * h + LEAK * np.tanh(h @ W + b)
    return np.sum(h ** 2)


def test_statements_between_two_skipped_ones_move_above_one_test():
    """``dh = ... @ W.T`` and ``dh += dprod * diff`` with ``diff = 1 - LEAK`` between them: one test for both,
    and the gradient still right."""
    layers = [(_normal(3, 3), _normal(3)) for _ in range(3)]
    x = _normal(2, 3)
    source = sg.source(leaky_layers, 0, args=(layers, x))
    assert source.count("if trip + 1 < item_trips:") == 1, source
    guarded = source.split("if trip + 1 < item_trips:")[1].split("\n")[1:3]
    assert all(line.lstrip().startswith("dh") for line in guarded), source
    grads = sg.grad(leaky_layers)(layers, x)
    for k, (W, b) in enumerate(layers):
        for position, w in enumerate((W, b)):
            numeric = np.zeros_like(w)
            for i in np.ndindex(w.shape):
                step = np.zeros_like(w)
                step[i] = 1e-6
                changed = [list(pair) for pair in layers]
                changed[k][position] = w + step
                up = leaky_layers([tuple(pair) for pair in changed], x)
                changed[k][position] = w - step
                numeric[i] = (up - leaky_layers([tuple(pair) for pair in changed], x)) / 2e-6
            np.testing.assert_allclose(grads[k][position], numeric, rtol=1e-6, atol=1e-8)


def test_a_long_loop_pays_no_test_to_skip_its_last_trip():
    """Over a range or an array's rows, the last backward trip is not singled out: the test would cost every
    trip to save one."""
    p = {"W": _normal(3, 3), "U": _normal(3, 2), "b": _normal(3)}
    assert "if trip + 1 <" not in sg.source(leaky, 0, args=(p, _normal(4, 2)))


def leaky(p, xs):
    h = np.zeros(p["b"].shape[0])
    for t in range(xs.shape[0]):
        h = (1 - LEAK) * h + LEAK * np.tanh(p["W"] @ h + p["U"] @ xs[t] + p["b"])
    return np.sum(h ** 2)
