"""Functions for test_api.py (their source must live in a file)."""
import numpy as np

import s2sgrad as sg


def design(x, n):
    y = x
    i = 0
    while i < n:
        y = np.sin(y) * x
        i += 1
    return y


@sg.grad
def decorated(x):
    return np.sum(np.tanh(x) ** 2)


@sg.grad(wrt=1)
def decorated_wrt(a, b):
    return a * b * b


def gather(W, idx):
    return np.sum(np.tanh(W[idx]))


def fails_in_backward(x):
    return np.sum(np.sqrt(x))


square = lambda x: x * x  # noqa: E731
