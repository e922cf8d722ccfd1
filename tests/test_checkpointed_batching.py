"""Checkpointed loops keep the batched weight accumulation of store-all loops.

Each piece of work's reversed trips collect the rows of what they add to a loop-invariant weight's gradient,
handed to a `RowBatches` that sums them a batch of rows at a time (``G.T @ X``), and the trips' arithmetic
on popped rows is done for all of a piece's trips at once. The gradients equal store-all's to rounding (the
sums are associated differently) and central finite differences.
"""
from __future__ import annotations

import types

import numpy as np
import pytest
from gradcheck import finite_difference

import s2sgrad as sg
from s2sgrad.runtime import RowBatches


def ode_while(W, x, T):
    t = 0.0
    while t < T:
        x = x + 0.25 * np.tanh(W @ x)
        t = t + 0.25
    return np.sum(x * x)


def ode_for(W, x, n):
    for _ in range(n):
        x = x + 0.25 * np.tanh(W @ x)
    return np.sum(x * x)


def ode_for_weight_read_after(W, x, n):      # dW is a broadcast of the seed before the loop: not its own buffer
    for _ in range(n):
        x = x + 0.25 * np.tanh(W @ x)
    return np.sum(x * x) + np.sum(W)


def rnn_for(W, U, b, xs, h):
    for i in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[i] + b)
    return np.sum(h * h)


def rnn_while(W, U, b, xs, h):
    i = 0
    while i < xs.shape[0]:
        h = np.tanh(W @ h + U @ xs[i] + b)
        i = i + 1
    return np.sum(h * h)


def rnn_no_bias_for(W, U, xs, h):
    for i in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[i])
    return np.sum(h * h)


def row_times_weight_while(V, c, h, T):        # h @ V: the weight on the right
    t = 0.0
    while t < T:
        h = np.sin(h @ V + c)
        t = t + 1.0
    return np.sum(h)


def nested_for(W, b, h, n):                   # an inner loop inside the checkpointed one
    for _ in range(n):
        for _ in range(2):
            h = np.tanh(W @ h + b)
        h = 0.9 * h + 0.1 * (W @ h)
    return np.sum(h * h)


TRIPS = 7                                     # not a multiple of the schedules' segments and batches
SCHEDULES = {"Periodic": sg.Periodic(every=3), "Online": sg.Online(snapshots=2), "Revolve": sg.Revolve(snapshots=3)}


def case(name: str, size: int):
    """(function, arguments, the indices differentiated); `size`: the state's (rows above 256 elements are
    collected in lists, smaller ones popped as rows)."""
    rng = np.random.default_rng(size)
    W = rng.standard_normal((size, size)) / np.sqrt(size)
    U = rng.standard_normal((size, 3))
    xs = rng.standard_normal((TRIPS, 3))
    h = rng.standard_normal(size) / np.sqrt(size)
    if name == "ode_while":
        return ode_while, (W, h, (TRIPS - 0.5) * 0.25), (0, 1)
    if name in ("ode_for", "ode_for_weight_read_after"):
        return globals()[name], (W, h, TRIPS), (0, 1)
    if name == "rnn_no_bias_for":
        return rnn_no_bias_for, (W, U, xs, h), (0, 1, 3)
    if name == "nested_for":
        return nested_for, (W, 0.1 * rng.standard_normal(size), h, TRIPS), (0, 1, 2)
    if name == "row_times_weight_while":
        return row_times_weight_while, (W, rng.standard_normal(size), h, TRIPS - 0.5), (0, 1, 2)
    fn = rnn_for if name == "rnn_for" else rnn_while
    return fn, (W, U, 0.1 * rng.standard_normal(size), xs, h), (0, 1, 2, 4)


LOOPS = ["ode_while", "ode_for", "ode_for_weight_read_after", "rnn_for", "rnn_while", "rnn_no_bias_for", "row_times_weight_while", "nested_for"]


def params():
    out = []
    for name in LOOPS:
        for schedule in SCHEDULES:
            if schedule == "Revolve" and "while" in name:
                continue                      # Revolve needs the trip count on entry
            for size in (4, 300):
                out.append(pytest.param(name, schedule, size, id=f"{name}-{schedule}-{size}"))
    return out


