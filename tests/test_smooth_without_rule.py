"""A function whose result moves smoothly with a float argument, but that has no derivative rule, is
refused when an active value reaches that argument (never a zero gradient), and still runs where it
only gets constants: random draws with parameters, `np.unique`."""
import inspect

import numpy as np
import pytest

import s2sgrad as sg


def normal_at(x):
    np.random.seed(0)
    return np.sum(np.random.normal(x, 1.0))


def uniform_between(x):
    np.random.seed(0)
    return np.sum(np.random.uniform(0.0, x))


def exponential_of(x):
    np.random.seed(0)
    return np.sum(np.random.exponential(x))


def unique_of(x):
    return np.sum(np.unique(x * 2.0) ** 2)


@pytest.mark.parametrize("fn, call", [(normal_at, "np.random.normal"), (uniform_between, "np.random.uniform"),
                                      (exponential_of, "np.random.exponential"), (unique_of, "np.unique")])
def test_an_active_argument_is_refused_at_its_line(fn, call):
    with pytest.raises(sg.NoDerivativeRule, match=rf"no derivative rule for {call.replace('.', '[.]')}") as info:
        sg.grad(fn)(np.array([1.0, 2.0]))
    lines, start = inspect.getsourcelines(fn)
    assert info.value.location.line == start + next(k for k, line in enumerate(lines) if call + "(" in line)


def noise_times(x):
    np.random.seed(1)
    noise = np.random.normal(0.0, 1.0, size=x.shape) + np.random.uniform(0.0, 1.0, size=x.shape)
    labels = np.unique(np.array([2, 0, 2]))
    return np.sum(noise * x * x) + np.sum(labels * x[:2])


def test_constant_arguments_still_run():
    x = np.array([0.5, 1.5])
    np.random.seed(1)
    noise = np.random.normal(0.0, 1.0, size=2) + np.random.uniform(0.0, 1.0, size=2)
    assert np.allclose(sg.grad(noise_times)(x), 2.0 * noise * x + np.array([0.0, 2.0]))
