"""Ports of the workloads to other automatic differentiation tools.

Each tool is optional: it is used when it imports, and ``available_peers``
reports the reason when it does not. A peer turns a workload and its NumPy
arguments into a ``Prepared`` gradient: the arguments are converted to the
tool's own arrays once, outside the timed region, and ``call`` evaluates the
gradient on them (waiting for the result, for asynchronous tools).

* autograd runs the workloads' own source: autograd is used by writing NumPy
  code against ``autograd.numpy``, so the port rebinds the forward
  function's ``np`` to it.
* JAX eager (``jax.grad``) and PyTorch eager run line-for-line ports, with
  the same Python control flow as the NumPy source.
* ``jax.jit(jax.grad(...))`` needs structured control flow: ``fori_loop`` and
  ``scan`` replace the Python loops. JAX cannot reverse-differentiate a
  ``while_loop``, so for W5 and W8 a compiled ``while_loop`` first counts the steps,
  then a ``scan`` of that length is differentiated (a recompilation per
  step count; the count is part of every timed call).
"""

import types
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from .user_workloads import HSTEP, LEAK, H
from .workloads import Workload, flat, leaves

try:
    import autograd
    import autograd.numpy as anp
except ImportError as error:
    autograd = None
    _AUTOGRAD_MISSING = str(error)

try:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
except ImportError as error:
    jax = None
    _JAX_MISSING = str(error)

try:
    import torch

    torch.set_num_threads(1)
except ImportError as error:
    torch = None
    _TORCH_MISSING = str(error)


@dataclass(frozen=True)
class Prepared:
    """A gradient ready to time.

    Attributes:
        call: evaluates the gradient once, on the tool's own arrays.
        to_numpy: turns what ``call`` returns into a tuple of NumPy arrays.
    """

    call: Callable[[], object]
    to_numpy: Callable[[object], tuple]


@dataclass(frozen=True)
class Peer:
    """An AD tool under comparison.

    Attributes:
        name: the label in reports.
        prepare: ``prepare(workload, args) -> Prepared``.
        compiles: whether the first call compiles (its extra time is
            reported apart as compile time).
        numpy_based: whether its arrays are NumPy's (so tracemalloc sees
            its memory).
        workloads: the keys of the workloads it runs on (None: all).
    """

    name: str
    prepare: Callable[[Workload, tuple], Prepared]
    compiles: bool = False
    numpy_based: bool = False
    workloads: Optional[tuple] = None


def _tree_map(fn, tree):
    """``fn`` applied to every leaf of nested tuples, lists and dicts, the structure kept."""
    if isinstance(tree, dict):
        return {key: _tree_map(fn, value) for key, value in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_tree_map(fn, item) for item in tree)
    return fn(tree)


def _as_numpy_tuple(grads) -> tuple:
    return leaves(grads)


# --------------------------------------------------------------------------
# autograd
# --------------------------------------------------------------------------

def _on_autograd_numpy(fn):
    """``fn`` with the global name ``np`` bound to ``autograd.numpy``."""
    namespace = dict(fn.__globals__, np=anp)
    return types.FunctionType(fn.__code__, namespace, fn.__name__,
                              fn.__defaults__, fn.__closure__)


def _prepare_autograd(workload: Workload, args: tuple) -> Prepared:
    gradient = autograd.grad(_on_autograd_numpy(workload.forward), argnum=workload.wrt)
    return Prepared(lambda: gradient(*args), _as_numpy_tuple)


# --------------------------------------------------------------------------
# JAX: eager ports (Python control flow, as in the NumPy source)
# --------------------------------------------------------------------------

def _jax_scalar_loop(x, n):
    y = x
    i = 0
    while i < n:
        y = jnp.sin(y) * x + 0.5 * y + 0.25
        i += 1
    return y


def _jax_rnn(W, U, b, xs):
    h = jnp.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = jnp.tanh(W @ h + U @ xs[t] + b)
    return jnp.sum(h ** 2)


def _jax_elementwise(x):
    a = jnp.sin(x) * jnp.cos(x)
    b = jnp.exp(-x * x)
    c = jnp.tanh(a + b)
    e = jnp.sqrt(1.0 + x * x)
    return jnp.sum(jnp.log1p(c * c) * e + a / e)


