"""A float32 (or float16) argument gets its gradient computed in float32: no float64 array or NumPy scalar is
made anywhere in the generated gradient or the runtime helpers it calls, where the user's function itself
computes in float32.

`float64_made` is the instrument: it runs a call under `sys.settrace` and reports every float64 array or NumPy
float64 scalar bound to a local (or returned) in a frame of generated code or of `s2sgrad.runtime` called from
it. The sweep runs it on every rule template of the table (a case of test_api_surface.py for each, its float
arrays made float32) whose user function computes in float32, and checks the float32 gradient against float64
finite differences; where the function itself promotes (SciPy's distributions compute in float64), only the
gradient's dtype is checked (the cast at the end: `in_argument_dtypes`). Every other test switches that cast
off: what it checks is what the generated code computes.
"""
from __future__ import annotations

import copy
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from test_api_surface import SWEPT, Sweep, _directions, _inner, directional_fd

import s2sgrad as sg
from s2sgrad.api import reverse
from s2sgrad.rules import rule_for

GENERATED = "__s2sgrad_source__"           # in the namespace of every generated module
RUNTIME = str(Path("s2sgrad", "runtime"))


def _wide(value, depth=0) -> bool:
    """Is `value` a float64 array or NumPy scalar (or a list, tuple or dict holding one, two levels deep)?"""
    if isinstance(value, np.ndarray):
        return value.dtype == np.float64 and value.size > 0
    if isinstance(value, np.float64):
        return True
    if depth < 2 and isinstance(value, (list, tuple)):
        return any(_wide(v, depth + 1) for v in value)
    if depth < 2 and isinstance(value, dict):
        return any(_wide(v, depth + 1) for v in value.values())
    return False


def _generated(frame) -> bool:
    return GENERATED in frame.f_globals


def _in_generated_code(frame) -> bool:
    """A frame of generated code, or of the runtime called (at any depth) from generated code."""
    if _generated(frame):
        return True
    if RUNTIME not in frame.f_code.co_filename:
        return False
    caller = frame.f_back
    while caller is not None:
        if _generated(caller):
            return True
        caller = caller.f_back
    return False


def traced(call, watched):
    """``call()``, and where a frame `watched` accepts bound a float64 value: (file, function, line, name)."""
    found = []

    def local(frame, event, arg):
        if event in ("line", "return"):
            where = (Path(frame.f_code.co_filename).name, frame.f_code.co_name, frame.f_lineno)
            found.extend((*where, name) for name, value in frame.f_locals.items() if _wide(value))
            if event == "return" and _wide(arg):
                found.append((*where, "<return>"))
        return local

    def tracer(frame, event, arg):
        return local if watched(frame) else None

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        result = call()
    finally:
        sys.settrace(previous)
    return result, sorted(set(found))


def float64_made(fn, *args):
    """``fn(*args)`` (a derivative), and the float64 values its generated code and the runtime made. (It is
    called once before, untraced: code generation is no part of what is watched, and runs faster so.)"""
    fn(*copy.deepcopy(args))
    return traced(lambda: fn(*args), _in_generated_code)


