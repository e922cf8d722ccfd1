"""The public API around the generated code: decorators, options, caching, source, the CLI."""
import contextlib
import inspect
import io
import linecache
import subprocess
import sys
from pathlib import Path

import api_cases as cases
import numpy as np
import pytest

import s2sgrad as sg
from s2sgrad.cli import main


def test_decorator_forms():
    x = np.array([0.3, -0.2])
    np.testing.assert_allclose(cases.decorated(x), 2 * np.tanh(x) * (1 - np.tanh(x) ** 2))
    assert cases.decorated_wrt(2.0, 3.0) == pytest.approx(12.0)


def test_value_and_grad_and_vjp():
    value, g = sg.value_and_grad(cases.design)(0.7, 3)
    assert value == pytest.approx(cases.design(0.7, 3))
    assert g == pytest.approx(sg.grad(cases.design)(0.7, 3))
    value, g = sg.vjp(cases.design)(0.7, 3, 2.0)
    assert g == pytest.approx(2 * sg.grad(cases.design)(0.7, 3))


def test_source_is_what_runs():
    text = sg.source(cases.design, args=(0.7, 3))
    namespace = {}
    exec(compile(text, "generated.py", "exec"), namespace)
    assert namespace["ddesign_dx"](0.7, 3) == pytest.approx(sg.grad(cases.design)(0.7, 3))


def test_generated_code_is_visible_to_inspect_and_tracebacks():
    fn = sg.api.reverse.generated(cases.design, ["x"], "grad", ("scalar", "int"))
    assert inspect.getsource(fn).startswith("def ddesign_dx(x, n, dy=1.0):")
    assert linecache.getline(fn.__code__.co_filename, fn.__code__.co_firstlineno).startswith("def ddesign_dx")
    with pytest.warns(RuntimeWarning):           # sqrt'(0) divides by zero: the warning names the generated file
        sg.grad(cases.fails_in_backward)(np.zeros(2))


def test_each_generated_module_keeps_its_own_text():
    a = sg.api.reverse.generated(cases.design, ["x"], "grad", ("scalar", "int"))
    b = sg.api.reverse.generated(cases.design, ["x"], "value_and_grad", ("scalar", "int"))
    assert a.__code__.co_filename != b.__code__.co_filename
    assert "return dx" in "".join(linecache.getlines(a.__code__.co_filename))
    assert "return (y_3, dx)" in "".join(linecache.getlines(b.__code__.co_filename))


def test_generated_code_is_cached():
    first = sg.api.reverse.generated(cases.design, ["x"], "grad", ("scalar", "int"))
    assert sg.api.reverse.generated(cases.design, ["x"], "grad", ("scalar", "int")) is first


def test_verbose_prints_the_source(capsys):
    sg.grad(cases.gather, verbose=True, optimize=False)(np.ones((4, 2)), np.array([0, 2]))
    assert "def dgather_dW(W, idx, dsum=1.0):" in capsys.readouterr().out


def test_sparse_option_returns_rows():
    W = np.random.default_rng(0).standard_normal((6, 3))
    idx = np.array([4, 1, 4])
    g = sg.grad(cases.gather, sparse=True)(W, idx)
    assert isinstance(g, sg.SparseGrad)
    np.testing.assert_array_equal(g.indices, idx)
    dense = sg.grad(cases.gather)(W, idx)
    assert isinstance(dense, np.ndarray)
    np.testing.assert_allclose(g.dense(), dense)
    np.testing.assert_allclose(dense[4], 2 * (1 - np.tanh(W[4]) ** 2))
    assert not dense[0].any()


def test_naive_scheme_gives_the_same_gradient():
    for n in (0, 1, 5):
        assert sg.grad(cases.design, optimize=False)(0.7, n) == pytest.approx(sg.grad(cases.design)(0.7, n))


def test_grad_of_grad():
    assert sg.grad(sg.grad(cases.square))(3.0) == pytest.approx(2.0)
    x = 0.7
    eps = 1e-5
    d2 = (sg.grad(cases.design)(x + eps, 3) - sg.grad(cases.design)(x - eps, 3)) / (2 * eps)
    assert sg.grad(sg.grad(cases.design))(x, 3) == pytest.approx(d2, rel=1e-6)


def test_lambda_names():
    assert sg.grad(cases.square)(3.0) == pytest.approx(6.0)
    assert "def dlambda_dx(x" in sg.source(cases.square)


def cli(*argv: str) -> subprocess.CompletedProcess:
    """`python -m s2sgrad *argv` run in this process: its exit status, standard output and error as the
    interpreter gives them (a `SystemExit` with a message prints it to standard error and exits with 1)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as stop:
            code = stop.code
            if code is not None and not isinstance(code, int):
                print(code, file=sys.stderr)
                code = 1
    return subprocess.CompletedProcess(["python", "-m", "s2sgrad", *argv], code or 0, out.getvalue(), err.getvalue())


def test_cli_show(tmp_path):
    out = subprocess.run([sys.executable, "-m", "s2sgrad", "show", f"{cases.__file__}:design", "--wrt", "x"],
                         capture_output=True, text=True, check=True).stdout
    assert "def ddesign_dx(x, n, dy=1.0):" in out and "y_stack.push(y)" in out
    assert cli("show", f"{cases.__file__}:design", "--wrt", "x").stdout == out
    lowered = cli("show", f"{cases.__file__}:design", "--stage", "lowered")
    assert lowered.returncode == 0 and "while_loop(cond_1, body_1," in lowered.stdout
    bad = cli("show", f"{cases.__file__}:nothing")
    assert bad.returncode != 0 and "defines no 'nothing'" in bad.stderr


def test_cli_show_with_example_arguments():
    command = ["show", f"{cases.__file__}:design", "--args", "0.7, 3"]
    out = cli(*command)
    assert out.returncode == 0 and out.stdout == sg.source(cases.design, args=(0.7, 3)) \
        and ".pop_floats(trips)" in out.stdout     # specialized on a float
    bad = cli(*command[:-1], "np.ones((3,)")
    assert bad.returncode != 0 and "--args 'np.ones((3,)' does not evaluate" in bad.stderr


def test_quickstart_runs():
    root = Path(__file__).parent.parent
    out = subprocess.run([sys.executable, str(root / "examples" / "quickstart.py")], capture_output=True,
                         text=True, check=True).stdout
    assert "def df_dx(x, n, dy=1.0):" in out
    errors = [float(line.split(":")[-1]) for line in out.splitlines() if "error against finite" in line]
    assert len(errors) == 3 and max(errors) < 1e-6
