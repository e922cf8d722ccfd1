"""Forward mode (`s2sgrad.api.forward.jvp`) end to end: every construct the reverse mode supports, against
central finite differences along random directions, and against the gradient (``jvp · v = <grad, v>``)
on random programs. Also: the generated code (readable, no zero arithmetic), and that neither the
arguments nor the tangents passed in are ever modified.

Every test function lives at module level: s2sgrad reads its source with `inspect`.
"""
import copy
import math
import random
import re

import numpy as np
import pytest
from program_grammar import RandomChooser, generate

import s2sgrad as sg
from s2sgrad import NoDerivativeRule, d, runtime
from s2sgrad.api.forward import jvp, source
from s2sgrad.rules import tangent
from s2sgrad.rules.registry import _RULES

STEP = 1e-4


def rand(*shape, seed=0, low=None, high=None):
    rng = np.random.default_rng(seed)
    if low is not None:
        return rng.uniform(low, high, shape)
    return rng.standard_normal(shape)


def _direction(rng, x):
    if isinstance(x, (list, tuple)):
        return type(x)(_direction(rng, v) for v in x)
    if isinstance(x, float):
        return float(rng.standard_normal())
    return rng.standard_normal(np.shape(x))


def _moved(x, t, v):
    if isinstance(x, (list, tuple)):
        return type(x)(_moved(a, t, b) for a, b in zip(x, v))
    return x + t * v


def _flat(value) -> list:
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _flat(v)]
    return [np.asarray(runtime.densify(value), dtype=float)]


def check_jvp(f, args, wrt=0, rtol=1e-6, atol=1e-8, seed=0):
    """jvp(f, wrt)(*args, tangent) against f and central differences of f along the tangent."""
    wrts = wrt if isinstance(wrt, tuple) else (wrt,)
    rng = np.random.default_rng(seed)
    directions = [_direction(rng, args[k]) for k in wrts]
    before = copy.deepcopy((args, directions))
    tangent = tuple(directions) if isinstance(wrt, tuple) else directions[0]
    value, out = jvp(f, wrt)(*args, tangent)
    assert _equal(before, (args, directions)), "jvp modified an argument or the tangent in place"
    expected = f(*copy.deepcopy(args))
    for got, want in zip(_flat(value), _flat(expected)):
        assert np.allclose(got, want, rtol=1e-12, atol=1e-12), f"value {got!r}, f gives {want!r}"

    def at(t):
        moved = copy.deepcopy(list(args))
        for k, v in zip(wrts, directions):
            moved[k] = _moved(moved[k], t, v)
        return _flat(f(*moved))
    h = STEP
    points = [(at(2 * h), -1.0), (at(h), 8.0), (at(-h), -8.0), (at(-2 * h), 1.0)]
    numeric = [sum(c * p[i] for p, c in points) / (12 * h) for i in range(len(points[0][0]))]
    analytic = _flat(out)
    assert len(analytic) == len(numeric)
    for a, n in zip(analytic, numeric):
        assert np.shape(a) == np.shape(n), f"tangent shape {np.shape(a)}, output shape {np.shape(n)}"
        assert np.allclose(a, n, rtol=rtol, atol=atol), f"jvp {a!r}, finite differences {n!r}"
    return out


