"""Functions whose generated code shows one optimization each (see test_optimizations.py)."""
import numpy as np


def loop(x, n):
    y = x
    i = 0
    while i < n:
        y = np.sin(y) * x
        i += 1
    return y


def unused_branch(x, w):
    a = np.sin(x)
    b = np.cos(w) * 3.0          # does not depend on x
    return np.sum(a * b)


def square_and_power(x):
    return np.sum(x * x + x ** 2)


def reuse(x):
    s = np.sin(x)
    c = np.cos(x)
    return np.sum(s * c)


def rnn(W, h, xs):
    for x in xs:
        h = np.tanh(W @ h + x)
    return np.sum(h)


def broadcast(x, b):
    return np.sum(x * b)


def gather(W, idx):
    return np.sum(W[idx] ** 2)


def writes(x):
    y = np.zeros(5)
    for i in range(5):
        y[i] = x[i] * 2.0
    return np.sum(y * y)


def rnn_and_weight_sum(W, h, xs):
    for x in xs:
        h = np.tanh(W @ h + x)
    return np.sum(h) + np.sum(W)     # dW starts as a read-only broadcast of the seed


def rnn_plus_weight(W, h, xs):
    for x in xs:
        h = np.tanh(W @ h + x)
    return W + h                     # for vjp, dW starts as the caller's seed itself


def grows(x, n):
    y = 1.0                      # a scalar that becomes an array: its shape is read, not its value
    for i in range(n):
        y = y * 0.5 + x
    return np.sum(y * y)


def scale(s, v):
    return np.sum(np.sin(s * v))


def square(x):
    return np.sum(x * x)


def negated_terms(x):
    a = np.sin(x) * np.cos(x)                # the rule of cos contributes -(d * sin(x))
    return np.sum(np.sqrt(1.0 + x * x) + a)


def loss_with_unread_parts(x):
    y = np.sin(x)                     # read only by the output
    z = np.cos(x)
    unused = np.exp(x) * 3.0          # read by nothing
    return np.sum(y * z)


def unread_broadcast_error(x):
    unused = x[:2] * x                # raises: (2,) and (3,) do not broadcast
    return np.sum(np.sin(x))


def unread_index_error(x):
    unused = x[10]                    # raises for fewer than 11 elements
    return np.sum(np.sin(x))


def recurrence_written(x):
    y = np.zeros_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = y[i - 1] * 0.5 + np.sin(x[i])
    return np.sum(y ** 2)


def seed_carried_through_a_loop(x, w, n):
    y = x * 1.0
    for i in range(n):
        y = y + np.sin(y) * w
        y = y + w
    return y + x * w


def polynomial_loop(x, n):
    y = x
    i = 0
    while i < n:
        y = y + 0.01 * (np.sin(y) + 0.1 * y * y)
        i += 1
    return y


def polynomial(y, n):
    i = 0
    while i < n:
        y = y + 0.1 * (y * y - 0.5 * y * y * y)
        i += 1
    return y
