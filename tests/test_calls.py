"""Calls of user functions: each helper shape below is called with every activity pattern of its
arguments (both active, one, the same value twice, none), at points on both sides of its conditions;
``grad`` against central finite differences, ``jvp`` against ``<grad, v>`` and ``hvp`` against
differences of ``grad``. Then recursion: direct, mutual, through a helper, of a nested def, with the
activity of the arguments changing from one level to the next.

A called function's generated forward returns a *record* of what its backward reads. The helper
shapes are those where that record once missed a value or named an unbound one: a parameter the
result ignores (its gradient is a zero made from it), a value bound in one branch only, by an early
return, a conditional expression, or a loop that runs no trip.
"""
import copy
import importlib.util

import numpy as np
import pytest
from gradcheck import assert_grad_matches_fd

import s2sgrad as sg
from s2sgrad import runtime

HELPERS = {
    "ignores_a": "def helper(a, b):\n    return 2.0 * b\n",
    "constant": "def helper(a, b):\n    return 1.0\n",
    "overwrites_a": "def helper(a, b):\n    a = np.sin(b)\n    return a * b\n",
    "tests_a_only": "def helper(a, b):\n    if a > 0.0:\n        return np.sin(b)\n    return np.cos(b)\n",
    "branch_binds": "def helper(a, b):\n    if a > 0.0:\n        a = np.tanh(a)\n    return a * b\n",
    "conditional_expression": "def helper(a, b):\n    c = np.sin(a) if a > 0.0 else np.cos(a)\n    return c * b\n",
    "early_return": ("def helper(a, b):\n    if a > 0.0:\n        t = np.sin(a)\n        return t * t * b\n"
                     "    return a * b\n"),
    "zero_trip_while": "def helper(a, b):\n    while a > 1.0:\n        a = np.tanh(a)\n    return a * b\n",
    "zero_trip_for": ("def helper(a, b, n=0):\n    for i in range(n):\n        t = np.sin(a)\n        a = t * b\n"
                      "    return a + b\n"),
    "default_constant": "def helper(a, b=SCALE):\n    return np.exp(-a * a) * b\n",
    "calls_a_helper": ("def inner(a, b):\n    if b > 0.0:\n        return b\n    return a * a\n\n\n"
                       "def helper(a, b):\n    return inner(b, a) + inner(a, 0.5)\n"),
}

CALLS = {
    "both": "helper(x, y)",
    "first": "helper(x, 0.5)",
    "second": "helper(0.5, y)",
    "same": "helper(x, x)",
    "keywords": "helper(b=x, a=y)",
    "none": "helper(0.3, 0.7) * x",
    "twice": "helper(x, y) * helper(y, 0.5) + helper(0.5, x)",
}

SECOND_ORDER = {"twice"}      # (hvp costs more: this call mixes the activity patterns)
POINTS = [(-0.6, 0.8), (0.4, -0.3), (1.3, 0.9)]     # both sides of a > 0.0, and a > 1.0


