"""The benchmark workloads: forward functions, hand-written adjoints, inputs.

Each workload has

* a *forward* function: plain Python and NumPy, written the way a user writes
  it (loops, ``np.tanh``, ``@``, indexing), returning a scalar loss; this is
  the code s2sgrad and the other tools differentiate;
* a hand-written *adjoint*: the gradient of the loss with respect to the
  ``wrt`` arguments, returned as a tuple in ``wrt`` order. It is the limit a
  generated gradient is measured against, so it is written as well as a
  careful person would. Its forward sweep performs the same operations as
  the forward function, in the same order (so it computes the same values
  and the same trip counts), and keeps only what the backward sweep reads,
  in lists or pre-allocated arrays. Its backward sweep is a loop over the
  recorded steps in reverse, with what does not depend on the adjoint
  hoisted out of it: per-step factors are formed for all steps in one array
  operation before the loop, contributions to a loop-invariant's gradient
  are summed in one matrix product after it, and buffers it owns are
  updated in place;
* ``make_inputs(small=False)``: the arguments, from a fixed seed. ``small=True``
  gives a reduced variant (fewer steps, smaller arrays) for tests and smoke
  runs.

W1-W6 are defined here; W7-W10, written with module constants and with
parameters in containers, are in ``user_workloads.py``. ``WORKLOADS`` lists
them in order; ``BY_KEY`` maps "W1".."W10" to them.
"""

from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import user_workloads as user


@dataclass(frozen=True)
class Workload:
    """One benchmark workload.

    Attributes:
        key: short identifier, "W1".."W10".
        name: human-readable name.
        size: the full size, in words (for reports).
        small_size: the size of the ``small=True`` variant, in words.
        forward: the function differentiated; returns a scalar.
        adjoint: hand-written gradient; same arguments as ``forward``,
            returns a tuple with one gradient per ``wrt`` index.
        make_inputs: ``make_inputs(small=False) -> tuple`` of arguments.
        wrt: indices of the arguments the gradient is taken with respect to
            (an argument may be a list, tuple or dict of arrays: its gradient
            is a container of the same structure).
    """

    key: str
    name: str
    size: str
    small_size: str
    forward: Callable
    adjoint: Callable[..., tuple]
    make_inputs: Callable[..., tuple]
    wrt: tuple[int, ...]


def leaves(tree) -> tuple:
    """The arrays and numbers in nested tuples, lists and dicts (a dict's in the order of its sorted keys),
    as NumPy values: how gradients that are containers are compared leaf by leaf.

        >>> leaves(({"b": 2.0, "a": [1.0, (3.0,)]},))
        (array(1.), array(3.), array(2.))
    """
    return tuple(leaf if isinstance(leaf, np.ndarray) else np.asarray(leaf) for leaf in flat(tree))


def flat(tree) -> list:
    """The leaves of nested tuples, lists and dicts as they are, in the order of ``leaves``.

        >>> flat({"b": 2, "a": [1]})
        [1, 2]
    """
    if isinstance(tree, dict):
        return [leaf for key in sorted(tree) for leaf in flat(tree[key])]
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in flat(item)]
    return [tree]


# --------------------------------------------------------------------------
# W1: scalar loop
# --------------------------------------------------------------------------

def scalar_loop(x, n):
    """Iterate a smooth scalar map ``n`` times, starting from ``x``."""
    y = x
    i = 0
    while i < n:
        y = np.sin(y) * x + 0.5 * y + 0.25
        i += 1
    return y


def scalar_loop_adjoint(x, n):
    """Gradient of ``scalar_loop`` with respect to ``x``.

    Step k maps y to sin(y) x + 0.5 y + 0.25: it adds dy sin(y_k) to dx and
    multiplies dy by cos(y_k) x + 0.5. That factor does not depend on dy, so
    it is formed for all steps in one array operation; the backward loop is
    left with two float operations per step.
    """
    ys = []
    sines = []
    y = x
    for _ in range(n):
        s = np.sin(y)
        ys.append(y)
        sines.append(s)
        y = s * x + 0.5 * y + 0.25

    factors = (np.cos(ys) * x + 0.5).tolist()
    dx = 0.0
    dy = 1.0
    for factor, s in zip(reversed(factors), reversed(np.array(sines).tolist())):
        dx += dy * s
        dy *= factor
    return (dx + dy,)


