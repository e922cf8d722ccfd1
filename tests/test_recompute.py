"""`s2sgrad.recompute` (issue 4, item 1): a recomputed call stores only its inputs in the
forward sweep and runs its function again, with its own recording, just before its adjoint.

Every differentiated function lives at module level (s2sgrad reads source with `inspect`).
Body executions are counted with module-level lists (`RUNS`, `INNER_RUNS`), which the
recomputed functions append to; each test clears them before it counts.
"""
import tracemalloc

import numpy as np
import pytest
from gradcheck import assert_grad_matches_fd

import s2sgrad as sg

RUNS = []
INNER_RUNS = []


def rand(*shape, seed=0, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


H = rand(4, seed=1)
W = rand(4, 4, seed=2, scale=0.5)


def close(a, b, rtol=1e-12):
    for x, y in zip(a, b) if isinstance(a, tuple) else [(a, b)]:
        np.testing.assert_allclose(x, y, rtol=rtol, atol=1e-14)


# --- the functions ---------------------------------------------------------------

@sg.recompute
def block(h, W):
    RUNS.append(1)
    return np.tanh(W @ h)


def block_plain(h, W):
    return np.tanh(W @ h)


@sg.recompute
def scaled(h, W, scale=0.5, shift=0.0):
    RUNS.append(1)
    return np.tanh(W @ h) * scale + shift


def scaled_plain(h, W, scale=0.5, shift=0.0):
    return np.tanh(W @ h) * scale + shift


@sg.recompute
def pair(h, W):
    RUNS.append(1)
    a = W @ h
    return np.tanh(a), np.sin(a)


def pair_plain(h, W):
    a = W @ h
    return np.tanh(a), np.sin(a)


@sg.recompute
def inner(h, W):
    INNER_RUNS.append(1)
    return np.sin(W @ h)


def inner_plain(h, W):
    return np.sin(W @ h)


@sg.recompute
def outer(h, W):
    RUNS.append(1)
    return inner(inner(h, W), W) * 0.5


def outer_plain(h, W):
    return inner_plain(inner_plain(h, W), W) * 0.5


def calls_inner(h, W):
    """A function that is not recomputed calling a recomputed one."""
    RUNS.append(1)
    return inner(h, W) + h


@sg.recompute
def with_loop(h, W, k):
    RUNS.append(1)
    for j in range(k):
        h = np.tanh(W @ h) + 0.1 * h
    return h


def with_loop_plain(h, W, k):
    for j in range(k):
        h = np.tanh(W @ h) + 0.1 * h
    return h


# one call

def one_call(h, W):
    return np.sum(block(h, W) ** 2)


def one_call_plain(h, W):
    return np.sum(block_plain(h, W) ** 2)


def two_calls(h, W):
    z = block(h, W)
    return np.sum(block(z * 2.0, W) * z)


def two_calls_plain(h, W):
    z = block_plain(h, W)
    return np.sum(block_plain(z * 2.0, W) * z)


def in_branch(h, W):
    if np.sum(h) > 0:
        z = block(h, W)
    else:
        z = block(h * 2.0, W)
    return np.sum(z * z)


def in_branch_plain(h, W):
    if np.sum(h) > 0:
        z = block_plain(h, W)
    else:
        z = block_plain(h * 2.0, W)
    return np.sum(z * z)


# loops

def for_loop(h, W, n):
    for i in range(n):
        h = block(h, W) + 0.5 * h
    return np.sum(h * h)


def for_loop_plain(h, W, n):
    for i in range(n):
        h = block_plain(h, W) + 0.5 * h
    return np.sum(h * h)


def while_loop(h, W, n):
    i = 0
    while i < n and np.sum(h * h) < 100.0:
        h = block(h, W) + 0.5 * h
        i = i + 1
    return np.sum(h * h)


def while_loop_plain(h, W, n):
    i = 0
    while i < n and np.sum(h * h) < 100.0:
        h = block_plain(h, W) + 0.5 * h
        i = i + 1
    return np.sum(h * h)


def nested_loops(h, W, n):
    for i in range(n):
        for j in range(2):
            if j == 0:
                h = block(h, W)
            else:
                h = h + 0.25 * block(h * 0.5, W)
    return np.sum(h)


def nested_loops_plain(h, W, n):
    for i in range(n):
        for j in range(2):
            if j == 0:
                h = block_plain(h, W)
            else:
                h = h + 0.25 * block_plain(h * 0.5, W)
    return np.sum(h)


def loop_in_recomputed(h, W, n):
    return np.sum(with_loop(h, W, n) ** 2)


def loop_in_recomputed_plain(h, W, n):
    return np.sum(with_loop_plain(h, W, n) ** 2)


def tuple_result(h, W):
    u, v = pair(h, W)
    return np.sum(u * v + u)


def tuple_result_plain(h, W):
    u, v = pair_plain(h, W)
    return np.sum(u * v + u)


# nested recomputed calls

def nested(h, W):
    return np.sum(outer(h, W) ** 2)


def nested_plain(h, W):
    return np.sum(outer_plain(h, W) ** 2)


def nested_in_loop(h, W, n):
    for i in range(n):
        h = outer(h, W) + h
    return np.sum(h)


def nested_in_loop_plain(h, W, n):
    for i in range(n):
        h = outer_plain(h, W) + h
    return np.sum(h)


def plain_outer(h, W):
    return np.sum(calls_inner(h, W) ** 2)


# keyword arguments

def keywords(h, W, s):
    a = block(h, W=W)
    b = block(W=W, h=a)
    c = scaled(h, W, shift=s)
    d = scaled(b, W, scale=s)
    e = scaled(h=c, W=W, scale=s, shift=0.25)
    return np.sum(a * b) + np.sum(c * d) + np.sum(e ** 2)


def keywords_plain(h, W, s):
    a = block_plain(h, W=W)
    b = block_plain(W=W, h=a)
    c = scaled_plain(h, W, shift=s)
    d = scaled_plain(b, W, scale=s)
    e = scaled_plain(h=c, W=W, scale=s, shift=0.25)
    return np.sum(a * b) + np.sum(c * d) + np.sum(e ** 2)


# a recomputed nested def reading variables of its enclosing function

def enclosing(h, W, c):
    @sg.recompute
    def g(x):
        RUNS.append(1)
        return np.tanh(W @ x) * c
    return np.sum(g(h) ** 2) + np.sum(g(h * 2.0))


def enclosing_plain(h, W, c):
    def g(x):
        return np.tanh(W @ x) * c
    return np.sum(g(h) ** 2) + np.sum(g(h * 2.0))


def enclosing_loop(h, W, c, n):
    b = c * h
    @sg.recompute
    def step(x):
        RUNS.append(1)
        return np.tanh(W @ x + b) * c
    for i in range(n):
        h = step(h) + 0.5 * h
    return np.sum(h * h)


def enclosing_loop_plain(h, W, c, n):
    b = c * h
    def step(x):
        return np.tanh(W @ x + b) * c
    for i in range(n):
        h = step(h) + 0.5 * h
    return np.sum(h * h)


def enclosing_rebound(h, w):
    """The nested def reads `w` when called, as a Python closure does: after `w` is rebound
    the second call sees the new value."""
    @sg.recompute
    def g(x):
        RUNS.append(1)
        return np.sin(x * w)
    a = g(h)
    w = w * 2.0
    b = g(h)
    return np.sum(a * b) + np.sum(b)


def enclosing_rebound_plain(h, w):
    def g(x):
        return np.sin(x * w)
    a = g(h)
    w = w * 2.0
    b = g(h)
    return np.sum(a * b) + np.sum(b)


# --- outside differentiation -----------------------------------------------------

def test_recompute_is_identity_outside_differentiation():
    def g(x, *, k=2):
        """Twice x."""
        return x * k
    marked = sg.recompute(g)
    assert marked is not g and not hasattr(g, "__s2sgrad_recompute__"), "the user's function is left as it is"
    assert marked(3) == 6 and marked(3, k=3) == 9
    assert (marked.__name__, marked.__qualname__, marked.__doc__) == (g.__name__, g.__qualname__, g.__doc__)
    assert sg.recompute(block) is block
    RUNS.clear()
    np.testing.assert_array_equal(block(H, W), block_plain(H, W))
    assert len(RUNS) == 1


def step(h, W):
    RUNS.append(1)
    return np.tanh(W @ h)


recomputed_step = sg.recompute(step)


def calls_step_and_its_recomputed_copy(h, W):
    return np.sum(step(h, W) * recomputed_step(h, W))


def test_a_function_marked_by_hand_stays_unmarked():
    """``recomputed_step = sg.recompute(step)``: the calls of the copy run twice, those of `step` once."""
    df = sg.grad(calls_step_and_its_recomputed_copy, wrt=1)
    df(H, W)
    RUNS.clear()
    g = df(H, W)
    assert len(RUNS) == 3
    assert_grad_matches_fd(calls_step_and_its_recomputed_copy, (H, W), wrt=1, expected=g)


class Model:
    def apply(self, x):
        return x * 2


def test_recompute_refuses_what_it_cannot_transform():
    with pytest.raises(sg.S2SGradError, match="recompute needs a Python function"):
        sg.recompute(Model().apply)
    with pytest.raises(sg.S2SGradError, match="recompute needs a Python function"):
        sg.recompute(len)


@pytest.mark.parametrize("f, args, calls", [
    (one_call, (H, W), 1),
    (two_calls, (H, W), 2),
    (in_branch, (H, W), 1),
    (for_loop, (H, W, 5), 5),
    (keywords, (H, W, 0.7), 5),
    (enclosing, (H, W, 1.5), 2),
    (enclosing_loop, (H, W, 1.5, 4), 4),
])
def test_body_runs_once_per_call_undifferentiated(f, args, calls):
    RUNS.clear()
    f(*args)
    assert len(RUNS) == calls


# --- gradients -------------------------------------------------------------------

CASES = [
    (one_call, one_call_plain, (H, W), (0, 1)),
    (two_calls, two_calls_plain, (H, W), (0, 1)),
    (in_branch, in_branch_plain, (H, W), (0, 1)),
    (in_branch, in_branch_plain, (-np.abs(H), W), (0, 1)),
    (for_loop, for_loop_plain, (H, W, 0), (0, 1)),
    (for_loop, for_loop_plain, (H, W, 1), (0, 1)),
    (for_loop, for_loop_plain, (H, W, 6), (0, 1)),
    (while_loop, while_loop_plain, (H, W, 6), (0, 1)),
    (nested_loops, nested_loops_plain, (H, W, 3), (0, 1)),
    (loop_in_recomputed, loop_in_recomputed_plain, (H, W, 3), (0, 1)),
    (tuple_result, tuple_result_plain, (H, W), (0, 1)),
    (nested, nested_plain, (H, W), (0, 1)),
    (nested_in_loop, nested_in_loop_plain, (H, W, 3), (0, 1)),
    (keywords, keywords_plain, (H, W, 0.7), (0, 1, 2)),
    (enclosing, enclosing_plain, (H, W, 1.5), (0, 1, 2)),
    (enclosing_loop, enclosing_loop_plain, (H, W, 1.5, 3), (0, 1, 2)),
    (enclosing_rebound, enclosing_rebound_plain, (H, 0.7), (0, 1)),
]


@pytest.mark.parametrize("f, plain, args, wrt", CASES, ids=lambda v: getattr(v, "__name__", None))
def test_gradient_equals_the_version_without_recompute(f, plain, args, wrt):
    close(sg.grad(f, wrt=wrt)(*args), sg.grad(plain, wrt=wrt)(*args))
    np.testing.assert_allclose(f(*args), plain(*args), rtol=1e-15)


@pytest.mark.parametrize("f, plain, args, wrt", CASES, ids=lambda v: getattr(v, "__name__", None))
def test_gradient_matches_finite_differences(f, plain, args, wrt):
    assert_grad_matches_fd(f, args, wrt)


@pytest.mark.parametrize("f, plain, args, wrt", CASES[:4] + CASES[13:], ids=lambda v: getattr(v, "__name__", None))
def test_value_and_grad_and_vjp(f, plain, args, wrt):
    value, grads = sg.value_and_grad(f, wrt=wrt)(*args)
    assert value == pytest.approx(plain(*args), rel=1e-14)
    close(grads, sg.grad(plain, wrt=wrt)(*args))
    value, grads = sg.vjp(f, wrt=wrt)(*args, 2.0)
    close(grads, tuple(2.0 * g for g in sg.grad(plain, wrt=wrt)(*args)))


def test_enclosing_variables_get_their_gradients():
    """W and c are read only inside the recomputed nested def; their gradients are not zero
    and are those of the version without recompute (cf. the captured variable of
    ``tf.recompute_grad``)."""
    dh, dW, dc = sg.grad(enclosing, wrt=(0, 1, 2))(H, W, 1.5)
    assert np.all(np.abs(dW) > 0) and dc != 0
    close((dh, dW, dc), sg.grad(enclosing_plain, wrt=(0, 1, 2))(H, W, 1.5))
    dW_only = sg.grad(enclosing_loop, wrt=1)(H, W, 1.5, 3)
    close(dW_only, sg.grad(enclosing_loop_plain, wrt=1)(H, W, 1.5, 3))


# --- how often the body runs -----------------------------------------------------

@pytest.mark.parametrize("f, args, calls", [
    (one_call, (H, W), 1),
    (two_calls, (H, W), 2),
    (in_branch, (H, W), 1),
    (for_loop, (H, W, 0), 0),
    (for_loop, (H, W, 1), 1),
    (for_loop, (H, W, 7), 7),
    (nested_loops, (H, W, 3), 6),
    (loop_in_recomputed, (H, W, 3), 1),
    (tuple_result, (H, W), 1),
    (keywords, (H, W, 0.7), 5),
    (enclosing, (H, W, 1.5), 2),
    (enclosing_loop, (H, W, 1.5, 4), 4),
    (enclosing_rebound, (H, 0.7), 2),
])
@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "vjp"])
def test_body_runs_twice_per_call_when_differentiated(f, args, calls, transform):
    df = getattr(sg, transform)(f, wrt=(0, 1))
    seed = (1.0,) if transform == "vjp" else ()
    df(*args, *seed)                      # generate the code first
    RUNS.clear()
    df(*args, *seed)
    assert len(RUNS) == 2 * calls


