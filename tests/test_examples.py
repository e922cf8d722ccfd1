"""The examples in examples/ run as a user runs them (``python examples/X.py``) and print what they promise:
fitted parameters near the truth, a loss that goes down, gradients that agree with finite differences."""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).parent.parent


def run(name: str) -> str:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, str(ROOT / "examples" / name)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr, done.stderr
    return done.stdout


def vector(line: str) -> np.ndarray:
    return np.array([float(v) for v in re.search(r"\[([^\]]*)\]", line)[1].split()])


def number(pattern: str, text: str) -> float:
    return float(re.search(pattern, text)[1])


def test_every_example_is_tested():
    """Each example has a test here, but quickstart.py, which tests/test_api.py runs, and dask_cluster.py, which
    tests/test_dask_cluster.py runs."""
    tested = {"quickstart.py", "scipy_fit.py", "numpy_nn.py", "ode_fit.py", "dask_cluster.py"}
    assert {p.name for p in (ROOT / "examples").glob("*.py")} == tested


def test_scipy_fit_finds_the_parameters_with_both_methods():
    out = run("scipy_fit.py")
    lines = out.splitlines()
    truth = vector(lines[0])
    fits = [line for line in lines if "loss" in line]
    assert [line.split(":")[0] for line in fits] == ["L-BFGS-B (jac)", "Newton-CG (jac, hessp)"]
    for line in fits:
        np.testing.assert_allclose(vector(line), truth, atol=0.02)
    lbfgs, newton = (number(r"gradient evaluations (\d+)", line) for line in fits)
    assert newton < lbfgs                               # the Hessian-vector products are used
    assert number(r"hvp against sg.hessian:\s+(\S+)", out) < 1e-10


def test_numpy_nn_learns():
    out = run("numpy_nn.py")
    losses = [float(v) for v in re.findall(r"loss (\S+)", out)]
    assert len(losses) == 4 and all(a > b for a, b in zip(losses, losses[1:]))
    assert losses[-1] < 0.25 * losses[0]
    assert number(r"test accuracy: (\S+)", out) > 0.95
    assert number(r"finite differences: (\S+)", out) < 1e-7


def test_ode_fit_finds_the_rates():
    assert "while sg.checkpointed(t < " in (ROOT / "examples" / "ode_fit.py").read_text()
    out = run("ode_fit.py")
    assert number(r"finite differences: (\S+)", out) < 1e-7
    truth, fitted = (vector(line) for line in out.splitlines()[1:3])
    start = np.array([0.8, 0.6, 0.3, 0.9])
    np.testing.assert_allclose(fitted, truth, atol=0.02)
    assert np.max(np.abs(fitted - truth)) < 0.2 * np.max(np.abs(start - truth))

