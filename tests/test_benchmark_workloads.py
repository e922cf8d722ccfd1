"""The benchmark workloads' hand-written adjoints agree with finite differences.

These adjoints are the yardstick every generated gradient is compared
against, so they are checked on their own, independently of s2sgrad: on the
small variant of each workload, the directional derivative along a few
random directions, by central differences, must match the dot product of the
adjoint's gradient with the direction.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.workloads import BY_KEY, WORKLOADS, ode_step_count  # noqa: E402

DIRECTIONS = 3
STEP = 1e-5
RTOL = 1e-6


def _shifted(args, wrt, direction, scale):
    """``args`` with ``scale * direction[i]`` added to each ``wrt`` argument."""
    moved = list(args)
    for i, d in zip(wrt, direction):
        moved[i] = args[i] + scale * d
    if isinstance(args[wrt[0]], float):
        moved[wrt[0]] = float(moved[wrt[0]])
    return tuple(moved)


def _random_direction(args, wrt, rng):
    """A unit-norm random direction in the space of the ``wrt`` arguments."""
    parts = [rng.standard_normal(np.shape(args[i])) for i in wrt]
    norm = np.sqrt(sum(np.sum(p * p) for p in parts))
    return [p / norm for p in parts]


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.key)
def test_adjoint_matches_central_differences(workload):
    args = workload.make_inputs(small=True)
    grads = workload.adjoint(*args)
    assert len(grads) == len(workload.wrt)
    for i, g in zip(workload.wrt, grads):
        assert np.shape(g) == np.shape(args[i])

    rng = np.random.default_rng(0)
    for _ in range(DIRECTIONS):
        direction = _random_direction(args, workload.wrt, rng)
        plus = workload.forward(*_shifted(args, workload.wrt, direction, STEP))
        minus = workload.forward(*_shifted(args, workload.wrt, direction, -STEP))
        numeric = (plus - minus) / (2 * STEP)
        analytic = sum(np.sum(g * d) for g, d in zip(grads, direction))
        assert abs(numeric - analytic) <= RTOL * abs(analytic), (numeric, analytic)


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.key)
def test_adjoint_leaves_inputs_unchanged(workload):
    args = workload.make_inputs(small=True)
    before = [np.copy(a) for a in args]
    workload.adjoint(*args)
    workload.forward(*args)
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.key)
def test_inputs_are_deterministic(workload):
    for a, b in zip(workload.make_inputs(small=True), workload.make_inputs(small=True)):
        np.testing.assert_array_equal(a, b)


def test_full_sizes_are_as_specified():
    x, n = BY_KEY["W1"].make_inputs()
    assert isinstance(x, float) and n == 1_000

    W, U, b, xs = BY_KEY["W2"].make_inputs()
    assert W.shape == (32, 32) and U.shape == (32, 16) and b.shape == (32,)
    assert xs.shape == (200, 16)

    (x,) = BY_KEY["W3"].make_inputs()
    assert x.shape == (1_000_000,) and x.dtype == np.float64

    W1, b1, W2, b2, W3, b3, X, labels = BY_KEY["W4"].make_inputs()
    assert [W1.shape, W2.shape, W3.shape] == [(784, 256), (256, 256), (256, 10)]
    assert [b1.shape, b2.shape, b3.shape] == [(256,), (256,), (10,)]
    assert X.shape == (256, 784) and labels.shape == (256,)

    A, y0, t_end, h0 = BY_KEY["W5"].make_inputs()
    assert A.shape == (8, 8) and y0.shape == (8,)
    assert 19_000 <= ode_step_count(A, y0, t_end, h0) <= 21_000

    W, idx, c = BY_KEY["W6"].make_inputs()
    assert W.shape == (100_000, 64) and idx.shape == (512,) and c.shape == (512, 64)
    assert len(np.unique(idx)) < len(idx), "the gather must repeat indices"


def test_ode_step_count_is_locally_constant():
    """The finite differences of W5 stay on one smooth piece of the loss."""
    A, y0, t_end, h0 = BY_KEY["W5"].make_inputs(small=True)
    steps = ode_step_count(A, y0, t_end, h0)
    direction = np.random.default_rng(0).standard_normal(A.shape)
    for scale in (-STEP, STEP):
        assert ode_step_count(A + scale * direction, y0, t_end, h0) == steps
