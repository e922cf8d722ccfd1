"""Workloads W7-W10, written the way people write them, with their hand-written adjoints and inputs.

Where W1-W6 pass every number the loop reads as an argument and every
parameter as an array of its own, these read module constants inside the
loop body (``H``, ``HSTEP``, ``LEAK``), have polynomial right-hand sides and a
step size that depends on the state, and keep their parameters in a list of
layers or a dict. The adjoints follow the conventions of ``workloads.py``:
the forward sweep performs the forward function's operations in the same
order and keeps only what the backward sweep reads; the backward sweep is a
loop over the recorded steps in reverse, with what does not depend on the
adjoint formed for all steps at once before it.

    >>> y0, n = polynomial_loop_inputs(small=True)
    >>> (dy0,) = polynomial_loop_adjoint(y0, n)
    >>> difference = (polynomial_loop(y0 + 1e-6, n) - polynomial_loop(y0 - 1e-6, n)) / 2e-6
    >>> bool(abs(dy0 - difference) < 1e-8)
    True
"""

import numpy as np

# --------------------------------------------------------------------------
# W7: scalar loop, a module constant and a polynomial right-hand side
# --------------------------------------------------------------------------

H = 0.002


def polynomial_loop(y0, n):
    """``n`` Euler steps of size ``H`` of dy/dt = 1.01 sin(y) + 0.1 y^2 - 0.05 y^3, on a Python float."""
    y = y0
    i = 0
    while i < n:
        y = y + H * (np.sin(y) * 1.01 + 0.1 * y * y - 0.05 * y * y * y)
        i += 1
    return y


def polynomial_loop_adjoint(y0, n):
    """Gradient of ``polynomial_loop`` with respect to ``y0``.

    Step k multiplies dy by 1 + H (1.01 cos(y_k) + 0.2 y_k - 0.15 y_k^2):
    the forward sweep keeps y alone, the factors are formed for all steps in
    one array operation, and the backward loop multiplies by them.
    """
    ys = []
    y = y0
    i = 0
    while i < n:
        ys.append(y)
        y = y + H * (np.sin(y) * 1.01 + 0.1 * y * y - 0.05 * y * y * y)
        i += 1

    y = np.array(ys)
    factors = (1.0 + H * (1.01 * np.cos(y) + 0.2 * y - 0.15 * y * y)).tolist()
    dy = 1.0
    for factor in reversed(factors):
        dy *= factor
    return (dy,)


def polynomial_loop_inputs(small=False):
    """``y0`` a Python float in [0.2, 0.6]; 1,000 steps (small: 50)."""
    rng = np.random.default_rng(7)
    return float(rng.uniform(0.2, 0.6)), (50 if small else 1000)


# --------------------------------------------------------------------------
# W8: ODE, a module constant and a state-dependent step
# --------------------------------------------------------------------------

HSTEP = 0.002


def damped_ode(A, x0, t_end):
    """Euler steps of size HSTEP / (1 + |x|^2) of dx/dt = tanh(A x) - 0.1 x, until ``t_end``."""
    x = x0
    t = 0.0
    while t < t_end:
        dt = HSTEP / (1.0 + x @ x)
        x = x + dt * (np.tanh(A @ x) - 0.1 * x)
        t = t + dt
    return np.sum(x * x)


def damped_ode_adjoint(A, x0, t_end):
    """Gradient of ``damped_ode`` with respect to ``A``, for the step count reached.

    Step k maps x to x + dt g with g = tanh(A x) - 0.1 x, dt = HSTEP / (1 + x.x).
    With gx the adjoint of the new x: the pre-activation gets
    gx dt (1 - f*f), A gets its outer product with x, and x gets
    (1 - 0.1 dt) gx + A^T (that) - 2 (gx . g) dt^2 / HSTEP x. The forward
    sweep keeps x, f = tanh(A x) and dt; the factors not depending on gx are
    formed for all steps at once, the outer products summed as one matrix
    product at the end.
    """
    xs, fs, dts = [], [], []
    x = x0
    t = 0.0
    while t < t_end:
        dt = HSTEP / (1.0 + x @ x)
        f = np.tanh(A @ x)
        xs.append(x)
        fs.append(f)
        dts.append(dt)
        x = x + dt * (f - 0.1 * x)
        t = t + dt

    dt = np.array(dts)
    states = np.array(xs)
    rates = np.array(fs)
    g = (1.0 - rates * rates) * dt[:, None]   # row k becomes d loss / d (A x_k)
    rates -= 0.1 * states                     # row k: the right-hand side g of step k
    step_terms = ((-2.0 / HSTEP) * dt * dt).tolist()
    damping = (1.0 - 0.1 * dt).tolist()
    AT = A.T
    gx = 2.0 * x
    for gk, rate, state, c, d in zip(g[::-1], rates[::-1], states[::-1],
                                     reversed(step_terms), reversed(damping)):
        dt_term = c * (gx @ rate)
        gk *= gx
        gx *= d
        gx += AT @ gk
        gx += dt_term * state
    return (g.T @ states,)


