"""Generated code is specialized on the kinds, shapes and dtypes of the module constants, closure values and
default values it reads, as on its arguments': a float global ``H`` in a loop's step is a number, so no
trip records a shape and no adjoint is unbroadcast. The guard covers exactly that: rebinding a global to
another kind (an int, an array), shape or dtype regenerates, and the gradient is still right; a new value of
the same kind reuses the code (values are never folded in). Random programs of the grammar reading module
constants of each kind (`program_grammar.GLOBAL_FEATURES`) are checked like the other random programs.

Each test imports its own copy of `MODULE` (written to a temporary file), so rebinding does not leak.
"""
from __future__ import annotations

import ast
import importlib.util
import itertools
import random
import sys

import numpy as np
import pytest
from gradcheck import assert_grad_matches_fd, finite_difference
from program_grammar import GLOBAL_FEATURES, HELPER_RATES, RandomChooser, generate
from test_random_programs import FEATURES, _sweep_with_higher

import s2sgrad as sg
from s2sgrad.api import generation

MODULE = '''
import types

import numpy as np

H = 0.002
K = 3
HSTEP = 0.01
A = np.array([[0.5, -0.2, 0.1], [0.3, 0.4, -0.1], [0.0, 0.2, 0.6]])
V = np.array([0.5, -0.2, 0.3])
SCALE = 1.5
like = 0.5
cfg = types.SimpleNamespace(h=0.002)


def scalar_loop(y0, n):
    y = y0
    i = 0
    while i < n:
        y = y + H * (np.sin(y) * 1.01 + 0.1 * y * y - 0.05 * y * y * y)
        i += 1
    return y


def summed_loop(y0, n):
    y = y0
    i = 0
    while i < n:
        y = y + H * (np.sin(y) * 1.01 + 0.1 * y * y)
        i += 1
    return np.sum(y)


def read_outside(y0, n):
    h = H * 2.0
    y = y0
    i = 0
    while i < n:
        y = y + h * np.sin(y)
        i += 1
    return np.sum(y)


def ode(x, n):
    i = 0
    while i < n:
        dt = HSTEP / (1.0 + x @ x)
        x = x + dt * (np.tanh(A @ x) - 0.1 * x)
        i += 1
    return np.sum(x)


def int_power(x):
    return np.sum(x ** K / K)


def vector(x):
    return np.sum(np.tanh(V * x) * V)


def make_closure():
    c = 0.3

    def closed(y0, n):
        y = y0
        i = 0
        while i < n:
            y = y + c * np.sin(y)
            i += 1
        return np.sum(y)

    def set_c(value):
        nonlocal c
        c = value
    return closed, set_c


closed, set_closed = make_closure()


def step(y, h=H):
    return y + h * np.sin(y)


def calls_default(y0, n):
    y = y0
    i = 0
    while i < n:
        y = step(y)
        i += 1
    return np.sum(y)


def with_default(x, scale=SCALE):
    return np.sum(np.sin(x) * scale)


def helper(y):
    return y + H * np.sin(y)


def calls_helper(y0, n):
    y = y0
    i = 0
    while i < n:
        y = helper(y)
        i += 1
    return np.sum(y)


def renamed(x):
    return np.sum(np.sin(x) * like)


def attribute_loop(y0, n):
    y = y0
    i = 0
    while i < n:
        y = y + cfg.h * np.sin(y)
        i += 1
    return np.sum(y)
'''

_COUNTER = itertools.count()


@pytest.fixture
def module(tmp_path):
    name = f"s2sgrad_globals_{next(_COUNTER)}"
    path = tmp_path / f"{name}.py"
    path.write_text(MODULE)
    spec = importlib.util.spec_from_file_location(name, path)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded
    spec.loader.exec_module(loaded)
    yield loaded
    sys.modules.pop(name, None)


def global_setter(name):
    return lambda m, value: setattr(m, name, value)


def default_setter(function):
    return lambda m, value: setattr(getattr(m, function), "__defaults__", (value,))


X3 = np.array([0.3, -0.7, 1.1])
X4 = np.array([0.3, -0.7, 1.1, 0.2])
POSITIVE = np.array([0.5, 1.2, 0.8])