def directional_fd(fn, args, index, direction, step=1e-5):
    def at(scale):
        moved = list(args)
        moved[index] = args[index] + scale * direction
        return fn(*moved)
    return (8 * (at(step) - at(-step)) - (at(2 * step) - at(-2 * step))) / (12 * step)


@pytest.mark.parametrize("name, schedule, size", params())
def test_gradient_equals_store_all_and_finite_differences(name, schedule, size):
    fn, args, wrt = case(name, size)
    expected = sg.grad(fn, wrt=wrt)(*args)
    got = sg.grad(fn, wrt=wrt, checkpoint=SCHEDULES[schedule])(*args)
    rng = np.random.default_rng(1)
    for k, g, e in zip(wrt, got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12 * float(np.max(np.abs(e))))
        if size <= 4:
            np.testing.assert_allclose(g, finite_difference(fn, list(args), k), rtol=1e-6, atol=1e-8)
        else:                                 # a random direction: the weight has 90,000 elements
            direction = rng.standard_normal(np.shape(args[k]))
            np.testing.assert_allclose(np.sum(g * direction), directional_fd(fn, args, k, direction), rtol=1e-6)


def test_one_piece_of_work_equals_store_all_bitwise():
    """A schedule whose one piece of work holds every trip sums them in one product, as store-all does."""
    fn, args, wrt = case("rnn_for", 300)
    expected = sg.grad(fn, wrt=wrt)(*args)
    got = sg.grad(fn, wrt=wrt, checkpoint=sg.Periodic(every=TRIPS))(*args)
    for g, e in zip(got, expected):
        assert np.array_equal(g, e)


@pytest.mark.parametrize("schedule", list(SCHEDULES))
@pytest.mark.parametrize("size", [4, 300])
def test_generated_code_batches_the_weight_gradient(schedule, size):
    fn, args, wrt = case("rnn_for", size)
    fn = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__)   # (rows chosen at the generating call's sizes)
    text = sg.source(fn, wrt=wrt, args=args, checkpoint=SCHEDULES[schedule])
    assert "np.outer" not in text
    assert "dW_batches = RowBatches(checkpoints.batch_rows, into=dW)" in text     # dW: zeros of its own
    assert "db_batches = RowBatches(checkpoints.batch_rows, into=db)" in text
    assert "dW_batches.flush()" in text and "db_batches.flush()" in text
    reverse = text.split("if work.reverse:")[1].split("else:")[0]
    assert "dW_batches.add(" in reverse and "db_batches.add(" in reverse
    if size == 4:                             # small rows: popped as rows, the trips' arithmetic done at once
        assert ".pop_rows(work.steps)" in reverse and ".pop()" not in reverse
    else:                                     # large rows: collected in lists
        assert ".append(" in reverse and "= np.array(" in reverse


def test_a_weight_gradient_not_its_own_buffer_gets_a_total():
    fn, args, wrt = case("ode_for_weight_read_after", 4)
    text = sg.source(fn, wrt=wrt, args=args, checkpoint=sg.Revolve(snapshots=3))
    assert "dW_batches = RowBatches(checkpoints.batch_rows)" in text
    assert "dW = dW + dW_batches.total()" in text


def test_row_batches_sum_a_batch_of_rows_at_a_time():
    rng = np.random.default_rng(0)
    G, X = rng.standard_normal((7, 3)), rng.standard_normal((7, 4))
    batches = RowBatches(limit=3)
    for start, stop in ((0, 1), (1, 2), (2, 2), (2, 6), (6, 7)):
        batches.add(G[start:stop], X[start:stop])
        assert batches.count < 3
    np.testing.assert_allclose(batches.total(), G.T @ X, rtol=1e-14)
    sums = RowBatches(limit=2)
    sums.add(G[:5])
    np.testing.assert_allclose(sums.total(), G[:5].sum(0), rtol=1e-14)
    assert RowBatches(limit=2).total() == 0.0
    into = np.ones((3, 4))
    batches = RowBatches(limit=3, into=into)
    batches.add(G[:4], X[:4])
    batches.add(G[4:], X[4:])
    batches.flush()
    np.testing.assert_allclose(into, 1.0 + G.T @ X, rtol=1e-14)
