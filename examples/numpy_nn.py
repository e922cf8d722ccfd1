"""Train a small neural network with plain NumPy and s2sgrad: a two-layer perceptron learns to tell the
points inside a circle from those outside, by gradient descent with momentum on ``sg.value_and_grad``.

Run:  python examples/numpy_nn.py
"""
import numpy as np

import s2sgrad as sg


def predict(params, X):
    """The probability that each row of X lies inside the circle."""
    hidden = np.tanh(X @ params["W1"] + params["b1"])
    logits = hidden @ params["W2"] + params["b2"]
    return 1.0 / (1.0 + np.exp(-logits))


def loss(params, X, y):
    """The mean logistic loss, written with logaddexp so that it never overflows."""
    hidden = np.tanh(X @ params["W1"] + params["b1"])
    logits = hidden @ params["W2"] + params["b2"]
    return np.mean(np.logaddexp(0.0, logits) - y * logits)


def data(n, rng):
    X = rng.uniform(-1.0, 1.0, (n, 2))
    return X, (np.sum(X ** 2, axis=1) < 0.5).astype(float)


def main():
    rng = np.random.default_rng(0)
    X, y = data(400, rng)
    params = {"W1": rng.standard_normal((2, 16)), "b1": np.zeros(16),
              "W2": 0.1 * rng.standard_normal(16), "b2": 0.0}
    velocity = {name: np.zeros_like(value) for name, value in params.items()}
    step = sg.value_and_grad(loss)               # the gradient is a dict, like params
    for epoch in range(301):
        value, grads = step(params, X, y)
        for name in params:
            velocity[name] = 0.9 * velocity[name] - 0.5 * grads[name]
            params[name] = params[name] + velocity[name]
        if epoch % 100 == 0:
            print(f"epoch {epoch:3}: loss {value:.4f}")
    X_test, y_test = data(1000, rng)
    accuracy = np.mean((predict(params, X_test) > 0.5) == y_test)
    print(f"test accuracy: {accuracy:.3f}")
    print(f"gradient against finite differences: {sg.check_grad(loss, params, X, y):.1e}")


if __name__ == "__main__":
    main()