def scalar_loop_inputs(small=False):
    """``x`` is a Python float in [0.2, 0.4] (the map contracts there)."""
    rng = np.random.default_rng(1)
    return float(rng.uniform(0.2, 0.4)), (50 if small else 1000)


# --------------------------------------------------------------------------
# W2: small recurrent network
# --------------------------------------------------------------------------

def rnn(W, U, b, xs):
    """Run ``h = tanh(W h + U x_t + b)`` over the sequence; loss ``sum(h**2)``."""
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
    return np.sum(h ** 2)


def rnn_adjoint(W, U, b, xs):
    """Gradient of ``rnn`` with respect to ``W``, ``U`` and ``b``.

    The states go into one pre-allocated array; the backward sweep runs only
    the matrix-vector products that depend on the step before, and forms the
    weight gradients afterwards as three batched products.
    """
    steps = xs.shape[0]
    hs = np.empty((steps + 1, W.shape[0]))  # hs[t]: the state entering step t
    h = np.zeros(W.shape[0])
    hs[0] = h
    for t in range(steps):
        h = np.tanh(W @ h + U @ xs[t] + b)
        hs[t + 1] = h

    # da[t] = d loss / d (pre-activation of step t); start from tanh'.
    da = 1.0 - hs[1:] ** 2
    WT = W.T
    dh = 2.0 * h
    for da_t in da[:0:-1]:  # steps T-1 .. 1; step 0 needs no dh after it
        da_t *= dh
        dh = WT @ da_t
    da[0] *= dh
    return da.T @ hs[:-1], da.T @ xs, da.sum(axis=0)


def rnn_inputs(small=False):
    """Hidden 32, input 16, 200 steps (small: hidden 8, input 4, 20 steps)."""
    rng = np.random.default_rng(2)
    hidden, inputs, steps = (8, 4, 20) if small else (32, 16, 200)
    W = rng.standard_normal((hidden, hidden)) * (0.9 / np.sqrt(hidden))
    U = rng.standard_normal((hidden, inputs)) * (1.0 / np.sqrt(inputs))
    b = rng.standard_normal(hidden) * 0.1
    xs = rng.standard_normal((steps, inputs))
    return W, U, b, xs


# --------------------------------------------------------------------------
# W3: elementwise chain
# --------------------------------------------------------------------------

def elementwise(x):
    """About fifteen ufuncs over a large vector, then a sum."""
    a = np.sin(x) * np.cos(x)
    b = np.exp(-x * x)
    c = np.tanh(a + b)
    e = np.sqrt(1.0 + x * x)
    return np.sum(np.log1p(c * c) * e + a / e)


def elementwise_adjoint(x):
    """Gradient of ``elementwise`` with respect to ``x``.

    Intermediates the backward sweep no longer needs are reused as buffers.
    """
    s = np.sin(x)
    co = np.cos(x)
    a = s * co
    b = np.exp(-x * x)
    c = np.tanh(a + b)
    e = np.sqrt(1.0 + x * x)
    c2 = c * c
    d = np.log1p(c2)

    inv_e = np.reciprocal(e)
    # d loss / d c, times tanh', gives du for u = a + b.
    du = e / (1.0 + c2)
    du *= 2.0 * c
    du *= 1.0 - c2
    # d loss / d e = d - a / e**2, then through e = sqrt(1 + x*x): * x / e.
    de = a * inv_e
    de *= inv_e
    np.subtract(d, de, out=de)
    de *= inv_e
    # d loss / d a = 1/e + du, then through a = sin(x) cos(x): * cos(2x).
    da = inv_e
    da += du
    s *= s
    co *= co
    co -= s
    da *= co
    # b = exp(-x*x): db/dx = -2 x b.
    du *= b
    de -= 2.0 * du
    de *= x
    da += de
    return (da,)


def elementwise_inputs(small=False):
    """10**6 float64 values (small: 1,000)."""
    rng = np.random.default_rng(3)
    return (rng.standard_normal(1_000 if small else 1_000_000),)


# --------------------------------------------------------------------------
# W4: multilayer perceptron
# --------------------------------------------------------------------------

def mlp(W1, b1, W2, b2, W3, b3, X, labels):
    """Two tanh layers and a softmax cross-entropy, averaged over the batch."""
    h1 = np.tanh(X @ W1 + b1)
    h2 = np.tanh(h1 @ W2 + b2)
    z = h2 @ W3 + b3
    z = z - np.max(z, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(X.shape[0]), labels])


