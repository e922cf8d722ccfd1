"""The benchmark workloads' hand-written adjoints agree with finite differences, and s2sgrad with them.

These adjoints are the yardstick every generated gradient is compared
against, so they are checked on their own, independently of s2sgrad: on the
small variant of each workload, the directional derivative along a few
random directions, by central differences, must match the dot product of the
adjoint's gradient with the direction. An argument differentiated may be a
list or dict of arrays (W9, W10): the direction then has one part per leaf.
"""

import doctest
import importlib
import inspect
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import s2sgrad as sg  # noqa: E402
from benchmarks.limits import Stopped, time_limit  # noqa: E402
from benchmarks.pushes import _function, hand_pushes  # noqa: E402
from benchmarks.user_workloads import damped_ode_step_count  # noqa: E402
from benchmarks.workloads import BY_KEY, WORKLOADS, leaves, ode_step_count  # noqa: E402

DIRECTIONS = 3
STEP = 1e-5
RTOL = 1e-6


def _mapped(fn, tree, parts):
    """``tree`` with each leaf replaced by ``fn(leaf, next(parts))``, visited in ``leaves`` order (a dict's
    by sorted key): lists, tuples and dicts kept."""
    if isinstance(tree, dict):
        return {key: _mapped(fn, tree[key], parts) for key in sorted(tree)}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_mapped(fn, item, parts) for item in tree)
    return fn(tree, next(parts))


def _shifted(args, wrt, direction, scale):
    """``args`` with ``scale`` times the direction's parts added to the leaves of the ``wrt`` arguments."""
    def shift(leaf, part):
        moved = leaf + scale * part
        return float(moved) if isinstance(leaf, float) else moved

    moved = list(args)
    for i, parts in zip(wrt, direction):
        moved[i] = _mapped(shift, args[i], iter(parts))
    return tuple(moved)


def _random_direction(args, wrt, rng):
    """A unit-norm random direction in the space of the ``wrt`` arguments: per argument, a part per leaf
    (in ``leaves`` order, the order the gradients are compared in)."""
    parts = [[rng.standard_normal(np.shape(leaf)) for leaf in leaves(args[i])] for i in wrt]
    norm = np.sqrt(sum(np.sum(p * p) for argument in parts for p in argument))
    return [[p / norm for p in argument] for argument in parts]


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.key)
def test_adjoint_matches_central_differences(workload):
    args = workload.make_inputs(small=True)
    grads = workload.adjoint(*args)
    assert len(grads) == len(workload.wrt)
    for i, g in zip(workload.wrt, grads):
        assert [np.shape(leaf) for leaf in leaves(g)] == [np.shape(leaf) for leaf in leaves(args[i])]

    rng = np.random.default_rng(0)
    for _ in range(DIRECTIONS):
        direction = _random_direction(args, workload.wrt, rng)
        plus = workload.forward(*_shifted(args, workload.wrt, direction, STEP))
        minus = workload.forward(*_shifted(args, workload.wrt, direction, -STEP))
        numeric = (plus - minus) / (2 * STEP)
        analytic = sum(np.sum(g * d) for g, d in zip(leaves(grads), [p for parts in direction for p in parts]))
        assert abs(numeric - analytic) <= RTOL * abs(analytic), (numeric, analytic)


USER_STYLE = [w for w in WORKLOADS if w.key in ("W7", "W8", "W9", "W10")]


@pytest.mark.parametrize("workload", USER_STYLE, ids=lambda w: w.key)
def test_s2sgrad_matches_the_adjoint(workload):
    """On the workloads written with module constants and containers of parameters, leaf by leaf."""
    args = workload.make_inputs(small=True)
    expected = leaves(workload.adjoint(*args))
    got = leaves(sg.grad(workload.forward, wrt=workload.wrt)(*args))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.key)
def test_adjoint_leaves_inputs_unchanged(workload):
    args = workload.make_inputs(small=True)
    before = [np.copy(a) for a in leaves(args)]
    workload.adjoint(*args)
    workload.forward(*args)
    for a, b in zip(leaves(args), leaves(before)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.key)
def test_inputs_are_deterministic(workload):
    for a, b in zip(leaves(workload.make_inputs(small=True)), leaves(workload.make_inputs(small=True))):
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

    y0, n = BY_KEY["W7"].make_inputs()
    assert isinstance(y0, float) and n == 1_000

    A, x0, t_end = BY_KEY["W8"].make_inputs()
    assert A.shape == (8, 8) and x0.shape == (8,)
    assert 19_000 <= damped_ode_step_count(A, x0, t_end) <= 21_000

    params, X, labels = BY_KEY["W9"].make_inputs()
    assert [(W.shape, b.shape) for W, b in params] == [((784, 256), (256,)), ((256, 256), (256,)),
                                                       ((256, 10), (10,))]
    assert X.shape == (256, 784) and labels.shape == (256,)

    p, xs = BY_KEY["W10"].make_inputs()
    assert {k: v.shape for k, v in p.items()} == {"W": (32, 32), "U": (32, 16), "b": (32,)}
    assert xs.shape == (200, 16)


@pytest.mark.parametrize("key, count", [("W5", ode_step_count), ("W8", damped_ode_step_count)])
def test_ode_step_count_is_locally_constant(key, count):
    """The finite differences of W5 and W8 stay on one smooth piece of the loss."""
    A, *rest = BY_KEY[key].make_inputs(small=True)
    steps = count(A, *rest)
    direction = np.random.default_rng(0).standard_normal(A.shape)
    for scale in (-STEP, STEP):
        assert count(A + scale * direction, *rest) == steps


@pytest.mark.parametrize("key, kept", [("W1", 2), ("W2", 1), ("W5", 3), ("W7", 1), ("W8", 3), ("W9", 1),
                                       ("W10", 2)])
def test_hand_pushes_count_what_the_forward_loop_keeps(key, kept):
    """PUSHES.md's hand-written column: the values each adjoint's forward loop appends or writes per step."""
    source = textwrap.dedent(inspect.getsource(BY_KEY[key].adjoint))
    assert len(hand_pushes(_function(source))) == kept


@pytest.mark.parametrize("module", ["workloads", "user_workloads", "pushes", "memory", "limits"])
def test_benchmark_docstring_examples(module):
    failed, _ = doctest.testmod(importlib.import_module(f"benchmarks.{module}"))
    assert failed == 0



def test_time_limit_stops_after_an_alarm_was_swallowed():
    """run.py --max-seconds: an alarm taken by a hook that swallows exceptions is followed by another."""
    swallowed = []

    def stubborn():
        try:
            time.sleep(0.5)
        except Stopped:
            swallowed.append(True)

    with pytest.raises(Stopped):
        with time_limit(0.02):
            stubborn()
            for _ in range(500):
                time.sleep(0.01)
    assert swallowed


def test_no_time_limit_without_seconds():
    with time_limit(None):
        time.sleep(0.01)
