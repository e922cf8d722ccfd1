"""Functions s2sgrad must refuse, each with a clear error at the right line (see test_errors.py)."""
import numpy as np

import s2sgrad as sg

COUNT = 3


def uses_try(x):
    try:
        y = x * 2
    except ValueError:
        y = x
    return y


def uses_with(x):
    with open("f") as f:
        y = x
    return y


def uses_yield(x):
    yield x


def uses_global(x):
    global COUNT
    COUNT = 4
    return x


def defines_class(x):
    class Box:
        pass
    return x


def calls_without_rule(x):
    y = np.partition(x, 1)
    return np.sum(y * y)


def vector_output(x):
    return x * 2.0


def recursive(x, n):
    if n == 0:
        return x
    return recursive(x * 2.0, n - 1)


def attribute_write(x):
    x.flags = 1
    return x


def while_else(x):
    while x < 1.0:
        x = x * 2.0
    else:
        x = x + 1.0
    return x


def sets_a_view(x):
    y = x * 1.0
    v = y[0:2]
    y[0] = 5.0
    return np.sum(v)


def undefined_after_loop(x):
    for i in range(3):
        z = x * i
    return z


def bad_schedule(x):
    for i in sg.checkpointed(range(3), 12):
        x = x * 2.0
    return x


def complex_in_between(x):
    z = x * (1.0 + 2.0j)
    return np.sum(np.abs(z) ** 2)


def complex_through_unknown_dtype(x):
    phase = np.exp(np.outer(x, [1j, 2j]))      # a dtype the analysis does not follow
    return np.sum(np.real(phase))