def test_while_loop_runs_twice_per_trip():
    RUNS.clear()
    while_loop(H, W, 6)
    trips = len(RUNS)
    assert trips >= 2
    sg.grad(while_loop, wrt=(0, 1))(H, W, 6)
    RUNS.clear()
    sg.grad(while_loop, wrt=(0, 1))(H, W, 6)
    assert len(RUNS) == 2 * trips


def test_nested_recomputed_calls_run_counts():
    """`outer` (recomputed) calls `inner` (recomputed) twice.  `outer` runs twice: once in
    the forward sweep, once just before its adjoint.  Each `inner` call runs three times:
    in `outer`'s forward run, in `outer`'s re-run (which, `inner` being recomputed, stores
    only inner's inputs), and once more just before `inner`'s own adjoint, inside `outer`'s."""
    sg.grad(nested, wrt=(0, 1))(H, W)
    RUNS.clear(), INNER_RUNS.clear()
    sg.grad(nested, wrt=(0, 1))(H, W)
    assert (len(RUNS), len(INNER_RUNS)) == (2, 3 * 2)
    RUNS.clear(), INNER_RUNS.clear()
    nested(H, W)
    assert (len(RUNS), len(INNER_RUNS)) == (1, 2)
    sg.grad(nested_in_loop, wrt=(0, 1))(H, W, 3)
    RUNS.clear(), INNER_RUNS.clear()
    sg.grad(nested_in_loop, wrt=(0, 1))(H, W, 3)
    assert (len(RUNS), len(INNER_RUNS)) == (2 * 3, 3 * 2 * 3)


