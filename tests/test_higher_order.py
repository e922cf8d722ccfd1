"""Higher order: Hessian-vector products (forward mode over the generated gradient), Hessians, grad of
grad and forward over forward, against finite differences of the gradient; on straight-line code, loops,
branches, calls, lists and in-place writes, random programs, and a 100-step recurrent network.

Every test function lives at module level: s2sgrad reads its source with `inspect`.
"""
import copy
import math
import os
import random
import re

import numpy as np
import pytest
from program_grammar import RandomChooser, generate

import s2sgrad as sg
from s2sgrad import runtime
from s2sgrad.api.forward import grad_of_grad, hessian, hvp, source
from s2sgrad.api.generation import dot_hint, forward_generated

STEP = 1e-4
HVP_PROGRAMS = int(os.environ.get("S2SGRAD_HVP_PROGRAMS", "8"))     # random programs through hvp (more: set it)


def rand(*shape, seed=0, low=None, high=None):
    rng = np.random.default_rng(seed)
    if low is not None:
        return rng.uniform(low, high, shape)
    return rng.standard_normal(shape)


def _as_tuple(value, many):
    return tuple(value) if many else (value,)


def gradient_difference(f, args, wrt, direction, step=STEP):
    """Central differences (fourth order) of s2sgrad's gradient of f along `direction`."""
    many = isinstance(wrt, tuple)
    wrts, directions = _as_tuple(wrt, many), _as_tuple(direction, many)
    g = sg.grad(f, wrt=wrts)

    def at(t):
        moved = copy.deepcopy(list(args))
        for k, v in zip(wrts, directions):
            moved[k] = moved[k] + t * v
        return [np.asarray(runtime.densify(x), dtype=float) for x in g(*moved)]
    points = [(at(2 * step), -1.0), (at(step), 8.0), (at(-step), -8.0), (at(-2 * step), 1.0)]
    out = [sum(c * p[i] for p, c in points) / (12 * step) for i in range(len(wrts))]
    return tuple(out) if many else out[0]


def check_hvp(f, args, wrt=0, rtol=1e-6, atol=1e-8, seed=0):
    many = isinstance(wrt, tuple)
    rng = np.random.default_rng(seed)
    directions = tuple(rng.standard_normal(np.shape(args[k])) if isinstance(args[k], np.ndarray)
                       else float(rng.standard_normal()) for k in _as_tuple(wrt, many))
    direction = directions if many else directions[0]
    before = copy.deepcopy((args, directions))
    got = hvp(f, wrt)(*args, direction)
    assert _equal(before, (args, directions)), "hvp modified an argument or the direction in place"
    expected = gradient_difference(f, args, wrt, direction)
    for g, e in zip(_as_tuple(got, many), _as_tuple(expected, many)):
        assert np.shape(g) == np.shape(e), f"hvp has shape {np.shape(g)}, the argument {np.shape(e)}"
        assert np.allclose(g, e, rtol=rtol, atol=atol), f"hvp {g!r}, finite differences of the gradient {e!r}"