def mlp_adjoint(W1, b1, W2, b2, W3, b3, X, labels):
    """Gradient of ``mlp`` with respect to all weights and biases.

    The max subtracted for stability contributes nothing: the softmax
    probabilities sum to one, so its adjoint is zero.
    """
    batch = X.shape[0]
    h1 = np.tanh(X @ W1 + b1)
    h2 = np.tanh(h1 @ W2 + b2)
    z = h2 @ W3 + b3
    z -= np.max(z, axis=1, keepdims=True)
    p = np.exp(z)
    p /= np.sum(p, axis=1, keepdims=True)

    dz = p
    dz[np.arange(batch), labels] -= 1.0
    dz /= batch
    dW3 = h2.T @ dz
    db3 = dz.sum(axis=0)
    da2 = dz @ W3.T
    da2 *= 1.0 - h2 * h2
    dW2 = h1.T @ da2
    db2 = da2.sum(axis=0)
    da1 = da2 @ W2.T
    da1 *= 1.0 - h1 * h1
    dW1 = X.T @ da1
    db1 = da1.sum(axis=0)
    return dW1, db1, dW2, db2, dW3, db3


def mlp_inputs(small=False):
    """Batch 256, layers 784-256-256-10 (small: batch 16, 20-12-12-5)."""
    rng = np.random.default_rng(4)
    batch, widths = (16, (20, 12, 12, 5)) if small else (256, (784, 256, 256, 10))
    params = []
    for fan_in, fan_out in zip(widths[:-1], widths[1:]):
        params.append(rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in))
        params.append(rng.standard_normal(fan_out) * 0.1)
    X = rng.standard_normal((batch, widths[0]))
    labels = rng.integers(0, widths[-1], size=batch)
    return (*params, X, labels)


# --------------------------------------------------------------------------
# W5: ODE with a state-dependent step
# --------------------------------------------------------------------------

def ode(A, y0, t_end, h0):
    """Integrate dy/dt = tanh(A y) by Euler steps of size h0 / (1 + |y|^2).

    The number of steps depends on the inputs, so the loss is only
    piecewise smooth in ``A``; its gradient is that of the piece holding
    the inputs (the step count held fixed).
    """
    y = y0
    t = 0.0
    while t < t_end:
        dt = h0 / (1.0 + np.sum(y * y))
        y = y + dt * np.tanh(A @ y)
        t = t + dt
    return np.sum(y * y)


def ode_adjoint(A, y0, t_end, h0):
    """Gradient of ``ode`` with respect to ``A``, for the step count reached.

    Step k maps y to y + dt(y) f with f = tanh(A y), dt(y) = h0 / (1 + y.y).
    Its adjoint: the pre-activation gets g = gy * dt * (1 - f*f), A gets
    outer(g, y), and y gets gy + A^T g - 2 (gy . f) dt^2 / h0 * y. The
    factors not depending on gy are formed for all steps at once, and the
    outer products become one matrix product at the end.
    """
    ys, fs, dts = [], [], []
    y = y0
    t = 0.0
    while t < t_end:
        dt = h0 / (1.0 + np.sum(y * y))
        f = np.tanh(A @ y)
        ys.append(y)
        fs.append(f)
        dts.append(dt)
        y = y + dt * f
        t = t + dt

    dt = np.array(dts)
    g = (1.0 - np.square(fs)) * dt[:, None]  # row k becomes d loss / d (A y_k)
    step_terms = ((-2.0 / h0) * dt * dt).tolist()
    AT = A.T
    gy = 2.0 * y
    for gk, f, y, c in zip(g[::-1], reversed(fs), reversed(ys), reversed(step_terms)):
        dt_term = c * (gy @ f)
        gk *= gy
        gy += AT @ gk
        gy += dt_term * y
    return (g.T @ np.array(ys),)


def ode_step_count(A, y0, t_end, h0):
    """The number of steps ``ode`` takes for these inputs."""
    y = y0
    t = 0.0
    steps = 0
    while t < t_end:
        dt = h0 / (1.0 + np.sum(y * y))
        y = y + dt * np.tanh(A @ y)
        t = t + dt
        steps += 1
    return steps