def test_recomputed_call_inside_a_function_that_is_not():
    """A recomputed `inner` called by a plain `calls_inner`: `calls_inner` runs once (its record
    is kept), `inner` twice."""
    sg.grad(plain_outer, wrt=(0, 1))(H, W)
    RUNS.clear(), INNER_RUNS.clear()
    dh, dW = sg.grad(plain_outer, wrt=(0, 1))(H, W)
    assert (len(RUNS), len(INNER_RUNS)) == (1, 2)
    assert_grad_matches_fd(plain_outer, (H, W), (0, 1))


def test_recomputed_calls_in_a_checkpointed_loop():
    args = (H, W, 9)
    expected = sg.grad(for_loop_plain, wrt=(0, 1))(*args)
    for schedule in [sg.Periodic(every=3), sg.Revolve(snapshots=3)]:
        close(sg.grad(for_loop, wrt=(0, 1), checkpoint=schedule)(*args), expected)


# --- the generated code ----------------------------------------------------------

def test_source_reruns_the_forward_just_before_the_adjoint():
    text = sg.source(one_call, wrt=(0, 1)).split("def done_call")[1]
    forward, backward = text.split("# backward sweep")
    assert "= block_primal(h, W)" in forward and "block_forward" not in forward
    lines = [line.split("#")[0].strip() for line in backward.splitlines()]
    rerun = lines.index("_, block_record = block_forward(h, W)")
    assert lines[rerun + 1].startswith("dh, dW = block_backward(block_record, "), text


