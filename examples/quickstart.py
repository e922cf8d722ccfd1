"""Differentiate a few NumPy functions with s2sgrad, print a generated gradient, and check it.

Run:  python examples/quickstart.py
"""
import numpy as np

import s2sgrad as sg


def f(x, n):
    """The design's example: a loop whose trip count is an argument."""
    y = x
    i = 0
    while i < n:
        y = np.sin(y) * x
        i += 1
    return y


def rnn_loss(W, U, b, xs):
    """A small recurrent network: h = tanh(W h + U x_t + b), loss = sum(h**2)."""
    h = np.zeros(W.shape[0])
    for x in xs:
        h = np.tanh(W @ h + U @ x + b)
    return np.sum(h ** 2)


def softmax_xent(logits, label):
    z = logits - np.max(logits)
    return np.log(np.sum(np.exp(z))) - z[label]


def main():
    print("The gradient s2sgrad generates for f(x, n) with a float x and an int n:\n")
    print(sg.source(f, args=(0.7, 3)))

    df = sg.grad(f)
    print(f"df/dx at x=0.7, n=3: {df(0.7, 3):.12f}")
    print(f"  error against finite differences: {sg.check_grad(f, 0.7, 3):.1e}")

    rng = np.random.default_rng(0)
    W, U = 0.5 * rng.standard_normal((4, 4)), rng.standard_normal((4, 3))
    b, xs = rng.standard_normal(4), rng.standard_normal((6, 3))
    dW, dU, db = sg.grad(rnn_loss, wrt=(0, 1, 2))(W, U, b, xs)
    print(f"RNN loss gradient norms: |dW|={np.linalg.norm(dW):.6f} |dU|={np.linalg.norm(dU):.6f} "
          f"|db|={np.linalg.norm(db):.6f}")
    print(f"  error against finite differences: {sg.check_grad(rnn_loss, W, U, b, xs, wrt=(0, 1, 2)):.1e}")

    logits = rng.standard_normal(5)
    print(f"softmax cross-entropy gradient: {np.round(sg.grad(softmax_xent)(logits, 2), 6)}")
    print(f"  error against finite differences: {sg.check_grad(softmax_xent, logits, 2):.1e}")


if __name__ == "__main__":
    main()