def ode_inputs(small=False):
    """State 8, about 20,000 steps (small: about 300 steps).

    A is mostly skew-symmetric (a rotation) with slight damping, so the
    state stays of order one and the step size stays near h0 / 5.
    """
    rng = np.random.default_rng(0)
    n = 8
    S = rng.standard_normal((n, n))
    A = (S - S.T) / np.sqrt(2 * n) + 0.1 * rng.standard_normal((n, n)) / np.sqrt(n)
    A -= 0.05 * np.eye(n)
    y0 = rng.standard_normal(n)
    t_end, h0 = (1.0, 0.02) if small else (6.7, 0.002)
    return A, y0, t_end, h0


# --------------------------------------------------------------------------
# W6: sparse gather
# --------------------------------------------------------------------------

def gather(W, idx, c):
    """A weighted sum of tanh over the rows of ``W`` picked by ``idx``."""
    return np.sum(np.tanh(W[idx]) * c)


def gather_adjoint(W, idx, c):
    """Gradient of ``gather`` with respect to ``W``: dense, rows scattered in.

    ``np.add.at`` accumulates the rows that ``idx`` picks more than once;
    ``np.zeros`` (unlike ``np.zeros_like``) gets its memory zeroed lazily by
    the operating system, so only the rows written are touched here.
    """
    rows = np.tanh(W[idx])
    d_rows = c * (1.0 - rows * rows)
    dW = np.zeros(W.shape)
    np.add.at(dW, idx, d_rows)
    return (dW,)


def gather_inputs(small=False):
    """W of 100,000 x 64, 512 indices of which 64 repeat others (small: 1,000 x 8, 64)."""
    rng = np.random.default_rng(6)
    rows, cols, picks = (1_000, 8, 64) if small else (100_000, 64, 512)
    W = rng.standard_normal((rows, cols))
    fresh = rng.integers(0, rows, size=picks - picks // 8)
    idx = rng.permutation(np.concatenate([fresh, fresh[: picks // 8]]))
    c = rng.standard_normal((picks, cols))
    return W, idx, c


WORKLOADS = [
    Workload("W1", "scalar loop",
             "1,000 iterations on a Python float", "50 iterations",
             scalar_loop, scalar_loop_adjoint, scalar_loop_inputs, (0,)),
    Workload("W2", "small RNN",
             "hidden 32, input 16, T = 200", "hidden 8, input 4, T = 20",
             rnn, rnn_adjoint, rnn_inputs, (0, 1, 2)),
    Workload("W3", "elementwise chain",
             "10^6 float64, 16 ufuncs + sum", "1,000 float64",
             elementwise, elementwise_adjoint, elementwise_inputs, (0,)),
    Workload("W4", "MLP",
             "batch 256, 784-256-256-10, softmax cross-entropy", "batch 16, 20-12-12-5",
             mlp, mlp_adjoint, mlp_inputs, (0, 1, 2, 3, 4, 5)),
    Workload("W5", "ODE",
             "state 8, ~20,000 adaptive Euler steps", "state 8, ~300 steps",
             ode, ode_adjoint, ode_inputs, (0,)),
    Workload("W6", "sparse gather",
             "W 100,000 x 64, 512 indices with repeats", "W 1,000 x 8, 64 indices",
             gather, gather_adjoint, gather_inputs, (0,)),
    Workload("W7", "polynomial loop, module constant",
             "1,000 iterations on a Python float", "50 iterations",
             user.polynomial_loop, user.polynomial_loop_adjoint, user.polynomial_loop_inputs, (0,)),
    Workload("W8", "ODE, module constant step",
             "state 8, ~19,000 adaptive Euler steps", "state 8, ~260 steps",
             user.damped_ode, user.damped_ode_adjoint, user.damped_ode_inputs, (0,)),
    Workload("W9", "MLP, layers in a list",
             "batch 256, 784-256-256-10, list of (W, b)", "batch 16, 20-12-12-5",
             user.layered_mlp, user.layered_mlp_adjoint, user.layered_mlp_inputs, (0,)),
    Workload("W10", "leaky RNN, dict of parameters",
             "hidden 32, input 16, T = 200", "hidden 8, input 4, T = 20",
             user.leaky_rnn, user.leaky_rnn_adjoint, user.leaky_rnn_inputs, (0,)),
]

BY_KEY = {w.key: w for w in WORKLOADS}