def test_loop_stores_only_the_inputs_of_recomputed_calls():
    text = sg.source(for_loop, wrt=(0, 1))
    body = text.split("def dfor_loop")[1]
    forward, backward = body.split("# backward sweep")
    assert "block_primal(" in forward and "block_forward(" not in forward
    assert "record_stack" not in forward
    assert "block_forward(" in backward


# --- memory ----------------------------------------------------------------------

@sg.recompute
def wide(h, V):
    U = np.tanh(h[:, None] * V)          # an intermediate 64 times the size of h
    return h + 0.1 * np.sum(U * U, axis=1)


def wide_plain(h, V):
    U = np.tanh(h[:, None] * V)
    return h + 0.1 * np.sum(U * U, axis=1)


def deep(h, V, n):
    for i in range(n):
        h = wide(h, V)
    return np.sum(h)


def deep_plain(h, V, n):
    for i in range(n):
        h = wide_plain(h, V)
    return np.sum(h)


def peak_memory(fn, *args):
    tracemalloc.start()
    try:
        result = fn(*args)
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()


def test_recompute_lowers_peak_memory_of_a_loop_of_blocks():
    h, V = rand(500, seed=3, scale=0.1), rand(500, 64, seed=4, scale=0.1)
    d_recomputed = sg.grad(deep, wrt=(0, 1))
    d_stored = sg.grad(deep_plain, wrt=(0, 1))
    d_recomputed(h, V, 2), d_stored(h, V, 2)           # generate the code outside the measurement
    peak_recomputed, g1 = peak_memory(d_recomputed, h, V, 30)
    peak_stored, g2 = peak_memory(d_stored, h, V, 30)
    close(g1, g2)
    # each block stores ~3 arrays of 500 x 64 without recompute, only h (500) with it
    assert peak_recomputed < 0.5 * peak_stored, (peak_recomputed, peak_stored)