# name: (function, its arguments, how the global is set, its first value, a new value of the same kind,
#        values of other kinds, shapes or dtypes, each with other arguments where the first ones do not fit)
CASES = {
    "float": ("summed_loop", (0.5, 5), global_setter("H"), 0.002, 0.003,
              [3, np.float64(0.004), np.float32(0.002), np.full(3, 0.01), np.full((2, 3), 0.01)]),
    "int": ("int_power", (POSITIVE,), global_setter("K"), 3, 4,
            [2.5, np.int64(2), np.float32(2.0), np.array([1, 2, 3]), np.array([[2.0], [3.0]])]),
    "float64 scalar": ("summed_loop", (0.5, 5), global_setter("H"), np.float64(0.002), np.float64(0.003),
                       [0.002, np.float32(0.002), np.array([0.01, 0.02])]),
    "float32 scalar": ("summed_loop", (0.5, 5), global_setter("H"), np.float32(0.002), np.float32(0.003),
                       [0.002, np.float64(0.002), np.full(3, 0.01, np.float32)]),
    "1-D array": ("vector", (X3,), global_setter("V"), np.array([0.5, -0.2, 0.3]), np.array([0.1, 0.9, -0.4]),
                  [np.array([0.5, -0.2, 0.3], np.float32), np.ones((2, 3)) * 0.3, 0.5,
                   (np.array([0.5, -0.2, 0.3, 0.8]), (X4,))]),
    "2-D array": ("ode", (X3, 4), global_setter("A"), np.array([[0.5, -0.2, 0.1], [0.3, 0.4, -0.1], [0.0, 0.2, 0.6]]),
                  np.eye(3) * 0.7, [np.ones((1, 3)) * 0.4, np.eye(3, dtype=np.float32),
                                    (np.ones((4, 4)) * 0.2, (X4, 4))]),
    "float in an array loop": ("ode", (X3, 4), global_setter("HSTEP"), 0.01, 0.02,
                               [np.float32(0.01), np.array([0.01, 0.02, 0.03]), 1]),
    "closure cell": ("closed", (0.5, 5), lambda m, value: m.set_closed(value), 0.3, 0.4,
                     [np.float32(0.3), np.array([0.1, 0.2, 0.3]), 2]),
    "default of a helper": ("calls_default", (0.5, 5), default_setter("step"), 0.002, 0.003,
                            [np.float32(0.002), 1, np.array([0.01, 0.02])]),
    "own default": ("with_default", (X3,), default_setter("with_default"), 1.5, 2.5,
                    [np.float32(2.0), 3, np.array([1.0, 2.0, 3.0]), np.ones((2, 3))]),
    "global in a helper": ("calls_helper", (0.5, 5), global_setter("H"), 0.002, 0.003,
                           [np.float32(0.002), np.array([0.01, 0.02, 0.03])]),
    "named like generated code's helpers": ("renamed", (X3,), global_setter("like"), 0.5, 0.7,
                                             [np.float32(0.5), np.array([1.0, 2.0, 3.0])]),
    "attribute of an object": ("attribute_loop", (0.5, 5), lambda m, value: setattr(m.cfg, "h", value), 0.002,
                               0.003, [np.float32(0.002), np.array([0.01, 0.02, 0.03])]),
    "global outside the loop": ("read_outside", (0.5, 5), global_setter("H"), 0.002, 0.003,
                                [np.float32(0.002), 2, np.array([0.01, 0.02, 0.03])]),
}


# defaults are part of a function's state, which its code is generated for: new ones regenerate
FOLDED_DEFAULTS = {"default of a helper", "own default"}


def generations() -> int:
    return generation._CACHE_COUNT[0]


def check(f, args, forward: bool = False):
    """The gradient against finite differences; with `forward`, the jvp along one direction too."""
    np.testing.assert_allclose(sg.grad(f)(*args), finite_difference(f, list(args), 0), rtol=1e-6, atol=1e-9)
    if forward:
        direction = np.linspace(0.5, -1.0, np.size(args[0])).reshape(np.shape(args[0]))
        direction = float(direction) if np.ndim(args[0]) == 0 else direction
        value, tangent = sg.jvp(f)(*args, direction)
        expected = np.sum(np.asarray(finite_difference(f, list(args), 0)) * direction)
        np.testing.assert_allclose(tangent, expected, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(value, f(*args), rtol=1e-12)


@pytest.mark.parametrize("case", list(CASES))
def test_a_global_of_each_kind(module, case):
    name, args, set_global, first, same_kind, others = CASES[case]
    f = getattr(module, name)
    set_global(module, first)
    assert_grad_matches_fd(f, args, rtol=1e-6, atol=1e-9)            # (grad and vjp)
    check(f, args, forward=True)
    generated = generations()
    set_global(module, same_kind)
    check(f, args)
    if case not in FOLDED_DEFAULTS:
        assert generations() == generated, "a new value of the same kind must reuse the code"
    for k, other in enumerate(others):
        value, other_args = other if isinstance(other, tuple) else (other, args)
        set_global(module, value)
        generated = generations()
        check(f, other_args, forward=k == len(others) - 1)
        assert generations() > generated, f"{value!r} must regenerate the code"


def loop_pushes(source: str) -> int:
    """How many values each trip of the gradient's first loop pushes."""
    loop = next(node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.While))
    return sum(1 for node in ast.walk(loop) if isinstance(node, ast.Attribute) and node.attr == "push")


