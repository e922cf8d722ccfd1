"""Programs that change an array in place through one name and read it through another (a view made
by a NumPy function, method or index, a container holding views, a helper's parameter): s2sgrad's
value and gradient must be Python's, or s2sgrad must refuse the program at one of its lines.

The programs come from ``view_programs.py``. ``S2SGRAD_VIEW_PROGRAMS`` sets how many run (default
100); a larger local run::

    S2SGRAD_VIEW_PROGRAMS=3000 pytest tests/test_view_programs.py
"""
from __future__ import annotations

import collections
import importlib.util
import itertools
import os
import random

import numpy as np
import pytest
from view_programs import MAKERS, generate

import s2sgrad

PROGRAMS = int(os.environ.get("S2SGRAD_VIEW_PROGRAMS", "100"))
EPS = 1e-6
_files = itertools.count()


def load(source: str, directory):
    path = directory / f"view_program_{next(_files)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, str(path)


def central_differences(f, x):
    grad = np.zeros_like(x)
    for i in range(x.size):
        step = np.zeros_like(x)
        step[i] = EPS
        grad[i] = (f(x + step) - f(x - step)) / (2 * EPS)
    return grad


def arguments(rng: random.Random) -> np.ndarray:
    """x away from the branch switch at x[0] == 0."""
    return np.array([rng.choice([-1, 1]) * rng.uniform(0.2, 1.0) for _ in range(6)])


def check(source: str, x: np.ndarray, directory) -> str:
    """'right' (value and gradient are Python's), 'refused' or 'raises' (as Python does); asserts otherwise."""
    module, path = load(source, directory)
    f = module.f
    try:
        expected = f(x.copy())
    except ValueError as error:                        # a write into a read-only view
        assert "read-only" in str(error)
        try:
            s2sgrad.value_and_grad(f)(x.copy())
        except (s2sgrad.S2SGradError, ValueError):
            return "raises"
        raise AssertionError("Python raises, s2sgrad does not")
    given = x.copy()
    try:
        value, grad = s2sgrad.value_and_grad(f)(given)
    except s2sgrad.S2SGradError as error:
        assert error.location is not None and error.location.filename == path, str(error)
        assert 1 <= error.location.line <= source.count("\n"), str(error)
        return "refused"
    assert np.array_equal(given, x), "the argument was changed"
    assert np.isclose(value, expected, rtol=1e-12, atol=1e-12), f"value {value} != Python's {expected}"
    numeric = central_differences(lambda z: f(z.copy()), x)
    assert np.allclose(grad, numeric, rtol=1e-5, atol=1e-6), \
        f"gradient {grad} != finite differences {numeric}\n{s2sgrad.source(f)}"
    return "right"


def test_changes_through_one_name_are_seen_through_the_other(tmp_path):
    outcomes = collections.Counter()
    failures = []
    for seed in range(PROGRAMS):
        rng = random.Random(seed)
        program = generate(rng)
        try:
            outcomes[check(program.source, arguments(rng), tmp_path)] += 1
        except Exception as error:                     # wrong, or a crash
            failures.append(f"seed {seed}:\n{program.source}\n{type(error).__name__}: {error}")
    assert not failures, f"{len(failures)} of {PROGRAMS} programs wrong:\n\n" + "\n\n".join(failures[:5])
    assert outcomes["right"] and outcomes["refused"], outcomes     # the sample exercises both


@pytest.mark.parametrize("maker", [m[0] for m in MAKERS if m[2] and not m[3]])
def test_every_view_maker_is_seen(maker, tmp_path):
    """A view made by each maker, written through the view, y read after: refused (or right where the
    write does not reach y, which cannot happen for these views)."""
    source = ("import numpy as np\n\n\ndef f(x):\n    y = np.reshape(np.sin(x) + 0.5, (2, 3)) * 1.0\n"
              f"    v = {maker}\n    v *= 2.0\n    return np.sum(y * y)\n")
    assert check(source, np.linspace(0.2, 0.9, 6), tmp_path) == "refused"
    source = ("import numpy as np\n\n\ndef f(x):\n    y = np.reshape(np.sin(x) + 0.5, (2, 3)) * 1.0\n"
              f"    v = {maker}\n    y *= 2.0\n    return np.sum(v * v)\n")
    assert check(source, np.linspace(0.2, 0.9, 6), tmp_path) == "refused"


@pytest.mark.parametrize("maker", [m[0] for m in MAKERS if not m[2]])
def test_copies_are_not_refused(maker, tmp_path):
    source = ("import numpy as np\n\n\ndef f(x):\n    y = np.reshape(np.sin(x) + 0.5, (2, 3)) * 1.0\n"
              f"    v = {maker}\n    v *= 2.0\n    y[0, 1] = 3.0 * x[2]\n    return np.sum(y * y) + np.sum(v * y[0, 0])\n")
    assert check(source, np.linspace(0.2, 0.9, 6), tmp_path) == "right"
