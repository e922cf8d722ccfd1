"""backend="numba": the generated gradient compiled with numba gives the NumPy backend's gradients (to rounding)
and finite differences' over every loop form it covers, refuses what it cannot compile at the user's line, and
prints readable code. numba's compiles are slow: each program here is small and compiled once per run."""
from __future__ import annotations

import pathlib
import random
import sys

import numpy as np
import pytest
from gradcheck import assert_grad_matches_fd
from program_grammar import RandomChooser, generate

import s2sgrad as sg
from s2sgrad.errors import NotCompilable, S2SGradError

pytest.importorskip("numba")

GOLDEN = pathlib.Path(__file__).parent / "golden" / "numba_scalar_loop.py"


def scalar_while(x, n):
    y = x
    i = 0
    while i < n:
        y = np.sin(y) * x + 0.5 * y + 0.25
        i += 1
    return y


def scalar_for(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.cos(x * i) * x
    return s


def data_while(x, t_end):
    t = 0.0
    y = x
    while t < t_end:
        dt = 0.1 / (1.0 + y * y)
        y = y + dt * np.tanh(y)
        t = t + dt
    return y * y


def rnn(W, U, b, xs):
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
    return np.sum(h ** 2)


def ode(A, y0, t_end, h0):
    y = y0
    t = 0.0
    while t < t_end:
        dt = h0 / (1.0 + np.sum(y * y))
        y = y + dt * np.tanh(A @ y)
        t = t + dt
    return np.sum(y * y)


def recurrence(a, y0, n):
    y = np.zeros(n)
    y[0] = y0
    for i in range(1, n):
        y[i] = np.sin(a * y[i - 1]) + 0.1 * y[i - 1]
    return np.sum(y * y)


def small_arrays(W, x):
    h = W @ x
    h[0] = h[0] * 2.0
    return np.sum(np.tanh(h) ** 2) + np.sum(np.exp(-x * x))


def takes_a_max(x):
    return np.max(np.exp(-x * x))


def checkpointed(x, n):
    y = x
    for i in sg.checkpointed(range(n), sg.Revolve(3)):
        y = np.sin(y) * x
    return y


def helper(y, x):
    return np.sin(y) * x


def calls_helper(x, n):
    y = x
    for i in range(n):
        y = helper(y, x)
    return y


def with_dict(x):
    d = {"a": x}
    return np.sin(d["a"])


def calls_sort(x):
    return np.sum(np.sort(x) * x)


RNG = np.random.default_rng(0)
CASES = {
    "scalar_while": (scalar_while, (0.3, 40), 0),
    "scalar_for": (scalar_for, (0.7, 30), 0),
    "data_while": (data_while, (0.8, 2.0), 0),
    "rnn": (rnn, (RNG.standard_normal((4, 4)) * 0.4, RNG.standard_normal((4, 3)) * 0.5,
                  RNG.standard_normal(4) * 0.1, RNG.standard_normal((12, 3))), 0),
    "ode": (ode, (RNG.standard_normal((3, 3)) * 0.5, RNG.standard_normal(3), 1.0, 0.05), 0),
    "recurrence": (recurrence, (0.9, 0.5, 20), 0),
    "small_arrays": (small_arrays, (RNG.standard_normal((3, 3)), RNG.standard_normal(3)), (0, 1)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_numba_gradient_is_the_numpy_backends(name):
    f, args, wrt = CASES[name]
    compiled = sg.grad(f, wrt, backend="numba")(*args)
    reference = sg.grad(f, wrt)(*args)
    for got, want in zip(*(g if isinstance(wrt, tuple) else (g,) for g in (compiled, reference))):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    if name in ("scalar_while", "rnn", "recurrence"):
        assert_grad_matches_fd(f, args, wrt=wrt, expected=compiled)


def test_stacks_are_typed_arrays_preallocated_for_a_counted_loop():
    text = sg.source(scalar_while, args=(0.3, 40), backend="numba")
    assert "Stack()" not in text and "stack_new(y, n + 1)" in text and "math.sin(y)" in text
    text = sg.source(data_while, args=(0.8, 2.0), backend="numba")
    assert "stack_new(y, 64)" in text and "stack_grown" in text


def test_the_numba_source_is_printed_readably():
    text = sg.source(scalar_while, args=(0.3, 40), backend="numba")
    assert text == GOLDEN.read_text()
    compile(text, "numba_scalar_loop.py", "exec")


def test_the_numpy_backend_is_the_default_and_unchanged():
    assert sg.source(scalar_while, args=(0.3, 40)) == sg.source(scalar_while, args=(0.3, 40), backend="numpy")
    assert "Stack()" in sg.source(scalar_while, args=(0.3, 40))


def test_an_unknown_backend_is_refused():
    with pytest.raises(S2SGradError, match="unknown backend 'jax'"):
        sg.grad(scalar_while, backend="jax")(0.3, 4)
    with pytest.raises(S2SGradError, match="unknown backend 'jax'"):
        sg.jvp(scalar_while, backend="jax")
    with pytest.raises(S2SGradError, match="NumPy backend's code only"):
        sg.source(scalar_while, mode="forward", backend="numba")


def test_show_prints_the_numba_form(capsys):
    from s2sgrad.cli import main
    assert main(["show", f"{__file__}:scalar_while", "--args", "0.3, 40", "--backend", "numba"]) == 0
    assert capsys.readouterr().out == GOLDEN.read_text()


def test_without_numba_the_error_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)
    with pytest.raises(S2SGradError, match=r'pip install "s2sgrad\[numba\]"'):
        sg.grad(lambda x: np.sin(x) * x, backend="numba")(0.3)


@pytest.mark.parametrize("f, what, line", [
    (calls_sort, "np.sort", "return np.sum(np.sort(x) * x)"),
    (takes_a_max, "the derivative rule of this line", "return np.max(np.exp(-x * x))"),
    (with_dict, "make_dict", 'd = {"a": x}'),
    (checkpointed, "a checkpointed loop", "for i in sg.checkpointed(range(n), sg.Revolve(3)):"),
    (calls_helper, "a call of another function of the user's", "y = helper(y, x)"),
])
def test_refusals_name_the_construct_at_the_users_line(f, what, line):
    args = (0.5,) if f is with_dict else (0.5, 4) if f in (checkpointed, calls_helper) else (np.ones(3),)
    with pytest.raises(NotCompilable) as info:     # (a dict made inside the function is lowered to make_dict)
        sg.grad(f, backend="numba")(*args)
    assert what in info.value.message
    if line is not None:
        assert info.value.location.text.strip() == line
        assert info.value.location.filename == __file__


def test_a_typing_error_of_numba_becomes_a_refusal_at_the_users_line():
    def changes_kind(x, n):
        y = x
        for i in range(n):
            y = np.ones(2) * y
        return np.sum(y)
    with pytest.raises(NotCompilable) as info:
        sg.grad(changes_kind, backend="numba")(0.5, 2)
    assert "Cannot unify float64 and array(float64, 1d, C)" in info.value.message
    assert info.value.location.filename == __file__
    assert info.value.location.text.strip() in ("y = np.ones(2) * y", "for i in range(n):")


SCALAR_FEATURES = frozenset({"for", "while", "while_data", "augassign", "math", "pow"})


@pytest.mark.parametrize("seed", range(4))
def test_random_programs_through_the_numba_backend(seed, tmp_path):
    program = generate(RandomChooser(random.Random(seed)), SCALAR_FEATURES)
    path = tmp_path / f"numba_program_{seed}.py"
    path.write_text(program.module_source())
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    f = namespace[program.name]
    args = tuple(np.array([0.3, -0.2, 0.5]) if name == program.array else 0.3 + 0.1 * k
                 for k, name in enumerate(program.params))
    try:
        compiled = sg.grad(f, backend="numba")(*args)
    except S2SGradError as error:
        assert error.location is not None and error.location.filename == str(path)
        return
    np.testing.assert_allclose(compiled, sg.grad(f)(*args), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("mode", ["value_and_grad", "vjp"])
def test_value_and_grad_and_vjp(mode):
    f, args, _ = CASES["rnn"]
    seed = (0.5,) if mode == "vjp" else ()
    value, grad = getattr(sg, mode)(f, backend="numba")(*args, *seed)
    want_value, want_grad = getattr(sg, mode)(f)(*args, *seed)
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["scalar_while", "ode"])
def test_jvp(name):
    f, args, _ = CASES[name]
    tangent = 1.0 if name == "scalar_while" else np.ones_like(args[0])
    value, along = sg.jvp(f, backend="numba")(*args, tangent)
    want_value, want_along = sg.jvp(f)(*args, tangent)
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    np.testing.assert_allclose(along, want_along, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name, trips_none", [("data_while", (0.8, -1.0)), ("scalar_while", (0.3, 0))])
def test_a_loop_that_runs_no_trip(name, trips_none):
    f, _, _ = CASES[name]
    assert sg.grad(f, backend="numba")(*trips_none) == pytest.approx(sg.grad(f)(*trips_none))


def test_ode_loop_that_runs_no_trip():
    """Rows read as one array from a loop that ran no trip have no known shape: the NumPy backend computes it."""
    f, args, _ = CASES["ode"]
    assert "raise NoRows" in sg.source(f, args=args, backend="numba")
    np.testing.assert_allclose(sg.grad(f, backend="numba")(*args[:2], -1.0, args[3]),
                               sg.grad(f)(*args[:2], -1.0, args[3]))


def test_an_array_output_is_refused_as_with_the_numpy_backend():
    def vector_out(x, n):
        y = x
        for i in range(n):
            y = np.sin(y) * x
        return y
    with pytest.raises(sg.NonScalarOutput, match="return a scalar"):
        sg.grad(vector_out, backend="numba")(np.ones(2), 3)