def _equal(a, b) -> bool:
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(map(_equal, a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    return a == b


# --- straight-line code -------------------------------------------------------------

def elementwise(x, w):
    y = np.sin(x) * w + np.exp(-x * x) / (1.0 + w ** 2)
    return np.tanh(y) - np.log1p(y * y)


def broadcasting(x, s, b):
    return x / s + b - np.maximum(x, 0.1) * 2.0


def matrix_code(A, x):
    y = A @ x
    z = np.dot(A.T, y) + np.linalg.norm(x)
    return np.sum(z ** 2) + np.trace(A @ A.T) + np.linalg.det(A + 3.0 * np.eye(3))


def reductions_and_shapes(x):
    m = np.mean(x, axis=0, keepdims=True)
    v = np.var(x, axis=1)
    y = np.reshape(x - m, (-1,))
    z = np.concatenate([y, v, np.max(x, axis=1)])
    return np.cumsum(z)[::2] * np.prod(np.abs(x) + 1.0)


def indexing(x, idx):
    y = x[idx] * 2.0 + x[1:3].sum()
    return y + x[-1] ** 2


def scalar_math(a, b):
    c = math.sin(a) * math.exp(b) + math.sqrt(a * a + b * b)
    return math.atan2(c, b) + abs(a - b) + math.pow(a * a + 1.0, b)


def non_scalar_output(x):
    return np.outer(x, np.cos(x)), np.sum(x)


def with_constant_argument(x, n, name="sum"):
    y = x * n
    if name == "sum":
        return np.sum(y ** 2)
    return np.mean(y)


def stopped(x):
    return x * sg.stop_gradient(x)


@pytest.mark.parametrize("f, args, wrt", [
    (elementwise, (rand(4), rand(4, seed=1)), 0),
    (elementwise, (rand(4), rand(4, seed=1)), 1),
    (elementwise, (rand(4), rand(4, seed=1)), (0, 1)),
    (elementwise, (0.3, 0.7), (0, 1)),
    (broadcasting, (rand(3, 4), rand(3, 1, low=1.0, high=2.0), rand(4)), (0, 1, 2)),
    (broadcasting, (rand(3, 4), rand(3, 1, low=1.0, high=2.0), rand(4)), 2),
    (broadcasting, (rand(3, 4), 1.5, 0.2), 2),
    (matrix_code, (rand(3, 3), rand(3, seed=1)), (0, 1)),
    (matrix_code, (rand(3, 3), rand(3, seed=1)), 1),
    (reductions_and_shapes, (rand(3, 4),), 0),
    (indexing, (rand(5), np.array([0, 0, 3])), 0),
    (scalar_math, (0.6, 0.4), (0, 1)),
    (scalar_math, (0.6, 0.4), 1),
    (non_scalar_output, (rand(3),), 0),
    (with_constant_argument, (rand(3), 3), 0),
    (with_constant_argument, (rand(3), 3, "mean"), 0),
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else None)
def test_straight_line(f, args, wrt):
    check_jvp(f, args, wrt)


def test_stop_gradient():
    x = rand(3)
    _, tangent = jvp(stopped)(x, np.ones(3))
    assert np.allclose(tangent, x)


def test_scalar_function_of_scalar():
    value, tangent = jvp(scalar_math)(0.6, 0.4, 1.0)
    assert isinstance(tangent, float)


# --- loops and branches -------------------------------------------------------------

def while_loop(x, n):
    y = x
    i = 0
    while i < n:
        y = np.sin(y) * x
        i += 1
    return y


def while_data_dependent(x):
    y = x
    while np.linalg.norm(y) < 10.0:
        y = y * 1.3 + 0.1
    return np.sum(y * y)


def for_range_accumulate(x, w):
    s = 0.0
    for i in range(4):
        s = s + np.sum(x * w ** i) / (i + 1)
    return s


def for_over_rows(A, v):
    total = 0.0
    for row in A:
        total = total + np.dot(row, v) ** 2
    return total


def enumerate_zip(xs, ys):
    out = 0.0
    for k, (a, b) in enumerate(zip(xs, ys)):
        out = out + k * a * b
    return out


def branches(x, w):
    if np.sum(x) > 0:
        y = x * w
    elif np.sum(x) > -1:
        y = x + w
    else:
        y = x
    return y * y


def branch_in_loop(x):
    s = x * 0.0
    for i in range(5):
        if x[i % 3] > 0:
            s = s + np.sin(x) * i
        else:
            s = s - x ** 2
    return s


def break_continue(x):
    y = x
    i = 0
    while True:
        i += 1
        if i % 2 == 0:
            continue
        y = y * np.cos(y)
        if i > 6:
            break
    return y


def return_in_loop(x):
    for i in range(10):
        x = x * 1.5
        if np.sum(x) > 3.0:
            return x * i
    return x


def nested_loops(x):
    s = x
    for i in range(3):
        for j in range(i + 1):
            s = s * 0.9 + np.sin(s) * j
    return s


def loop_with_inactive_start(x):
    acc = np.zeros(3)
    for i in range(3):
        acc = acc + x * i
    return acc


def conditional_expression(x, w):
    y = x * w if w > 0 else x / w
    return y + (w if x[0] > 0 else 2.0 * w)


@pytest.mark.parametrize("f, args, wrt", [
    (while_loop, (rand(3), 4), 0),
    (while_data_dependent, (rand(3, low=0.5, high=1.0),), 0),
    (for_range_accumulate, (rand(3), rand(3, seed=1)), (0, 1)),
    (for_over_rows, (rand(3, 2), rand(2, seed=1)), (0, 1)),
    (enumerate_zip, (rand(4), rand(4, seed=1)), (0, 1)),
    (branches, (rand(3, low=0.1, high=1.0), rand(3, seed=1)), (0, 1)),
    (branches, (rand(3, low=-0.3, high=-0.1), rand(3, seed=1)), (0, 1)),
    (branches, (rand(3, low=-1.0, high=-0.5), rand(3, seed=1)), 1),
    (branch_in_loop, (np.array([0.3, -0.4, 0.8]),), 0),
    (break_continue, (rand(3),), 0),
    (return_in_loop, (np.array([0.4, 0.5, 0.3]),), 0),
    (return_in_loop, (np.array([0.01, 0.02, -0.01]),), 0),
    (nested_loops, (rand(2),), 0),
    (loop_with_inactive_start, (rand(3),), 0),
    (conditional_expression, (rand(3, low=0.1, high=1.0), 0.5), (0, 1)),
    (conditional_expression, (rand(3, low=-1.0, high=-0.1), -0.5), (0, 1)),
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else None)
def test_control_flow(f, args, wrt):
    check_jvp(f, args, wrt)


# --- calls of user functions ----------------------------------------------------------

def softplus(z):
    return np.log1p(np.exp(z))


def layer(W, h, b):
    return np.tanh(W @ h + b)


def calls(W, x, b):
    h = layer(W, x, b)
    h = layer(W, h, b)                   # the same function, again
    return np.sum(softplus(h)) + np.sum(softplus(b))       # b only: a second tangent pattern


def constant_result(x):
    return 3.0


def calls_constant(x):
    return x * constant_result(x)


def nested_def(x, w):
    def scale(v):
        return v * w

    y = scale(x)
    for _ in range(2):
        y = scale(np.sin(y))
    return y


@sg.recompute
def recomputed(h, w):
    return np.tanh(w * h)


def uses_recompute_and_checkpoints(x, w, n):
    y = recomputed(x, w)
    for _ in sg.checkpointed(range(n), sg.Revolve(snapshots=2)):
        y = np.sin(y) * x
    return y


def loop_in_callee(x, n):
    return while_loop(x, n) + 1.0


@pytest.mark.parametrize("f, args, wrt", [
    (calls, (rand(3, 3) * 0.5, rand(3, seed=1), rand(3, seed=2)), (0, 1, 2)),
    (calls, (rand(3, 3) * 0.5, rand(3, seed=1), rand(3, seed=2)), 2),
    (calls_constant, (rand(3),), 0),
    (nested_def, (rand(3), 0.7), (0, 1)),
    (loop_in_callee, (rand(3), 3), 0),
    (uses_recompute_and_checkpoints, (rand(3), 0.7, 5), (0, 1)),
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else None)
def test_calls(f, args, wrt):
    check_jvp(f, args, wrt)


def test_callee_generated_once_per_pattern():
    text = source(calls, wrt=(0, 1, 2))
    assert len(re.findall(r"^def layer_jvp", text, re.M)) == 1
    assert len(re.findall(r"^def softplus_jvp", text, re.M)) == 1
    assert "constant_result(" in source(calls_constant) or "constant_result_primal(" in source(calls_constant)


# --- in-place writes and lists ---------------------------------------------------------

def write_rows(x):
    out = np.zeros((3, 2))
    for i in range(3):
        out[i] = x * (i + 1.0)
    out[0, 1] = 7.0                      # a constant: its tangent is zero
    return out


def augmented_write(x):
    y = x * 2.0
    y[1] += x[0] ** 2
    y[2] *= 3.0
    return y


def write_into_alias_of_tangent(x, c):
    y = x + c                            # dy is dx itself: written through, it must be copied first
    y[0] = y[1] * 5.0
    return y


def lists(x):
    hs = []
    h = x
    for i in range(3):
        h = np.tanh(h + i)
        hs.append(h)
    return np.stack(hs) * 2.0 + sum(hs)


def list_of_arrays_argument(xs):
    total = 0.0
    for x in xs:
        total = total + np.sum(x ** 2)
    return total + np.sum(xs[0] * xs[1])


def tuples(x):
    pair = (x, np.sin(x))
    a, b = pair
    b, a = a, b
    return a * b + pair[1]


@pytest.mark.parametrize("f, args, wrt", [
    (write_rows, (rand(2),), 0),
    (augmented_write, (rand(3),), 0),
    (write_into_alias_of_tangent, (rand(3), rand(3, seed=1)), 0),
    (lists, (rand(3),), 0),
    (list_of_arrays_argument, ([rand(2), rand(2, seed=1)],), 0),
    (tuples, (rand(3),), 0),
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else None)
def test_writes_and_containers(f, args, wrt):
    check_jvp(f, args, wrt)


def test_tangent_written_in_place_where_owned():
    text = source(write_rows)
    assert "dout = zeros_like(out)" in text and "dout[i] = dx * " in text and "setitem(" not in text
    assert "dhs.append(" in source(lists)
    text = source(write_into_alias_of_tangent)          # dy is dx: the write makes a copy
    assert "dy = broadcast_like(dx, y)" in text and "setitem(dy, 0, dy[1] * 5.0)" in text


# --- the generated code -----------------------------------------------------------------

def test_generated_code_reads_like_the_primal():
    text = source(while_loop)
    assert "def jvp_while_loop_x(x, n, dx):" in text
    body = text[text.index("def jvp_while_loop_x"):]
    assert "dy = dx" in body
    assert "while i < n:" in body
    assert re.search(r"dy = dy \* np\.cos\(y\) \* x \+ sin \* dx", body)
    assert "return (y, dy)" in body
    assert "# test_forward.py:" in body


def test_no_zero_arithmetic_for_inactive_values():
    text = source(broadcasting, wrt=0)
    body = text[text.index("def "):]
    assert "zeros_like" not in body and "* 0" not in body and "+ 0" not in body
    assert "db" not in body and "ds" not in body


def test_output_without_tangent_is_zero():
    value, tangent = jvp(with_constant_argument, wrt=0)(rand(3), 2, np.zeros(3))
    assert tangent == 0.0
    _, tangent = jvp(calls_constant)(rand(3), np.ones(3))
    assert np.allclose(tangent, 3.0)


def uses_qr(x):
    return np.sum(np.linalg.qr(np.outer(x, x))[0])


def test_missing_tangent_rule_is_reported_at_the_call():
    with pytest.raises(NoDerivativeRule, match=r"test_forward.py:\d+:\d+: no forward-mode \(tangent\) rule for np.linalg.qr"):
        jvp(uses_qr)(rand(3), np.ones(3))


def softplus_primitive(x):
    return np.log1p(np.exp(x))


def _softplus_adjoint(y, x):
    d[x] = d[y] / (1.0 + np.exp(-x))


def logistic_primitive(x):
    return 1.0 / (1.0 + np.exp(-x))


def _logistic_adjoint(y, x):
    d[x] = d[y] * y * (1.0 - y)


def _logistic_tangent(y, x):
    d[y] = d[x] * y * (1.0 - y)


def uses_primitives(x):
    return logistic_primitive(x) * 2.0 + softplus_primitive(1.0)


def uses_primitive_without_tangent(x):
    return softplus_primitive(x)


@pytest.fixture
def user_rules():
    """Rules a user registers: softplus with an adjoint only, logistic with both; removed afterwards."""
    sg.adjoint(softplus_primitive)(_softplus_adjoint)
    sg.adjoint(logistic_primitive)(_logistic_adjoint)
    tangent(logistic_primitive)(_logistic_tangent)
    yield
    for primitive in (softplus_primitive, logistic_primitive):
        _RULES.pop(id(primitive))


def test_user_tangent_rule_is_used(user_rules):
    check_jvp(uses_primitives, (rand(3),), 0)
    assert "logistic_primitive(x)" in source(uses_primitives)        # applied by its rule, not transformed


def test_user_rule_without_tangent_is_reported(user_rules):
    with pytest.raises(NoDerivativeRule, match="no forward-mode"):
        jvp(uses_primitive_without_tangent)(rand(3), np.ones(3))


square = lambda x: x * x  # noqa: E731


def test_lambda():
    assert jvp(square)(3.0, 1.0) == (9.0, 6.0)


def test_tuple_wrt_takes_a_tuple_of_tangents():
    value, tangent = jvp(elementwise, wrt=(0, 1))(0.3, 0.7, (1.0, 0.0))
    _, alone = jvp(elementwise, wrt=0)(0.3, 0.7, 1.0)
    assert tangent == pytest.approx(alone)


def test_specialized_on_argument_kinds():
    f = jvp(while_loop)
    _, on_array = f(np.array([0.5]), 2, np.array([1.0]))
    _, on_float = f(0.5, 2, 1.0)
    assert isinstance(on_array, np.ndarray) and isinstance(on_float, float)
    assert on_float == pytest.approx(on_array[0])


# --- random programs: jvp · v = <grad, v> -----------------------------------------------

@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    return tmp_path_factory.mktemp("forward_programs")


def _load(program, directory, n):
    import importlib.util
    path = directory / f"forward_program_{n}.py"
    path.write_text(program.module_source())
    spec = importlib.util.spec_from_file_location(f"s2sgrad_forward_program_{n}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, program.name)


@pytest.mark.parametrize("seed", range(60))
def test_random_program_jvp_matches_gradient(seed, directory):
    from test_random_programs import FEATURES
    rng = random.Random(seed)
    program = generate(RandomChooser(rng), FEATURES)
    args = [round(rng.uniform(-1.5, 1.5), 2) for p in program.params if p != program.array]
    if program.array is not None:
        args.append(np.array([round(rng.uniform(-1.5, 1.5), 2) for _ in range(3)]))
    f = _load(program, directory, seed)
    try:
        grads = sg.grad(f, wrt=tuple(range(len(args))))(*copy.deepcopy(args))
    except sg.UnsupportedSyntax:
        pytest.skip("the program is refused by reverse mode too")
    directions = tuple(_direction(np.random.default_rng(seed), a) for a in args)
    value, tangent = jvp(f, wrt=tuple(range(len(args))))(*copy.deepcopy(args), directions)
    assert value == pytest.approx(f(*copy.deepcopy(args)), rel=1e-12, abs=1e-12)
    expected = sum(float(np.sum(np.asarray(runtime.densify(g)) * v)) for g, v in zip(grads, directions))
    assert float(tangent) == pytest.approx(expected, rel=1e-8, abs=1e-8), program.source()


sine_of = lambda x: np.sin(x)                       # a lambda bound to a name, called as a helper


def calls_a_named_lambda(x):
    return sine_of(x) * 2.0


def test_a_lambda_called_as_a_helper_gets_a_valid_generated_name():
    value, tangent = sg.jvp(calls_a_named_lambda)(0.3, 1.0)
    assert np.isclose(tangent, 2.0 * np.cos(0.3), rtol=1e-12)
    assert np.isclose(sg.hvp(calls_a_named_lambda)(0.3, 1.0), -2.0 * np.sin(0.3), rtol=1e-12)
    assert "def lambda_jvp(" in sg.source(calls_a_named_lambda, mode="forward")