def damped_ode_step_count(A, x0, t_end):
    """The number of steps ``damped_ode`` takes for these inputs."""
    x = x0
    t = 0.0
    steps = 0
    while t < t_end:
        dt = HSTEP / (1.0 + x @ x)
        x = x + dt * (np.tanh(A @ x) - 0.1 * x)
        t = t + dt
        steps += 1
    return steps


def damped_ode_inputs(small=False):
    """State 8, about 20,000 steps (small: about 250 steps)."""
    rng = np.random.default_rng(8)
    n = 8
    S = rng.standard_normal((n, n))
    A = (S - S.T) / np.sqrt(2 * n) + 0.1 * rng.standard_normal((n, n)) / np.sqrt(n)
    x0 = rng.standard_normal(n)
    return A, x0, (0.1 if small else 10.5)


# --------------------------------------------------------------------------
# W9: MLP with its layers in a list
# --------------------------------------------------------------------------

def layered_mlp(params, X, labels):
    """tanh layers ``for W, b in params[:-1]``, a last linear layer, softmax cross-entropy."""
    h = X
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    z = h @ W + b
    z = z - np.max(z, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(X.shape[0]), labels])


def layered_mlp_adjoint(params, X, labels):
    """Gradient of ``layered_mlp`` with respect to ``params``: a list of ``(dW, db)`` pairs."""
    hs = [X]
    for W, b in params[:-1]:
        hs.append(np.tanh(hs[-1] @ W + b))
    W, b = params[-1]
    z = hs[-1] @ W + b
    z -= np.max(z, axis=1, keepdims=True)
    p = np.exp(z)
    p /= np.sum(p, axis=1, keepdims=True)

    dz = p
    dz[np.arange(X.shape[0]), labels] -= 1.0
    dz /= X.shape[0]
    grads = [None] * len(params)
    grads[-1] = (hs[-1].T @ dz, dz.sum(axis=0))
    for layer in range(len(params) - 2, -1, -1):
        h = hs[layer + 1]
        dz = dz @ params[layer + 1][0].T
        dz *= 1.0 - h * h
        grads[layer] = (hs[layer].T @ dz, dz.sum(axis=0))
    return (grads,)


def layered_mlp_inputs(small=False):
    """Batch 256, layers 784-256-256-10 as a list of three (W, b) pairs (small: batch 16, 20-12-12-5)."""
    rng = np.random.default_rng(9)
    batch, widths = (16, (20, 12, 12, 5)) if small else (256, (784, 256, 256, 10))
    params = [(rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in), rng.standard_normal(fan_out) * 0.1)
              for fan_in, fan_out in zip(widths[:-1], widths[1:])]
    X = rng.standard_normal((batch, widths[0]))
    labels = rng.integers(0, widths[-1], size=batch)
    return params, X, labels


# --------------------------------------------------------------------------
# W10: leaky RNN, parameters in a dict and a module constant
# --------------------------------------------------------------------------

LEAK = 0.1


def leaky_rnn(p, xs):
    """``h = (1 - LEAK) h + LEAK tanh(W h + U x_t + b)`` with ``p = {"W", "U", "b"}``; loss ``sum(h**2)``."""
    h = np.zeros(p["b"].shape[0])
    for t in range(xs.shape[0]):
        h = (1 - LEAK) * h + LEAK * np.tanh(p["W"] @ h + p["U"] @ xs[t] + p["b"])
    return np.sum(h ** 2)


def leaky_rnn_adjoint(p, xs):
    """Gradient of ``leaky_rnn`` with respect to ``p``: a dict of the same keys.

    The states entering each step and the tanh values go into two
    pre-allocated arrays; the backward sweep runs only the matrix-vector
    products that depend on the step after, and forms the weight gradients
    afterwards as three batched products.
    """
    W, U, b = p["W"], p["U"], p["b"]
    steps = xs.shape[0]
    hs = np.empty((steps, b.shape[0]))   # hs[t]: the state entering step t
    fs = np.empty((steps, b.shape[0]))   # fs[t]: tanh of step t's pre-activation
    h = np.zeros(b.shape[0])
    for t in range(steps):
        hs[t] = h
        fs[t] = np.tanh(W @ h + U @ xs[t] + b)
        h = (1 - LEAK) * h + LEAK * fs[t]

    da = LEAK * (1.0 - fs * fs)   # row t becomes d loss / d (pre-activation of step t)
    WT = W.T
    dh = 2.0 * h
    for da_t in da[:0:-1]:        # steps T-1 .. 1; step 0 needs no dh after it
        da_t *= dh
        dh *= 1 - LEAK
        dh += WT @ da_t
    da[0] *= dh
    return ({"W": da.T @ hs, "U": da.T @ xs, "b": da.sum(axis=0)},)


def leaky_rnn_inputs(small=False):
    """Hidden 32, input 16, 200 steps (small: hidden 8, input 4, 20 steps)."""
    rng = np.random.default_rng(10)
    hidden, inputs, steps = (8, 4, 20) if small else (32, 16, 200)
    p = {"W": rng.standard_normal((hidden, hidden)) * (0.9 / np.sqrt(hidden)),
         "U": rng.standard_normal((hidden, inputs)) * (1.0 / np.sqrt(inputs)),
         "b": rng.standard_normal(hidden) * 0.1}
    return p, rng.standard_normal((steps, inputs))