def narrowed(value, dtype=np.float32):
    """`value` with its float64 arrays made `dtype` (through lists, tuples and dicts)."""
    if isinstance(value, np.ndarray) and value.dtype == np.float64:
        return value.astype(dtype)
    if isinstance(value, (list, tuple)):
        return type(value)(narrowed(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: narrowed(v, dtype) for k, v in value.items()}
    return value


def _all_of(value, dtype) -> bool:
    if isinstance(value, np.ndarray):
        return value.dtype == dtype
    if isinstance(value, (list, tuple)):
        return bool(value) and all(_all_of(v, dtype) for v in value)
    if isinstance(value, dict):
        return bool(value) and all(_all_of(v, dtype) for v in value.values())
    return False


def _leaves(value):
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    return [value]


def _close(got, want, rtol):
    for g, w in zip(_leaves(got), _leaves(want)):
        w = np.asarray(w, dtype=float)
        assert np.allclose(np.asarray(g, dtype=float), w, rtol=rtol, atol=rtol * (1 + np.max(np.abs(w), initial=0))), \
            (g, w)


def _one_case_per_rule():
    """The first case of each rule template (one template may serve several primitives: np.max and np.amax)."""
    seen, out = set(), []
    for case in SWEPT:
        rule = rule_for(case.primitive)
        template = id(rule.template) if rule is not None else id(case.primitive)
        if template not in seen:
            seen.add(template)
            out.append(case)
    return out


@pytest.fixture(scope="module")
def directory():
    with tempfile.TemporaryDirectory(prefix="s2sgrad_float32_") as name:
        yield Path(name)


def no_final_cast(monkeypatch):
    """The API's cast of a gradient to its argument's dtype switched off: what the generated code computes."""
    monkeypatch.setattr(reverse, "in_argument_dtypes", lambda grads, args, many: grads)


def _sweep_function(case, directory):
    """The sweep's user function with float32 constants, and its float32 and float64 arguments (None if the
    rule's arguments are not all float arrays)."""
    sweep = Sweep(case)
    params32 = [narrowed(p) for p in sweep.params]
    if not all(_all_of(p, np.float32) for p in params32):
        return None
    sweep.globals = {k: narrowed(v) for k, v in sweep.globals.items()}
    return sweep.function(directory), params32, sweep.params


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in _one_case_per_rule()])
def test_every_rule_keeps_float32(case, directory, monkeypatch):
    made = _sweep_function(case, directory)
    if made is None:
        pytest.skip("arguments that are not float arrays")
    f, params32, params64 = made
    wrt = tuple(range(len(params32)))
    filename = f.__code__.co_filename
    _, promoted = traced(lambda: f(*copy.deepcopy(params32)), lambda frame: frame.f_code.co_filename == filename)
    gradient = sg.grad(f, wrt=wrt)
    if promoted:                                    # the function itself computes in float64: so does its gradient,
        grads = gradient(*copy.deepcopy(params32))  # cast to float32 at the end
        assert all(np.asarray(g).dtype == np.float32 for g in _leaves(grads))
        return
    no_final_cast(monkeypatch)
    grads, wide = float64_made(gradient, *copy.deepcopy(params32))
    assert not wide, f"float64 values made: {wide[:6]}"
    assert all(isinstance(g, (np.ndarray, np.generic)) and g.dtype == np.float32 for g in _leaves(grads)), \
        [getattr(g, "dtype", type(g)) for g in _leaves(grads)]
    directions = [_directions(np.random.default_rng(1), p) for p in params64]
    numeric = directional_fd(f, params64, directions)          # in float64: the arguments are float64
    analytic = sum(_inner(g, v) for g, v in zip(grads, directions))
    assert abs(analytic - numeric) <= 2e-3 * max(1.0, abs(numeric)), (analytic, numeric)


# --- loops, the other reverse-mode entry points, higher order, float16 ----------------------------------------

def rnn(W, h):
    for _ in range(6):
        h = np.tanh(W @ h + 0.5 * h)
    return np.sum(h * h)


def scaled_steps(x, n):
    y = x
    i = 0
    while i < n:
        y = np.sin(y) * x + 0.5 * y + 0.25
        i += 1
    return np.sum(y)


def chain(x):
    a = np.sin(x) * np.cos(x)
    e = np.sqrt(1.0 + x * x)
    return np.sum(np.log1p(np.tanh(a + np.exp(-x * x)) ** 2) * e + a / e)


def softmax_loss(W, X):
    z = X @ W
    z = z - np.max(z, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(X.shape[0]), [0, 1, 2, 0]])


RNG = np.random.default_rng(0)
W44, H4, X43 = RNG.standard_normal((4, 4)) * 0.5, RNG.standard_normal(4), RNG.standard_normal((4, 3))
X6 = RNG.uniform(-1.0, 1.0, 6)


def _float32_gradient(derivative, args32, args64, rtol=2e-3):
    """`derivative` on float32 arguments: float32 leaves, no float64 made, close to its float64 value."""
    got, wide = float64_made(derivative, *args32)
    assert not wide, f"float64 values made: {wide[:6]}"
    leaves = _leaves(got)
    assert leaves and all(getattr(g, "dtype", None) == np.float32 for g in leaves), \
        [getattr(g, "dtype", type(g)) for g in leaves]
    _close(got, derivative(*args64), rtol)