def _equal(a, b) -> bool:
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(map(_equal, a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    return a == b


# --- functions ---------------------------------------------------------------------------

def quadratic(x, A):
    return 0.5 * x @ A @ x


def elementwise(x, w):
    y = np.sin(x) * w + np.exp(-x * x) / (1.0 + w ** 2)
    return np.sum(np.tanh(y) - np.log1p(y * y))


def matrices(A, x):
    y = np.tanh(A @ x)
    return np.sum(y ** 2) + np.linalg.norm(A) * np.dot(x, x) + np.sum(np.linalg.inv(A + 3.0 * np.eye(3)))


def reductions(x):
    return np.var(x, axis=0).sum() + np.max(x) * np.mean(x ** 3) + np.sum(np.cumprod(x / 3.0 + 1.0))


def scalars(a, b):
    return math.sin(a * b) + math.exp(a) / (1.0 + b * b) + a ** 3 * b


def while_loop(x, n):
    y = x
    i = 0
    while i < n:
        y = np.sin(y) * x
        i += 1
    return np.sum(y)


def data_dependent_loop(x):
    y = x
    while np.linalg.norm(y) < 5.0:
        y = y * 1.3 + np.sin(y) * 0.1
    return np.sum(y ** 3)


def branches_in_loop(x, w):
    s = 0.0
    for i in range(4):
        if x[i % 3] * w > 0:
            s = s + np.sum(np.sin(x * i) * w)
        else:
            s = s - np.sum(x ** 2) * w ** 2
    return s


def break_and_continue(x):
    y = x
    for i in range(8):
        if i % 3 == 1:
            continue
        y = y * np.cos(y) + 0.1
        if i > 5:
            break
    return np.sum(y * y)


def layer(W, h):
    return np.tanh(W @ h)


def calls(W, x):
    h = layer(W, x)
    h = layer(W, h)
    return np.sum(h * x)


def lists_and_writes(x):
    hs = []
    out = np.zeros((3, 3))
    h = x
    for i in range(3):
        h = np.tanh(h * 1.5 + i)
        hs.append(h)
        out[i] = h * x
    return np.sum(np.stack(hs) ** 2) + np.sum(out * out)


@sg.recompute
def recomputed_block(h, W):
    return np.tanh(W @ h)


def uses_recompute(W, x):
    h = recomputed_block(x, W)
    return np.sum(recomputed_block(h, W) ** 2)


def checkpointed_loop(x, n):
    y = x
    for _ in sg.checkpointed(range(n), sg.Revolve(snapshots=2)):
        y = np.sin(y) * x
    return np.sum(y)


def test_checkpointed_loop_is_refused_with_a_hint():
    with pytest.raises(sg.UnsupportedSyntax, match="checkpointed loop") as error:
        hvp(checkpointed_loop)(rand(3), 5, rand(3))
    assert "test_higher_order.py" in str(error.value)


def indexing(x):
    return np.sum(x[np.array([0, 0, 2])] ** 3) + x[1] * x[3]


def recurrence_in_an_array(x):
    y = np.zeros_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = y[i - 1] * 0.5 + np.sin(x[i])       # written in place; its adjoint zeroed in place
    return np.sum(y ** 2)


def window_added_in_place(x):
    y = np.zeros(x.shape[0] + 2)
    for i in range(x.shape[0]):
        y[i:i + 3] = y[i:i + 3] + x[i] * np.array([1.0, 2.0, 3.0])
    return np.sum(np.sin(y))


@pytest.mark.parametrize("f, args, wrt", [
    (quadratic, (rand(3), rand(3, 3)), 0),
    (elementwise, (rand(4), rand(4, seed=1)), 0),
    (elementwise, (rand(4), rand(4, seed=1)), (0, 1)),
    (elementwise, (0.3, 0.8), (0, 1)),
    (matrices, (rand(3, 3) * 0.5, rand(3, seed=1)), (0, 1)),
    (reductions, (rand(3, 4),), 0),
    (scalars, (0.4, 0.7), (0, 1)),
    (while_loop, (rand(3), 4), 0),
    (data_dependent_loop, (rand(3, low=0.5, high=1.0),), 0),
    (branches_in_loop, (np.array([0.3, -0.4, 0.8]), 0.7), (0, 1)),
    (break_and_continue, (rand(3),), 0),
    (calls, (rand(3, 3) * 0.5, rand(3, seed=1)), (0, 1)),
    (lists_and_writes, (rand(3),), 0),
    (indexing, (rand(4),), 0),
    (uses_recompute, (rand(3, 3) * 0.5, rand(3, seed=1)), (0, 1)),
    (recurrence_in_an_array, (rand(5),), 0),
    (window_added_in_place, (rand(5),), 0),
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else None)
def test_hvp_matches_differences_of_the_gradient(f, args, wrt):
    check_hvp(f, args, wrt)


# --- Hessians ---------------------------------------------------------------------------

def test_hessian_of_a_quadratic_is_its_matrix():
    A = rand(3, 3)
    H = hessian(quadratic)(rand(3, seed=1), A)
    assert np.allclose(H, 0.5 * (A + A.T))


@pytest.mark.parametrize("f, args", [
    (elementwise, (rand(4), rand(4, seed=1))),
    (while_loop, (rand(3), 3)),
    (data_dependent_loop, (rand(3, low=0.5, high=1.0),)),
    (lists_and_writes, (rand(3),)),
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else None)
def test_hessian_matches_differences_of_the_gradient(f, args):
    H = hessian(f)(*args)
    x = args[0]
    assert H.shape == x.shape + x.shape
    columns = [gradient_difference(f, args, 0, np.eye(x.size)[k].reshape(x.shape)) for k in range(x.size)]
    assert np.allclose(H, np.stack(columns, axis=-1), rtol=1e-6, atol=1e-8)
    assert np.allclose(H, H.T, rtol=1e-8, atol=1e-10)


def test_hessian_of_a_matrix_argument_has_shape_s_plus_s():
    A = rand(2, 3) * 0.5
    H = hessian(matrices)(np.vstack([A, rand(1, 3, seed=3)]), rand(3, seed=1))
    assert H.shape == (3, 3, 3, 3)


def test_hessian_blocks_for_a_tuple_wrt():
    blocks = hessian(scalars, wrt=(0, 1))(0.4, 0.7)
    a, b = 0.4, 0.7
    expected_ab = np.cos(a * b) - a * b * np.sin(a * b) - 2 * b * np.exp(a) / (1 + b * b) ** 2 + 3 * a * a
    assert blocks[0][1] == pytest.approx(expected_ab)
    assert blocks[1][0] == pytest.approx(expected_ab)
    assert isinstance(blocks[0][0], float)


# --- grad of grad, forward over forward ---------------------------------------------------

def cube(x):
    return x ** 3 + np.sin(x)


def two_scalars(x, y):
    return x * x * y + np.exp(x * y)


def vector_and_scalar(x, s):
    return np.sum(np.tanh(x * s) ** 2)


def test_grad_of_grad_of_a_scalar_function():
    assert grad_of_grad(cube)(0.7) == pytest.approx(6 * 0.7 - np.sin(0.7))


def test_grad_of_grad_mixed():
    x, y = 0.3, 0.8
    assert grad_of_grad(two_scalars, inner=0, outer=1)(x, y) == pytest.approx(
        2 * x + np.exp(x * y) * (1 + x * y))


def test_grad_of_grad_of_a_scalar_argument_with_respect_to_an_array():
    x, s = rand(3), 0.6
    got = grad_of_grad(vector_and_scalar, inner=1, outer=0)(x, s)        # d/ds of the gradient in x
    step = 1e-5
    g = sg.grad(vector_and_scalar, wrt=0)
    assert np.allclose(got, (g(x, s + step) - g(x, s - step)) / (2 * step), rtol=1e-6)


def test_grad_of_grad_needs_a_scalar_inner_argument():
    with pytest.raises(sg.S2SGradError, match="scalar"):
        grad_of_grad(vector_and_scalar, inner=0, outer=0)(rand(3), 0.5)


def test_forward_over_forward_gives_v_hessian_v():
    x, w, v = rand(4), rand(4, seed=1), rand(4, seed=2)
    first = forward_generated(elementwise, ["x"], ("tensor", "tensor"))
    second = forward_generated(first, ["x"], ("tensor", "tensor", "tensor"), hint=dot_hint)
    (_, _), (_, vhv) = second(x, w, v, v)
    assert vhv == pytest.approx(v @ hvp(elementwise)(x, w, v), rel=1e-10)


# --- the generated second-order code -------------------------------------------------------

def test_hvp_source_is_forward_over_the_gradient():
    text = source(while_loop, mode="hvp", args=(rand(3), 4))
    assert "def hvp_while_loop_x(x, n, dsum, x_dot):" in text
    assert "y_stack_dot = stack_push(y_stack_dot, y_dot)" in text        # a pushed value carries its tangent
    assert re.search(r"sin_stack_dot, \w+ = stack_pop\(sin_stack_dot\)", text)
    assert "stack_pop_rows(y_stack_dot, trips)" in text                 # ... and so do rows popped at once
    assert "# test_higher_order.py:" in text and "<s2sgrad" not in text.split('"""', 2)[2]


def rnn(W, U, b, xs):
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
    return np.sum(h ** 2)


def rnn_inputs(steps=100, hidden=32, inputs=16, seed=2):
    """The benchmark's recurrent network (benchmarks/workloads.py), over `steps` steps."""
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((hidden, hidden)) * (0.9 / np.sqrt(hidden))
    U = rng.standard_normal((hidden, inputs)) * (1.0 / np.sqrt(inputs))
    b = rng.standard_normal(hidden) * 0.1
    xs = rng.standard_normal((steps, inputs))
    return W, U, b, xs


def rows_written_in_a_loop(x):
    out = np.zeros((3, 3))
    h = x
    s = 0.0
    for i in range(3):
        h = np.tanh(h * 1.5 + i)
        s = s + np.sum(np.sin(out))          # reads `out` before the write below: the write copies
        out[i] = h * x
    return np.sum(out * out) + s


def test_hvp_through_a_copying_row_write():
    x, v = rand(3), rand(3, seed=1)
    assert "setitem(" in sg.source(rows_written_in_a_loop, args=(x,)).split("# backward")[0]
    gradient, eps = sg.grad(rows_written_in_a_loop), 1e-6
    numeric = (gradient(x + eps * v) - gradient(x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(hvp(rows_written_in_a_loop)(x, v), numeric, rtol=1e-6, atol=1e-8)


def test_hvp_of_a_100_step_rnn_loss():
    W, U, b, xs = rnn_inputs()
    rng = np.random.default_rng(5)
    V = (rng.standard_normal(W.shape), rng.standard_normal(U.shape), rng.standard_normal(b.shape))
    got = hvp(rnn, wrt=(0, 1, 2))(W, U, b, xs, V)
    expected = gradient_difference(rnn, (W, U, b, xs), (0, 1, 2), V, step=1e-4)
    for g, e in zip(got, expected):
        assert np.linalg.norm(g - e) <= 1e-6 * np.linalg.norm(e)


def test_no_tangent_of_a_value_read_only_for_its_shape():
    text = source(rnn, wrt=0, mode="hvp", args=rnn_inputs(steps=3))
    assert "power_dot" not in text                 # power = h ** 2 is read by unreduce for its shape only


# --- random programs -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    return tmp_path_factory.mktemp("second_order_programs")


def _load(program, directory, n):
    import importlib.util
    path = directory / f"second_order_program_{n}.py"
    path.write_text(program.module_source())
    spec = importlib.util.spec_from_file_location(f"s2sgrad_second_order_program_{n}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, program.name)


@pytest.mark.parametrize("seed", range(HVP_PROGRAMS))
def test_random_program_hvp(seed, directory):
    from test_random_programs import FEATURES, smallest_margin
    rng = random.Random(1000 + seed)
    program = generate(RandomChooser(rng), FEATURES)
    args = [round(rng.uniform(-1.5, 1.5), 2) for p in program.params if p != program.array]
    if program.array is not None:
        args.append(np.array([round(rng.uniform(-1.5, 1.5), 2) for _ in range(3)]))
    if smallest_margin(program, args) < 1e-2:
        pytest.skip("too close to a branch switch for finite differences")
    f = _load(program, directory, seed)
    wrt = tuple(range(len(args)))
    try:
        sg.grad(f, wrt=wrt)(*copy.deepcopy(args))
    except sg.UnsupportedSyntax:
        pytest.skip("the program is refused by reverse mode too")
    direction = tuple(np.ones(np.shape(a)) * 0.5 if isinstance(a, np.ndarray) else 0.5 for a in args)
    got = hvp(f, wrt=wrt)(*copy.deepcopy(args), direction)
    expected = gradient_difference(f, args, wrt, direction, step=1e-5)
    for g, e in zip(got, expected):
        assert np.allclose(g, e, rtol=1e-4, atol=1e-5), program.source()