def load(directory, name: str, source: str):
    path = directory / f"calls_{name}.py"
    path.write_text(f"import numpy as np\n\nSCALE = 1.5\n\n\n{source}")
    spec = importlib.util.spec_from_file_location(f"s2sgrad_calls_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    return tmp_path_factory.mktemp("calls")


def gradient_difference(f, args, direction, step=1e-5):
    """Central differences of s2sgrad's gradient (all arguments) along `direction`."""
    g = sg.grad(f, wrt=tuple(range(len(args))))
    up = g(*[a + step * v for a, v in zip(args, direction)])
    down = g(*[a - step * v for a, v in zip(args, direction)])
    return [(np.asarray(u) - np.asarray(d)) / (2 * step) for u, d in zip(up, down)]


def assert_derivatives(f, args, second_order=True):
    """grad against finite differences, jvp against <grad, v>, hvp against differences of grad."""
    wrt = tuple(range(len(args)))
    grads = assert_grad_matches_fd(f, args, wrt)
    direction = tuple(np.full(np.shape(a), 0.7) if isinstance(a, np.ndarray) else 0.7 for a in args)
    value, tangent = sg.jvp(f, wrt=wrt)(*copy.deepcopy(args), direction)
    assert value == pytest.approx(f(*copy.deepcopy(args)), rel=1e-12)
    expected = sum(float(np.sum(np.asarray(runtime.densify(g)) * v)) for g, v in zip(grads, direction))
    assert float(tangent) == pytest.approx(expected, rel=1e-9, abs=1e-12)
    if not second_order:
        return
    products = sg.hvp(f, wrt=wrt)(*copy.deepcopy(args), direction)
    for product, difference, a in zip(products, gradient_difference(f, args, direction), args):
        assert np.shape(product) == np.shape(a)
        np.testing.assert_allclose(product, difference, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("helper", HELPERS)
def test_helper_called_with_each_activity_pattern(helper, call, directory):
    source = f"{HELPERS[helper]}\n\ndef f(x, y):\n    return {CALLS[call]} + 0.1 * x * y\n"
    f = load(directory, f"{helper}_{call}", source).f
    for point in POINTS:
        assert_derivatives(f, list(point), second_order=call in SECOND_ORDER)


ARRAY_HELPERS = {
    "ignores_v": "def helper(v, a):\n    return a * np.ones(3)\n",
    "ignores_a": "def helper(v, a):\n    return np.sin(v)\n",
    "branch_binds": ("def helper(v, a):\n    if a > 0.0:\n        w = np.tanh(v) * a\n        return w * w\n"
                     "    return v * a\n"),
    "zero_trip_while": ("def helper(v, a):\n    while np.sum(v) > 3.0:\n        v = np.tanh(v)\n"
                        "    return v * a\n"),
}


ARRAY_CALLS = ["helper(x, a)", "helper(x, 0.5)", "helper(np.ones(3), a) * x", "helper(x * x, a) + helper(x, 2.0)"]


@pytest.mark.parametrize("call", range(len(ARRAY_CALLS)))
@pytest.mark.parametrize("helper", ARRAY_HELPERS)
def test_helper_returning_an_array(helper, call, directory):
    source = f"{ARRAY_HELPERS[helper]}\n\ndef f(x, a):\n    return np.sum({ARRAY_CALLS[call]} * x) + a\n"
    f = load(directory, f"array_{helper}_{call}", source).f
    for point in ([np.array([0.3, -0.5, 0.8]), 0.6], [np.array([1.4, 1.2, 0.9]), -0.4]):
        assert_derivatives(f, point)


def test_record_of_a_branch_not_taken_and_a_loop_without_trips(directory):
    """What the generated code looks like: the branch that did not bind a recorded value binds it to
    None, and what the backward pops itself is not recorded."""
    module = load(directory, "record", HELPERS["early_return"] + "\n\n" + HELPERS["zero_trip_while"].replace(
        "def helper", "def squash") + "\n\ndef f(x):\n    return helper(x, x) + squash(x, x)\n")
    text = sg.source(module.f)
    assert "        t = None\n" in text
    forward = text[text.index("def squash_forward"):text.index("def squash_backward")]
    record = forward.split("return")[-1]
    assert "a_stack" in record and "trips" in record and "a_2" not in record    # a_2 is popped
    assert sg.grad(module.f)(-0.5) == pytest.approx(2 * -0.5 + 2 * -0.5)


# --- recursion ----------------------------------------------------------------------------

RECURSIVE = """
def power(a, n):
    if n <= 0:
        return 1.0
    return a * power(a, n - 1)


def even(a, n):
    if n == 0:
        return a
    return odd(a * 2.0, n - 1)


def odd(a, n):
    if n == 0:
        return np.sin(a)
    return even(a, n - 1)


def swaps(a, b, n):
    if n == 0:
        return a * b
    return swaps(b, 1.0, n - 1) + np.sin(a)


def fib(a, n):
    if n < 2:
        return a
    return fib(a, n - 1) * fib(a, n - 2)


def through_helper(a, n):
    return 1.0 + np.sin(top(a, n))


def top(x, n):
    if n <= 0:
        return x
    return through_helper(x * x, n - 1) * x


def f_power(x):
    return power(x, 4)


def f_mutual(x):
    return even(x, 3) + odd(x, 2)


def f_swaps(x, y):
    return swaps(x, y, 3) + swaps(0.5, x, 2)


def f_fib(x):
    return fib(x, 5)


def f_nested(x, n):
    def g(a, k):
        if k == 0:
            return a
        return g(np.sin(a) * x, k - 1)
    return g(x, n)


def f_array(v, n):
    if n == 0:
        return np.sum(v * v)
    return f_array(np.sin(v) * 1.5, n - 1)
"""


@pytest.mark.parametrize("name, args, expected", [
    ("f_power", [0.7], 4 * 0.7 ** 3),
    ("f_mutual", [0.4], 4 * np.cos(4 * 0.4) + 2 * np.cos(2 * 0.4)),
    ("f_swaps", [0.4, -0.8], None),
    ("f_fib", [1.1], 8 * 1.1 ** 7),
    ("f_nested", [0.5, 3], None),
    ("top", [0.6, 2], None),
    ("f_array", [np.array([0.3, -0.5, 0.8]), 2], None),
])
def test_recursion_is_differentiated(name, args, expected, directory):
    f = getattr(load(directory, "recursive", RECURSIVE), name)
    wrt = tuple(k for k, a in enumerate(args) if not isinstance(a, int))
    grads = assert_grad_matches_fd(f, args, wrt)
    if expected is not None:
        assert grads[0] == pytest.approx(expected, rel=1e-12)
    direction = tuple(np.full(np.shape(args[k]), 0.7) if isinstance(args[k], np.ndarray) else 0.7 for k in wrt)
    _, tangent = sg.jvp(f, wrt=wrt)(*copy.deepcopy(args), direction)
    assert float(tangent) == pytest.approx(sum(float(np.sum(g * v)) for g, v in zip(grads, direction)), rel=1e-9)
    products = sg.hvp(f, wrt=wrt)(*copy.deepcopy(args), direction)
    g = sg.grad(f, wrt=wrt)
    step = 1e-5
    up, down = copy.deepcopy(args), copy.deepcopy(args)
    for k, v in zip(wrt, direction):
        up[k], down[k] = args[k] + step * v, args[k] - step * v
    for product, u, d in zip(products, g(*up), g(*down)):
        np.testing.assert_allclose(product, (np.asarray(u) - np.asarray(d)) / (2 * step), rtol=1e-5, atol=1e-7)


def test_recursive_function_generated_once_per_activity_pattern(directory):
    module = load(directory, "recursive", RECURSIVE)
    text = sg.source(module.f_swaps, wrt=(0, 1))
    defs = sorted(line.split("(")[0][4:] for line in text.splitlines() if line.startswith("def "))
    # swaps(x, y, n) has both arguments active; it calls swaps(y, 1.0, ...) (the first active), which
    # calls swaps(1.0, 1.0, ...) (none); swaps(0.5, x, 2) has the second active, which calls the first
    assert defs == ["df_swaps_dx_y", "swaps_backward", "swaps_backward_1", "swaps_backward_2",
                    "swaps_forward", "swaps_forward_1", "swaps_forward_2", "swaps_primal"], defs