def test_a_float_step_records_no_shapes(module):
    source = sg.source(module.scalar_loop, args=(0.5, 1000))
    assert "like(" not in source and "unbroadcast" not in source, source
    assert loop_pushes(source) <= 4, source


def test_a_float_and_a_matrix_in_an_array_loop(module):
    source = sg.source(module.ode, args=(X3, 100))
    assert "like(" not in source and "unbroadcast" not in source, source
    assert loop_pushes(source) <= 5, source


@pytest.mark.parametrize("name", ["closed", "calls_default", "calls_helper", "read_outside", "attribute_loop"])
def test_scalar_globals_elsewhere_record_no_shapes(module, name):
    source = sg.source(getattr(module, name), args=(0.5, 10))
    assert "like(" not in source and "unbroadcast" not in source, source


def test_an_array_reshaped_in_place_regenerates(module):
    f = module.vector
    check(f, (X3,))
    generated = generations()
    module.V.shape = (3, 1)
    check(f, (X3,))
    assert generations() > generated


@pytest.mark.parametrize("value", [np.float32(0.002), np.ones(3) * 0.002, 2])
def test_the_scalar_loop_after_a_rebinding(module, value):
    f = module.scalar_loop
    check(f, (0.5, 5))
    module.H = value
    y0 = 0.5 if np.ndim(value) == 0 else np.array([0.5, 0.1, -0.3])
    if np.ndim(value) == 0:
        check(f, (y0, 5))
    else:
        np.testing.assert_allclose(sg.vjp(f)(y0, 5, np.ones(3))[1], _vjp_fd(f, y0, 5), rtol=1e-6, atol=1e-9)


def _vjp_fd(f, y0, n, step=1e-6):
    """Finite differences of ``sum(f(y0, n))`` with respect to y0."""
    grad = np.zeros_like(y0)
    for k in range(y0.size):
        up, down = y0.copy(), y0.copy()
        up[k] += step
        down[k] -= step
        grad[k] = (np.sum(f(up, n)) - np.sum(f(down, n))) / (2 * step)
    return grad


def test_second_derivatives_follow_a_global(module):
    f = module.vector
    direction = np.array([1.0, -0.5, 0.25])
    for value in (np.array([0.5, -0.2, 0.3]), np.array([0.1, 0.9, -0.4]), np.ones((2, 3)) * 0.3, 0.5):
        module.V = value
        step = 1e-5
        expected = (sg.grad(f)(X3 + step * direction) - sg.grad(f)(X3 - step * direction)) / (2 * step)
        np.testing.assert_allclose(sg.hvp(f)(X3, direction), expected, rtol=1e-6, atol=1e-8)


GLOBAL_SWEEP = 16       # random programs reading module constants (half of them calling helpers)


def global_case(seed: int):
    rng = random.Random(seed)
    helpers = seed % 2 == 1
    rates = {**HELPER_RATES, "globals": 0.5} if helpers else {"globals": 0.5}
    program = generate(RandomChooser(rng), FEATURES | GLOBAL_FEATURES, rates=rates, max_depth=2 if helpers else 3)
    args = [round(rng.uniform(-1.5, 1.5), 2) for p in program.params if p != program.array]
    if program.array is not None:
        args.append(np.array([round(rng.uniform(-1.5, 1.5), 2) for _ in range(3)]))
    return program, args


def test_random_programs_reading_globals(tmp_path):
    """Programs of the grammar reading module constants of every kind (`GLOBAL_FEATURES`): the gradient against
    finite differences, every tenth through jvp and hvp too (`test_random_programs._sweep_with_higher`)."""
    reading = sum("globals" in global_case(seed)[0].features_used for seed in range(GLOBAL_SWEEP))
    assert reading >= GLOBAL_SWEEP // 2
    assert "globals" in _sweep_with_higher(GLOBAL_SWEEP, global_case, tmp_path)