def _jax_mlp(W1, b1, W2, b2, W3, b3, X, labels):
    h1 = jnp.tanh(X @ W1 + b1)
    h2 = jnp.tanh(h1 @ W2 + b2)
    z = h2 @ W3 + b3
    z = z - jnp.max(z, axis=1, keepdims=True)
    logp = z - jnp.log(jnp.sum(jnp.exp(z), axis=1, keepdims=True))
    return -jnp.mean(logp[jnp.arange(X.shape[0]), labels])


def _jax_ode(A, y0, t_end, h0):
    y = y0
    t = 0.0
    while t < t_end:
        dt = h0 / (1.0 + jnp.sum(y * y))
        y = y + dt * jnp.tanh(A @ y)
        t = t + dt
    return jnp.sum(y * y)


def _jax_gather(W, idx, c):
    return jnp.sum(jnp.tanh(W[idx]) * c)


def _jax_polynomial_loop(y0, n):
    y = y0
    i = 0
    while i < n:
        y = y + H * (jnp.sin(y) * 1.01 + 0.1 * y * y - 0.05 * y * y * y)
        i += 1
    return y


def _jax_damped_ode(A, x0, t_end):
    x = x0
    t = 0.0
    while t < t_end:
        dt = HSTEP / (1.0 + x @ x)
        x = x + dt * (jnp.tanh(A @ x) - 0.1 * x)
        t = t + dt
    return jnp.sum(x * x)


def _jax_layered_mlp(params, X, labels):
    h = X
    for W, b in params[:-1]:
        h = jnp.tanh(h @ W + b)
    W, b = params[-1]
    z = h @ W + b
    z = z - jnp.max(z, axis=1, keepdims=True)
    logp = z - jnp.log(jnp.sum(jnp.exp(z), axis=1, keepdims=True))
    return -jnp.mean(logp[jnp.arange(X.shape[0]), labels])


def _jax_leaky_rnn(p, xs):
    h = jnp.zeros(p["b"].shape[0])
    for t in range(xs.shape[0]):
        h = (1 - LEAK) * h + LEAK * jnp.tanh(p["W"] @ h + p["U"] @ xs[t] + p["b"])
    return jnp.sum(h ** 2)


_JAX_EAGER = {
    "W1": _jax_scalar_loop,
    "W2": _jax_rnn,
    "W3": _jax_elementwise,
    "W4": _jax_mlp,
    "W5": _jax_ode,
    "W6": _jax_gather,
    "W7": _jax_polynomial_loop,
    "W8": _jax_damped_ode,
    "W9": _jax_layered_mlp,
    "W10": _jax_leaky_rnn,
}


# --------------------------------------------------------------------------
# JAX: compiled ports (structured control flow)
# --------------------------------------------------------------------------

def _jit_scalar_loop_grad():
    def scalar_loop(x, n):
        return jax.lax.fori_loop(0, n, lambda i, y: jnp.sin(y) * x + 0.5 * y + 0.25, x)

    return jax.jit(jax.grad(scalar_loop, argnums=(0,)), static_argnums=1)


def _jit_rnn_grad():
    def rnn(W, U, b, xs):
        def step(h, x):
            return jnp.tanh(W @ h + U @ x + b), None

        h, _ = jax.lax.scan(step, jnp.zeros(W.shape[0]), xs)
        return jnp.sum(h ** 2)

    return jax.jit(jax.grad(rnn, argnums=(0, 1, 2)))


def _jit_ode_grad():
    def step_size(y, h0):
        return h0 / (1.0 + jnp.sum(y * y))

    @jax.jit
    def step_count(A, y0, t_end, h0):
        def cond(state):
            return state[1] < t_end

        def body(state):
            y, t, steps = state
            dt = step_size(y, h0)
            return y + dt * jnp.tanh(A @ y), t + dt, steps + 1

        return jax.lax.while_loop(cond, body, (y0, 0.0, 0))[2]

    def ode_fixed_steps(A, y0, h0, steps):
        def step(y, _):
            return y + step_size(y, h0) * jnp.tanh(A @ y), None

        y, _ = jax.lax.scan(step, y0, None, length=steps)
        return jnp.sum(y * y)

    fixed_grad = jax.jit(jax.grad(ode_fixed_steps, argnums=(0,)), static_argnums=3)

    def gradient(A, y0, t_end, h0):
        return fixed_grad(A, y0, h0, int(step_count(A, y0, t_end, h0)))

    return gradient


