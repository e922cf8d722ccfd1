"""Functions whose generated gradients are pinned in tests/golden/ (reviewed by hand)."""
import numpy as np

import s2sgrad as sg


def design_example(x, n):
    y = x
    i = 0
    while i < n:
        y = np.sin(y) * x
        i += 1
    return y


def rnn_loss(W, U, b, xs):
    h = np.zeros(W.shape[0])
    for x in xs:
        h = np.tanh(W @ h + U @ x + b)
    return np.sum(h ** 2)


def softmax_cross_entropy(logits, label):
    z = logits - np.max(logits)
    return np.log(np.sum(np.exp(z))) - z[label]


def piecewise(x, k):
    s = 0.0
    for i in range(k):
        if i % 2 == 0:
            s = s + np.sin(x * i)
        elif i > 5:
            break
        else:
            s = s * x
    return s


def collect(x, n):
    hs = []
    h = x
    for t in range(n):
        h = np.tanh(h) * 0.9 + 0.1
        hs.append(h)
    return np.sum(np.stack(hs) ** 2)


@sg.recompute
def block(h, W):
    return np.tanh(W @ h)


def deep(x, W):
    h = x
    for layer in range(4):
        h = block(h, W)
    return np.sum(h)


def integrate(y0, A, n):
    y = y0
    for t in sg.checkpointed(range(n), sg.Revolve(snapshots=4)):
        y = y + 0.01 * np.tanh(A @ y)
    return np.sum(y * y)