LOOPS = {
    "store-all": {},
    "naive": {"optimize": False},
    "periodic": {"checkpoint": sg.Periodic(2)},
    "revolve": {"checkpoint": sg.Revolve(2)},
}


@pytest.mark.parametrize("options", LOOPS.values(), ids=LOOPS.keys())
@pytest.mark.parametrize("f, args, wrt", [(rnn, (W44, H4), (0, 1)), (scaled_steps, (X6, 7), 0)],
                         ids=["for-rnn", "while-elementwise"])
def test_loops_keep_float32(f, args, wrt, options, monkeypatch):
    no_final_cast(monkeypatch)
    args32 = tuple(narrowed(a) for a in args)
    _float32_gradient(sg.grad(f, wrt=wrt, **options), args32, args)


@pytest.mark.parametrize("f, args, wrt", [(chain, (X6,), 0), (softmax_loss, (X43, W44), 0)],
                         ids=["chain", "softmax"])
def test_value_and_grad_and_vjp_keep_float32(f, args, wrt, monkeypatch):
    no_final_cast(monkeypatch)
    args32 = tuple(narrowed(a) for a in args)
    value, _ = sg.value_and_grad(f, wrt=wrt)(*args32)
    assert value.dtype == np.float32
    _float32_gradient(lambda *a: sg.value_and_grad(f, wrt=wrt)(*a)[1], args32, args)
    seed32, seed64 = np.float32(0.5), 0.5
    _float32_gradient(lambda *a: sg.vjp(f, wrt=wrt)(*a, seed32 if a[0].dtype == np.float32 else seed64)[1],
                      args32, args)


def test_vjp_of_an_array_output_with_a_float32_seed(monkeypatch):
    no_final_cast(monkeypatch)
    seed = RNG.standard_normal((4, 3))

    def f(W, X):
        return np.tanh(W @ X) * X

    derivative = sg.vjp(f, wrt=(0, 1))
    _float32_gradient(lambda W, X: derivative(W, X, seed.astype(W.dtype))[1], (narrowed(W44), narrowed(X43)),
                      (W44, X43))


@pytest.mark.parametrize("f, args", [(chain, (X6,)), (rnn, (W44, H4))], ids=["chain", "rnn"])
def test_hvp_keeps_float32(f, args):
    direction = tuple(RNG.standard_normal(np.shape(a)) for a in args)
    wrt = tuple(range(len(args)))
    product = sg.hvp(f, wrt=wrt)
    _float32_gradient(lambda *a: product(*a[:len(args)], a[len(args):]),
                      (*map(narrowed, args), *map(narrowed, direction)), (*args, *direction), rtol=5e-3)


def sin_times(x):
    return np.sum(np.sin(x) * x)


def tanh_square(x):
    return np.sum(np.tanh(x) ** 2)


def exp_mean(x):
    return np.mean(np.exp(0.5 * x) - x)


def sqrt_ratio(x):
    return np.sum(x / np.sqrt(1.0 + x * x))


@pytest.mark.parametrize("f", [sin_times, tanh_square, exp_mean, sqrt_ratio, chain])
def test_float16_elementwise(f, monkeypatch):
    no_final_cast(monkeypatch)
    x16 = narrowed(X6, np.float16)
    got, wide = float64_made(sg.grad(f), x16)
    assert not wide and got.dtype == np.float16, (wide, got.dtype)
    want = sg.grad(f)(X6)
    assert np.allclose(got.astype(float), want, rtol=2e-2, atol=2e-2)


def test_a_float64_constant_promotes_and_the_gradient_is_cast_back():
    """Where NumPy promotes (a float32 argument times a float64 array), the gradient is computed in float64,
    as the function is, and handed back in the argument's dtype."""
    weights = RNG.standard_normal(6)

    def f(x):
        return np.sum(np.sin(x) * weights)

    g = sg.grad(f)(narrowed(X6))
    assert g.dtype == np.float32 and np.allclose(g, np.cos(X6) * weights, rtol=1e-6)