def _jit_polynomial_loop_grad():
    def polynomial_loop(y0, n):
        def step(i, y):
            return y + H * (jnp.sin(y) * 1.01 + 0.1 * y * y - 0.05 * y * y * y)

        return jax.lax.fori_loop(0, n, step, y0)

    return jax.jit(jax.grad(polynomial_loop, argnums=(0,)), static_argnums=1)


def _jit_damped_ode_grad():
    def step(x, A):
        dt = HSTEP / (1.0 + x @ x)
        return x + dt * (jnp.tanh(A @ x) - 0.1 * x), dt

    @jax.jit
    def step_count(A, x0, t_end):
        def body(state):
            x, t, steps = state
            x, dt = step(x, A)
            return x, t + dt, steps + 1

        return jax.lax.while_loop(lambda state: state[1] < t_end, body, (x0, 0.0, 0))[2]

    def damped_ode_fixed_steps(A, x0, steps):
        x, _ = jax.lax.scan(lambda x, _: (step(x, A)[0], None), x0, None, length=steps)
        return jnp.sum(x * x)

    fixed_grad = jax.jit(jax.grad(damped_ode_fixed_steps, argnums=(0,)), static_argnums=2)

    def gradient(A, x0, t_end):
        return fixed_grad(A, x0, int(step_count(A, x0, t_end)))

    return gradient


def _jit_leaky_rnn_grad():
    def leaky_rnn(p, xs):
        def step(h, x):
            return (1 - LEAK) * h + LEAK * jnp.tanh(p["W"] @ h + p["U"] @ x + p["b"]), None

        h, _ = jax.lax.scan(step, jnp.zeros(p["b"].shape[0]), xs)
        return jnp.sum(h ** 2)

    return jax.jit(jax.grad(leaky_rnn, argnums=(0,)))


_JAX_JIT = {
    "W1": _jit_scalar_loop_grad,
    "W2": _jit_rnn_grad,
    "W5": _jit_ode_grad,
    "W7": _jit_polynomial_loop_grad,
    "W8": _jit_damped_ode_grad,
    "W10": _jit_leaky_rnn_grad,
}


def _to_jax(args: tuple) -> tuple:
    return _tree_map(lambda a: jnp.asarray(a) if isinstance(a, np.ndarray) else a, args)


def _prepare_jax(workload: Workload, args: tuple) -> Prepared:
    gradient = jax.grad(_JAX_EAGER[workload.key], argnums=workload.wrt)
    jax_args = _to_jax(args)
    return Prepared(lambda: jax.block_until_ready(gradient(*jax_args)), _as_numpy_tuple)


def _prepare_jax_jit(workload: Workload, args: tuple) -> Prepared:
    if workload.key in _JAX_JIT:
        gradient = _JAX_JIT[workload.key]()
    else:
        gradient = jax.jit(jax.grad(_JAX_EAGER[workload.key], argnums=workload.wrt))
    jax_args = _to_jax(args)
    return Prepared(lambda: jax.block_until_ready(gradient(*jax_args)), _as_numpy_tuple)


# --------------------------------------------------------------------------
# PyTorch: eager ports (float64)
# --------------------------------------------------------------------------

def _torch_scalar_loop(x, n):
    y = x
    i = 0
    while i < n:
        y = torch.sin(y) * x + 0.5 * y + 0.25
        i += 1
    return y


def _torch_rnn(W, U, b, xs):
    h = torch.zeros(W.shape[0], dtype=W.dtype)
    for t in range(xs.shape[0]):
        h = torch.tanh(W @ h + U @ xs[t] + b)
    return torch.sum(h ** 2)


def _torch_elementwise(x):
    a = torch.sin(x) * torch.cos(x)
    b = torch.exp(-x * x)
    c = torch.tanh(a + b)
    e = torch.sqrt(1.0 + x * x)
    return torch.sum(torch.log1p(c * c) * e + a / e)


def _torch_mlp(W1, b1, W2, b2, W3, b3, X, labels):
    h1 = torch.tanh(X @ W1 + b1)
    h2 = torch.tanh(h1 @ W2 + b2)
    z = h2 @ W3 + b3
    z = z - torch.amax(z, dim=1, keepdim=True)
    logp = z - torch.log(torch.sum(torch.exp(z), dim=1, keepdim=True))
    return -torch.mean(logp[torch.arange(X.shape[0]), labels])


def _torch_ode(A, y0, t_end, h0):
    y = y0
    t = 0.0
    while t < t_end:
        dt = h0 / (1.0 + torch.sum(y * y))
        y = y + dt * torch.tanh(A @ y)
        t = t + dt
    return torch.sum(y * y)


def _torch_gather(W, idx, c):
    return torch.sum(torch.tanh(W[idx]) * c)


def _torch_polynomial_loop(y0, n):
    y = y0
    i = 0
    while i < n:
        y = y + H * (torch.sin(y) * 1.01 + 0.1 * y * y - 0.05 * y * y * y)
        i += 1
    return y


def _torch_damped_ode(A, x0, t_end):
    x = x0
    t = 0.0
    while t < t_end:
        dt = HSTEP / (1.0 + x @ x)
        x = x + dt * (torch.tanh(A @ x) - 0.1 * x)
        t = t + dt
    return torch.sum(x * x)


def _torch_layered_mlp(params, X, labels):
    h = X
    for W, b in params[:-1]:
        h = torch.tanh(h @ W + b)
    W, b = params[-1]
    z = h @ W + b
    z = z - torch.amax(z, dim=1, keepdim=True)
    logp = z - torch.log(torch.sum(torch.exp(z), dim=1, keepdim=True))
    return -torch.mean(logp[torch.arange(X.shape[0]), labels])


def _torch_leaky_rnn(p, xs):
    h = torch.zeros(p["b"].shape[0], dtype=p["b"].dtype)
    for t in range(xs.shape[0]):
        h = (1 - LEAK) * h + LEAK * torch.tanh(p["W"] @ h + p["U"] @ xs[t] + p["b"])
    return torch.sum(h ** 2)


_TORCH = {
    "W1": _torch_scalar_loop,
    "W2": _torch_rnn,
    "W3": _torch_elementwise,
    "W4": _torch_mlp,
    "W5": _torch_ode,
    "W6": _torch_gather,
    "W7": _torch_polynomial_loop,
    "W8": _torch_damped_ode,
    "W9": _torch_layered_mlp,
    "W10": _torch_leaky_rnn,
}


def _to_torch(args: tuple, wrt: tuple[int, ...]) -> tuple:
    """Tensors sharing the NumPy arrays' memory (containers converted leaf by leaf); the leaves of the
    ``wrt`` ones require grad."""
    def tensor(a):
        return torch.from_numpy(a) if isinstance(a, np.ndarray) else a

    def differentiated(a):
        a = a if isinstance(a, np.ndarray) else np.float64(a)
        return torch.from_numpy(np.asarray(a)).detach().requires_grad_()

    return tuple(_tree_map(differentiated if i in wrt else tensor, a) for i, a in enumerate(args))


def _prepare_torch(workload: Workload, args: tuple) -> Prepared:
    forward = _TORCH[workload.key]
    torch_args = _to_torch(args, workload.wrt)
    inputs = [leaf for i in workload.wrt for leaf in flat(torch_args[i])]

    def gradient():
        return torch.autograd.grad(forward(*torch_args), inputs)

    return Prepared(gradient, lambda grads: tuple(g.numpy() for g in grads))


def available_peers() -> tuple[list[Peer], dict[str, str]]:
    """The peers whose tool is installed, and why each missing one is missing."""
    peers, missing = [], {}
    if autograd is not None:
        peers.append(Peer("autograd", _prepare_autograd, numpy_based=True))
    else:
        missing["autograd"] = _AUTOGRAD_MISSING
    if jax is not None:
        peers.append(Peer("jax", _prepare_jax))
        peers.append(Peer("jax.jit", _prepare_jax_jit, compiles=True))
    else:
        missing["jax"] = missing["jax.jit"] = _JAX_MISSING
    if torch is not None:
        peers.append(Peer("torch", _prepare_torch))
    else:
        missing["torch"] = _TORCH_MISSING
    return peers, missing
